/**
 * Reading the WebSocket channel's frames (docs/protocol.md §6.2; docs/cli.md §4): one text frame → one
 * protocol outcome, and a close before completion → the error it means. Pure functions; the
 * transport (realtime.ts) acts on what they say.
 */
import { TtsError } from '../errors.js';
import { decodeDelta, isRecord, malformed, type AudioChunk } from '../wire/delta.js';
import { errorFromEvent } from './service-error.js';
import { engineOf, wordsOf } from './sse-events.js';
import type { WordTiming } from '../protocol/words.js';

/** One protocol-level reading of a text frame (docs/protocol.md §6.2, docs/cli.md §4). */
export type RealtimeOutcome =
  | { kind: 'created' }
  | { kind: 'updated'; session: Record<string, unknown> | undefined }
  | { kind: 'audio'; chunk: AudioChunk }
  | { kind: 'completed'; engine?: string | undefined; words?: WordTiming[] | undefined }
  | { kind: 'error'; error: TtsError }
  | { kind: 'ignored'; type: string };

/**
 * Reads one text frame (docs/protocol.md §6.2). The frame must be a JSON object with a string `type`;
 * unknown fields and unknown types are ignored (docs/cli.md §4), an event whose type contains
 * `error` is the service's refusal, and a delta without valid base64 is a protocol error — never
 * silently dropped audio.
 * @param text the frame's UTF-8 text.
 */
export function interpretFrame(text: string): RealtimeOutcome {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { kind: 'error', error: malformed('a frame that is not JSON') };
  }
  if (!isRecord(data)) return { kind: 'error', error: malformed('a frame that is not a JSON object') };
  const type = data['type'];
  if (typeof type !== 'string') return { kind: 'error', error: malformed('a frame without a string `type`') };
  switch (type) {
    case 'tts_session.created':
      return { kind: 'created' };
    case 'tts_session.updated':
      // docs/cli.md §4: `{type, session:{…applied}}`; another shape reports nothing applied.
      return { kind: 'updated', session: isRecord(data['session']) ? data['session'] : undefined };
    case 'tts.output_audio.delta': {
      const chunk = decodeDelta(data, 'a tts.output_audio.delta');
      return chunk instanceof TtsError ? { kind: 'error', error: chunk } : { kind: 'audio', chunk };
    }
    case 'tts.output.completed':
      return { kind: 'completed', engine: engineOf(data), words: wordsOf(data) };
    default:
      // docs/cli.md §4: "an event whose type contains `error` … is fatal".
      if (type.includes('error')) return { kind: 'error', error: errorFromEvent(text, 'WebSocket') };
      return { kind: 'ignored', type };
  }
}

/**
 * The error for a close that came before `tts.output.completed` (docs/cli.md §4): 1011 (internal
 * error), 1012 (restart) and 1013 (try again later) are the service failing, so `server_error`
 * (retriable); any other code means the audio is cut short, `stream_ended_early` (retriable unless
 * the code blames the request: 1003, 1007, 1008, 1009). Both exit 6.
 * @param code the close code (RFC 6455 §7.4; 1005 = none given, 1006 = no close frame).
 * @param reason the close reason, UTF-8, at most 123 bytes.
 */
export function closeError(code: number, reason: string): TtsError {
  const why = reason === '' ? '' : `: ${clean(reason)}`;
  const what = code === 1006 ? 'the connection dropped (1006, no close frame)' : `the service closed the WebSocket with ${code}${why}`;
  if (code === 1011 || code === 1012 || code === 1013) {
    return new TtsError('server_error', `${what}, before tts.output.completed`, { retriable: true, hint: 'the service failed; try again later' });
  }
  // A dropped or closed connection is worth another request, as on SSE; a close that says the
  // request itself was at fault (1003 unsupported data, 1007 bad data, 1008 policy, 1009 too
  // big) would only be refused again.
  const ourFault = code === 1003 || code === 1007 || code === 1008 || code === 1009;
  return new TtsError('stream_ended_early', `${what}, before tts.output.completed`, { hint: 'the audio is incomplete; try again', retriable: !ourFault });
}

/** A close reason or service text made safe for one line on a terminal. */
export function clean(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, 200);
}

