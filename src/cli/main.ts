/**
 * The commander program (STYLE.md: the entry only assembles commands; one file per command).
 * Actions return exit codes; `bin/tts.js` sets `process.exitCode` once (STYLE.md §5).
 * Modules beyond commander are imported only on the path that needs them, to keep start-up fast.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { EXIT } from '../errors.js';
import { addSynthesisOptions, intIn, type SynthesisFlags } from './options.js';
import type { ServeFlags } from './commands/serve.js';
import type { CommandIo } from './run.js';

/** The version in package.json. */
function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * Runs the CLI.
 * @param argv arguments after `node bin/tts.js`.
 * @param io the process's streams (tests may inject their own).
 * @returns the exit code of DESIGN.md §3.
 */
export async function main(argv: string[], io: CommandIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = new Command('tts')
    .description('Text to speech from the terminal, through a streaming TTS service or the built-in offline engine')
    .version(version(), '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(`tts: ${s.replace(/^error: /, 'error: ')}`),
    });

  const synthesisCommand = (name: 'say' | 'stream' | 'realtime', summary: string): void => {
    addSynthesisOptions(program.command(name).argument('[text...]', 'text to speak (default: stdin)').description(summary)).action(
      async (words: string[], flags: SynthesisFlags) => {
        const { runSynthesis } = await import('./run.js');
        exitCode = await runSynthesis(name, words, flags, io);
      },
    );
  };
  synthesisCommand('say', 'speak text on the sound card (over SSE); -o writes a file instead');
  synthesisCommand('stream', 'write audio to -o FILE or stdout as it arrives (over SSE)');
  synthesisCommand('realtime', 'speak over the WebSocket channel (experimental); -r and -c are requested from the service');
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
    .option('-q, --quiet', 'no notices')
    .action(async (flags: ServeFlags) => {
      const { serve } = await import('./commands/serve.js');
      exitCode = await serve(flags, io);
    });
  program
    .command('voices')
    .description("list the built-in engine's preset voices")
    .option('--json', 'one JSON array on stdout')
    .action(async (flags: { json?: boolean }) => {
      const { listVoices } = await import('./commands/voices.js');
      exitCode = listVoices(flags, io);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with code 0; every other commander error is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    throw error;
  }
  return exitCode;
}
