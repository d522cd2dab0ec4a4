/**
 * The SSE channel client (SERVICE.md §4.1, §6.1; DESIGN.md §4): `POST {base}/v1/tts/sse`, read
 * the `text/event-stream` answer, and yield decoded audio as an `AsyncIterable<AudioChunk>`.
 *
 * Layers (STYLE.md §2): bytes → UTF-8 text (streaming TextDecoder, so a character split across
 * chunks survives) → SSE events (`eventsource-parser`, which handles CRLF/CR/LF, comments and
 * lines split anywhere, per the WHATWG event-stream grammar) → protocol events → audio chunks.
 * The iterator owns cleanup: leaving the loop early, an abort or an error destroys the request.
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SSE_PATH, type SseRequestBody } from '../protocol/types.js';
import { assertSecureTransport, bearer } from './auth.js';
import { TtsError } from './errors.js';
import { errorFromEvent, errorFromResponse } from './service-error.js';
import { transportError } from './transport-error.js';
import type { AudioChunk, VerboseLog } from './types.js';


/**
 * Longest run of event-stream text without an event boundary we buffer, in characters: a
 * server that never ends a line cannot make us run out of memory.
 */
export const MAX_PENDING_EVENT_CHARS = 16 * 1024 * 1024;

/** How to reach the service and what to ask for. */
export interface SseStreamOptions {
  /** HTTP base, e.g. `https://api.example.com` (a trailing slash or path prefix is kept). */
  baseUrl: string;
  /** API key, sent only as `Authorization: Bearer` (SERVICE.md §5). */
  apiKey: string;
  /** The request body; all four fields are always sent (DESIGN.md §4). */
  body: SseRequestBody;
  /** Limit in milliseconds for connect + first event, and for silence between events. */
  timeoutMs: number;
  /** Aborts the request (Ctrl-C); the iterator then throws `signal.reason`. */
  signal?: AbortSignal;
  /** Allows plain http:// to a non-loopback host (DESIGN.md §1). */
  allowInsecure?: boolean;
  /** Receives protocol detail for `--verbose` (the key is always shown as `***`). */
  verbose?: VerboseLog;
}

/** Joins a base URL and an endpoint path, keeping any path prefix of the base. */
export function endpointUrl(baseUrl: string, path: string): URL {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch (cause) {
    throw new TtsError('usage', `invalid base URL: ${baseUrl}`, { cause, hint: 'set TTS_BASE_URL to e.g. https://api.example.com' });
  }
  base.pathname = base.pathname.replace(/\/+$/, '') + path;
  return base;
}

/**
 * Streams one synthesis over SSE.
 *
 * The response is consumed through `undici.stream`, whose writable receives every body chunk
 * as it is parsed off the socket: when the connection breaks right after some deltas, those
 * deltas are still delivered before the error (a Readable body would drop what it had buffered).
 * @returns an async iterable of decoded audio chunks, in order; it completes on `done`.
 * @throws TtsError — the service's code for an HTTP error or `error` event (exit 3/4/5);
 *   `timeout`, `connection_failed`, `protocol_error` (bad content type, malformed delta,
 *   oversize line), `stream_ended_early` (no `done`), `server_error` (exit 6).
 */
export async function* streamSse(options: SseStreamOptions): AsyncGenerator<AudioChunk, void, undefined> {
  const url = endpointUrl(options.baseUrl, SSE_PATH);
  assertSecureTransport(url, options.allowInsecure ?? false);
  const verbose = options.verbose;
  const [{ stream }, { Writable }] = await Promise.all([import('undici'), import('node:stream')]);

  // One controller aborts the request for every reason: the caller's signal, our timeout,
  // or the consumer leaving the loop (finally below).
  const controller = new AbortController();
  // --timeout counts only while we wait for the service: from the request until the first event,
  // and whenever the consumer asks for more and nothing is there. Time the consumer spends with a
  // chunk (playing it, or holding it back as a piece queued behind another) is not silence.
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (timer !== undefined) {
      timer.refresh();
      return;
    }
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.timeoutMs);
  };
  const disarm = (): void => {
    clearTimeout(timer);
    timer = undefined;
  };
  const onCallerAbort = (): void => controller.abort();
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  if (options.signal?.aborted) controller.abort();

  const fail = (cause: unknown): unknown => {
    if (options.signal?.aborted) return options.signal.reason ?? new TtsError('interrupted', 'interrupted');
    if (timedOut) {
      return new TtsError('timeout', `no event from the service for ${options.timeoutMs / 1000} s`, {
        cause,
        retriable: true,
        hint: 'raise --timeout, or check the service',
      });
    }
    return cause instanceof TtsError ? cause : transportError(cause, url);
  };

  // Outcomes decoded but not yet taken by the consumer. The writable holds back its callback
  // while too many wait, so a slow consumer (the sound card) slows the socket, not memory.
  const ready: SseOutcome[] = [];
  const decoder = new EventStreamDecoder();
  let heldCallback: (() => void) | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  let settled = false;
  let failure: unknown;
  let refusal: TtsError | undefined;

  arm();
  verbose?.(`POST ${url.href}`);
  verbose?.('> Authorization: Bearer ***');
  verbose?.(`> ${JSON.stringify({ ...options.body, input: `<${options.body.input.length} chars>` })}`);
  const request = stream(
    url,
    {
      method: 'POST',
      headers: {
        authorization: bearer(options.apiKey),
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify(options.body),
      signal: controller.signal,
      // Our own timer covers connect, first event and silences (DESIGN.md §1 --timeout).
      headersTimeout: 0,
      bodyTimeout: 0,
    },
    ({ statusCode, headers }) => {
      verbose?.(`< HTTP ${statusCode} ${String(headers['content-type'] ?? '')}`);
      if (statusCode < 200 || statusCode >= 300) {
        // Collect (at most 64 KiB of) the error body, then build the refusal from it.
        const parts: Buffer[] = [];
        let size = 0;
        return new Writable({
          write(chunk: Buffer, _enc, cb) {
            if (size < 64 * 1024) parts.push(chunk);
            size += chunk.length;
            cb();
          },
          final(cb) {
            refusal = errorFromResponse(statusCode, headers, Buffer.concat(parts).subarray(0, 64 * 1024).toString('utf8'));
            cb();
          },
        });
      }
      const contentType = String(headers['content-type'] ?? '');
      if (!/^\s*text\/event-stream\s*(;|$)/i.test(contentType)) {
        refusal = new TtsError('protocol_error', `expected text/event-stream, got ${contentType || 'no content type'}`, {
          hint: 'check TTS_BASE_URL points at the speech service',
        });
        controller.abort();
      }
      return new Writable({
        write(chunk: Buffer, _enc, cb) {
          // Bytes arriving (comments and keep-alives too) are not silence.
          if (timer !== undefined) arm();
          try {
            ready.push(...decoder.push(chunk));
          } catch (error) {
            cb(error as Error);
            return;
          }
          notify();
          if (ready.length > 64) heldCallback = cb;
          else cb();
        },
        final(cb) {
          ready.push(...decoder.end());
          notify();
          cb();
        },
      });
    },
  );
  request.then(
    () => {
      settled = true;
      notify();
    },
    (error: unknown) => {
      settled = true;
      failure = error;
      notify();
    },
  );

  try {
    for (;;) {
      const outcome = ready.shift();
      if (outcome !== undefined) {
        if (ready.length <= 16 && heldCallback !== undefined) {
          const cb = heldCallback;
          heldCallback = undefined;
          cb();
        }
        disarm();
        if (outcome.kind === 'audio') {
          verbose?.(`< delta ${outcome.chunk.data.length} bytes${outcome.chunk.itemId === undefined ? '' : ` (${outcome.chunk.itemId})`}`);
          yield outcome.chunk;
        } else if (outcome.kind === 'done') {
          verbose?.('< done');
          return;
        } else if (outcome.kind === 'error') {
          throw outcome.error;
        } else {
          verbose?.(`< ignored event ${outcome.name}`);
        }
        continue;
      }
      if (refusal !== undefined && (settled || refusal.code === 'protocol_error')) throw refusal;
      if (settled) {
        if (failure !== undefined) throw fail(failure);
        // A last event without its blank line is incomplete per the event-stream grammar; the
        // stream ended before `done` either way (SERVICE.md §3: deltas, then done).
        throw new TtsError('stream_ended_early', 'the service closed the stream before `done`', {
          hint: 'the audio is incomplete; try again',
          retriable: true,
        });
      }
      arm();
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } catch (error) {
    throw error instanceof TtsError ? error : fail(error);
  } finally {
    disarm();
    options.signal?.removeEventListener('abort', onCallerAbort);
    if (!settled) controller.abort();
    heldCallback?.();
  }
}

/**
 * Push-style event-stream decoder: bytes in, protocol outcomes out, in order. Bytes may be split
 * anywhere (inside a UTF-8 character, between CR and LF).
 */
export class EventStreamDecoder {
  // StringDecoder keeps a character split across chunks for the next one, like a streaming
  // TextDecoder, at several times its speed (it is native and allocation-light).
  readonly #decoder = new StringDecoder('utf8');
  readonly #ready: SseOutcome[] = [];
  #pendingChars = 0;
  #lastText = '';
  readonly #parser = createParser({
    onEvent: (event) => {
      this.#pendingChars = 0;
      this.#ready.push(interpretEvent(event));
    },
    onComment: () => {
      this.#pendingChars = 0;
    },
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
    this.#pendingChars += text.length;
    this.#parser.feed(text);
    if (this.#pendingChars > MAX_PENDING_EVENT_CHARS) {
      throw new TtsError('protocol_error', `the event stream sent over ${MAX_PENDING_EVENT_CHARS} characters without completing an event`);
    }
    return this.#ready.splice(0);
  }

  /** Ends the stream. @returns the outcomes completed by its end. */
  end(): SseOutcome[] {
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
 * Decodes an event-stream body into protocol outcomes, in order, as bytes arrive.
 * @throws TtsError `protocol_error` as {@link EventStreamDecoder.push} does.
 */
export async function* decodeEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseOutcome, void, undefined> {
  const decoder = new EventStreamDecoder();
  for await (const raw of body) yield* decoder.push(raw);
  yield* decoder.end();
}

/** One protocol-level reading of an event (SERVICE.md §6.1). */
export type SseOutcome =
  | { kind: 'audio'; chunk: AudioChunk }
  | { kind: 'done' }
  | { kind: 'error'; error: TtsError }
  | { kind: 'ignored'; name: string };

/**
 * Maps one event-stream message to a protocol outcome (SERVICE.md §6.1, DESIGN.md §4): named
 * `delta` / `done` / `error` events, or unnamed (`message`) events dispatched on `data.type`.
 * Unknown events are ignored; a malformed delta is an error, never silently dropped audio.
 */
export function interpretEvent(event: EventSourceMessage): SseOutcome {
  const name = event.event === undefined || event.event === '' || event.event === 'message' ? undefined : event.event;
  let data: unknown;
  let json = false;
  try {
    data = JSON.parse(event.data);
    json = true;
  } catch {
    data = undefined;
  }
  const type = json && isRecord(data) && typeof data['type'] === 'string' ? data['type'] : undefined;
  const kind = name ?? type;
  if (kind === 'delta' || kind === 'speech.audio.delta') {
    if (!json || !isRecord(data)) return { kind: 'error', error: malformed('a delta event whose data is not a JSON object') };
    const delta = data['delta'];
    if (typeof delta !== 'string') return { kind: 'error', error: malformed('a delta event without a string `delta`') };
    const bytes = decodeBase64(delta);
    if (bytes === undefined) return { kind: 'error', error: malformed('a delta event whose `delta` is not valid base64') };
    const itemId = typeof data['item_id'] === 'string' ? data['item_id'] : undefined;
    return { kind: 'audio', chunk: { data: bytes, itemId } };
  }
  if (kind === 'done' || kind === 'speech.audio.done') return { kind: 'done' };
  if (kind === 'error' || (kind !== undefined && kind.includes('error'))) {
    return { kind: 'error', error: errorFromEvent(event.data, 'SSE') };
  }
  return { kind: 'ignored', name: kind ?? '(unnamed)' };
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
