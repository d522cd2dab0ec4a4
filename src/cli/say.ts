/**
 * `tts say [text...]` (docs/cli.md §1): speak over SSE on the sound card; `-o` writes a file instead.
 */
import type { Command } from 'commander';
import { synthesisCommand, type CommandDone } from './options.js';
import type { CommandIo } from './report.js';

/** Adds `say` to the program. */
export function addSayCommand(program: Command, io: CommandIo, done: CommandDone): void {
  synthesisCommand(program, 'say', 'speak text on the sound card (over SSE); -o writes a file instead', io, done);
}
