/**
 * `tts batch` (docs/cli.md §9): the command and its flags. What runs a batch (src/cli/batch-run.ts)
 * is loaded only when it runs, so `--help` and other commands stay fast.
 */
import type { Command } from 'commander';
import type { BatchFlags } from './batch-run.js';
import { intIn, type CommandDone } from './flags.js';
import { addSynthesisOptions } from './synthesis-command.js';
import type { CommandIo } from './report.js';

/** Adds `batch` to the program. */
export function addBatchCommand(program: Command, io: CommandIo, done: CommandDone): void {
  const cmd = addSynthesisOptions(
    program
      .command('batch')
      .argument('<file>', 'JSON Lines of jobs, or with --lines plain text (- = stdin)')
      .description('many syntheses in one process: one job per line of a JSON Lines file, or with --lines one file per line of text'),
  )
    .option('--jobs <n>', 'jobs at once', intIn(1, 32, '--jobs'), 2)
    .option('--output-dir <dir>', 'folder for the files (with --lines: 0001.wav, 0002.wav, …)');
  cmd.action(async (file: string, flags: BatchFlags) => {
    const { runBatch } = await import('./batch-run.js');
    done(await runBatch(file, flags, cmd, io));
  });
}

