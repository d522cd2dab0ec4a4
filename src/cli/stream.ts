/**
 * `tts stream [text...]` (docs/cli.md §1): write audio over SSE to `-o FILE` or stdout, chunk by chunk.
 */
import type { Command } from 'commander';
import type { CommandDone } from './flags.js';
import { synthesisCommand } from './synthesis-command.js';
import type { CommandIo } from './report.js';

/** Adds `stream` to the program. */
export function addStreamCommand(program: Command, io: CommandIo, done: CommandDone): void {
  synthesisCommand(program, { name: 'stream', summary: 'write audio to -o FILE or stdout as it arrives (over SSE)', channel: 'sse' }, io, done);
}
