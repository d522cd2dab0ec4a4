/**
 * `/v1/realtime_tts` of the built-in service: the WebSocket channel (docs/protocol.md §2.4, §2.5, §3,
 * §4.2, §5, §6.2, §7), with the shapes docs/cli.md §4 decides where the spec is silent.
 *
 * Handshake: the key comes from `Authorization: Bearer` only (a key in a URL leaks into logs);
 * a missing or wrong key is refused with HTTP 401 and the JSON error body, an unknown path with
 * 404. Session, in order:
 *   server `{"type":"tts_session.created","session":{id, …defaults}}`
 *   client `tts_session.update` (once)
 *   server `{"type":"tts_session.updated","session":{id, …applied}}`
 *   server `{"type":"tts.output_audio.delta","delta":"<base64>"}` × n, as the engine makes audio
 *   server `{"type":"tts.output.completed","session_id","audio_seconds"}`, then close 1000.
 *
 * Errors are `{"type":"error","error":{"code","message"}}` events (docs/cli.md §4):
 * - refused update (the SSE codes, plus `invalid_parameters` for rate/channels), malformed JSON,
 *   a frame that is not an object with a string `type`, a binary frame: error, then close 1008;
 * - a second `tts_session.update`, or a message of another `type` (docs/protocol.md §4.2 leaves them
 *   "not shown"; we answer rather than ignore, so a client learns of its mistake): error
 *   `bad_request`, and the session goes on — a running synthesis continues;
 * - the engine failing: error `server_error`, then close 1011;
 * - a frame over 1 MiB: ws closes with 1009 (RFC 6455 §7.4.1, "message too big");
 * - no update within {@link SESSION_IDLE_MS}: error `bad_request`, then close 1008;
 * - the server shutting down: error `server_error`, then close 1001 ("going away").
 * A client that goes away aborts the synthesis at once. Per-key limits, when the service has
 * them, come in through {@link RealtimeLimits}: rate and concurrency refuse the handshake (429),
 * a character quota refuses the update (error event, close 1008).
 */
import { randomBytes } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import { audioSeconds } from '../dsp/encoding.js';
import type { SpeechEngine } from '../engine/types.js';
import type { ServiceErrorCode } from '../errors.js';
import { HTTP_STATUS } from './statuses.js';
import { REALTIME_PATH, type ErrorBody } from '../protocol/types.js';
import { rawToBuffer } from '../wire/ws-data.js';
import { voiceToWire } from '../protocol/voices.js';
import { pathOf } from './http-util.js';
import { bearerKey, type KeyRing } from './keys.js';
import { isRefusal, REALTIME_DEFAULT_SAMPLE_RATE, validateRealtimeSession, type Refusal, type ValidRealtimeRequest } from './validate.js';


/** Largest client frame, in bytes; ws closes with 1009 above it. An update of 5000 characters is ~20 KiB. */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;

/**
 * Bytes queued on a session's socket above which synthesis waits for the client to read
 * (never synthesize far ahead of a slow reader).
 */
export const SEND_HIGH_WATER_BYTES = 1024 * 1024;

/** Milliseconds a session may wait for its `tts_session.update` before it is closed (1008). */
export const SESSION_IDLE_MS = 60_000;

/** Session settings before the update, as `tts_session.created` reports them (docs/cli.md §4). */
export const REALTIME_DEFAULTS = {
  preset_voice: 'ja_man_1',
  output_audio_format: 'pcm16',
  output_audio_sample_rate: REALTIME_DEFAULT_SAMPLE_RATE,
  output_audio_number_of_channels: 1,
  language: 'ja',
} as const;

/** What the route needs from the service around it. */
export interface RealtimeRouteContext {
  engine: SpeechEngine;
  /** Accepted keys. */
  keys: KeyRing;
  /** Longest accepted input, in characters. */
  maxChars: number;
  /** One line per session or refused handshake (no keys, no text). */
  accessLog?: ((line: string) => void) | undefined;
  /** Overrides {@link SESSION_IDLE_MS} (tests). */
  idleMs?: number | undefined;
  /** The service's per-key limits (docs/cli.md §4), when it enforces any. */
  limits?: RealtimeLimits | undefined;
}

/** A refused handshake: answered with the code's HTTP status (HTTP_STATUS) and the JSON error body. */
export interface HandshakeRefusal {
  code: ServiceErrorCode;
  message: string;
  /** e.g. `Retry-After`. */
  headers?: Record<string, string> | undefined;
}

/**
 * Hooks for the service's limits (docs/protocol.md §8). A session counts as one request from its
 * accepted handshake until its socket closes.
 */
export interface RealtimeLimits {
  /**
   * Called when the key is accepted, before the upgrade (rate, concurrency).
   * @param keyIndex the key's index in the KeyRing.
   * @returns a release function, called once when the session ends; or the refusal to answer
   *   the handshake with (e.g. 429 `rate_limit_exceeded` with Retry-After).
   */
  admit(keyIndex: number): (() => void) | HandshakeRefusal;
  /**
   * Called for a valid update before synthesis starts (a character quota).
   * @param characters length of `input_text` in code points.
   * @returns a refusal (e.g. `quota_exceeded`), sent as an error event before close 1008.
   */
  charge?(keyIndex: number, characters: number): Refusal | undefined;
}

/** The attached route. */
export interface RealtimeRoute {
  /**
   * Ends every open session for a shutdown: error event `server_error`, then close 1001 ("going
   * away", RFC 6455 §7.4.1); their syntheses abort at once, and later handshakes are refused
   * with 503. A client that never answers the close is terminated by
   * `server.closeAllConnections()`.
   */
  closeAll(): void;
}

/** A fresh session id: `sess_` + 24 hex digits. */
export function newSessionId(): string {
  return `sess_${randomBytes(12).toString('hex')}`;
}

/**
 * Serves `/v1/realtime_tts` on `server`'s HTTP `upgrade` requests. `ws` is loaded on the first
 * upgrade, so SSE-only use of the service never pays for it. `server.closeAllConnections()` is
 * extended to terminate open sessions too: upgraded sockets are no longer HTTP connections, and
 * would otherwise hold `server.close()` open until each session ends by itself.
 */
export function attachRealtime(server: Server, ctx: RealtimeRouteContext): RealtimeRoute {
  let wss: WebSocketServer | undefined;
  let loading: Promise<WebSocketServer> | undefined;
  let shuttingDown = false;
  /** Each open session's shutdown (error event, close 1001). */
  const sessions = new Set<() => void>();
  const load = (): Promise<WebSocketServer> => {
    loading ??= import('ws').then(({ WebSocketServer: Wss }) => {
      // perMessageDeflate off: audio in base64 barely compresses, and it costs memory per session.
      wss = new Wss({ noServer: true, maxPayload: MAX_CLIENT_FRAME_BYTES, perMessageDeflate: false });
      return wss;
    });
    return loading;
  };

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Until ws owns the socket, a reset must not become an uncaught 'error'.
    socket.on('error', () => {});
    const started = performance.now();
    const path = pathOf(req);
    const log = (status: number): void => ctx.accessLog?.(`${req.method ?? '-'} ${path} ${status} ${Math.round(performance.now() - started)}ms`);
    if (path !== REALTIME_PATH) {
      refuseHandshake(socket, 404, { error: { code: 'not_found', message: `no WebSocket route ${path}; the service has ${REALTIME_PATH}` } });
      log(404);
      return;
    }
    if (shuttingDown) {
      refuseHandshake(socket, 503, { error: { code: 'server_error', message: 'the server is shutting down' } });
      log(503);
      return;
    }
    const key = bearerKey(req.headers.authorization);
    const keyIndex = key === undefined ? -1 : ctx.keys.indexOf(key);
    if (keyIndex === -1) {
      const message = key === undefined ? 'missing or malformed Authorization: Bearer header' : 'the API key is not valid';
      refuseHandshake(socket, 401, { error: { code: 'invalid_api_key', message } }, { 'WWW-Authenticate': 'Bearer' });
      log(401);
      return;
    }
    const admitted = ctx.limits?.admit(keyIndex) ?? ((): void => {});
    if (typeof admitted !== 'function') {
      const status = HTTP_STATUS[admitted.code];
      refuseHandshake(socket, status, { error: { code: admitted.code, message: admitted.message } }, admitted.headers);
      log(status);
      return;
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      admitted();
    };
    // A handshake that never completes (ws refuses it, or the client leaves) frees its slot too.
    socket.once('close', release);
    load().then(
      (w) =>
        // ws answers a malformed upgrade (bad method, version, key) itself with 400/405.
        w.handleUpgrade(req, socket, head, (ws) => {
          const shutdown = runSession(ws, ctx, keyIndex, (closeCode) => {
            sessions.delete(shutdown);
            release();
            ctx.accessLog?.(`GET ${path} 101 close=${closeCode} ${Math.round(performance.now() - started)}ms`);
          });
          sessions.add(shutdown);
          if (shuttingDown) shutdown();
        }),
      () => {
        refuseHandshake(socket, 500, { error: { code: 'server_error', message: 'the WebSocket route failed to start' } });
        log(500);
      },
    );
  });

  const closeAll = (): void => {
    shuttingDown = true;
    for (const shutdown of [...sessions]) shutdown();
  };
  const closeAllConnections = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    for (const client of wss?.clients ?? []) client.terminate();
    closeAllConnections();
  };
  return { closeAll };
}

/**
 * Writes a whole HTTP response on a socket that asked to upgrade, then closes it (the socket is
 * no longer managed by the HTTP server, so ServerResponse cannot be used).
 */
function refuseHandshake(socket: Duplex, status: number, body: ErrorBody, extraHeaders: Record<string, string> = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify(body);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    Connection: 'close',
    ...extraHeaders,
  };
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  socket.once('finish', () => socket.destroy());
  socket.end(`${head}\r\n\r\n${text}`);
}

/**
 * Runs one session on an accepted socket.
 * @param keyIndex the accepted key's index in the KeyRing (for the limits' hooks).
 * @param onClosed called once when the socket closes, with its close code.
 * @returns the session's shutdown: error event `server_error`, then close 1001.
 */
function runSession(ws: WebSocket, ctx: RealtimeRouteContext, keyIndex: number, onClosed: (code: number) => void): () => void {
  const id = newSessionId();
  const controller = new AbortController();
  // waiting: for the update; running: synthesizing; closing: our close frame is out or due.
  let state: 'waiting' | 'running' | 'closing' = 'waiting';

  const idle = setTimeout(() => {
    refuse('bad_request', `no tts_session.update within ${(ctx.idleMs ?? SESSION_IDLE_MS) / 1000} s`);
  }, ctx.idleMs ?? SESSION_IDLE_MS);

  // An error event, then the close that ends the session (docs/cli.md §4). The close reason
  // repeats the code for clients that only see the close.
  const refuse = (code: string, message: string, closeCode = 1008): void => {
    if (state === 'closing') return;
    state = 'closing';
    clearTimeout(idle);
    controller.abort();
    sendError(ws, code, message);
    ws.close(closeCode, code);
  };

  // ws reports bad frames (1002), oversize ones (1009) and resets here and closes by itself.
  ws.on('error', () => {});
  ws.on('close', (code: number) => {
    clearTimeout(idle);
    // The client went away (or we closed): stop synthesizing at once.
    controller.abort();
    onClosed(code);
  });

  ws.on('message', (raw: RawData, isBinary: boolean) => {
    if (state === 'closing') return;
    if (isBinary) {
      refuse('bad_request', 'binary frames are not part of the protocol; send JSON text frames');
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(rawToBuffer(raw).toString('utf8'));
    } catch {
      refuse('bad_request', 'the message is not valid JSON');
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg) || typeof (msg as Record<string, unknown>)['type'] !== 'string') {
      refuse('bad_request', 'a message must be a JSON object with a string `type`');
      return;
    }
    const type = (msg as Record<string, unknown>)['type'] as string;
    if (type !== 'tts_session.update') {
      sendError(ws, 'bad_request', `unknown message type \`${type.slice(0, 64)}\`; the client sends only tts_session.update`);
      return;
    }
    if (state === 'running') {
      sendError(ws, 'bad_request', 'the session is already configured: a session takes one tts_session.update; synthesis continues');
      return;
    }
    const request = validateRealtimeSession((msg as Record<string, unknown>)['session'], ctx.maxChars);
    if (isRefusal(request)) {
      refuse(request.code, request.message);
      return;
    }
    const charged = ctx.limits?.charge?.(keyIndex, [...request.text].length);
    if (charged !== undefined) {
      refuse(charged.code, charged.message);
      return;
    }
    state = 'running';
    clearTimeout(idle);
    send(ws, { type: 'tts_session.updated', session: { id, ...appliedSettings(request) } });
    synthesize(ws, id, request, ctx.engine, controller.signal).then(
      () => {
        if (controller.signal.aborted || state === 'closing') return;
        state = 'closing';
        ws.close(1000);
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        refuse('server_error', `synthesis failed: ${error instanceof Error ? error.message : String(error)}`, 1011);
      },
    );
  });

  send(ws, { type: 'tts_session.created', session: { id, ...REALTIME_DEFAULTS } });
  return () => refuse('server_error', 'the server is shutting down', 1001);
}

/**
 * Streams the engine's audio as deltas, then `tts.output.completed`.
 * @throws what the engine throws (not when aborted: then it returns quietly).
 */
async function synthesize(ws: WebSocket, id: string, request: ValidRealtimeRequest, engine: SpeechEngine, signal: AbortSignal): Promise<void> {
  let bytes = 0;
  // The engine resamples and interleaves to the session's rate and channels.
  const audio = engine.synthesize(
    { text: request.text, voice: request.voice, language: request.language, format: request.format, sampleRate: request.sampleRate, channels: request.channels },
    signal,
  );
  for await (const chunk of audio) {
    if (signal.aborted) return;
    if (chunk.length === 0) continue;
    bytes += chunk.length;
    await sendPaced(ws, { type: 'tts.output_audio.delta', delta: chunk.toString('base64') }, signal);
  }
  if (signal.aborted) return;
  const seconds = audioSeconds(bytes, request.format, request.sampleRate, request.channels);
  send(ws, { type: 'tts.output.completed', session_id: id, audio_seconds: Math.round(seconds * 1e6) / 1e6 });
}

/** The settings a valid update applied, spelled as on the wire (the text is not echoed back). */
function appliedSettings(r: ValidRealtimeRequest): Record<string, string | number> {
  return {
    preset_voice: voiceToWire(r.voice),
    output_audio_format: r.format,
    output_audio_sample_rate: r.sampleRate,
    output_audio_number_of_channels: r.channels,
    language: r.language,
  };
}

function send(ws: WebSocket, event: unknown): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
}

function sendError(ws: WebSocket, code: string, message: string): void {
  const event: ErrorBody & { type: 'error' } = { type: 'error', error: { code, message } };
  send(ws, event);
}

/**
 * Sends an event; when more than {@link SEND_HIGH_WATER_BYTES} are then queued on the socket,
 * resolves only once this event has been handed to the kernel (so everything before it was too),
 * or the session ended.
 */
function sendPaced(ws: WebSocket, event: unknown, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState !== ws.OPEN || signal.aborted) {
      resolve();
      return;
    }
    let written = false;
    let waiting = false;
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    ws.send(JSON.stringify(event), () => {
      written = true;
      if (waiting) done();
    });
    if (!written && ws.bufferedAmount > SEND_HIGH_WATER_BYTES) {
      waiting = true;
      signal.addEventListener('abort', done, { once: true });
    } else {
      resolve();
    }
  });
}


