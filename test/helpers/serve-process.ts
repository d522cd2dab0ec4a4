/**
 * `node bin/tts.js serve …` as a child process, as a user would run it: waits for the line that
 * names the URLs it serves on, keeps its stderr, and stops it with a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cleanEnv, TTS_BIN } from './cli.js';

/** A running `tts serve`. */
export interface ServeProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT`, from the printed SSE URL. */
  base: string;
  /** The printed WebSocket URL. */
  wsUrl: string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code and signal, and when it happened (performance.now()). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** How `tts serve` ended without serving (e.g. a refused configuration). */
export interface ServeFailure {
  code: number | null;
  stderr: string;
}

/**
 * Starts `tts serve ...args` and waits until it prints where it serves.
 * @param bin the `bin/tts.js` to run: this repository's, or a copy of the package's (a test that
 *   changes its files).
 * @throws ServeFailure-shaped Error when it exits first; kills it after `timeoutMs` without the line.
 */
export function startServe(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 20_000, bin = TTS_BIN): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    err += `[stdout] ${d.toString('utf8')}`;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tts serve printed no URL within ${timeoutMs} ms:\n${err}`));
    }, timeoutMs);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString('utf8');
      const m = /serving SSE on (http:\/\/\S+)\/v1\/tts\/sse and WebSocket on (ws:\/\/\S+\/v1\/realtime_tts)/.exec(err);
      if (m !== null) {
        clearTimeout(timer);
        resolve({ child, base: m[1]!, wsUrl: m[2]!, stderr: () => err, exited });
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`tts serve exited with ${code}:\n${err}`), { code, stderr: err }));
    });
  });
}

/** Runs `tts serve ...args` expecting it to exit by itself (e.g. refused configuration). */
export function serveExpectingExit(args: string[], env: Record<string, string | undefined> = {}): Promise<ServeFailure> {
  return startServe(args, env).then(
    async (p) => {
      p.child.kill('SIGKILL');
      await p.exited;
      throw new Error(`tts serve started on ${p.base}`);
    },
    (error: { code?: number | null; stderr?: string }) => {
      if (error.stderr === undefined) throw error;
      return { code: error.code ?? null, stderr: error.stderr };
    },
  );
}
