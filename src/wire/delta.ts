/**
 * The one strict decoder of audio deltas, for both channels: an SSE `delta` event's data
 * (docs/protocol.md §2.2) and a WebSocket `tts.output_audio.delta` (docs/protocol.md §2.5) carry base64 audio
 * in a `delta` field. Audio is never silently dropped: a delta that is not valid base64 is the
 * service breaking the protocol.
 */
import { TtsError } from '../errors.js';

/** One decoded delta: `data` is audio bytes in the requested encoding (not base64). */
export interface AudioChunk {
  /** Audio bytes; not necessarily a whole number of samples (docs/protocol.md does not promise it). */
  data: Buffer;
  /** The `item_id` the delta carried (docs/protocol.md §2.2), when the channel has one. */
  itemId: string | undefined;
}

/** A `protocol_error` for a frame or event the service got wrong; `what` completes "the service sent …". */
export function malformed(what: string): TtsError {
  return new TtsError('protocol_error', `the service sent ${what}`, { hint: 'the service broke the protocol; try again or report it' });
}

/** True for a plain JSON object (not null, not an array). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Decodes the audio of a delta message.
 * @param data the parsed JSON of the event or frame (anything).
 * @param what how to name it in an error, e.g. `a delta event`.
 * @returns the chunk, or a `protocol_error` when `data` is not an object with a string `delta`
 *   of valid base64 (item_id is optional and kept when it is a string).
 */
export function decodeDelta(data: unknown, what: string): AudioChunk | TtsError {
  if (!isRecord(data)) return malformed(`${what} whose data is not a JSON object`);
  const delta = data['delta'];
  if (typeof delta !== 'string') return malformed(`${what} without a string \`delta\``);
  const bytes = decodeBase64(delta);
  if (bytes === undefined) return malformed(`${what} whose \`delta\` is not valid base64`);
  return { data: bytes, itemId: typeof data['item_id'] === 'string' ? data['item_id'] : undefined };
}

/**
 * Strict base64 (RFC 4648 §4; whitespace such as MIME line breaks is skipped, base64url letters
 * accepted): `Buffer.from(s, 'base64')` alone would silently drop bad characters, and with them audio.
 * @returns the bytes, or undefined when `s` is not base64.
 */
export function decodeBase64(s: string): Buffer | undefined {
  // Fast path for the usual clean base64: Node skips characters outside the alphabet and stops
  // at padding, so any such character makes the decoded length fall short of what the length
  // of `s` promises. Only then are the slower checks below needed.
  const fast = Buffer.from(s, 'base64');
  const padding = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  // Node also keeps only the low byte of a non-ASCII character ('Ł' reads as 'A'): ASCII only.
  const ascii = Buffer.byteLength(s, 'utf8') === s.length;
  if (ascii && s.length % 4 !== 1 && (padding === 0 || s.length % 4 === 0) && fast.length === Math.floor(((s.length - padding) * 3) / 4)) return fast;
  const compact = /\s/.test(s) ? s.replace(/\s+/g, '') : s;
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) return undefined;
  const unpadded = compact.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return undefined;
  if (compact.includes('=') && compact.length % 4 !== 0) return undefined;
  return Buffer.from(compact, 'base64');
}
