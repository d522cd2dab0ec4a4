/**
 * The built-in service: an HTTP server speaking docs/protocol.md's protocol on top of the offline
 * engine (docs/cli.md §5). Used in-process as the embedded default and by `tts serve`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpeechEngine } from '../engine/types.js';
import { SSE_PATH } from '../protocol/types.js';
import { pathOf, sendError, sendJson } from './http-util.js';
import { bearerKey, KeyRing } from './keys.js';
import { CharacterQuota, ConcurrencyLimiter, RateLimiter, type Clock } from './limits.js';
import { attachRealtime, type HandshakeRefusal, type RealtimeLimits, type RealtimeRoute } from './realtime-route.js';
import { handleSse, type SseRouteContext } from './sse-route.js';
import type { Refusal } from './validate.js';

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
  shutdown: AbortController;
  realtime: RealtimeRoute;
}
const states = new WeakMap<Server, ServiceState>();

/**
 * Creates the HTTP server of the built-in service (not yet listening).
 * Routes: `POST /v1/tts/sse` (docs/protocol.md §4.1) and the WebSocket `/v1/realtime_tts` (docs/protocol.md §4.2,
 * see realtime-route.ts). Anything else is 404/405 with a JSON body. Limits are per key
 * (docs/protocol.md §8, docs/cli.md §4); every answer to an authenticated request carries the IETF draft
 * `RateLimit` / `RateLimit-Policy` headers when a rate limit is set.
 */
export function createService(options: ServiceOptions): Server {
  const keys = new KeyRing(options.apiKeys);
  const maxChars = options.maxChars ?? 5000;
  const limits = new ServiceLimits(options);
  const shutdown = new AbortController();
  // Bounds for slow or stalled clients: all headers within 10 s, the whole request within 30 s.
  // Node checks these only every `connectionsCheckingInterval` (default 30 s, which would let a
  // client dribbling its headers stay 30 s); checking every second keeps the bound near 10 s.
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeout);
  const connectionsCheckingInterval = Math.max(50, Math.min(1000, Math.floor(headersTimeout / 10)));
  const server = createServer({ headersTimeout, requestTimeout, connectionsCheckingInterval, keepAliveTimeout: 5_000 }, (req, res) => {
    const started = performance.now();
    // Read now: by the response's 'close', Node may have detached the socket (req.socket is null).
    const remote = req.socket.remoteAddress ?? '-';
    const controller = new AbortController();
    const meta: RequestMeta = { keyIndex: -1 };
    // 'close' on the response before it finished means the client went away mid-stream.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      meta.release?.();
      const who = meta.keyIndex === -1 ? '-' : `key#${meta.keyIndex + 1}`;
      // No status when none was sent (the client left first, or Node answered a timeout itself).
      const status = res.headersSent ? String(res.statusCode) : '-';
      options.accessLog?.(`${remote} ${who} ${req.method ?? '-'} ${pathOf(req)} ${status} ${Math.round(performance.now() - started)}ms`);
      // Shutting down: a keep-alive connection whose stream just ended would otherwise hold
      // server.close() until the grace period runs out.
      if (shutdown.signal.aborted) setImmediate(() => server.closeIdleConnections());
    });
    route(req, res, keys, limits, { engine: options.engine, maxChars, shutdown: shutdown.signal }, controller.signal, meta).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'server_error', message: 'internal error' } });
      else res.end();
    });
  });
  const realtime = attachRealtime(server, { engine: options.engine, keys, maxChars, accessLog: options.accessLog, limits: limits.realtime() });
  states.set(server, { shutdown, realtime });
  return server;
}

/**
 * Stops a service made by {@link createService}: no new connections; running SSE streams end
 * with an `error` event, WebSocket sessions are closed; resolves when every connection is gone.
 * The engine is not closed (it belongs to the caller).
 */
export async function closeService(server: Server): Promise<void> {
  const state = states.get(server);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  state?.shutdown.abort();
  state?.realtime.closeAll();
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
}

/** The service's per-key limits, for both channels. */
class ServiceLimits {
  readonly rate: RateLimiter | undefined;
  readonly concurrency: ConcurrencyLimiter | undefined;
  readonly quota: CharacterQuota | undefined;

  constructor(options: ServiceOptions) {
    this.rate = options.rateLimit === undefined ? undefined : new RateLimiter(options.rateLimit.limit, options.rateLimit.windowSeconds, options.clock);
    this.concurrency = options.maxConcurrent === undefined ? undefined : new ConcurrencyLimiter(options.maxConcurrent);
    this.quota = options.quotaChars === undefined ? undefined : new CharacterQuota(options.quotaChars);
  }

  /**
   * Admits one request of key `keyIndex`: rate first, then concurrency.
   * @returns the headers to send and a release function, or a refusal with its headers.
   */
  admit(keyIndex: number): { headers: Record<string, string>; release: () => void } | (HandshakeRefusal & { headers: Record<string, string> }) {
    const key = String(keyIndex);
    const headers: Record<string, string> = {};
    if (this.rate !== undefined) {
      const d = this.rate.take(key);
      headers['ratelimit-policy'] = this.rate.policyHeader();
      headers['ratelimit'] = RateLimiter.header(d);
      if (!d.ok) {
        headers['retry-after'] = String(d.retryAfterSeconds);
        return { code: 'rate_limit_exceeded', message: `more than ${this.rate.limit} requests per ${this.rate.windowSeconds} s; retry in ${d.retryAfterSeconds} s`, headers };
      }
    }
    const release = this.concurrency === undefined ? () => {} : this.concurrency.acquire(key);
    if (release === undefined) {
      headers['retry-after'] = '1';
      return { code: 'too_many_concurrent_requests', message: `at most ${this.concurrency!.max} requests at once per key`, headers };
    }
    return { headers, release };
  }

  /** Spends `characters` of the key's quota; a refusal when it does not cover them. */
  charge(keyIndex: number, characters: number): Refusal | undefined {
    if (this.quota === undefined || this.quota.spend(String(keyIndex), characters)) return undefined;
    return { code: 'quota_exceeded', message: `this key has ${this.quota.left(String(keyIndex))} characters of quota left; the request needs ${characters}` };
  }

  /** The same limits as hooks for the WebSocket route. */
  realtime(): RealtimeLimits {
    return {
      admit: (keyIndex) => {
        const a = this.admit(keyIndex);
        return 'code' in a ? a : a.release;
      },
      charge: (keyIndex, characters) => this.charge(keyIndex, characters),
    };
  }
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  keys: KeyRing,
  limits: ServiceLimits,
  ctx: SseRouteContext,
  signal: AbortSignal,
  meta: RequestMeta,
): Promise<void> {
  const path = pathOf(req);
  if (path !== SSE_PATH) {
    sendJson(res, 404, { error: { code: 'not_found', message: `no route ${path}; the service has POST /v1/tts/sse and /v1/realtime_tts` } });
    return;
  }
  if (req.method !== 'POST') {
    sendJson(res, 405, { error: { code: 'method_not_allowed', message: 'use POST' } }, { allow: 'POST' });
    return;
  }
  const key = bearerKey(req.headers.authorization);
  meta.keyIndex = key === undefined ? -1 : keys.indexOf(key);
  if (meta.keyIndex === -1) {
    sendError(res, 'invalid_api_key', key === undefined ? 'missing or malformed Authorization: Bearer header' : 'the API key is not valid', {
      'www-authenticate': 'Bearer',
    });
    return;
  }
  const admitted = limits.admit(meta.keyIndex);
  if ('code' in admitted) {
    sendError(res, admitted.code, admitted.message, admitted.headers);
    return;
  }
  meta.release = admitted.release;
  for (const [name, value] of Object.entries(admitted.headers)) res.setHeader(name, value);
  const keyIndex = meta.keyIndex;
  await handleSse(req, res, { ...ctx, charge: (characters) => limits.charge(keyIndex, characters) }, signal);
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
