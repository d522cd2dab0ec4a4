/**
 * The SSE channel's transport (docs/protocol.md §4.1, §6.1; docs/cli.md §4): `POST {base}/v1/tts/sse`,
 * read the `text/event-stream` answer through {@link EventStreamDecoder}, and yield decoded audio
 * as an `AsyncIterable<AudioChunk>` — the same as the WebSocket channel (docs/style.md §1).
 * The iterator owns cleanup (docs/style.md §3): leaving the loop early, an abort or an error destroys
 * the request.
 */
import { SSE_PATH, type SseRequestBody } from '../protocol/types.js';
import { TtsError } from '../errors.js';
import { CappedBuffer } from '../wire/capped-read.js';
import { ChunkQueue } from '../queue/chunk-queue.js';
import type { AudioChunk } from '../wire/delta.js';
import { assertSecureTransport, bearer } from './auth.js';
import { errorFromResponse } from './service-error.js';
import { EventStreamDecoder, interpretEvent, type SseOutcome } from './sse-events.js';
import type { EventSourceMessage } from 'eventsource-parser';
import { checkUrlHint, transportError } from './transport-error.js';
import type { VerboseLog } from './types.js';
import type { Duplex, Writable as WritableType } from 'node:stream';
import type { HttpOverHead, HttpOverRequest } from './http-over.js';
import type { WordTiming } from '../protocol/words.js';
import { safeLocation, withoutCredentials } from './safe-origin.js';

/**
 * Audio bytes decoded and not yet taken by the consumer above which we stop reading the response
 * (TCP then pushes back on the service); reading resumes below a quarter of it. Never decode far
 * ahead of the sink (docs/style.md §6).
 */
export const QUEUE_HIGH_WATER_BYTES = 1024 * 1024;

/** Largest body of a refusal (an HTTP error response) we keep, in bytes. */
const MAX_REFUSAL_BODY_BYTES = 64 * 1024;

/** How to reach the service and what to ask for. */
export interface SseStreamOptions {
  /** HTTP base, e.g. `https://api.example.com` (a trailing slash or path prefix is kept). */
  baseUrl: string;
  /** API key, sent only as `Authorization: Bearer` (docs/protocol.md §5). */
  apiKey: string;
  /** The request body; all four fields are always sent (docs/cli.md §4). */
  body: SseRequestBody | (Record<string, unknown> & { input: string });
  /** Limit in milliseconds for connect + first delta, and for silence between deltas and `done`. */
  timeoutMs: number;
  /** Aborts the request (Ctrl-C); the iterator then throws `signal.reason`. */
  signal?: AbortSignal;
  /** Allows plain http:// to a non-loopback host (docs/cli.md §1). */
  allowInsecure?: boolean;
  /** Receives protocol detail for `--verbose` (the key is always shown as `***`). */
  verbose?: VerboseLog;
  /**
   * Called at `done` with its `engine` field (built-in extension, docs/protocol.md §2.3) and its
   * word timings (§2.4), each if any.
   */
  onDone?: ((engine: string | undefined, words?: WordTiming[]) => void) | undefined;
  /**
   * How another dialect differs (the OpenAI speech API, client/openai.ts; docs/protocol.md §10);
   * absent = the native route of docs/protocol.md §4.1.
   */
  dialect?: SseDialect | undefined;
  /**
   * Makes the connection to carry the request, instead of undici's TCP: the embedded service's
   * in-memory connection (server/embedded.ts, issue 20). The request, its event-stream bytes and
   * everything read from them are the same; absent = TCP/TLS through undici.
   */
  connect?: (() => Duplex) | undefined;
  /**
   * The setting that gave `baseUrl` (`--base-url`, `TTS_BASE_URL`, the config file's line;
   * choose-service.ts {@link ServiceTarget}), named by the hints of connection failures; absent =
   * not known, and they list where a base URL is set.
   */
  urlSource?: string | undefined;
}

/** What a dialect changes in the request and in reading its answer. */
export interface SseDialect {
  /** Endpoint path appended to the base URL, e.g. `/v1/audio/speech`. */
  path: string;
  /** `Accept` header of the request. */
  accept: string;
  /** Reads one event-stream message (default: docs/protocol.md §6.1's {@link interpretEvent}). */
  interpret: (event: EventSourceMessage) => SseOutcome;
  /**
   * True for a 2xx content type that is raw audio rather than an event stream: its body bytes are
   * the audio, in order, and the end of the body is the end of the audio.
   */
  rawAudio: (contentType: string) => boolean;
  /** Builds the error of an HTTP refusal (status, headers, at most 64 KiB of body text). */
  refusal: (status: number, headers: Record<string, string | string[] | undefined>, body: string) => TtsError;
}

/** Joins a base URL and an endpoint path, keeping any path prefix of the base. */
export function endpointUrl(baseUrl: string, path: string): URL {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch (cause) {
    throw new TtsError('usage', `invalid base URL: ${withoutCredentials(baseUrl)}`, { cause, hint: 'set TTS_BASE_URL to e.g. https://api.example.com' });
  }
  base.pathname = base.pathname.replace(/\/+$/, '') + path;
  return base;
}

/**
 * Streams one synthesis over SSE.
 *
 * The response is consumed through `undici.stream` (or, over `options.connect`, client/http-over.ts
 * which reads the same way), whose writable receives every body chunk as it is parsed off the
 * socket: when the connection breaks right after some deltas, those deltas are still delivered
 * before the error (a Readable body would drop what it had buffered).
 * @returns an async iterable of decoded audio chunks, in order; it completes on `done`.
 * @throws TtsError — the service's code for an HTTP error or `error` event (exit 3/4/5);
 *   `timeout`, `connection_failed`, `protocol_error` (bad content type, malformed delta,
 *   oversize line), `stream_ended_early` (no `done`), `server_error` (exit 6).
 */
export async function* streamSse(options: SseStreamOptions): AsyncGenerator<AudioChunk, void, undefined> {
  const dialect = options.dialect;
  const url = endpointUrl(options.baseUrl, dialect?.path ?? SSE_PATH);
  assertSecureTransport(url, options.allowInsecure ?? false);
  const verbose = options.verbose;
  const [stream, { Writable }] = await Promise.all([requester(options.connect), import('node:stream')]);

  // One controller aborts the request for every reason: the caller's signal, our timeout,
  // or the consumer leaving the loop (finally below).
  const controller = new AbortController();
  // --timeout is about audio (docs/cli.md §1): it runs from the request until the first delta,
  // and whenever the consumer asks for more and nothing is there, until the next delta or done.
  // Comments, keep-alives, unknown events and bytes trickling in do not reset it: a service that
  // sends only those is silent. Time the consumer spends with a chunk (playing it, or holding it
  // back as a piece queued behind another) is not silence.
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    timer ??= setTimeout(() => {
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
      return new TtsError('timeout', `no audio from the service for ${options.timeoutMs / 1000} s (--timeout)`, {
        cause,
        retriable: true,
        hint: 'raise --timeout, or check the service',
      });
    }
    return cause instanceof TtsError ? cause : transportError(cause, url, options.urlSource);
  };

  // Outcomes decoded but not yet taken by the consumer. The writable holds back its callback
  // while the queue is full, so a slow consumer (the sound card) slows the socket, not memory.
  const queue = new ChunkQueue<SseOutcome>({ highWaterBytes: QUEUE_HIGH_WATER_BYTES, sizeOf: (o) => (o.kind === 'audio' ? o.chunk.data.length : 0) });
  const decoder = new EventStreamDecoder(dialect?.interpret ?? interpretEvent);
  // Set for a raw audio answer (a dialect's): body bytes are audio, its end is `done`.
  let raw = false;
  let refusal: TtsError | undefined;
  let settled = false;

  arm();
  verbose?.(`POST ${safeLocation(url)}`);
  verbose?.('> Authorization: Bearer ***');
  verbose?.(`> ${JSON.stringify({ ...options.body, input: `<${options.body.input.length} chars>` })}`);
  stream(
    url,
    {
      method: 'POST',
      headers: {
        authorization: bearer(options.apiKey),
        'content-type': 'application/json',
        accept: dialect?.accept ?? 'text/event-stream',
        // The event stream is read as it comes; a compressed one could not be (docs/cli.md §4).
        'accept-encoding': 'identity',
      },
      body: JSON.stringify(options.body),
      signal: controller.signal,
      // Our own timer covers connect, first delta and silences (docs/cli.md §1 --timeout).
      headersTimeout: 0,
      bodyTimeout: 0,
    },
    ({ statusCode, headers }) => {
      verbose?.(`< HTTP ${statusCode} ${String(headers['content-type'] ?? '')}`);
      if (statusCode < 200 || statusCode >= 300) {
        // Keep (at most 64 KiB of) the error body, then build the refusal from it: at its end,
        // or as soon as it is longer than that (a body that never ends is not waited for until
        // --timeout: the request is closed and the refusal is what it is).
        const body = new CappedBuffer(MAX_REFUSAL_BODY_BYTES);
        const refuse = (): void => {
          const encoded = contentEncoding(headers);
          // A compressed body would print as gibberish: name its encoding instead.
          refusal ??= (dialect?.refusal ?? errorFromResponse)(statusCode, headers, encoded === undefined ? body.text() : `a ${encoded}-encoded body, which tts does not decode`);
        };
        return new Writable({
          write(chunk: Buffer, _enc, cb) {
            if (refusal === undefined && !body.push(chunk)) {
              refuse();
              controller.abort();
            }
            cb();
          },
          final(cb) {
            refuse();
            cb();
          },
        });
      }
      const contentType = String(headers['content-type'] ?? '');
      const encoding = contentEncoding(headers);
      if (encoding !== undefined) {
        queue.fail(
          new TtsError('protocol_error', `the service sent a ${encoding}-encoded (compressed) response although tts asked for none (Accept-Encoding: identity); tts reads only uncompressed event streams`, {
            hint: 'turn compression off for text/event-stream on the service or the proxy in front of it',
          }),
          { urgent: true },
        );
        controller.abort();
      } else if (dialect?.rawAudio(contentType) === true) {
        raw = true;
      } else if (!/^\s*text\/event-stream\s*(;|$)/i.test(contentType)) {
        queue.fail(
          new TtsError('protocol_error', `expected text/event-stream, got ${contentType || 'no content type'}`, {
            hint: checkUrlHint(options.urlSource, 'points at the speech service'),
          }),
          { urgent: true },
        );
        controller.abort();
      }
      return new Writable({
        write(chunk: Buffer, _enc, cb) {
          let outcomes: SseOutcome[];
          try {
            outcomes = raw ? [{ kind: 'audio', chunk: { data: chunk, itemId: undefined } }] : decoder.push(chunk);
          } catch (error) {
            cb(error as Error);
            return;
          }
          let room = true;
          for (const outcome of outcomes) room = queue.push(outcome) && room;
          if (room) cb();
          else void queue.room().then(() => cb());
        },
        final(cb) {
          // A raw audio body that ended cleanly (undici checks Content-Length and the chunked
          // framing, so a cut is an error, not an end) is the whole audio.
          if (raw) queue.push({ kind: 'done' });
          else for (const outcome of decoder.end()) queue.push(outcome);
          cb();
        },
      });
    },
  ).then(
    () => {
      settled = true;
      if (refusal !== undefined) queue.fail(refusal);
      queue.end();
    },
    (error: unknown) => {
      settled = true;
      queue.fail(refusal ?? error);
    },
  );

  try {
    for (;;) {
      if (queue.length === 0) arm();
      const outcome = await queue.take();
      if (outcome === undefined) {
        // A last event without its blank line is incomplete per the event-stream grammar; the
        // stream ended before `done` either way (docs/protocol.md §3: deltas, then done).
        throw new TtsError('stream_ended_early', 'the service closed the stream before `done`', {
          hint: 'the audio is incomplete; try again',
          retriable: true,
        });
      }
      if (outcome.kind !== 'ignored') disarm();
      if (outcome.kind === 'audio') {
        verbose?.(`< delta ${outcome.chunk.data.length} bytes${outcome.chunk.itemId === undefined ? '' : ` (${outcome.chunk.itemId})`}`);
        yield outcome.chunk;
      } else if (outcome.kind === 'done') {
        verbose?.('< done');
        options.onDone?.(outcome.engine, outcome.words);
        return;
      } else if (outcome.kind === 'error') {
        throw outcome.error;
      } else {
        verbose?.(`< ignored event ${outcome.name}`);
      }
    }
  } catch (error) {
    throw error instanceof TtsError ? error : fail(error);
  } finally {
    disarm();
    options.signal?.removeEventListener('abort', onCallerAbort);
    if (!settled) controller.abort();
    queue.close();
  }
}

/** Sends a request and pours its answer into the writable chosen by the answer's head. */
type Requester = (url: URL, init: HttpOverRequest & { headersTimeout: number; bodyTimeout: number }, factory: (head: HttpOverHead) => WritableType) => Promise<unknown>;

/** undici's `stream()` for TCP/TLS; client/http-over.ts over the given connection (no undici). */
async function requester(connect: (() => Duplex) | undefined): Promise<Requester> {
  if (connect !== undefined) {
    const { streamOver } = await import('./http-over.js');
    return (url, init, factory) => streamOver(connect, url, init, factory);
  }
  const { stream } = await import('./undici.js');
  return (url, init, factory) => stream(url, init, factory);
}

/**
 * The response's `Content-Encoding` (RFC 9110 §8.4) when it is anything but `identity`, e.g.
 * `gzip`; undefined for an uncompressed body.
 */
function contentEncoding(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers['content-encoding'];
  const value = (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).trim().toLowerCase();
  return value === '' || value === 'identity' ? undefined : value.replace(/[^a-z0-9, -]/g, '?').slice(0, 40);
}
