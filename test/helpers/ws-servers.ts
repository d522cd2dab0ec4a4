/**
 * Small WebSocket servers on 127.0.0.1, port 0, for testing the realtime client: each follows a
 * script the test writes, including scripts that break the protocol on purpose (docs/style.md §7).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { listenLoopback } from './servers.js';

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
  const listening = await listenLoopback(http, 'ws', () => {
    for (const c of wss.clients) c.terminate();
    http.closeAllConnections();
  });
  return { ...listening, connections, refused };
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

/** One connection of {@link startCloseIgnoringServer}, as the server saw it. */
export interface CloseIgnoringConnection {
  /** The code of the client's close frame, once it came. */
  closeFrame: Promise<number>;
  /** How the client ended the TCP connection: `end` (FIN) or `reset`. The server never ends it itself. */
  ended: Promise<'end' | 'reset'>;
  /** Frames the server wrote after the client's close frame (none, ever). */
  writtenAfterClose: number;
}

/**
 * A WebSocket server that speaks the protocol by hand (RFC 6455 §4.2.2 handshake, §5 framing)
 * for what `ws` will not do: it never answers the client's close frame, which §5.5.1 says it
 * must, and never closes the connection itself. Each session: `tts_session.created`, then, after
 * the client's `tts_session.update`, `audio` as one delta and `tts.output.completed`.
 * The accepted sockets do not keep the process alive (unref), so only the client's can.
 */
export async function startCloseIgnoringServer(audio: Buffer): Promise<{ url: string; connections: CloseIgnoringConnection[]; close(): Promise<void> }> {
  const connections: CloseIgnoringConnection[] = [];
  const sockets = new Set<Socket>();
  const http = createServer((_req, res) => res.writeHead(426).end());
  http.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    sockets.add(socket);
    socket.unref();
    const accept = createHash('sha1').update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    let closeCode: (code: number) => void = () => {};
    let ended: (how: 'end' | 'reset') => void = () => {};
    const c: CloseIgnoringConnection = {
      closeFrame: new Promise((resolve) => (closeCode = resolve)),
      ended: new Promise((resolve) => (ended = resolve)),
      writtenAfterClose: 0,
    };
    connections.push(c);
    let closed = false;
    const send = (event: unknown): void => {
      if (closed) c.writtenAfterClose++;
      socket.write(textFrame(JSON.stringify(event)));
    };
    socket.on('end', () => ended('end'));
    socket.on('error', () => ended('reset'));
    let pending = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      for (let frame = readMaskedFrame(pending); frame !== undefined; frame = readMaskedFrame(pending)) {
        pending = pending.subarray(frame.size);
        if (frame.opcode === 0x8) {
          closed = true;
          closeCode(frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : 1005);
        } else if (frame.opcode === 0x1 && JSON.parse(frame.payload.toString('utf8')).type === 'tts_session.update') {
          send(wsDelta(audio));
          send({ type: 'tts.output.completed' });
        }
      }
    });
    send({ type: 'tts_session.created', session: { id: 'sess_silent' } });
  });
  const listening = await listenLoopback(http, 'ws', () => {
    for (const s of sockets) s.destroy();
  });
  return { ...listening, connections };
}

/** An unmasked text frame, as a server sends it (RFC 6455 §5.2). */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, n]) : n < 65536 ? Buffer.from([0x81, 126, n >> 8, n & 0xff]) : Buffer.concat([Buffer.from([0x81, 127]), bigEndian64(n)]);
  return Buffer.concat([head, payload]);
}

function bigEndian64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/** The first whole frame of `bytes` from a client (masked, RFC 6455 §5.3), or undefined while it is incomplete. */
function readMaskedFrame(bytes: Buffer): { opcode: number; payload: Buffer; size: number } | undefined {
  if (bytes.length < 2) return undefined;
  let n = bytes[1]! & 0x7f;
  let at = 2;
  if (n === 126) {
    if (bytes.length < 4) return undefined;
    n = bytes.readUInt16BE(2);
    at = 4;
  } else if (n === 127) {
    if (bytes.length < 10) return undefined;
    n = Number(bytes.readBigUInt64BE(2));
    at = 10;
  }
  if (bytes.length < at + 4 + n) return undefined;
  const mask = bytes.subarray(at, at + 4);
  const payload = Buffer.from(bytes.subarray(at + 4, at + 4 + n));
  for (let i = 0; i < n; i++) payload[i] = payload[i]! ^ mask[i & 3]!;
  return { opcode: bytes[0]! & 0x0f, payload, size: at + 4 + n };
}

