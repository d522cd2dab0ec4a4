/**
 * The table of `tts`'s commands (docs/cli.md §1), so that a run imports only the module of the
 * command it runs (issue 20: `tts --help` and one-shot runs pay for no other command). Each entry
 * repeats the line `tts --help` shows for the command (its term and summary): the commands not
 * loaded are listed from here. test/cli/lazy-commands.test.ts checks that every line equals what
 * the loaded command itself shows, so the table cannot drift from the commands.
 */
import { Command, type Option } from 'commander';
import type { CommandDone } from './flags.js';
import type { CommandIo } from './report.js';

/** Adds one command (with its flags and action) to the program. */
export type AddCommand = (program: Command, io: CommandIo, done: CommandDone) => void;

/** One command of the table. */
export interface CommandEntry {
  name: string;
  /** Its line's left column in `tts --help`, as commander writes it: name, `[options]`, arguments. */
  term: string;
  /** Its description, as the command module gives it. */
  summary: string;
  /**
   * A command with the synthesis flags (`--voice`): the config file's keys are the union of their
   * flags (config-file.ts). Running one loads only it; the others are built, apart, only when a
   * config file is there to check ({@link synthesisOptionsOf}).
   */
  synthesis: boolean;
  /**
   * Reads the config file (config.ts: `config show`, `doctor`, `voices`, `lexicon`, and the
   * synthesis commands), whose keys are checked against the synthesis commands' flags: running one
   * that does not synthesize loads those commands too (a synthesis command builds them only when
   * the file exists: {@link synthesisOptionsOf}).
   */
  readsConfig: boolean;
  /** Imports the command's module. */
  load: () => Promise<AddCommand>;
}

/** Every command, in the order of `tts --help`. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'say', term: 'say [options] [text...]', summary: 'speak text on the sound card (over SSE); -o writes a file instead', synthesis: true, readsConfig: true, load: async () => (await import('./say.js')).addSayCommand },
  { name: 'stream', term: 'stream [options] [text...]', summary: 'write audio to -o FILE or stdout as it arrives (over SSE)', synthesis: true, readsConfig: true, load: async () => (await import('./stream.js')).addStreamCommand },
  { name: 'realtime', term: 'realtime [options] [text...]', summary: 'speak over the WebSocket channel (experimental); -r and -c are requested from the service', synthesis: true, readsConfig: true, load: async () => (await import('./realtime.js')).addRealtimeCommand },
  { name: 'serve', term: 'serve [options]', summary: 'run the built-in service (SSE + WebSocket) for apps to test against', synthesis: false, readsConfig: false, load: async () => (await import('./serve.js')).addServeCommand },
  { name: 'voices', term: 'voices [options]', summary: "list the built-in engine's voices, the engine behind each, and optional voice packages", synthesis: false, readsConfig: true, load: async () => (await import('./voices.js')).addVoicesCommand },
  { name: 'doctor', term: 'doctor [options]', summary: 'check what `tts say` needs (Node, playback, service, engine) and print a report for bug reports', synthesis: false, readsConfig: true, load: async () => (await import('./doctor.js')).addDoctorCommand },
  { name: 'config', term: 'config', summary: 'where the config file is, and the settings in effect', synthesis: false, readsConfig: true, load: async () => (await import('./config.js')).addConfigCommand },
  { name: 'completion', term: 'completion <shell>', summary: 'print a shell completion script (bash, zsh or fish); see docs/cli.md for installing it', synthesis: false, readsConfig: false, load: async () => (await import('./completion.js')).addCompletionCommand },
  { name: 'cache', term: 'cache', summary: 'the piece cache: `stats` shows what it holds, `clear` empties it', synthesis: false, readsConfig: false, load: async () => (await import('./cache.js')).addCacheCommand },
  { name: 'batch', term: 'batch [options] <file>', summary: 'many syntheses in one process: one job per line of a JSON Lines file, or with --lines one file per line of text', synthesis: true, readsConfig: true, load: async () => (await import('./batch.js')).addBatchCommand },
  { name: 'lexicon', term: 'lexicon', summary: 'check the pronunciation lexicon (docs/cli.md §11.3)', synthesis: false, readsConfig: true, load: async () => (await import('./lexicon.js')).addLexiconCommand },
];

/** The default command (docs/cli.md §1: `tts "text"` is `tts say "text"`). */
const DEFAULT_COMMAND = 'say';

/**
 * The names of the commands a run must load, from its arguments (after `node bin/tts.js`; a
 * leading `--` is passed over, as commander does when it picks the command):
 * - `tts --help`, `tts -h`, `tts help`: none (the table lists them all);
 * - `tts NAME …` or `tts help NAME`: that command; one that reads the config file but does not
 *   synthesize (`config`, `doctor`, `voices`, `lexicon`) brings the synthesis commands (their flags
 *   are the config file's keys); `completion` (which completes every command's flags) all of them;
 * - anything else (text, flags of the default command, nothing): `say`.
 * A synthesis command comes alone (issue 20, twelfth round: building the other three cost its run
 * about 9 ms before its first byte); its config file is checked against all of them through
 * {@link synthesisOptionsOf}. Loading more than needed is harmless; loading less would make
 * commander see a stub.
 */
export function commandsToLoad(args: readonly string[]): Set<string> {
  // `tts -- stream …` runs `stream`: commander takes the command from the word after `--`.
  const argv = args[0] === '--' ? args.slice(1) : args;
  const first = argv[0];
  if (argv.length === 1 && (first === '--help' || first === '-h' || first === 'help')) return new Set();
  const named = first === 'help' ? argv[1] : first;
  const entry = COMMANDS.find((c) => c.name === named) ?? COMMANDS.find((c) => c.name === DEFAULT_COMMAND)!;
  if (entry.name === 'completion') return new Set(COMMANDS.map((c) => c.name));
  if (!entry.synthesis && entry.readsConfig) return new Set([entry.name, ...COMMANDS.filter((c) => c.synthesis).map((c) => c.name)]);
  return new Set([entry.name]);
}

/**
 * The options of every synthesis command, in the table's order (what the config file may set:
 * config-file.ts, first definition of each long name wins): from `program` for the commands it
 * loaded, and for the others (stubs there: {@link commandsToLoad}) from the command built anew on
 * a program of its own, never run. `io` and `done` are only handed to those builders.
 * @throws what a command module's import throws (a missing chunk).
 */
export async function synthesisOptionsOf(program: Command, io: CommandIo, done: CommandDone): Promise<Option[]> {
  const options: Option[] = [];
  for (const entry of COMMANDS.filter((c) => c.synthesis)) {
    let cmd = program.commands.find((c) => c.name() === entry.name && c.options.some((o) => o.long === '--voice'));
    if (cmd === undefined) {
      const apart = new Command('tts');
      (await entry.load())(apart, io, done);
      cmd = apart.commands.find((c) => c.name() === entry.name);
    }
    options.push(...(cmd?.options ?? []));
  }
  return options;
}
