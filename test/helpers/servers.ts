/**
 * Small HTTP servers on 127.0.0.1, port 0, for tests: each answers the way a test wants,
 * including ways that break the protocol on purpose.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Server } from 'node:net';

/** A running test server. */
export interface TestServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Requests received so far, with their parsed JSON bodies. */
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** Starts a server whose handler gets the request with its body already read. */
export async function startServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) parts.push(c);
    const body = Buffer.concat(parts).toString('utf8');
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    try {
      await handler(req, res, body);
    } catch {
      res.destroy();
    }
  });
  return { ...(await listenLoopback(server, 'http', () => server.closeAllConnections())), requests };
}

/**
 * Listens on 127.0.0.1 at a free port (port 0).
 * @param drop ends the server's connections, before `close` waits for the server to close.
 * @returns `SCHEME://127.0.0.1:PORT`, and a close that resolves once the server closed.
 */
export async function listenLoopback(server: Server, scheme: 'http' | 'ws', drop: () => void): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        drop();
        server.close(() => resolve());
      }),
  };
}

/** Formats one SSE event with a name and JSON data. */
export function sse(name: string | undefined, data: unknown, eol = '\n'): string {
  const lines = name === undefined ? [] : [`event: ${name}`];
  lines.push(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}`);
  return lines.join(eol) + eol + eol;
}

/** A `delta` event carrying `bytes`. */
export function deltaEvent(bytes: Buffer, itemId = 'item_test', eol = '\n'): string {
  return sse('delta', { type: 'speech.audio.delta', item_id: itemId, delta: bytes.toString('base64') }, eol);
}

/** A `done` event. */
export function doneEvent(itemId = 'item_test', eol = '\n'): string {
  return sse('done', { type: 'speech.audio.done', item_id: itemId }, eol);
}

/** Writes SSE headers (200, text/event-stream). */
export function startEventStream(res: ServerResponse, contentType = 'text/event-stream'): void {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** Deterministic test audio: `n` bytes of a pattern (not silence, so misplaced bytes show). */
export function patternBytes(n: number, seed = 1): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/** Runs `fn` against a server answering with `handler`, and always closes the server. */
export async function withServer(handler: Parameters<typeof startServer>[0], fn: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startServer(handler);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/**
 * A service that answers every request with one `delta` of `bytes` bytes of a known pattern
 * (patternBytes) and `done`: for tests of what the client sends and writes, not of the audio.
 */
export function startPatternServer(bytes: number): Promise<TestServer> {
  return startServer((_req, res) => {
    startEventStream(res);
    res.write(deltaEvent(patternBytes(bytes)));
    res.end(doneEvent());
  });
}
