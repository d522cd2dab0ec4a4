/**
 * Clients of `tts serve` that send a request and then never read (docs/cli.md §5, "Clients that
 * do not read"): raw node:net sockets, paused as soon as the request is out, for both channels —
 * an SSE POST, and a WebSocket handshake followed by one masked `tts_session.update` text frame
 * (RFC 6455 §5.2, §5.3) — each resolved once the answer began, i.e. the server admitted it. Node has no way to shrink SO_RCVBUF, so the kernel's buffers still take
 * what fits; after that the server's writes stop draining. Also: a process's memory from
 * /proc/PID/status.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** Opens a TCP connection to `base`'s host and port. */
async function open(base: string): Promise<Socket> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/**
 * A client that sent its request and reads nothing more. A paused socket does not notice the
 * server closing it (it would have to read the FIN); the test destroys it when done.
 */
export interface StalledClient {
  socket: Socket;
}

/**
 * Waits for the first bytes of the answer (the status line: the server admitted the request),
 * then reads nothing more: no 'data' listener, and the stream paused.
 * @throws Error when the server closes the connection before answering.
 */
async function stalled(socket: Socket): Promise<StalledClient> {
  await new Promise<void>((resolve, reject) => {
    socket.once('data', () => {
      socket.pause();
      resolve();
    });
    socket.once('close', () => reject(new Error('the server closed the connection before answering')));
  });
  return { socket };
}

/**
 * POSTs `body` to `path` (default `/v1/tts/sse`; the OpenAI route's `/v1/audio/speech` too) with
 * key `key`, waits for the answer's first bytes, then never reads.
 */
export async function stalledSse(base: string, key: string, body: unknown, path = '/v1/tts/sse'): Promise<StalledClient> {
  const socket = await open(base);
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  const head = [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    `Content-Length: ${payload.length}`,
  ].join('\r\n');
  socket.write(`${head}\r\n\r\n`);
  socket.write(payload);
  return stalled(socket);
}

/** One masked text frame from a client (RFC 6455 §5.2: clients must mask). */
export function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const n = payload.length;
  const header = n < 126 ? Buffer.from([0x81, 0x80 | n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65536) {
    header[0] = 0x81;
    header[1] = 0x80 | 126;
    header.writeUInt16BE(n, 2);
  } else if (n >= 65536) {
    header[0] = 0x81;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(n), 2);
  }
  const mask = randomBytes(4);
  const masked = Buffer.alloc(n);
  for (let i = 0; i < n; i++) masked[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, mask, masked]);
}

/**
 * Opens `/v1/realtime_tts` with key `key`, sends one `tts_session.update` with `session` right
 * behind the handshake (the server reads it once the session is open), waits for the handshake's
 * answer, then never reads.
 */
export async function stalledWs(base: string, key: string, session: Record<string, unknown>): Promise<StalledClient> {
  const socket = await open(base);
  const head = [
    'GET /v1/realtime_tts HTTP/1.1',
    'Host: 127.0.0.1',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    'Sec-WebSocket-Version: 13',
    `Authorization: Bearer ${key}`,
  ].join('\r\n');
  socket.write(`${head}\r\n\r\n`);
  socket.write(maskedTextFrame(JSON.stringify({ type: 'tts_session.update', session })));
  return stalled(socket);
}

/** Resident memory of process `pid`, in bytes: now (VmRSS) and its peak so far (VmHWM). */
export function processMemory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    if (m === null) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(m[1]) * 1024;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}
