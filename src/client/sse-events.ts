/**
 * Reading an event stream (docs/protocol.md §6.1; docs/cli.md §4), push-style: bytes in, protocol
 * outcomes out, in order. Layers (docs/style.md §2): bytes → UTF-8 text (a character split across
 * chunks survives) → SSE events (`eventsource-parser`, which handles CRLF/CR/LF, comments and
 * lines split anywhere, per the WHATWG event-stream grammar, and caps what it buffers) →
 * protocol outcomes (audio, done, error, ignored).
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { TtsError } from '../errors.js';
import { decodeDelta, isRecord, type AudioChunk } from '../wire/delta.js';
import { errorFromEvent } from './service-error.js';
import { parseWordTimings, type WordTiming } from '../protocol/words.js';

/**
 * Longest run of event-stream text without an event boundary we buffer, in characters: a
 * server that never ends a line cannot make us run out of memory (eventsource-parser's
 * `maxBufferSize`).
 */
export const MAX_PENDING_EVENT_CHARS = 16 * 1024 * 1024;

/** One protocol-level reading of an event (docs/protocol.md §6.1). */
export type SseOutcome =
  | { kind: 'audio'; chunk: AudioChunk }
  | { kind: 'done'; engine?: string | undefined; words?: WordTiming[] | undefined }
  | { kind: 'error'; error: TtsError }
  | { kind: 'ignored'; name: string };

/**
 * Push-style event-stream decoder. Bytes may be split anywhere (inside a UTF-8 character,
 * between CR and LF).
 */
export class EventStreamDecoder {
  // StringDecoder keeps a character split across chunks for the next one, like a streaming
  // TextDecoder, at several times its speed (it is native and allocation-light).
  readonly #decoder = new StringDecoder('utf8');
  readonly #ready: SseOutcome[] = [];
  #overflow = false;
  #lastText = '';
  /** @param interpret reads one message (default: docs/protocol.md §6.1's; client/openai.ts has the OpenAI dialect's). */
  constructor(private readonly interpret: (event: EventSourceMessage) => SseOutcome = interpretEvent) {}

  readonly #parser = createParser({
    onEvent: (event) => this.#ready.push(this.interpret(event)),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') this.#overflow = true;
    },
    maxBufferSize: MAX_PENDING_EVENT_CHARS,
  });

  /**
   * Decodes the next bytes.
   * @returns the outcomes completed by them.
   * @throws TtsError `protocol_error` when more than {@link MAX_PENDING_EVENT_CHARS} characters
   *   arrive without completing an event.
   */
  push(bytes: Uint8Array): SseOutcome[] {
    const text = this.#decoder.write(bytes as Buffer);
    if (text !== '') this.#lastText = text;
    if (!this.#overflow) this.#parser.feed(text);
    if (this.#overflow) {
      throw new TtsError('protocol_error', `the event stream sent over ${MAX_PENDING_EVENT_CHARS} characters without completing an event`);
    }
    return this.#ready.splice(0);
  }

  /** Ends the stream. @returns the outcomes completed by its end. */
  end(): SseOutcome[] {
    if (this.#overflow) return this.#ready.splice(0);
    let tail = this.#decoder.end();
    if (tail !== '') this.#parser.feed(tail);
    else tail = this.#lastText;
    // A CR that ends the stream ends its line (WHATWG: CR, LF or CRLF), but the parser holds it
    // back waiting for a possible LF. Supplying that LF completes the line and nothing more: an
    // event not yet ended by a blank line is still discarded, as the spec says.
    if (tail.endsWith('\r')) this.#parser.feed('\n');
    return this.#ready.splice(0);
  }
}

/**
 * Maps one event-stream message to a protocol outcome (docs/protocol.md §6.1, docs/cli.md §4): named
 * `delta` / `done` / `error` events, or unnamed (`message`) events dispatched on `data.type`.
 * Unknown events are ignored; a malformed delta is an error, never silently dropped audio.
 */
export function interpretEvent(event: EventSourceMessage): SseOutcome {
  const name = event.event === undefined || event.event === '' || event.event === 'message' ? undefined : event.event;
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    data = undefined;
  }
  const type = isRecord(data) && typeof data['type'] === 'string' ? data['type'] : undefined;
  const kind = name ?? type;
  if (kind === 'delta' || kind === 'speech.audio.delta') {
    const chunk = decodeDelta(data, 'a delta event');
    return chunk instanceof TtsError ? { kind: 'error', error: chunk } : { kind: 'audio', chunk };
  }
  if (kind === 'done' || kind === 'speech.audio.done') return { kind: 'done', engine: engineOf(data), words: wordsOf(data) };
  if (kind !== undefined && kind.includes('error')) return { kind: 'error', error: errorFromEvent(event.data, 'SSE') };
  return { kind: 'ignored', name: kind ?? '(unnamed)' };
}

/**
 * The built-in service's word timings extension of `done` / `tts.output.completed`
 * (docs/protocol.md §2.4): `words`, checked by parseWordTimings. Undefined when absent or not
 * well-formed (a client then has no timings for the piece).
 */
export function wordsOf(data: unknown): WordTiming[] | undefined {
  return isRecord(data) && data['words'] !== undefined ? parseWordTimings(data['words']) : undefined;
}

/**
 * The built-in service's extension of `done` / `tts.output.completed` (docs/protocol.md §2.3):
 * `engine`, a string naming who spoke. Undefined when absent or not a short string; a client
 * that does not know the extension ignores it.
 */
export function engineOf(data: unknown): string | undefined {
  const engine = isRecord(data) ? data['engine'] : undefined;
  return typeof engine === 'string' && engine.length > 0 && engine.length <= 256 ? engine : undefined;
}
