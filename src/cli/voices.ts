/**
 * `tts voices` (docs/cli.md §1): the built-in engine's preset voices, as a table or JSON.
 * This is a listing, not audio, so it goes to stdout like any listing command's output.
 */
import { EXIT } from '../errors.js';
import { VOICES } from '../protocol/voices.js';
import type { Command } from 'commander';
import type { CommandDone } from './options.js';
import type { CommandIo } from './report.js';

/** Adds `voices` to the program. */
export function addVoicesCommand(program: Command, io: CommandIo, done: CommandDone): void {
  program
    .command('voices')
    .description("list the built-in engine's preset voices")
    .option('--json', 'one JSON array on stdout')
    .action((flags: { json?: boolean }) => done(listVoices(flags, io)));
}

/**
 * Prints the voices: `id  language  gender  description` lines, or with `json` one JSON array of
 * `{id, language, gender, description}`.
 * @returns exit code 0.
 */
export function listVoices(flags: { json?: boolean }, io: CommandIo): number {
  if (flags.json === true) {
    io.stdout.write(`${JSON.stringify(VOICES)}\n`);
    return EXIT.ok;
  }
  const rows = [['VOICE', 'LANGUAGE', 'GENDER', 'DESCRIPTION'], ...VOICES.map((v) => [v.id, v.language, v.gender, v.description])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) io.stdout.write(`${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}\n`);
  return EXIT.ok;
}
