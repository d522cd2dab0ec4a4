/**
 * The built-in service: an HTTP server speaking docs/protocol.md's protocol on top of the offline
 * engine (docs/cli.md §5). Used in-process as the embedded default and by `tts serve`.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpeechEngine } from '../engine/types.js';
import { SSE_PATH } from '../protocol/types.js';
import { nodeHttp } from '../wire/node-http.js';
import { Admission, ServiceLimits } from './admission.js';
import { accessPrefix, pathOf, sendJson } from './http-util.js';
import { KeyRing } from './keys.js';
import type { Clock } from './limits.js';
import { fromServiceCode, sendOpenAiError } from './openai-errors.js';
import { handleModels, handleOpenAiSpeech, handleVoices, OPENAI_MODELS_PATH, OPENAI_SPEECH_PATH, OPENAI_VOICES_PATH } from './openai-route.js';
import { attachRealtime, type RealtimeRoute } from './realtime-route.js';
import { handleSse } from './sse-route.js';

/** Milliseconds a stream may accept nothing before it is closed (docs/cli.md §5, `--write-timeout`). */
export const DEFAULT_WRITE_TIMEOUT_MS = 30_000;

/** Settings of the built-in service. */
export interface ServiceOptions {
  /** Accepted API keys (at least one). */
  apiKeys: readonly string[];
  /** The synthesizer. */
  engine: SpeechEngine;
  /** Longest input, in characters (docs/cli.md §4: 5000). */
  maxChars?: number | undefined;
  /** Requests per window per key (docs/cli.md §4: 60 per minute); none when absent. */
  rateLimit?: { limit: number; windowSeconds: number } | undefined;
  /** Requests in progress per key, SSE and WebSocket together (docs/cli.md §4: 4); none when absent. */
  maxConcurrent?: number | undefined;
  /** Characters each key may synthesize (credits); none when absent. */
  quotaChars?: number | undefined;
  /** Milliseconds clock for the rate limiter (tests inject a fake one). */
  clock?: Clock | undefined;
  /** One line per request (no keys, no text), e.g. to stderr; none when absent. */
  accessLog?: ((line: string) => void) | undefined;
  /** Milliseconds a client has to send all request headers (default 10 000). */
  headersTimeoutMs?: number | undefined;
  /** Milliseconds a client has to send the whole request, headers and body (default 30 000). */
  requestTimeoutMs?: number | undefined;
  /**
   * Milliseconds a stream may accept nothing (its socket does not drain) before it is closed and
   * its slot freed (default {@link DEFAULT_WRITE_TIMEOUT_MS}; docs/cli.md §5, `--write-timeout`);
   * Infinity for none.
   */
  writeTimeoutMs?: number | undefined;
}

/** A running service. */
export interface RunningService {
  server: Server;
  /** e.g. `http://127.0.0.1:41234` */
  baseUrl: string;
  /** Stops accepting, ends running streams, stops the engine. */
  close(): Promise<void>;
}

/** Per-server state that {@link closeService} needs. */
interface ServiceState {
  /** Set when the server stops taking requests; running streams go on (the drain). */
  stopping: { value: boolean };
  /** Aborted when running streams must end (after the drain's grace period). */
  shutdown: AbortController;
  admission: Admission;
  realtime: RealtimeRoute;
}
const states = new WeakMap<Server, ServiceState>();

/**
 * Creates the HTTP server of the built-in service (not yet listening).
 * Routes: `POST /v1/tts/sse` (docs/protocol.md §4.1), the WebSocket `/v1/realtime_tts` (docs/protocol.md §4.2,
 * see realtime-route.ts) and the OpenAI dialect: `POST /v1/audio/speech`, `GET /v1/models`,
 * `GET /v1/audio/voices` (docs/protocol.md §10, openai-route.ts), admitted alike. Anything else is 404/405 with a JSON body. Limits are per key
 * (docs/protocol.md §8, docs/cli.md §4); every answer to an authenticated request carries the IETF draft
 * `RateLimit` / `RateLimit-Policy` headers when a rate limit is set.
 */
export function createService(options: ServiceOptions): Server {
  const keys = new KeyRing(options.apiKeys);
  const maxChars = options.maxChars ?? 5000;
  const writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS;
  const shutdown = new AbortController();
  const stopping = { value: false };
  const admission = new Admission(keys, new ServiceLimits(options), () => stopping.value);
  // Bounds for slow or stalled clients: all headers within 10 s, the whole request within 30 s.
  // Node checks these only every `connectionsCheckingInterval` (default 30 s, which would let a
  // client dribbling its headers stay 30 s); checking every second keeps the bound near 10 s.
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeout);
  const connectionsCheckingInterval = Math.max(50, Math.min(1000, Math.floor(headersTimeout / 10)));
  const server = nodeHttp().createServer({ headersTimeout, requestTimeout, connectionsCheckingInterval, keepAliveTimeout: 5_000 }, (req, res) => {
    const started = performance.now();
    // Read now: by the response's 'close', Node may have detached the socket (req.socket is null).
    const remote = req.socket.remoteAddress ?? '-';
    const controller = new AbortController();
    const meta: RequestMeta = { keyIndex: -1 };
    // 'close' on the response before it finished means the client went away mid-stream.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      meta.release?.();
      // No status when none was sent (the client left first, or Node answered a timeout itself).
      const status = res.headersSent ? String(res.statusCode) : '-';
      options.accessLog?.(`${accessPrefix(remote, meta.keyIndex)} ${req.method ?? '-'} ${pathOf(req)} ${status} ${Math.round(performance.now() - started)}ms${meta.note ?? ''}`);
      // Stopping: a keep-alive connection whose stream just ended would otherwise hold
      // server.close() until the grace period runs out.
      if (stopping.value) setImmediate(() => server.closeIdleConnections());
    });
    const ctx = { engine: options.engine, maxChars, shutdown: shutdown.signal, writeTimeoutMs };
    route(req, res, admission, ctx, controller.signal, meta).catch(() => {
      if (res.headersSent) res.end();
      else if (isOpenAiPath(pathOf(req))) sendOpenAiError(res, fromServiceCode('server_error', 'internal error'));
      else sendJson(res, 500, { error: { code: 'server_error', message: 'internal error' } });
    });
  });
  const realtime = attachRealtime(server, { engine: options.engine, admission, maxChars, writeTimeoutMs, accessLog: options.accessLog });
  states.set(server, { stopping, shutdown, admission, realtime });
  return server;
}

/** How {@link closeService} stops. */
export interface CloseOptions {
  /**
   * Milliseconds running streams get to finish (the drain) before they are ended; default 0.
   * New requests are refused (503) from the start either way.
   */
  graceMs?: number | undefined;
  /** Called when the grace period ran out with streams still running, just before they are ended. */
  onGraceOver?: (() => void) | undefined;
}

/**
 * Stops a service made by {@link createService}: no new connections or requests (503); running
 * streams go on for up to `graceMs` (docs/cli.md §5: `tts serve` drains on SIGINT and SIGTERM),
 * then those still running end with an `error` event (SSE) or error event + close 1001
 * (WebSocket); resolves when every connection is gone. The engine is not closed (it belongs to
 * the caller). Calling it again while it runs ends the drain at once.
 */
export async function closeService(server: Server, options: CloseOptions = {}): Promise<void> {
  const state = states.get(server);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  if (state !== undefined) {
    const graceMs = options.graceMs ?? 0;
    if (!state.stopping.value && graceMs > 0) {
      state.stopping.value = true;
      let timer: NodeJS.Timeout | undefined;
      const over = await Promise.race([state.admission.idle().then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))]);
      clearTimeout(timer);
      if (over) options.onGraceOver?.();
    }
    state.stopping.value = true;
    state.shutdown.abort();
    state.realtime.closeAll();
  }
  server.closeIdleConnections();
  // Streams that were told to end get a moment to send their last event.
  const timer = setTimeout(() => server.closeAllConnections(), 2000);
  timer.unref();
  await closed;
  clearTimeout(timer);
}

/** What the access log and the limits learn about a request while it is routed. */
interface RequestMeta {
  keyIndex: number;
  release?: () => void;
  /** Appended to the access-log line, e.g. ` write-timeout`. */
  note?: string;
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  admission: Admission,
  ctx: { engine: SpeechEngine; maxChars: number; shutdown: AbortSignal; writeTimeoutMs: number },
  signal: AbortSignal,
  meta: RequestMeta,
): Promise<void> {
  const path = pathOf(req);
  const openai = isOpenAiPath(path);
  if (path !== SSE_PATH && !openai) {
    sendJson(res, 404, { error: { code: 'not_found', message: `no route ${path}; the service has POST /v1/tts/sse, /v1/realtime_tts and the OpenAI dialect's POST /v1/audio/speech, GET /v1/models` } });
    return;
  }
  const method = path === SSE_PATH || path === OPENAI_SPEECH_PATH ? 'POST' : 'GET';
  if (req.method !== method) {
    const message = `use ${method}`;
    if (openai) sendOpenAiError(res, { status: 405, message, type: 'invalid_request_error', param: null, code: 'method_not_allowed' }, { allow: method });
    else sendJson(res, 405, { error: { code: 'method_not_allowed', message } }, { allow: method });
    return;
  }
  const admitted = admission.admit(req);
  meta.keyIndex = admitted.keyIndex;
  if (!admitted.ok) {
    // The same admission for both dialects; only the body's shape (and the quota's status) differs.
    if (openai) sendOpenAiError(res, fromServiceCode(admitted.code, admitted.message, admitted.status), admitted.headers);
    else sendJson(res, admitted.status, { error: { code: admitted.code, message: admitted.message } }, admitted.headers);
    return;
  }
  meta.release = admitted.release;
  for (const [name, value] of Object.entries(admitted.headers)) res.setHeader(name, value);
  const routeCtx = { ...ctx, keyIndex: admitted.keyIndex, charge: admitted.charge, onWriteTimeout: () => (meta.note = `${meta.note ?? ''} write-timeout`) };
  if (path === SSE_PATH) await handleSse(req, res, routeCtx, signal);
  else if (path === OPENAI_SPEECH_PATH) await handleOpenAiSpeech(req, res, { ...routeCtx, onModel: (model) => (meta.note = ` model=${model}`) }, signal);
  else if (path === OPENAI_MODELS_PATH) handleModels(res);
  else handleVoices(res);
}

/** True for the paths of the OpenAI dialect (docs/protocol.md §10). */
function isOpenAiPath(path: string): boolean {
  return path === OPENAI_SPEECH_PATH || path === OPENAI_MODELS_PATH || path === OPENAI_VOICES_PATH;
}

/**
 * Starts the service listening.
 * @param host address to bind, e.g. `127.0.0.1`.
 * @param port TCP port; 0 picks a free one.
 * @throws the listen error (EADDRINUSE, EACCES).
 */
export async function listen(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${h}:${addr.port}`;
}
