/**
 * Runs the real `bin/tts.js` in a child process, as a user's shell would.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Path of the CLI entry point. */
export const TTS_BIN = fileURLToPath(new URL('../../../bin/tts.js', import.meta.url));

/**
 * Fails unless bin/tts.js's bundle (dist/bundle/, scripts/bundle.js) was built from the compiled
 * code beside this file: tsc rewrites every file of dist/src, so a bundle older than
 * dist/src/cli/main.js is one of an earlier compile, and a spawned `tts` would run old code
 * while the in-process tests run the new. `npm test` (pretest) and `npm run build` build both.
 * @throws Error naming the command to run, when the bundle is missing or older.
 */
export function assertBundleCurrent(): void {
  const compiled = new URL('../../src/cli/main.js', import.meta.url);
  const bundle = new URL('../../bundle/tts.cjs', import.meta.url);
  const bundled = statSync(bundle, { throwIfNoEntry: false });
  if (bundled === undefined || bundled.mtimeMs < statSync(compiled).mtimeMs) {
    throw new Error(`${fileURLToPath(bundle)} is ${bundled === undefined ? 'missing' : 'older than dist/src (tsc ran after it)'}: run \`npm run build\` (tsc and scripts/bundle.js), so that bin/tts.js runs the code under test`);
  }
}

assertBundleCurrent();

/** What a run produced. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

/** Options of {@link runTts}. */
export interface RunOptions {
  /** Bytes or text written to stdin, then closed; undefined leaves stdin empty (closed). */
  input?: string | Buffer;
  /** Environment added over a clean base (no TTS_* from the developer's shell). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Kills the child after this many ms (default 60 s). */
  timeoutMs?: number;
  /** Options for node itself, before bin/tts.js (e.g. `--import hook.js`). */
  nodeArgs?: string[];
  /** A file (or device) opened as the child's stdin, as the shell's `< path` does. */
  stdinPath?: string;
  /** Leave stdin open (never written, never ended) instead of closing it. */
  keepStdinOpen?: boolean;
  /** A command the run goes through, before node (e.g. `['setpriv', '--reuid=65534', …]`). */
  prefix?: string[];
  /** Called with the child once it is spawned (to signal it, or watch it). */
  onSpawn?: (child: import('node:child_process').ChildProcess) => void;
}

/** Cache folders made by {@link freshCacheHome}, removed when the test process exits. */
const cacheHomes: string[] = [];
let cleanupInstalled = false;

/**
 * A new empty folder for `XDG_CACHE_HOME`: every run gets its own piece cache (docs/cli.md §8),
 * so no test reads another's pieces or the user's `~/.cache/tts`, and the cache stays on as it
 * is for users. Removed when the test process exits.
 */
export function freshCacheHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tts-cache-'));
  cacheHomes.push(dir);
  if (!cleanupInstalled) {
    cleanupInstalled = true;
    process.on('exit', () => {
      for (const d of cacheHomes) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}

/**
 * Environment without the developer's TTS_* variables, with a fresh empty `XDG_CACHE_HOME`
 * unless `extra` names one.
 */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TTS_')) env[k] = v;
  if (!('XDG_CACHE_HOME' in extra)) env['XDG_CACHE_HOME'] = freshCacheHome();
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Spawns `node bin/tts.js ...args` and collects its output. */
export function runTts(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [command, ...commandArgs] = [...(options.prefix ?? []), process.execPath, ...(options.nodeArgs ?? []), TTS_BIN, ...args];
    const child = spawn(command!, commandArgs, {
      env: cleanEnv(options.env),
      cwd: options.cwd,
      stdio: [options.stdinPath === undefined ? 'pipe' : openSync(options.stdinPath, 'r'), 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err });
    });
    options.onSpawn?.(child);
    if (child.stdin !== null) {
      child.stdin.on('error', () => {});
      if (options.input !== undefined) child.stdin.end(options.input);
      else if (options.keepStdinOpen !== true) child.stdin.end();
    }
  });
}

/** What {@link runTtsMeasured} saw, besides what {@link runTts} does. */
export interface MeasuredResult extends CliResult {
  /** Peak resident set size of the child, in MB (VmHWM from /proc/PID/status, read every 20 ms). */
  peakRssMb: number;
  /** Milliseconds from spawn to exit. */
  elapsedMs: number;
}

/**
 * Runs `bin/tts.js` like {@link runTts}, reading its peak memory from /proc/PID/status (VmHWM,
 * the kernel's high-water mark, so no peak between two reads is lost) until it exits.
 */
export async function runTtsMeasured(args: string[], options: RunOptions = {}): Promise<MeasuredResult> {
  let peakKb = 0;
  let poll: NodeJS.Timeout | undefined;
  const { readFileSync } = await import('node:fs');
  const started = performance.now();
  const result = await runTts(args, {
    ...options,
    onSpawn: (child) => {
      const read = (): void => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          if (m !== null) peakKb = Math.max(peakKb, Number(m[1]));
        } catch {
          // The process has exited.
        }
      };
      poll = setInterval(read, 20);
      child.once('exit', () => clearInterval(poll));
      options.onSpawn?.(child);
    },
  });
  clearInterval(poll);
  return { ...result, peakRssMb: peakKb / 1024, elapsedMs: performance.now() - started };
}
