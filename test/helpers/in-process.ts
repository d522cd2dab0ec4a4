/**
 * Runs `main` (src/cli/main.ts) in this process with injected streams and environment: for the
 * CLI tests where a child process adds nothing (issue 19 §5: rules are tested in-process; the
 * e2e tests keep the real binary for signals, real pipes, ttys, exit codes and ALSA). stdin is
 * a stream that is not a terminal, stdout is collected as bytes (nothing but audio goes there),
 * stderr as text.
 *
 * What differs from the real process: there is no working directory of its own (give absolute
 * paths), no signal can be sent to it alone, and native playback (`speaker`) reads this process's
 * own HOME (~/.asoundrc), not the injected one: such tests keep {@link runTts}.
 */
import { createReadStream } from 'node:fs';
import { PassThrough, Writable, type Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { CommandIo } from '../../src/cli/report.js';
import { cleanEnv, type CliResult, type RunOptions } from './cli.js';

/** What one in-process run produced. */
export interface MainResult {
  /** The exit code main returned (docs/cli.md §3). */
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Options of {@link runMainWith}: the stdin a run sees. */
export interface MainOptions {
  /** Bytes or text on stdin, then end of input; undefined: stdin is empty (ended at once). */
  input?: string | Buffer | undefined;
  /** A file read as stdin, as the shell's `< path` does. */
  stdinPath?: string | undefined;
  /** Leave stdin open (never written, never ended). */
  keepStdinOpen?: boolean | undefined;
  /** Rejects (the test fails) if main has not returned after this many ms (default 60 s). */
  timeoutMs?: number | undefined;
  /** stdin says it is a terminal (`isTTY`), as when the user typed `tts` at a prompt. */
  tty?: boolean | undefined;
  /** stdout says it is a terminal (`isTTY`), as when nothing is redirected. */
  stdoutTty?: boolean | undefined;
}

/**
 * Runs `tts ARGV…` in-process with exactly `env` as its environment (nothing is added: no PATH,
 * no cache folder, unless given).
 * @throws Error when main has not returned within `options.timeoutMs`.
 */
export async function runMainWith(argv: string[], env: NodeJS.ProcessEnv, options: MainOptions = {}): Promise<MainResult> {
  const stdout = options.stdoutTty === true ? Object.assign(new PassThrough(), { isTTY: true }) : new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  let err = '';
  stdout.on('data', (d: Buffer) => out.push(d));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  let stdin: Readable;
  if (options.stdinPath !== undefined) stdin = createReadStream(options.stdinPath);
  else {
    const p = new PassThrough();
    if (options.input !== undefined) p.end(options.input);
    else if (options.keepStdinOpen !== true) p.end();
    stdin = options.tty === true ? Object.assign(p, { isTTY: true }) : p;
  }
  const io: CommandIo = { stdin, stdout, stderr, env };
  let timer: NodeJS.Timeout | undefined;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`tts ${argv.join(' ')}: main did not return within ${timeoutMs} ms\n${err}`)), timeoutMs);
  });
  try {
    const code = await Promise.race([main(argv, io), timeout]);
    return { code, stdout: Buffer.concat(out), stderr: err };
  } finally {
    clearTimeout(timer);
    stdin.destroy();
  }
}

/** Runs `tts ARGV…` in-process with exactly `env` as its environment; stdin open and empty. */
export function runMain(argv: string[], env: NodeJS.ProcessEnv): Promise<MainResult> {
  return runMainWith(argv, env, { keepStdinOpen: true });
}

/**
 * The in-process twin of {@link runTts}: the same options and result, the same environment (the
 * developer's without TTS_*, a fresh empty XDG_CACHE_HOME, then `options.env`), `signal` always
 * null. Options only a real process has (`cwd`, `nodeArgs`, `onSpawn`) are refused.
 * @throws Error for an option only a child process can honour, or a run that outlives `timeoutMs`.
 */
export async function runTtsInProcess(args: string[], options: RunOptions = {}): Promise<CliResult> {
  if (options.cwd !== undefined || options.nodeArgs !== undefined || options.onSpawn !== undefined) {
    throw new Error('runTtsInProcess: cwd, nodeArgs and onSpawn need a child process (use runTts)');
  }
  const r = await runMainWith(args, cleanEnv(options.env), {
    input: options.input,
    stdinPath: options.stdinPath,
    keepStdinOpen: options.keepStdinOpen,
    timeoutMs: options.timeoutMs,
  });
  return { code: r.code, signal: null, stdout: r.stdout, stderr: r.stderr };
}

/** A `tts serve` running in this process through `main` (see {@link startServeInProcess}). */
export interface InProcessServe {
  /** `http://127.0.0.1:PORT`, from the printed SSE URL. */
  base: string;
  /** The printed WebSocket URL. */
  wsUrl: string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /**
   * Delivers `signal` to the server as the process would (to the handlers `serve` installed,
   * not to the test runner's), then, unless `graceful`, a second one (streams end now, as a
   * second Ctrl-C does), and resolves with main's exit code.
   */
  stop(signal?: 'SIGINT' | 'SIGTERM', graceful?: boolean): Promise<number>;
}

/**
 * Starts `tts serve ...args` in this process (no child: the suite's shared fixture server) and
 * waits for the line naming its URLs (docs/cli.md §6). `env` goes over {@link cleanEnv}.
 * @param onStderr called with each write to stderr from within the write, before it returns:
 *   what it observes is the server's state at the moment the text is written.
 * @throws Error with the stderr when main returns before serving, or no URL came in `timeoutMs`.
 */
export async function startServeInProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 20_000,
  onStderr?: (text: string) => void,
): Promise<InProcessServe> {
  const stdout = new PassThrough();
  let err = '';
  /** Looks for the URL line; set until it was found. */
  let onText: (() => void) | undefined;
  // A Writable whose write is done synchronously, unlike a PassThrough's 'data' (a later turn).
  const stderr = new Writable({
    write(chunk: Buffer, _encoding, callback): void {
      const text = chunk.toString();
      err += text;
      onStderr?.(text);
      onText?.();
      callback();
    },
  });
  const stdin = new PassThrough();
  stdout.on('data', (d: Buffer) => (err += `[stdout] ${d.toString()}`));
  const handlersBefore = new Set(process.listeners('SIGTERM'));
  type Handler = (signal: NodeJS.Signals) => void;
  /** The source of serve's own signal handler(s), told apart from signal-exit's (temp files). */
  let serveSources = new Set<string>();
  /** This server's first handlers (exact functions: another in-process serve has the same source). */
  let first: Handler[] = [];
  const ours = (): Handler[] => {
    const onInt = new Set(process.listeners('SIGINT'));
    return process.listeners('SIGTERM').filter((l) => onInt.has(l) && serveSources.has(l.toString())) as Handler[];
  };
  const done = main(['serve', ...args], { stdin, stdout, stderr, env: cleanEnv(env) });
  const urls = await new Promise<{ base: string; wsUrl: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tts serve printed no URL within ${timeoutMs} ms:\n${err}`)), timeoutMs);
    onText = () => {
      const m = /serving SSE on (http:\/\/\S+)\/v1\/tts\/sse and WebSocket on (ws:\/\/\S+\/v1\/realtime_tts)/.exec(err);
      if (m !== null) {
        onText = undefined;
        clearTimeout(timer);
        // serve installs its handler right after this line; nothing else runs in the meantime.
        setImmediate(() => {
          // serve's handler is one function on both SIGINT and SIGTERM; signal-exit (temp files)
          // has one function per signal and re-raises the signal: never call that one.
          const onInt = new Set(process.listeners('SIGINT'));
          first = process.listeners('SIGTERM').filter((l) => !handlersBefore.has(l) && onInt.has(l)) as Handler[];
          serveSources = new Set(first.map((l) => l.toString()));
          if (serveSources.size === 0) reject(new Error(`tts serve installed no SIGTERM handler:\n${err}`));
          else resolve({ base: m[1]!, wsUrl: m[2]! });
        });
      }
    };
    void done.then((code) => {
      clearTimeout(timer);
      reject(new Error(`tts serve returned ${code}:\n${err}`));
    }, reject);
  });
  return {
    ...urls,
    stderr: () => err,
    async stop(signal = 'SIGTERM', graceful = false) {
      const others = new Set(ours().filter((l) => !first.includes(l)));
      for (const handler of first) handler(signal);
      // serve listens for the second signal once it has begun draining (a later turn).
      await new Promise((resolve) => setImmediate(resolve));
      const again = ours().filter((l) => !others.has(l));
      if (!graceful) for (const handler of again) handler(signal);
      const code = await done;
      // Without a second signal, serve's handler for it stays: remove it.
      for (const handler of again) {
        process.off('SIGTERM', handler);
        process.off('SIGINT', handler);
      }
      stdin.destroy();
      return code;
    },
  };
}
