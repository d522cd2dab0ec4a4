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
 * - no update within SESSION_IDLE_MS (realtime-session.ts): error `bad_request`, then close 1008;
 * - a client that accepts nothing for the write timeout: the socket is terminated (no close frame
 *   could reach it);
 * - the server shutting down: error `server_error`, then close 1001 ("going away").
 * A client that goes away aborts the synthesis at once. The handshake goes through the same
 * admission as the SSE route (admission.ts): one `Authorization` header (else 400), a known key
 * (else 401), the server not stopping (else 503), rate and concurrency (else 429), each answered
 * with the code's status and the JSON error body; a character quota refuses the update (error
 * event, close 1008). Access-log lines begin like the SSE route's: remote address, `key#N`.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { REALTIME_PATH, type ErrorBody } from '../protocol/types.js';
import { nodeHttp } from '../wire/node-http.js';
import type { Admission } from './admission.js';
import { accessPrefix, pathOf } from './http-util.js';
import { runSession, type SessionContext } from './realtime-session.js';

/** Largest client frame, in bytes; ws closes with 1009 above it. An update of 5000 characters is ~20 KiB. */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;

/** What the route needs from the service around it. */
export interface RealtimeRouteContext extends SessionContext {
  /** Keys and per-key limits, shared with the SSE route (admission.ts). */
  admission: Admission;
  /** One line per session or refused handshake (no keys, no text). */
  accessLog?: ((line: string) => void) | undefined;
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
    // Read now: once the socket closes, its address is gone.
    const remote = req.socket.remoteAddress ?? '-';
    const log = (keyIndex: number, outcome: string, note = ''): void =>
      ctx.accessLog?.(`${accessPrefix(remote, keyIndex)} ${req.method ?? '-'} ${path} ${outcome} ${Math.round(performance.now() - started)}ms${note}`);
    if (path !== REALTIME_PATH) {
      refuseHandshake(socket, 404, { error: { code: 'not_found', message: `no WebSocket route ${path}; the service has ${REALTIME_PATH}` } });
      log(-1, '404');
      return;
    }
    const admitted = shuttingDown
      ? ({ ok: false, keyIndex: -1, status: 503, code: 'server_error', message: 'the server is shutting down', headers: {} } as const)
      : ctx.admission.admit(req);
    if (!admitted.ok) {
      refuseHandshake(socket, admitted.status, { error: { code: admitted.code, message: admitted.message } }, admitted.headers);
      log(admitted.keyIndex, String(admitted.status));
      return;
    }
    // A handshake that never completes (ws refuses it, or the client leaves) frees its slot too.
    socket.once('close', admitted.release);
    load().then(
      (w) =>
        // ws answers a malformed upgrade (bad method, version, key) itself with 400/405.
        w.handleUpgrade(req, socket, head, (ws) => {
          const shutdown = runSession(ws, ctx, admitted, (closeCode, note) => {
            sessions.delete(shutdown);
            admitted.release();
            log(admitted.keyIndex, `101 close=${closeCode}`, note);
          });
          sessions.add(shutdown);
          if (shuttingDown) shutdown();
        }),
      () => {
        refuseHandshake(socket, 500, { error: { code: 'server_error', message: 'the WebSocket route failed to start' } });
        log(admitted.keyIndex, '500');
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
  const head = [`HTTP/1.1 ${status} ${nodeHttp().STATUS_CODES[status] ?? ''}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  socket.once('finish', () => socket.destroy());
  socket.end(`${head}\r\n\r\n${text}`);
}

