/**
 * Runs the real `bin/tts.js` in a child process, as a user's shell would.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Path of the CLI entry point. */
export const TTS_BIN = fileURLToPath(new URL('../../../bin/tts.js', import.meta.url));

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
}

/** Environment without the developer's TTS_* variables. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TTS_')) env[k] = v;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Spawns `node bin/tts.js ...args` and collects its output. */
export function runTts(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TTS_BIN, ...args], {
      env: cleanEnv(options.env),
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err });
    });
    child.stdin.on('error', () => {});
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}
