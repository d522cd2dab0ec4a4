/**
 * Timed child processes and their peak memory, for the benchmarks: the CLI is always measured as
 * users run it, as a process.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv } from '../test/helpers/cli.js';

/** Root of the repository (this file runs as dist/bench/process.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The CLI entry point, `bin/tts.js`. */
export const TTS_BIN = path.join(REPO_ROOT, 'bin', 'tts.js');

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
    const child = spawn(command, args, { env: options.env ?? cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
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
