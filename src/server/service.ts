/**
 * The built-in service: an HTTP server speaking SERVICE.md's protocol on top of the offline
 * engine (DESIGN.md §5). Used in-process as the embedded default and by `tts serve`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpeechEngine } from '../engine/types.js';
import { sendError, sendJson } from './http-util.js';
import { bearerKey, KeyRing } from './keys.js';
import { handleSse } from './sse-route.js';

/** Settings of the built-in service. */
export interface ServiceOptions {
  /** Accepted API keys (at least one). */
  apiKeys: readonly string[];
  /** The synthesizer. */
  engine: SpeechEngine;
  /** Longest input, in characters (DESIGN.md §4: 5000). */
  maxChars?: number;
  /** One line per request (no keys, no text), e.g. to stderr; none when absent. */
  accessLog?: (line: string) => void;
}

/** A running service. */
export interface RunningService {
  server: Server;
  /** e.g. `http://127.0.0.1:41234` */
  baseUrl: string;
  /** Stops accepting, ends running streams, stops the engine. */
  close(): Promise<void>;
}

/**
 * Creates the HTTP server of the built-in service (not yet listening).
 * Routes: `POST /v1/tts/sse` (SERVICE.md §4.1). Anything else is 404/405 with a JSON body.
 */
export function createService(options: ServiceOptions): Server {
  const keys = new KeyRing(options.apiKeys);
  const maxChars = options.maxChars ?? 5000;
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 60_000, keepAliveTimeout: 5_000 }, (req, res) => {
    const started = performance.now();
    const controller = new AbortController();
    // 'close' on the response before it finished means the client went away mid-stream.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      options.accessLog?.(`${req.method ?? '-'} ${pathOf(req)} ${res.statusCode} ${Math.round(performance.now() - started)}ms`);
    });
    route(req, res, keys, { engine: options.engine, maxChars }, controller.signal).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'server_error', message: 'internal error' } });
      else res.end();
    });
  });
  return server;
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  keys: KeyRing,
  ctx: { engine: SpeechEngine; maxChars: number },
  signal: AbortSignal,
): Promise<void> {
  const path = pathOf(req);
  if (path !== '/v1/tts/sse') {
    sendJson(res, 404, { error: { code: 'not_found', message: `no route ${path}; the service has POST /v1/tts/sse` } });
    return;
  }
  if (req.method !== 'POST') {
    sendJson(res, 405, { error: { code: 'method_not_allowed', message: 'use POST' } }, { allow: 'POST' });
    return;
  }
  const key = bearerKey(req.headers.authorization);
  if (key === undefined || keys.indexOf(key) === -1) {
    sendError(res, 'invalid_api_key', key === undefined ? 'missing or malformed Authorization: Bearer header' : 'the API key is not valid', {
      'www-authenticate': 'Bearer',
    });
    return;
  }
  await handleSse(req, res, ctx, signal);
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
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
