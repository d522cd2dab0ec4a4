/**
 * `tts serve` (docs/cli.md §5): the built-in service as a real server, for building and testing
 * apps against the service's protocol offline. Keys from `TTS_SERVER_API_KEYS` (comma-separated)
 * or `--api-keys-file` (one per line, `#` comments); with none, one is made and shown once.
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { isLoopbackHost } from '../client/auth.js';
import { TtsError } from '../errors.js';
import { EXIT } from '../errors.js';
import type { Command } from 'commander';
import { intIn, secondsIn, type CommandDone } from './flags.js';
import { createReporter, reportError, type CommandIo } from './report.js';
import { escapeControls } from './escape.js';

/** Flags of `tts serve`. */
export interface ServeFlags {
  host: string;
  port: number;
  apiKeysFile?: string;
  maxChars: number;
  rateLimit: string;
  maxConcurrent: number;
  quotaChars?: number;
  workers?: number;
  /** Seconds a stream may accept nothing before it is closed. */
  writeTimeout: number;
  quiet?: boolean;
}

/**
 * Seconds running streams get to finish after SIGINT or SIGTERM before they are ended
 * (docs/cli.md §5); a second signal ends them at once.
 */
export const SHUTDOWN_GRACE_SECONDS = 5;

/** Adds `serve` to the program. */
export function addServeCommand(program: Command, io: CommandIo, done: CommandDone): void {
  program
    .command('serve')
    .description('run the built-in service (SSE + WebSocket) for apps to test against')
    .option('--host <address>', 'address to bind', '127.0.0.1')
    .option('--port <n>', 'TCP port (0 = any free one)', intIn(0, 65535, '--port'), 8787)
    .option('--api-keys-file <path>', 'accepted keys, one per line (also env TTS_SERVER_API_KEYS, comma-separated)')
    .option('--max-chars <n>', 'longest input per request, in characters', intIn(1, 1_000_000, '--max-chars'), 5000)
    .option('--rate-limit <rate>', 'requests per key, e.g. 60/min, 10/s', '60/min')
    .option('--max-concurrent <n>', 'requests in progress per key, both channels', intIn(1, 10_000, '--max-concurrent'), 4)
    .option('--quota-chars <n>', 'characters each key may synthesize (default: no quota)', intIn(1, Number.MAX_SAFE_INTEGER, '--quota-chars'))
    .option('--workers <n>', 'synthesis worker threads (default: one per core, at least 2)', intIn(1, 64, '--workers'))
    .option('--write-timeout <sec>', 'close a stream whose client accepts nothing for this long, freeing its slot', secondsIn('--write-timeout'), 30)
    .option('-q, --quiet', 'no notices')
    .action(async (flags: ServeFlags) => done(await serve(flags, io)));
}

/**
 * Runs the server until SIGINT or SIGTERM; either one stops it alike (docs/cli.md §5): no new
 * requests (503), running streams get {@link SHUTDOWN_GRACE_SECONDS} to finish (a second signal
 * ends them at once), those still running then end with an `error` event / close 1001.
 * @returns 0 after a stop by SIGINT or SIGTERM; 2 for bad flags or a refused configuration; 7
 *   when the address cannot be bound.
 */
export async function serve(flags: ServeFlags, io: CommandIo): Promise<number> {
  const reporter = createReporter(io.stderr, { quiet: flags.quiet });
  try {
    const { parseRate } = await import('../server/limits.js');
    let rate: { limit: number; windowSeconds: number };
    try {
      rate = parseRate(flags.rateLimit);
    } catch (cause) {
      throw new TtsError('usage', `--rate-limit: ${(cause as Error).message}`);
    }
    let keys = await configuredKeys(flags, io.env);
    let generated = false;
    if (keys.length === 0) {
      if (!isLoopbackHost(flags.host)) {
        throw new TtsError('usage', `refusing to serve on ${flags.host} without configured keys`, {
          hint: 'set TTS_SERVER_API_KEYS or --api-keys-file, or bind 127.0.0.1',
        });
      }
      const { generateKey } = await import('../server/keys.js');
      keys = [generateKey()];
      generated = true;
    }
    const [{ createEngine }, { createService, closeService, listen }] = await Promise.all([import('../engine/index.js'), import('../server/builtin-server.js')]);
    // What the engine cannot mend is said once, here (Flite's binary rewritten in place by another build).
    const engine = createEngine({ workers: flags.workers ?? defaultWorkers(), onNotice: (line) => reporter.warn(`warning: ${line}`) });
    const service = createService({
      apiKeys: keys,
      engine,
      maxChars: flags.maxChars,
      rateLimit: rate,
      maxConcurrent: flags.maxConcurrent,
      ...(flags.quotaChars === undefined ? {} : { quotaChars: flags.quotaChars }),
      writeTimeoutMs: flags.writeTimeout * 1000,
      // The path and other request parts come from clients: never raw onto the terminal.
      accessLog: (line) => io.stderr.write(`${escapeControls(line)}\n`),
    });
    let base: string;
    try {
      base = await listen(service, flags.host, flags.port);
    } catch (cause) {
      await engine.close();
      const code = (cause as NodeJS.ErrnoException).code ?? 'error';
      throw new TtsError('io_error', `cannot listen on ${flags.host}:${flags.port} (${code})`, { cause, hint: code === 'EADDRINUSE' ? 'pick another --port' : undefined });
    }
    // Start every worker now, so the first requests do not pay for it.
    engine.prestart();
    if (generated) io.stderr.write(`tts: API key for this server (shown once): ${keys[0]}\n`);
    io.stderr.write(`tts: serving SSE on ${base}/v1/tts/sse and WebSocket on ${base.replace(/^http/, 'ws')}/v1/realtime_tts; OpenAI speech on ${base}/v1/audio/speech\n`);
    io.stderr.write(`tts: use it with TTS_BASE_URL=${base} TTS_API_KEY=… tts say "…"  (Ctrl-C stops)\n`);
    const signal = await nextSignal();
    // closeService stops listening before it returns; the line says so only then, so that a
    // client that reads it and connects is refused (ECONNREFUSED), never accepted and then reset.
    const drained = closeService(service, {
      graceMs: SHUTDOWN_GRACE_SECONDS * 1000,
      onGraceOver: () => void io.stderr.write(`tts: ${SHUTDOWN_GRACE_SECONDS} s are over: ending the streams still running\n`),
    });
    io.stderr.write(`tts: ${signal}: stopping; running streams get ${SHUTDOWN_GRACE_SECONDS} s to finish (${signal} again ends them now)\n`);
    const again = nextSignal();
    void again.then((second) => {
      io.stderr.write(`tts: ${second}: ending running streams now\n`);
      return closeService(service);
    });
    await drained;
    await engine.close();
    return EXIT.ok;
  } catch (error) {
    return reportError(error, reporter);
  }
}

/** Resolves with the next SIGINT or SIGTERM (handling it: the process does not die of it). */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/**
 * Synthesis worker threads when `--workers` is not given: one per core, and at least two, so that
 * one long text never holds every worker while a short request waits behind it (on a single core
 * the two threads share it, and the short request's first delta still comes at once).
 */
export function defaultWorkers(): number {
  return Math.max(2, availableParallelism());
}

async function configuredKeys(flags: ServeFlags, env: NodeJS.ProcessEnv): Promise<string[]> {
  const keys: string[] = [];
  const fromEnv = env['TTS_SERVER_API_KEYS'];
  if (fromEnv !== undefined) keys.push(...fromEnv.split(',').map((k) => k.trim()).filter((k) => k !== ''));
  if (flags.apiKeysFile !== undefined) {
    let text: string;
    try {
      text = await readFile(flags.apiKeysFile, 'utf8');
    } catch (cause) {
      throw new TtsError('usage', `cannot read ${flags.apiKeysFile} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
    }
    keys.push(...text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')));
  }
  return keys;
}
