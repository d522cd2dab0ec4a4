/**
 * `tts say [text...]` (docs/cli.md §1): speak over SSE on the sound card; `-o` writes a file instead.
 */
import type { Command } from 'commander';
import type { CommandDone } from './flags.js';
import { synthesisCommand } from './synthesis-command.js';
import type { CommandIo } from './report.js';

/** Adds `say` to the program. */
export function addSayCommand(program: Command, io: CommandIo, done: CommandDone): void {
  synthesisCommand(program, { name: 'say', summary: 'speak text on the sound card (over SSE); -o writes a file instead', channel: 'sse' }, io, done);
}
