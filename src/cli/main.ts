/**
 * The commander program (docs/style.md: the entry only assembles commands; one file per command).
 * Actions return exit codes; `bin/tts.js` sets `process.exitCode` once (docs/style.md §5).
 * Modules beyond commander are imported only on the path that needs them, to keep start-up fast.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { EXIT } from '../errors.js';
import { addRealtimeCommand } from './realtime.js';
import type { CommandIo } from './report.js';
import { addSayCommand } from './say.js';
import { addServeCommand } from './serve.js';
import { addStreamCommand } from './stream.js';
import { addVoicesCommand } from './voices.js';

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
 * @returns the exit code of docs/cli.md §3.
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

  const done = (code: number): void => {
    exitCode = code;
  };
  addSayCommand(program, io, done);
  addStreamCommand(program, io, done);
  addRealtimeCommand(program, io, done);
  addServeCommand(program, io, done);
  addVoicesCommand(program, io, done);

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
