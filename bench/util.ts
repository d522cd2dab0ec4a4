/**
 * Shared helpers of the benchmarks (`npm run bench`): statistics, figures with their baseline and
 * target, timed child processes, peak-RSS measurement and a fake SSE service on loopback.
 *
 * Every figure is printed beside a baseline measured in the same run, as a ratio, because the
 * machines we run on are shared and noisy: an absolute number alone says little, the ratio to
 * "the same work done the bare way, a moment ago" says more.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
// The same loopback-server and environment helpers the tests use.
import { cleanEnv } from '../test/helpers/cli.js';
import { deltaEvent, doneEvent, patternBytes, startEventStream } from '../test/helpers/servers.js';
export { deltaEvent, doneEvent };
/** Environment for spawned commands, without the developer's TTS_* variables. */
export const benchEnv = cleanEnv;
/** Deterministic pseudo-random audio bytes (not silence), `n` bytes. */
export const audioPattern = patternBytes;
/** Sends the 200 `text/event-stream` head at once. */
export const beginEventStream = startEventStream;

/** Root of the repository (this file runs as dist/bench/util.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The CLI entry point, `bin/tts.js`. */
export const TTS_BIN = path.join(REPO_ROOT, 'bin', 'tts.js');

/** Options every benchmark receives from run.ts. */
export interface BenchOptions {
  /** `--quick`: fewer repetitions and smaller inputs, to finish in under a minute overall. */
  quick: boolean;
  /** Progress lines (to stderr), never figures. */
  log: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** Median of `xs` (mean of the two middle values for an even count). @throws on an empty list. */
export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/**
 * The `p`-th percentile (0–100) of `xs`, interpolating linearly between closest ranks
 * (the "R-7" / Excel PERCENTILE.INC definition). @throws on an empty list.
 */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) throw new RangeError('percentile of an empty list');
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

/** Arithmetic mean of `xs`. @throws on an empty list. */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError('mean of an empty list');
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

// ---------------------------------------------------------------------------------------------
// Figures

/** Units a figure is printed in. `x` is a plain factor (e.g. a real-time factor). */
export type Unit = 'ms' | 's' | 'MB' | 'MB/s' | 'x';

/**
 * A target a figure must meet. Ratios are `value / baseline`.
 * - `ratio-max` / `ratio-min`: the ratio is at most / at least `limit`;
 * - `max` / `min`: the value (in the figure's unit) is at most / at least `limit`;
 * - `added-max`: `value − baseline` (in the figure's unit) is at most `limit`.
 */
export interface Target {
  kind: 'ratio-max' | 'ratio-min' | 'max' | 'min' | 'added-max';
  limit: number;
}

/** One measured figure beside its baseline. */
export interface Figure {
  /** Which benchmark measured it (e.g. `startup`). */
  bench: string;
  /** What was measured, e.g. `start-up --version`. */
  name: string;
  value: number;
  unit: Unit;
  /** The same kind of figure for the bare way of doing the work, measured in the same run. */
  baseline?: { name: string; value: number } | undefined;
  /** All must hold for the figure to be MET; none means the figure is informational. */
  targets: Target[];
  /** A short remark printed after the status (sample count, method). */
  note?: string | undefined;
}

/** A figure with its derived ratio and verdict. */
export interface Verdict {
  /** `value / baseline`, when there is a baseline. */
  ratio: number | undefined;
  /** True/false against the targets; undefined for an informational figure. */
  met: boolean | undefined;
}

/** Ratio and verdict of `f`. */
export function judge(f: Figure): Verdict {
  const base = f.baseline?.value;
  const ratio = base === undefined || base === 0 ? undefined : f.value / base;
  if (f.targets.length === 0) return { ratio, met: undefined };
  const met = f.targets.every((t) => {
    switch (t.kind) {
      case 'ratio-max':
        return ratio !== undefined && ratio <= t.limit;
      case 'ratio-min':
        return ratio !== undefined && ratio >= t.limit;
      case 'max':
        return f.value <= t.limit;
      case 'min':
        return f.value >= t.limit;
      case 'added-max':
        return base !== undefined && f.value - base <= t.limit;
    }
  });
  return { ratio, met };
}

/** A number in the unit's usual precision, with the unit. */
export function formatValue(value: number, unit: Unit): string {
  switch (unit) {
    case 'ms':
      return `${value.toFixed(1)} ms`;
    case 's':
      return `${value.toFixed(2)} s`;
    case 'MB':
      return `${value.toFixed(1)} MB`;
    case 'MB/s':
      return `${value.toFixed(0)} MB/s`;
    case 'x':
      return value.toPrecision(3);
  }
}

/** Human text of a figure's targets, e.g. `≤ 1.30×`, `≥ 0.60× and ≥ 300 MB/s`. */
export function formatTargets(f: Figure): string {
  if (f.targets.length === 0) return '—';
  return f.targets
    .map((t) => {
      switch (t.kind) {
        case 'ratio-max':
          return `≤ ${t.limit.toFixed(2)}×`;
        case 'ratio-min':
          return `≥ ${t.limit.toFixed(2)}×`;
        case 'max':
          return `≤ ${formatValue(t.limit, f.unit)}`;
        case 'min':
          return `≥ ${formatValue(t.limit, f.unit)}`;
        case 'added-max': {
          const added = f.baseline === undefined ? NaN : f.value - f.baseline.value;
          return `≤ +${formatValue(t.limit, f.unit)} added (${added >= 0 ? '+' : ''}${formatValue(added, f.unit)})`;
        }
      }
    })
    .join(' and ');
}

/** The figures as an aligned table, one line per figure. */
export function formatTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => {
    const { ratio, met } = judge(f);
    return [
      f.name,
      formatValue(f.value, f.unit),
      f.baseline === undefined ? '—' : `${f.baseline.name}: ${formatValue(f.baseline.value, f.unit)}`,
      ratio === undefined ? '—' : `${ratio.toFixed(2)}×`,
      `target ${formatTargets(f)}`,
      met === undefined ? 'info' : met ? 'MET' : 'NOT MET',
      f.note ?? '',
    ];
  });
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  const right = new Set([1, 3]);
  return rows
    .map((r) =>
      r
        .map((cell, i) => {
          const w = widths[i];
          if (w === undefined) return cell;
          return right.has(i) ? cell.padStart(w) : cell.padEnd(w);
        })
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Child processes


/** Options of {@link timedSpawn}. */
export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  /** Kills the child (SIGKILL) after this many milliseconds; default 60 000. */
  timeoutMs?: number;
  /** Called at the arrival of the first stdout byte, with `performance.now()` of that moment. */
  onFirstByte?: (at: number) => void;
  /** Fails unless the child exits with this code; default 0. `null` accepts any outcome. */
  expectCode?: number | null;
  /** Called with the child's pid right after it was spawned. */
  onSpawn?: (pid: number) => void;
}

/** What a timed child process did; times are milliseconds of `performance.now()`. */
export interface TimedRun {
  /** `performance.now()` just before `spawn()`. */
  spawnedAt: number;
  /** Milliseconds from spawn to the child's exit ('exit' event). */
  exitMs: number;
  /** Milliseconds from spawn to the first stdout byte at this process; undefined if none came. */
  firstByteMs: number | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Bytes the child wrote to stdout (read and discarded). */
  stdoutBytes: number;
  /** The first 64 KiB of the child's stderr. */
  stderr: string;
}

/**
 * Spawns `command args` with stdin closed, stdout read and discarded (counted), stderr kept,
 * and times it with `performance.now()`.
 * @throws Error when the child cannot start, times out, or exits other than `expectCode`.
 */
export function timedSpawn(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<TimedRun> {
  return new Promise((resolve, reject) => {
    const spawnedAt = performance.now();
    const child = spawn(command, args, { env: options.env ?? benchEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    let exitAt: number | undefined;
    let firstByteAt: number | undefined;
    let stdoutBytes = 0;
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (firstByteAt === undefined) {
        firstByteAt = performance.now();
        options.onFirstByte?.(firstByteAt);
      }
      stdoutBytes += d.length;
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 65536) stderr += d.toString('utf8');
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 60_000);
    child.on('exit', () => (exitAt = performance.now()));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const run: TimedRun = {
        spawnedAt,
        exitMs: (exitAt ?? performance.now()) - spawnedAt,
        firstByteMs: firstByteAt === undefined ? undefined : firstByteAt - spawnedAt,
        code,
        signal,
        stdoutBytes,
        stderr,
      };
      const expected = options.expectCode === undefined ? 0 : options.expectCode;
      if (timedOut) reject(new Error(`${describe(command, args)} timed out after ${options.timeoutMs ?? 60_000} ms`));
      else if (expected !== null && code !== expected) {
        reject(new Error(`${describe(command, args)} exited with ${code ?? signal}: ${stderr.trim().slice(0, 500)}`));
      } else resolve(run);
    });
  });
}

function describe(command: string, args: readonly string[]): string {
  const shown = [path.basename(command), ...args.map((a) => (a.length > 40 ? `${a.slice(0, 37)}…` : a))];
  return `\`${shown.join(' ')}\``;
}

/** Arguments that run the CLI: `[bin/tts.js, ...args]` (to spawn with `process.execPath`). */
export function ttsArgs(...args: string[]): string[] {
  return [TTS_BIN, ...args];
}

/** The path of executable `name` on PATH (or `name` itself when it is a path that exists), or undefined. */
export function which(name: string): string | undefined {
  if (name.includes('/')) return existsSync(name) ? name : undefined;
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir === '') continue;
    const p = path.join(dir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** A peak resident set size and how it was measured. */
export interface PeakRss {
  /** Peak RSS of the child, in bytes. */
  bytes: number;
  /** `time -f %M` (the kernel's ru_maxrss at wait) or `/proc VmHWM` (polled until exit). */
  method: 'time -f %M' | '/proc VmHWM';
  run: TimedRun;
}

/**
 * Runs `command args` and measures its peak resident set size: with GNU `/usr/bin/time -f %M`
 * when it works here (exact: the kernel's ru_maxrss of the child, reported at wait), else by
 * polling `/proc/PID/status` VmHWM (the kernel's high-water mark, so no peak between polls is
 * lost) every 5 ms until the child exits; only a rise in its last few milliseconds can be missed.
 * @param method `proc` forces the polling method (to test it).
 * @throws as {@link timedSpawn}, and when neither method is available.
 */
export async function measurePeakRss(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
  method: 'auto' | 'proc' = 'auto',
): Promise<PeakRss> {
  if (method === 'auto' && (await gnuTimeWorks())) {
    const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-rss-'));
    const out = path.join(dir, 'rss');
    try {
      const run = await timedSpawn('/usr/bin/time', ['-f', '%M', '-o', out, command, ...args], options);
      return { bytes: readTimeKb(out) * 1024, method: 'time -f %M', run };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  let peakKb = 0;
  let pid: number | undefined;
  const poll = (): void => {
    if (pid === undefined) return;
    try {
      const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m !== null) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // gone between polls
    }
  };
  const timer = setInterval(poll, 5);
  try {
    const run = await timedSpawn(command, args, { ...options, onSpawn: (p) => (pid = p) });
    if (peakKb === 0) throw new Error('cannot measure peak RSS: no GNU /usr/bin/time and no /proc/PID/status VmHWM');
    return { bytes: peakKb * 1024, method: '/proc VmHWM', run };
  } finally {
    clearInterval(timer);
  }
}

let gnuTime: Promise<boolean> | undefined;

/** Whether `/usr/bin/time -f %M -o FILE` works here (GNU time; BusyBox's may lack -f). */
function gnuTimeWorks(): Promise<boolean> {
  gnuTime ??= (async () => {
    if (!existsSync('/usr/bin/time')) return false;
    const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-rss-'));
    try {
      await timedSpawn('/usr/bin/time', ['-f', '%M', '-o', path.join(dir, 'rss'), process.execPath, '-e', '0']);
      return readTimeKb(path.join(dir, 'rss')) > 0;
    } catch {
      return false;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return gnuTime;
}

/** The kilobytes GNU time wrote; it may prefix "Command exited with non-zero status N". */
function readTimeKb(file: string): number {
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const kb = Number(lines[lines.length - 1]);
  if (!Number.isFinite(kb) || kb <= 0) throw new Error(`cannot read GNU time's output: ${lines.join(' / ')}`);
  return kb;
}

// ---------------------------------------------------------------------------------------------
// A fake SSE service

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
  return plan.deltas * Buffer.byteLength(deltaEvent(audioPattern(plan.deltaBytes))) + Buffer.byteLength(doneEvent());
}

/**
 * Streams `plan.deltas` identical deltas then `done` as fast as the client takes them
 * (respecting backpressure: a slow client slows us, not our memory), then ends the response.
 * Events are pre-formatted into blocks of ~256 KiB so that the server costs little CPU.
 * @returns the body bytes sent.
 */
export async function streamDeltas(res: ServerResponse, plan: DeltaPlan): Promise<number> {
  const event = Buffer.from(deltaEvent(audioPattern(plan.deltaBytes)));
  const perBlock = Math.max(1, Math.floor((256 * 1024) / event.length));
  const block = Buffer.concat(Array.from({ length: perBlock }, () => event));
  beginEventStream(res);
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

/** Megabytes (10⁶ bytes). */
export function mb(bytes: number): number {
  return bytes / 1e6;
}
