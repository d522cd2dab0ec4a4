/**
 * Fake SSE services on loopback for the client benchmarks: they stream a planned number of
 * deltas as fast as the client reads, in this process or in a child (so the client's figures
 * are not slowed by the server sharing its event loop).
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { deltaEvent, doneEvent, patternBytes, startEventStream } from '../test/helpers/servers.js';

/** The key every fake server accepts (any non-empty key would do: they do not check it). */
export const BENCH_KEY = 'bench-key-0123456789';

/** A running loopback server. */
export interface LoopbackServer {
  server: Server;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Closes every connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1, port 0, whose handler gets each request with its body
 * already read (as text).
 */
export async function startLoopbackServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>,
): Promise<LoopbackServer> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      Promise.resolve(handler(req, res, Buffer.concat(parts).toString('utf8'))).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}






/** Writes `chunk`, resolving when the response can take more; rejects if the client left. */
export function writeRespectingBackpressure(res: ServerResponse, chunk: Buffer | string): Promise<void> {
  if (res.destroyed) return Promise.reject(new Error('the client went away'));
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = (): void => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      res.off('drain', onDrain);
      reject(new Error('the client went away'));
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/** Shape of a stream of audio deltas: how many, and the audio bytes in each. */
export interface DeltaPlan {
  /** Number of `delta` events. */
  deltas: number;
  /** Audio bytes per delta (before base64), e.g. 4800 = 100 ms of 24 kHz mono pcm16. */
  deltaBytes: number;
}

/** Bytes of the event-stream body {@link streamDeltas} sends for `plan` (deltas and `done`). */
export function sseBodyBytes(plan: DeltaPlan): number {
  return plan.deltas * Buffer.byteLength(deltaEvent(patternBytes(plan.deltaBytes))) + Buffer.byteLength(doneEvent());
}

/**
 * Streams `plan.deltas` identical deltas then `done` as fast as the client takes them
 * (respecting backpressure: a slow client slows us, not our memory), then ends the response.
 * Events are pre-formatted into blocks of ~256 KiB so that the server costs little CPU.
 * @returns the body bytes sent.
 */
export async function streamDeltas(res: ServerResponse, plan: DeltaPlan): Promise<number> {
  const event = Buffer.from(deltaEvent(patternBytes(plan.deltaBytes)));
  const perBlock = Math.max(1, Math.floor((256 * 1024) / event.length));
  const block = Buffer.concat(Array.from({ length: perBlock }, () => event));
  startEventStream(res);
  let sent = 0;
  let left = plan.deltas;
  while (left >= perBlock) {
    await writeRespectingBackpressure(res, block);
    sent += block.length;
    left -= perBlock;
  }
  if (left > 0) {
    const tail = block.subarray(0, left * event.length);
    await writeRespectingBackpressure(res, tail);
    sent += tail.length;
  }
  const done = Buffer.from(doneEvent());
  res.end(done);
  return sent + done.length;
}

/** A fake SSE server running in a child process (see sse-server.ts). */
export interface ChildSseServer {
  url: string;
  /** Body bytes of every response. */
  sseBytes: number;
  /** Ends the child (closing its stdin) and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts `dist/bench/sse-server.js` in a child process: a loopback server answering every POST
 * with {@link streamDeltas} for `plan`. A separate process keeps the server's CPU work off the
 * event loop being measured.
 */
export async function startChildSseServer(plan: DeltaPlan): Promise<ChildSseServer> {
  const script = fileURLToPath(new URL('./sse-server.js', import.meta.url));
  const child = spawn(process.execPath, [script, JSON.stringify(plan)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`sse-server exited with ${code} before it listened`)));
  });
  lines.close();
  const ready = JSON.parse(first) as { url: string; sseBytes: number };
  return {
    url: ready.url,
    sseBytes: ready.sseBytes,
    close: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The request body of our client, for fake servers that ignore it anyway. */
export function requestBody(input = 'hello'): string {
  return JSON.stringify({ input, voice: 'ja-man-1', response_format: 'pcm16', language: 'ja' });
}

/** A server that answers every request with one 4800-byte delta, then `done` once the client showed its first byte. */
export interface FirstDeltaServer extends LoopbackServer {
  /**
   * Runs one client through `run`, which must pass `onFirstByte` the `performance.now()` of the
   * client's first stdout byte (bench/process.ts timedSpawn does).
   * @returns what `run` returned, and the ms from the server writing its delta to that first
   *   byte; undefined when no request came or no byte was seen.
   */
  latency<T>(run: (onFirstByte: (at: number) => void) => Promise<T>): Promise<{ result: T; latencyMs: number | undefined }>;
}

/**
 * Starts the server of the time-to-first-audio benches (client-ttfa, audio-stage): the delta is
 * written at once and `done` only after the client's first byte, so the figure is the client's
 * path from a delta's arrival to its stdout, not the length of the stream.
 */
export async function startFirstDeltaServer(): Promise<FirstDeltaServer> {
  const delta = Buffer.from(deltaEvent(patternBytes(4800)));
  const done = Buffer.from(doneEvent());
  let current: { writtenAt?: number; res?: ServerResponse; firstByteAt?: number } = {};
  const finish = (): void => {
    if (current.res !== undefined && current.firstByteAt !== undefined) current.res.end(done);
  };
  const server = await startLoopbackServer((_req, res) => {
    startEventStream(res);
    current.res = res;
    current.writtenAt = performance.now();
    res.write(delta);
    finish();
  });
  return {
    ...server,
    async latency(run) {
      current = {};
      const result = await run((at) => {
        current.firstByteAt = at;
        finish();
      });
      const { writtenAt, firstByteAt } = current;
      return { result, latencyMs: writtenAt === undefined || firstByteAt === undefined ? undefined : firstByteAt - writtenAt };
    },
  };
}
