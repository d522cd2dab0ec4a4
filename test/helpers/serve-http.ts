/**
 * The built-in service (src/server/builtin-server.ts) on 127.0.0.1, port 0, for tests of `tts serve`'s
 * HTTP side: start it with any options, send SSE requests with node:http (so a test can destroy
 * the socket at an exact moment), and read the event stream strictly as the service writes it
 * (`event:` line, one `data:` line of JSON, blank line; docs/cli.md §4).
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import type { Server } from 'node:http';
import { connect as connectTcp, type Socket } from 'node:net';
import { closeService, createService, listen, type ServiceOptions } from '../../src/server/builtin-server.js';

/** A running service and what it logged. */
export interface TestService {
  server: Server;
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** `ws://127.0.0.1:PORT/v1/realtime_tts` */
  wsUrl: string;
  /** Access-log lines so far. */
  log: string[];
  /** closeService(); the engine is the caller's. */
  close(): Promise<void>;
}

/** Starts createService(options) on loopback, logging into `log`. */
export async function startService(options: Omit<ServiceOptions, 'accessLog'>): Promise<TestService> {
  const log: string[] = [];
  const server = createService({ ...options, accessLog: (line) => log.push(line) });
  const base = await listen(server, '127.0.0.1', 0);
  let closed: Promise<void> | undefined;
  return {
    server,
    base,
    wsUrl: `${base.replace(/^http/, 'ws')}/v1/realtime_tts`,
    log,
    close: () => (closed ??= closeService(server)),
  };
}

/** One event of the stream. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
  /** performance.now() when it was parsed. */
  at: number;
}

/** An SSE response being read. */
export interface SseResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Events as they arrive; ends when the response ends (or the socket is destroyed). */
  events: AsyncIterable<SseEvent>;
  /** The whole body as text (for refusals). */
  text(): Promise<string>;
  /** Destroys the socket at once, as a client that goes away does. */
  destroy(): void;
}

/**
 * POSTs `body` (JSON-encoded unless a string) to `/v1/tts/sse` on a fresh connection.
 * @param key sent as `Authorization: Bearer key`; undefined sends no Authorization header.
 */
export function postSse(base: string, body: unknown, key: string | undefined, headers: Record<string, string> = {}): Promise<SseResponse> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${base}/v1/tts/sse`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        ...headers,
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.on('error', () => {});
      let consumed = false;
      const take = (): AsyncIterable<Buffer> => {
        if (consumed) throw new Error('the body was already read');
        consumed = true;
        return res as AsyncIterable<Buffer>;
      };
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: parseEvents(() => take()),
        text: async () => {
          let s = '';
          for await (const c of take()) s += c.toString('utf8');
          return s;
        },
        destroy: () => {
          req.destroy();
          res.destroy();
        },
      });
    });
    req.end(payload);
  });
}

/**
 * Parses the service's event stream strictly: every event is exactly `event: NAME\ndata: JSON\n\n`.
 * A premature end (socket destroyed) just ends the iteration.
 * @throws when a block has another shape.
 */
async function* parseEvents(body: () => AsyncIterable<Buffer>): AsyncGenerator<SseEvent> {
  let buf = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body()) {
      buf += decoder.decode(chunk, { stream: true });
      for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const m = /^event: ([a-z_.]+)\ndata: (.*)$/s.exec(block);
        if (m === null || m[2]!.includes('\n')) throw new Error(`not an event of the service's shape: ${JSON.stringify(block.slice(0, 200))}`);
        yield { event: m[1]!, data: JSON.parse(m[2]!) as Record<string, unknown>, at: performance.now() };
      }
    }
  } catch (error) {
    // A socket the test destroyed, or the server cut: the stream simply ends here.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ECONNRESET' && code !== 'ERR_STREAM_PREMATURE_CLOSE' && !/aborted/i.test((error as Error).message)) throw error;
    return;
  }
  if (buf !== '') throw new Error(`the stream ended inside an event: ${JSON.stringify(buf.slice(0, 200))}`);
}

/** Reads every event of a response. */
export async function allEvents(res: SseResponse): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of res.events) out.push(e);
  return out;
}

/** The audio of a stream's deltas, concatenated. */
export function audioOf(events: readonly SseEvent[]): Buffer {
  return Buffer.concat(events.filter((e) => e.event === 'delta').map((e) => Buffer.from(String(e.data['delta']), 'base64')));
}

/** Parses a refusal's body and checks it is exactly `{"error":{"code","message"}}` (docs/cli.md §4). */
export function errorBody(text: string): { code: string; message: string } {
  const json = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
  const keys = Object.keys(json);
  if (keys.length !== 1 || keys[0] !== 'error' || typeof json.error !== 'object' || json.error === null) throw new Error(`not an error body: ${text}`);
  const inner = Object.keys(json.error).sort().join(',');
  if (inner !== 'code,message' || typeof json.error.code !== 'string' || typeof json.error.message !== 'string' || json.error.message === '') {
    throw new Error(`not an error body: ${text}`);
  }
  return { code: json.error.code, message: json.error.message };
}

/** Polls `condition` every 10 ms until true or `ms` passed; returns whether it became true. */
export async function waitFor(condition: () => boolean, ms = 2000): Promise<boolean> {
  const until = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

/** A raw TCP connection to the service, for clients that misbehave on purpose. */
export interface RawClient {
  socket: Socket;
  /** Everything received so far, as latin1 text. */
  received(): string;
  /** Resolves when the socket closed, with performance.now() and what was received. */
  closed: Promise<{ at: number; data: string }>;
  /** Resolves once `pattern` matches what was received (rejects when the socket closes first). */
  waitFor(pattern: RegExp): Promise<number>;
}

/** Connects to the service's port with node:net. */
export async function rawConnect(base: string): Promise<RawClient> {
  const { port, hostname } = new URL(base);
  const socket = connectTcp(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  let data = '';
  const listeners = new Set<() => void>();
  socket.on('data', (d: Buffer) => {
    data += d.toString('latin1');
    for (const l of listeners) l();
  });
  const closed = new Promise<{ at: number; data: string }>((resolve) =>
    socket.on('close', () => {
      for (const l of listeners) l();
      resolve({ at: performance.now(), data });
    }),
  );
  return {
    socket,
    received: () => data,
    closed,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (pattern.test(data)) {
            listeners.delete(check);
            resolve(performance.now());
          } else if (socket.destroyed) {
            listeners.delete(check);
            reject(new Error(`closed before ${pattern}: ${JSON.stringify(data.slice(0, 300))}`));
          }
        };
        listeners.add(check);
        check();
      }),
  };
}
