/**
 * `tts realtime [text...]` (docs/cli.md §1): speak over the experimental WebSocket channel; `-r` and `-c` are
 * requested from the service.
 */
import type { Command } from 'commander';
import { synthesisCommand, type CommandDone } from './options.js';
import type { CommandIo } from './report.js';

/** Adds `realtime` to the program. */
export function addRealtimeCommand(program: Command, io: CommandIo, done: CommandDone): void {
  synthesisCommand(program, 'realtime', 'speak over the WebSocket channel (experimental); -r and -c are requested from the service', io, done);
}
