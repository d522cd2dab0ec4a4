/**
 * The built-in service under load: `tts serve` spawned on 127.0.0.1 with its default engine pool
 * (or, with a CLI that has no `serve` command, `createService` + `createEngine()` in this
 * process, with the pool's default worker count). Clients are minimal `http.request` readers in
 * this process that note when the first complete `delta` event arrived, then read the stream to
 * its end. Every concurrent stream has a key of its own, so the service's per-key limits
 * (4 concurrent, 60 a minute) do not turn the load into refusals.
 *
 * - time to first delta of one short request on an idle service (the baseline of the others);
 * - 50 concurrent short requests: time to first delta, p50 and p99;
 * - a short request sent while a long one is being synthesized, and while as many long ones run
 *   as the pool has workers: its time to first delta.
 * The issue sets no targets for these: they are printed for information.
 */
import { readFileSync } from 'node:fs';
import { Agent, request, Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { spawn } from 'node:child_process';
import { cleanEnv } from '../test/helpers/cli.js';
import type { BenchOptions, Figure } from './figures.js';
import { TTS_BIN, ttsArgs } from './process.js';
import { median, percentile } from './stats.js';

const SHORT = 'Hello there, how are you today?';
const LONG = Array.from(
  { length: 12 },
  (_, i) => `This is sentence number ${i + 1} of a long request, which keeps the engine busy for a while so that we can see what a short request waits.`,
).join(' ');

/** Concurrent streams of the load test. */
const CONCURRENCY = 50;

/** A running built-in service to measure. */
interface Subject {
  url: string;
  /** How it runs, e.g. `tts serve, default --workers (one per core: 2)`. */
  description: string;
  /** Worker threads of its engine pool. */
  workers: number;
  close(): Promise<void>;
}

/**
 * Measures times to first delta in ms: unloaded (median of 3 / 7 after 15 warm-up requests), 50
 * concurrent (p50, p99), and a short request behind one long one — and behind as many long ones
 * as the pool has workers, when it has more than one (medians of 1 / 3).
 */
export async function benchServerLoad(options: BenchOptions): Promise<Figure[]> {
  const keys = Array.from({ length: CONCURRENCY + 2 }, (_, i) => `bench-key-${String(i).padStart(2, '0')}-0123456789abcdef`);
  const subject = hasServeCommand() ? await spawnServe(keys) : await inProcessService(keys);
  const url = subject.url;
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const post = (text: string, key: string, onFirstDelta?: () => void): Promise<StreamTiming> => sseTiming(agent, url, key, text, onFirstDelta);
  try {
    // Warm-up: eSpeak NG here is JavaScript (wasm2js), so each worker's first jobs run while the
    // JIT is still compiling it. Start every worker with a concurrent round, then a few in a row.
    await Promise.all(keys.slice(0, 10).map((k) => post(SHORT, k)));
    for (let r = 0; r < 5; r++) await post(SHORT, keys[0]!);
    const idle: number[] = [];
    for (let r = 0; r < (options.quick ? 3 : 7); r++) idle.push((await post(SHORT, keys[0]!)).firstDeltaMs);
    const unloaded = { name: 'one request, idle', value: median(idle) };

    const started = performance.now();
    const many = await Promise.all(keys.slice(0, CONCURRENCY).map((k) => post(SHORT, k)));
    const wallMs = performance.now() - started;
    const firsts = many.map((t) => t.firstDeltaMs);
    options.log(`server-load: ${subject.description}; ${CONCURRENCY} concurrent short streams in ${wallMs.toFixed(0)} ms`);

    const rounds = options.quick ? 1 : 3;
    const behindOne = await shortBehindLong(post, keys, 1, rounds);
    const behindAll = subject.workers > 1 ? await shortBehindLong(post, keys, subject.workers, rounds) : undefined;
    return [
      {
        bench: 'server-load',
        name: `server: ${CONCURRENCY} concurrent, first delta p50`,
        value: percentile(firsts, 50),
        unit: 'ms',
        baseline: unloaded,
        targets: [],
        note: `${subject.description}; all ${CONCURRENCY} done in ${wallMs.toFixed(0)} ms`,
      },
      {
        bench: 'server-load',
        name: `server: ${CONCURRENCY} concurrent, first delta p99`,
        value: percentile(firsts, 99),
        unit: 'ms',
        baseline: unloaded,
        targets: [],
        note: subject.description,
      },
      {
        bench: 'server-load',
        name: 'server: short request behind a long one',
        value: behindOne.firstDeltaMs,
        unit: 'ms',
        baseline: unloaded,
        targets: [],
        note: `${subject.description}; the long one (${LONG.length} chars) took ${behindOne.longMs.toFixed(0)} ms`,
      },
      ...(behindAll === undefined
        ? []
        : [
            {
              bench: 'server-load',
              name: `server: short request behind ${subject.workers} long ones`,
              value: behindAll.firstDeltaMs,
              unit: 'ms' as const,
              baseline: unloaded,
              targets: [],
              note: `every worker busy; each long one took ${behindAll.longMs.toFixed(0)} ms`,
            },
          ]),
    ];
  } finally {
    agent.destroy();
    await subject.close();
  }
}

/**
 * Sends `longs` long requests at once and, once each delivered its first delta (so all are being
 * synthesized), one short request.
 * @returns medians over `rounds` of the short request's time to first delta and of the long
 *   requests' total times, in ms.
 */
async function shortBehindLong(
  post: (text: string, key: string, onFirstDelta?: () => void) => Promise<StreamTiming>,
  keys: string[],
  longs: number,
  rounds: number,
): Promise<{ firstDeltaMs: number; longMs: number }> {
  const shorts: number[] = [];
  const totals: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let sendShort: (() => void) | undefined;
    const shortDone = new Promise<StreamTiming>((resolve, reject) => {
      sendShort = () => post(SHORT, keys[CONCURRENCY + 1]!).then(resolve, reject);
    });
    // The short one goes when the last long one started speaking: by then all of them run.
    let started = 0;
    const long = await Promise.all(
      Array.from({ length: longs }, (_, i) =>
        post(LONG, keys[i]!, () => {
          if (++started === longs) sendShort?.();
        }),
      ),
    );
    shorts.push((await shortDone).firstDeltaMs);
    totals.push(...long.map((t) => t.totalMs));
  }
  return { firstDeltaMs: median(shorts), longMs: median(totals) };
}

/** Whether the compiled CLI registers a `serve` command. */
function hasServeCommand(): boolean {
  try {
    const main = readFileSync(new URL('../src/cli/main.js', import.meta.url), 'utf8');
    return /command\(\s*['"]serve['"]/.test(main);
  } catch {
    return false;
  }
}

/** The service in this process: `createService` + `createEngine()` (default worker count). */
async function inProcessService(keys: string[]): Promise<Subject> {
  const [{ createEngine }, service] = await Promise.all([import('../src/engine/index.js'), import('../src/server/builtin-server.js')]);
  const engine = createEngine();
  // createService returned the http.Server at first and a { server, close } later: take either.
  const created = service.createService({ apiKeys: keys, engine } as Parameters<typeof service.createService>[0]) as unknown;
  const server = created instanceof Server ? created : (created as { server: Server }).server;
  const url = await service.listen(server, '127.0.0.1', 0);
  return {
    url,
    description: 'in-process createService, createEngine() default of 1 worker',
    workers: 1,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
    },
  };
}

/**
 * Spawns `tts serve --host 127.0.0.1 --port 0` with the keys in TTS_SERVER_API_KEYS and its
 * default engine pool, and waits for its "serving SSE on URL" line on stderr.
 */
async function spawnServe(keys: string[]): Promise<Subject> {
  const child = spawn(process.execPath, ttsArgs('serve', '--host', '127.0.0.1', '--port', '0'), {
    env: cleanEnv({ TTS_SERVER_API_KEYS: keys.join(',') }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tts serve did not say where it listens within 20 s: ${stderr.slice(0, 300)}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
      const m = /serving SSE on (http:\/\/\S+?)\/v1\/tts\/sse/.exec(stderr);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${TTS_BIN} serve exited with ${code}: ${stderr.slice(0, 300)}`));
    });
  });
  return {
    url,
    description: `tts serve, default --workers (one per core: ${availableParallelism()})`,
    workers: availableParallelism(),
    close: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Timing of one SSE request, in ms from the moment it was sent. */
interface StreamTiming {
  /** To the first complete `delta` event. */
  firstDeltaMs: number;
  /** To the end of the response. */
  totalMs: number;
}

/**
 * POSTs one SSE request and times it.
 * @param onFirstDelta called when the first complete `delta` event arrived.
 * @throws when the status is not 200 or the stream ends without a delta.
 */
function sseTiming(agent: Agent, url: string, key: string, text: string, onFirstDelta?: () => void): Promise<StreamTiming> {
  return new Promise((resolve, reject) => {
    const sent = performance.now();
    let firstDeltaMs: number | undefined;
    const req = request(
      `${url}/v1/tts/sse`,
      { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`HTTP ${res.statusCode} from the built-in service`));
          return;
        }
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (s: string) => {
          if (firstDeltaMs !== undefined) return;
          buf += s;
          const end = buf.indexOf('\n\n');
          if (end !== -1 && buf.startsWith('event: delta')) {
            firstDeltaMs = performance.now() - sent;
            onFirstDelta?.();
          } else if (end !== -1) {
            reject(new Error(`the first event was not a delta: ${buf.slice(0, 200)}`));
            res.destroy();
          }
        });
        res.on('end', () => {
          if (firstDeltaMs === undefined) reject(new Error('the stream ended without a delta'));
          else resolve({ firstDeltaMs, totalMs: performance.now() - sent });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ input: text, voice: 'en-man-1', response_format: 'pcm16', language: 'en' }));
  });
}
