/**
 * `tts voices` (docs/cli.md §1): the built-in engine's preset voices, as a table or JSON.
 * This is a listing, not audio, so it goes to stdout like any listing command's output.
 */
import { EXIT } from '../errors.js';
import { allVoices } from '../engine/catalogue.js';
import { voicePackages } from '../engine/voice-packages.js';
import type { Command } from 'commander';
import type { CommandDone } from './flags.js';
import type { CommandIo } from './report.js';

/** Adds `voices` to the program. */
export function addVoicesCommand(program: Command, io: CommandIo, done: CommandDone): void {
  program
    .command('voices')
    .description("list the built-in engine's voices, the engine behind each, and optional voice packages")
    .option('--json', 'one JSON array on stdout')
    .action((flags: { json?: boolean }) => done(listVoices(flags, io)));
}

/**
 * Prints the voices: `voice  language  gender  installed  engine` lines (a package configured in
 * TTS_VOICE_PACKAGES that is missing gets a line of its own), or with `json` one JSON array of
 * `{id, language, gender, description, engine, installed, package?}` (docs/cli.md §1).
 * @returns exit code 0.
 */
export function listVoices(flags: { json?: boolean }, io: CommandIo): number {
  if (flags.json === true) {
    io.stdout.write(`${JSON.stringify(allVoices())}\n`);
    return EXIT.ok;
  }
  const missing = voicePackages().filter((p) => !p.installed && p.voices.length === 0);
  const rows = [
    ['VOICE', 'LANGUAGE', 'GENDER', 'INSTALLED', 'ENGINE'],
    ...allVoices().map((v) => [v.id, v.language, v.gender, v.installed ? 'yes' : 'no', v.engine]),
    ...missing.map((p) => ['-', '-', '-', 'no', `package ${p.package} (${p.problem ?? 'not installed'})`]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) io.stdout.write(`${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}\n`);
  return EXIT.ok;
}
