/**
 * The WebSocket channel client (docs/protocol.md §2.4, §2.5, §3, §4.2, §6.2; docs/cli.md §4): connect to
 * `{ws_base}/v1/realtime_tts` with `Authorization: Bearer`, wait for `tts_session.created`, send
 * exactly one `tts_session.update`, and yield each `tts.output_audio.delta` as decoded audio until
 * `tts.output.completed` — the same `AsyncIterable<AudioChunk>` as the SSE client (docs/style.md §1).
 *
 * Layers (docs/style.md §2): ws frames → protocol outcomes (realtime-frames.ts, pure) → a bounded
 * queue of audio chunks (queue/chunk-queue.ts) → the consumer. The iterator owns cleanup (docs/style.md §3): completion closes
 * with 1000; leaving the loop early, an abort, a timeout or an error terminates the socket.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import { formatByteSize } from '../byte-size.js';
import type { RawData, WebSocket } from 'ws';
import { REALTIME_PATH, type RealtimeSession, type RealtimeSessionUpdate } from '../protocol/types.js';
import { voiceToWire } from '../protocol/voices.js';
import { TtsError } from '../errors.js';
import { readCapped } from '../wire/capped-read.js';
import { ChunkQueue } from '../queue/chunk-queue.js';
import { malformed, type AudioChunk } from '../wire/delta.js';
import { rawToBuffer } from '../wire/ws-data.js';
import { assertSecureTransport, bearer } from './auth.js';
import { clean, closeError, interpretFrame } from './realtime-frames.js';
import { errorFromResponse } from './service-error.js';
import { checkUrlHint, transportError } from './transport-error.js';
import type { VerboseLog } from './types.js';
import type { WordTiming } from '../protocol/words.js';
import { safeLocation, withoutCredentials } from './safe-origin.js';


/**
 * Largest frame we accept from the service, in bytes: a delta of 100 ms of 48 kHz stereo
 * float32 is ~51 KiB of base64, so 16 MiB is generous while a runaway frame cannot exhaust memory.
 */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/**
 * Audio bytes queued for the consumer above which we stop reading the socket (TCP then pushes
 * back on the service); reading resumes once the queue drains below a quarter of it.
 * Never decode far ahead of the sink (docs/style.md §6).
 */
export const QUEUE_HIGH_WATER_BYTES = 1024 * 1024;

/** Largest body of a refused handshake we read, in bytes. */
const MAX_REFUSAL_BODY_BYTES = 64 * 1024;

/** What hints name when the setting that gave the WebSocket base URL is not known (docs/cli.md §1, §7). */
const WS_BASE_URL_PLACES = 'the WebSocket base URL (--ws-base-url, TTS_WS_BASE_URL or ws-base-url in the config file; else the base URL)';

/**
 * After our close frame (code 1000) the service should answer at once (RFC 6455 §5.5.1); if it
 * does not within this many milliseconds, the socket is destroyed. This bounds a connection left
 * closing while the run goes on (playing, later pieces); the run's end cuts it sooner
 * ({@link RealtimeStreamOptions.lingering}).
 */
const CLOSE_GRACE_MS = 2000;

/** A connection whose audio is complete and whose closing handshake is under way. */
export interface LingeringConnection {
  /** Destroys the socket at once (RFC 6455 §7.1.1: the client may close the TCP connection itself). */
  terminate(): void;
}

/**
 * What to synthesize: the session fields of docs/protocol.md §2.4, with the voice written as on the CLI
 * (`ja-man-1`); the client spells it `ja_man_1` on the wire itself (docs/cli.md §1 `--voice`).
 */
export type RealtimeSessionRequest = Omit<RealtimeSession, 'preset_voice'> & {
  /** Preset voice id with hyphens, e.g. `ja-man-1`. */
  voice: string;
};

/** How to reach the service and what to ask for. */
export interface RealtimeStreamOptions {
  /** WebSocket base, e.g. `wss://api.example.com` (a path prefix is kept; http(s) is read as ws(s)). */
  wsBaseUrl: string;
  /** API key, sent only as `Authorization: Bearer` on the handshake, never in the URL (docs/cli.md §4). */
  apiKey: string;
  /** The session; every field is sent in the one `tts_session.update` (docs/cli.md §4: "sends what the user asked"). */
  session: RealtimeSessionRequest;
  /** Limit in milliseconds for handshake + first delta, and for silence between deltas; other messages do not reset it (docs/cli.md §1 `--timeout`). */
  timeoutMs: number;
  /** Aborts the session (Ctrl-C); the iterator then throws `signal.reason`. */
  signal?: AbortSignal;
  /** Allows plain ws:// to a non-loopback host (docs/cli.md §1). */
  allowInsecure?: boolean;
  /**
   * The setting that gave `wsBaseUrl` (`--ws-base-url`, `TTS_WS_BASE_URL`, the config file's line,
   * or the base URL's; choose-service.ts ServiceTarget), named by the hints of connection failures;
   * absent = not known, and they list where it is set.
   */
  urlSource?: string | undefined;
  /** Receives protocol detail for `--verbose` (the key is always shown as `***`). */
  verbose?: VerboseLog;
  /**
   * Receives the `session` of `tts_session.updated` (what the service applied, docs/cli.md §4),
   * before the first audio chunk of the session is yielded.
   */
  onSession?: (session: Record<string, unknown>) => void;
  /** Called at `tts.output.completed` with its `engine` field (built-in extension, docs/protocol.md §6.2) and its word timings (§2.4), each if any. */
  onDone?: ((engine: string | undefined, words?: WordTiming[]) => void) | undefined;
  /**
   * Where the connection waits, after `tts.output.completed` and our close frame, for the
   * service's answering close frame (at most {@link CLOSE_GRACE_MS}); it leaves the set once
   * closed. Whoever owns the set terminates what is left when the run is over, so a service that
   * never answers does not hold the process (the run's audio is complete by then).
   */
  lingering?: Set<LingeringConnection> | undefined;
}

/**
 * Joins a WebSocket base URL and {@link REALTIME_PATH}, keeping any path prefix of the base.
 * `http:`/`https:` bases are read as `ws:`/`wss:` (a tolerant client: docs/cli.md §4).
 * @throws TtsError `usage` for an unparsable URL.
 */
export function realtimeUrl(wsBaseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(wsBaseUrl);
  } catch (cause) {
    throw new TtsError('usage', `invalid WebSocket base URL: ${withoutCredentials(wsBaseUrl)}`, { cause, hint: 'set TTS_WS_BASE_URL to e.g. wss://api.example.com' });
  }
  if (url.protocol === 'http:') url.protocol = 'ws:';
  else if (url.protocol === 'https:') url.protocol = 'wss:';
  url.pathname = url.pathname.replace(/\/+$/, '') + REALTIME_PATH;
  url.hash = '';
  return url;
}

/**
 * Streams one synthesis over the WebSocket channel.
 * @returns an async iterable of decoded audio chunks, in order; it completes on `tts.output.completed`.
 * @throws TtsError — the service's code for a refused handshake (`invalid_api_key`, exit 3) or an
 *   error event (exit 3/4/5); `timeout`, `connection_failed`, `protocol_error` (binary or malformed
 *   frame, oversize frame, no upgrade), `stream_ended_early` / `server_error` (close before
 *   completion) (exit 6); `insecure_transport` / `usage` before connecting (exit 2).
 */
export async function* streamRealtime(options: RealtimeStreamOptions): AsyncGenerator<AudioChunk, void, undefined> {
  const url = realtimeUrl(options.wsBaseUrl);
  const urlSource = options.urlSource ?? WS_BASE_URL_PLACES;
  assertSecureTransport(url, options.allowInsecure ?? false);
  const verbose = options.verbose;
  const signal = options.signal;
  if (signal?.aborted) throw signal.reason ?? new TtsError('interrupted', 'interrupted');
  const { WebSocket: WebSocketClass } = await import('ws');

  const update: RealtimeSessionUpdate = {
    type: 'tts_session.update',
    session: {
      input_text: options.session.input_text,
      preset_voice: voiceToWire(options.session.voice),
      output_audio_format: options.session.output_audio_format,
      output_audio_sample_rate: options.session.output_audio_sample_rate,
      output_audio_number_of_channels: options.session.output_audio_number_of_channels,
      language: options.session.language,
      // The built-in extension goes only on a session that asks (docs/protocol.md §2.4).
      ...(options.session.word_timings === true ? { word_timings: true as const } : {}),
    },
  };

  // Chunks decoded but not yet taken by the consumer.
  const queue = new ChunkQueue<AudioChunk>({ highWaterBytes: QUEUE_HIGH_WATER_BYTES, sizeOf: (c) => c.data.length });
  let paused = false;
  let completed = false;
  let updateSent = false;
  // The first failure wins; later ones (the close after an error event, ws's error after our own
  // terminate) are consequences, not news.
  let failed = false;

  let ws: WebSocket | undefined;
  const fail = (error: unknown, urgent = false): void => {
    if (failed || completed) return;
    failed = true;
    // An abort or timeout throws at once; the service's own error comes after the audio it
    // sent before it, in order, as on SSE.
    queue.fail(error, { urgent });
    clearTimeout(timer);
    ws?.terminate();
  };

  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      fail(
        new TtsError('timeout', `no audio from the service for ${options.timeoutMs / 1000} s (--timeout)`, {
          retriable: true,
          hint: 'raise --timeout, or check the service',
        }),
        true,
      );
    }, options.timeoutMs);
  };

  const onAbort = (): void => fail(signal?.reason ?? new TtsError('interrupted', 'interrupted'), true);
  signal?.addEventListener('abort', onAbort, { once: true });

  const onMessage = (raw: RawData, isBinary: boolean): void => {
    if (failed || completed) return;
    if (isBinary) {
      fail(malformed('a binary frame (the protocol has only JSON text frames)'));
      return;
    }
    const text = rawToBuffer(raw).toString('utf8');
    const outcome = interpretFrame(text);
    switch (outcome.kind) {
      case 'created':
        verbose?.('< tts_session.created');
        // docs/protocol.md §3: the update is sent once, after `created` was received; a repeated
        // `created` never triggers a second one (docs/cli.md §4).
        if (!updateSent) {
          updateSent = true;
          verbose?.(`> ${JSON.stringify({ ...update, session: { ...update.session, input_text: `<${[...update.session.input_text].length} chars>` } })}`);
          ws?.send(JSON.stringify(update), (err) => {
            if (err !== undefined && err !== null) fail(transportError(err, url, urlSource));
          });
        }
        return;
      case 'updated':
        verbose?.('< tts_session.updated');
        if (outcome.session !== undefined) options.onSession?.(outcome.session);
        return;
      case 'audio':
        // Only audio is news (docs/cli.md §1 --timeout): the session events before it and
        // messages we do not know do not reset the timer.
        if (!paused) arm();
        verbose?.(`< tts.output_audio.delta ${outcome.chunk.data.length} bytes${outcome.chunk.itemId === undefined ? '' : ` (${outcome.chunk.itemId})`}`);
        if (!queue.push(outcome.chunk) && !paused) {
          // The consumer is behind: stop reading so TCP pushes back on the service. Silence while
          // we are not reading is ours, not the service's, so the timer stops too.
          paused = true;
          clearTimeout(timer);
          ws?.pause();
          void queue.room().then(() => {
            if (!queue.isOpen) return;
            paused = false;
            ws?.resume();
            arm();
          });
        }
        return;
      case 'completed':
        verbose?.('< tts.output.completed');
        options.onDone?.(outcome.engine, outcome.words);
        completed = true;
        clearTimeout(timer);
        queue.end();
        return;
      case 'error':
        verbose?.(`< fatal: ${outcome.error.code}`);
        fail(outcome.error);
        return;
      case 'ignored':
        verbose?.(`< ignored event ${outcome.type}`);
        return;
    }
  };

  const onUnexpectedResponse = (_req: ClientRequest, res: IncomingMessage): void => {
    const status = res.statusCode ?? 0;
    verbose?.(`< HTTP ${status} ${String(res.headers['content-type'] ?? '')} (handshake refused)`);
    void readCapped(res, MAX_REFUSAL_BODY_BYTES).then(({ bytes }) => {
      if (status >= 400) {
        fail(errorFromResponse(status, res.headers, bytes.toString('utf8')));
      } else {
        fail(
          new TtsError('protocol_error', `expected a WebSocket upgrade (HTTP 101) from ${url.origin}, got HTTP ${status}`, {
            status,
            hint: checkUrlHint(urlSource, 'points at the speech service'),
          }),
        );
      }
    });
  };

  const onClose = (code: number, reason: Buffer): void => {
    verbose?.(`< close ${code}${reason.length === 0 ? '' : ` ${clean(reason.toString('utf8'))}`}`);
    if (completed || failed) return;
    fail(closeError(code, reason.toString('utf8')));
  };

  const onError = (err: Error): void => fail(wsError(err, url, options.timeoutMs, urlSource));

  let outcome: 'completed' | 'failed' | 'left' = 'left';
  try {
    arm();
    verbose?.(`WebSocket ${safeLocation(url)}`);
    verbose?.('> Authorization: Bearer ***');
    try {
      ws = new WebSocketClass(url, {
        headers: { authorization: bearer(options.apiKey) },
        handshakeTimeout: options.timeoutMs,
        maxPayload: MAX_FRAME_BYTES,
        // A redirect could carry the key to another host; the service has no reason to send one.
        followRedirects: false,
      });
    } catch (cause) {
      throw cause instanceof TtsError ? cause : transportError(cause, url, urlSource);
    }
    // 'error' stays attached after cleanup too: terminate() during the handshake emits one.
    ws.on('error', onError);
    ws.on('unexpected-response', onUnexpectedResponse);
    ws.on('open', () => verbose?.('< HTTP 101 (WebSocket open)'));
    ws.on('message', onMessage);
    ws.on('close', onClose);

    for (let chunk = await queue.take(); chunk !== undefined; chunk = await queue.take()) yield chunk;
    outcome = 'completed';
  } catch (error) {
    outcome = 'failed';
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    queue.close();
    if (ws !== undefined) {
      ws.off('message', onMessage);
      if (outcome === 'completed') closeNormally(ws, options.lingering);
      // Early exit, abort or error: nothing more is wanted from this socket.
      else ws.terminate();
    }
  }
}

/**
 * Closes with 1000 after `tts.output.completed` unless the service already did (docs/cli.md §4),
 * destroying the socket if the closing handshake does not finish within {@link CLOSE_GRACE_MS};
 * until then the socket is in `lingering`, for the run's end to cut.
 */
function closeNormally(ws: WebSocket, lingering: Set<LingeringConnection> | undefined): void {
  if (ws.readyState === ws.CLOSED) return;
  // A paused socket could not read the service's answering close frame.
  ws.resume();
  if (ws.readyState === ws.OPEN) ws.close(1000);
  const grace = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
  grace.unref();
  lingering?.add(ws);
  ws.once('close', () => {
    clearTimeout(grace);
    lingering?.delete(ws);
  });
}

/**
 * Maps a ws 'error' to a TtsError: ws's own `WS_ERR_*` codes (bad frames, oversize payload,
 * invalid UTF-8) are the service breaking the protocol; "Opening handshake has timed out" is our
 * `--timeout`; socket errno codes go through {@link transportError} (docs/style.md §4).
 */
function wsError(err: Error, url: URL, timeoutMs: number, urlSource: string): TtsError {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('WS_ERR_')) {
    const what = code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? `a frame over ${formatByteSize(MAX_FRAME_BYTES)}` : `an invalid WebSocket frame (${err.message})`;
    return new TtsError('protocol_error', `the service sent ${what}`, { cause: err, hint: 'the service broke the protocol; try again or report it' });
  }
  if (/handshake has timed out/i.test(err.message)) {
    return new TtsError('timeout', `the WebSocket handshake with ${url.origin} took over ${timeoutMs / 1000} s`, {
      cause: err,
      retriable: true,
      hint: 'check the network, or raise --timeout',
    });
  }
  if (typeof code !== 'string' && /^(Invalid|Server sent|Unexpected)/.test(err.message)) {
    // ws's handshake validation (bad Sec-WebSocket-Accept, Upgrade header, extensions).
    return new TtsError('protocol_error', `the WebSocket handshake with ${url.origin} failed: ${err.message}`, {
      cause: err,
      hint: checkUrlHint(urlSource, 'points at the speech service'),
    });
  }
  return transportError(err, url, urlSource);
}



