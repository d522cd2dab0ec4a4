/**
 * Small WebSocket servers on 127.0.0.1, port 0, for testing the realtime client: each follows a
 * script the test writes, including scripts that break the protocol on purpose (docs/style.md §7).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/** One frame the server received from the client. */
export interface ReceivedFrame {
  /** performance.now() on arrival. */
  at: number;
  text: string;
  binary: boolean;
}

/** One connection as the server saw it. */
export interface WsConnection {
  ws: WebSocket;
  url: string;
  headers: IncomingHttpHeaders;
  frames: ReceivedFrame[];
  /** Close code and reason as received from the client (or 1006), once closed. */
  closed: Promise<{ code: number; reason: string; at: number }>;
}

/** A running test server. */
export interface WsTestServer {
  /** `ws://127.0.0.1:PORT` */
  url: string;
  /** Connections so far, in order. */
  connections: WsConnection[];
  /** Handshakes refused by `refuse` (path, headers). */
  refused: { url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** Options of {@link startWsServer}. */
export interface WsServerOptions {
  /**
   * Called for each upgrade request before it is accepted; return an HTTP answer to refuse the
   * handshake with it (written raw on the socket), or undefined to accept.
   */
  refuse?: (req: IncomingMessage) => { status: number; headers?: Record<string, string>; body: string } | undefined;
  /** Largest frame the server accepts from the client, in bytes (default 100 MiB). */
  maxPayload?: number;
}

/**
 * Starts a server that runs `script` for each accepted connection.
 * @param script drives the session; its errors destroy the connection.
 */
export async function startWsServer(script: (c: WsConnection) => void | Promise<void>, options: WsServerOptions = {}): Promise<WsTestServer> {
  const http = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('upgrade required');
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload ?? 100 * 1024 * 1024 });
  const connections: WsConnection[] = [];
  const refused: WsTestServer['refused'] = [];
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const refusal = options.refuse?.(req);
    if (refusal !== undefined) {
      refused.push({ url: req.url ?? '', headers: req.headers });
      const headers = { 'Content-Length': String(Buffer.byteLength(refusal.body)), Connection: 'close', ...refusal.headers };
      const head = [`HTTP/1.1 ${refusal.status} Refused`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
      socket.end(`${head}\r\n\r\n${refusal.body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const frames: ReceivedFrame[] = [];
      ws.on('error', () => {});
      ws.on('message', (data, isBinary) => {
        const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
        frames.push({ at: performance.now(), text: buf.toString('utf8'), binary: isBinary });
      });
      const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
        ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8'), at: performance.now() })),
      );
      const c: WsConnection = { ws, url: req.url ?? '', headers: req.headers, frames, closed };
      connections.push(c);
      Promise.resolve()
        .then(() => script(c))
        .catch(() => ws.terminate());
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Sends one JSON event. */
export function sendJson(ws: WebSocket, event: unknown): void {
  ws.send(JSON.stringify(event));
}

/** A `tts.output_audio.delta` event carrying `bytes`, with optional extra fields. */
export function wsDelta(bytes: Buffer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'tts.output_audio.delta', delta: bytes.toString('base64'), ...extra };
}

/** Resolves with the next text frame the client sends (or rejects on close). */
export function nextFrame(c: WsConnection): Promise<ReceivedFrame> {
  const seen = c.frames.length;
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const f = c.frames[seen];
      if (f !== undefined) {
        cleanup();
        resolve(f);
      }
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error('closed before a frame arrived'));
    };
    const cleanup = (): void => {
      c.ws.off('message', onMessage);
      c.ws.off('close', onClose);
    };
    // Our 'message' listener in startWsServer was added first, so frames[] is filled before this runs.
    const onMessage = (): void => check();
    c.ws.on('message', onMessage);
    c.ws.on('close', onClose);
    check();
  });
}

/** Milliseconds to wait. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
