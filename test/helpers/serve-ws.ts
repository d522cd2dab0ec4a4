/**
 * A WebSocket client for tests of the built-in service's `/v1/realtime_tts` (docs/protocol.md §4.2):
 * a session that records every event and its close, or the refused handshake's status, headers
 * and JSON body (docs/cli.md §4: a refused handshake is an HTTP answer with the error body).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { WebSocket } from 'ws';

/** A server event. */
export interface WsEvent {
  type: string;
  [k: string]: unknown;
}

/** One open session. */
export interface WsSession {
  ws: WebSocket;
  /** Events received so far, in order. */
  events: WsEvent[];
  /** Resolves with the first event of `type` (already received or next). */
  next(type: string): Promise<WsEvent>;
  /** Resolves when the socket closed, with the code and reason the client saw. */
  closed: Promise<{ code: number; reason: string; at: number }>;
}

/** A handshake the service answered with HTTP instead of 101. */
export interface RefusedHandshake {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Either outcome of a handshake. */
export type Handshake = { ok: true; session: WsSession } | ({ ok: false } & RefusedHandshake);

/**
 * Opens a session, or reports the refusal.
 * @param key sent as `Authorization: Bearer key`; undefined sends none.
 */
export function handshake(url: string, key: string | undefined, headers: Record<string, string> = {}): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers } });
    const events: WsEvent[] = [];
    const waiters: { type: string; resolve: (e: WsEvent) => void }[] = [];
    ws.on('message', (data, isBinary) => {
      // The service sends text frames only (docs/cli.md §4); a binary one fails the session's test.
      if (isBinary) throw new Error('the service sent a binary frame');
      const e = JSON.parse(data.toString()) as WsEvent;
      events.push(e);
      for (const w of waiters.filter((w) => w.type === e.type)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    });
    const closed = new Promise<{ code: number; reason: string; at: number }>((r) =>
      ws.on('close', (code, reason) => r({ code, reason: reason.toString(), at: performance.now() })),
    );
    ws.on('error', () => {});
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        resolve({ ok: false, status: res.statusCode ?? 0, headers: res.headers, body });
        ws.terminate();
      });
      res.on('error', reject);
    });
    ws.once('open', () =>
      resolve({
        ok: true,
        session: {
          ws,
          events,
          closed,
          next: (type) => {
            const seen = events.find((e) => e.type === type);
            if (seen !== undefined) return Promise.resolve(seen);
            return new Promise((r) => waiters.push({ type, resolve: r }));
          },
        },
      }),
    );
    ws.once('error', reject);
  });
}

/** Opens a session; throws when the handshake is refused. */
export async function connect(url: string, key: string | undefined): Promise<WsSession> {
  const h = await handshake(url, key);
  if (!h.ok) throw new Error(`handshake refused: ${h.status} ${h.body}`);
  return h.session;
}

/** Expects a refused handshake; throws when it was accepted. */
export async function refused(url: string, key: string | undefined, headers: Record<string, string> = {}): Promise<RefusedHandshake> {
  const h = await handshake(url, key, headers);
  if (h.ok) {
    h.session.ws.terminate();
    throw new Error('the handshake was accepted');
  }
  return h;
}

/** A `tts_session.update` message. */
export function update(session: Record<string, unknown>): string {
  return JSON.stringify({ type: 'tts_session.update', session });
}
