/**
 * `tts realtime [text...]` (docs/cli.md §1): speak over the experimental WebSocket channel; `-r` and `-c` are
 * requested from the service.
 */
import type { Command } from 'commander';
import type { CommandDone } from './flags.js';
import { synthesisCommand } from './synthesis-command.js';
import type { CommandIo } from './report.js';

/** Adds `realtime` to the program. */
export function addRealtimeCommand(program: Command, io: CommandIo, done: CommandDone): void {
  synthesisCommand(program, { name: 'realtime', summary: 'speak over the WebSocket channel (experimental); -r and -c are requested from the service', channel: 'realtime' }, io, done);
}
