/**
 * The config file of docs/cli.md §7: `$XDG_CONFIG_HOME/tts/config.toml` (default
 * `~/.config/tts/config.toml`), TOML (parsed by smol-toml, TOML 1.0). Its keys are the long flag
 * names of the synthesis commands, at the top level or in `[profile.NAME]` tables. The allowed
 * keys and the checks of their values are not listed here: they are taken from the commander
 * options the synthesis commands registered, so a flag added later is accepted as a key at once
 * and its value is checked by the very parser the flag uses.
 */
import { homeFolder } from '../home-folder.js';
import { isAbsolute, join } from 'node:path';
import type { Option } from 'commander';
import leven from 'leven';
import { TtsError } from '../errors.js';
import { flagValue } from './flags.js';
import { quoteInput } from './escape.js';
import { lineIndex, parseSettingsToml, readSettingsFile, type LineIndex } from '../settings-file.js';

/** One setting read from the file. */
export interface ConfigEntry {
  /** The key as written, e.g. `sample-rate`. */
  key: string;
  /** The value as commander would hold it after parsing the flag (e.g. 24000, not "24000"). */
  value: unknown;
  /** 1-based line of the key in the file (0 when it could not be found). */
  line: number;
}

/** A config file, read and checked. */
export interface ConfigFile {
  path: string;
  /** False when there is no file (then nothing below is set). */
  exists: boolean;
  /** Top-level settings by commander attribute name (`sampleRate`). */
  top: Map<string, ConfigEntry>;
  /** `[profile.NAME]` tables, each by attribute name. */
  profiles: Map<string, Map<string, ConfigEntry>>;
  /** The `[voices]` table of dialogue scripts (docs/cli.md §11.2): speaker name → voice id. */
  voices: Map<string, string>;
  /** Each profile's `[profile.NAME.voices]`, by profile name. */
  profileVoices: Map<string, Map<string, string>>;
}

/**
 * Flags that are about one run, not a setting: refused in the file with a word on why. By their
 * long names without the dashes, as the file spells its keys (`split-chapters`, not the attribute
 * name `splitChapters`). Every flag that names a run's own input or output is one (`output`,
 * `file`, `subtitles`, `word-timings`, `chapters`, `split-chapters`): set in the file, every run
 * would read or rewrite that one file. `profile` chooses the table, so it cannot be in one; `cast`
 * has the file's own `[voices]` table (docs/cli.md §11.2).
 */
export const NOT_SETTINGS: ReadonlySet<string> = new Set(['output', 'file', 'subtitles', 'word-timings', 'lines', 'help', 'version', 'profile', 'chapters', 'split-chapters', 'chapter-range', 'print-text', 'dry-run', 'cast']);

/**
 * Largest config file read, in bytes (4 MiB: some 100,000 profiles). A bigger file, or a name
 * that leads to something endless (a symlink to /dev/zero), is refused before it is read whole
 * (docs/cli.md §7).
 */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** A key named like a secret: keys never go in this file (docs/cli.md §1: no key on the command line either). */
const SECRET_KEY = /(^|[-_])(api[-_]?key|key|keys|token|secret|password|passwd|bearer|credentials?)$/i;

/**
 * Where the config file is: `$XDG_CONFIG_HOME/tts/config.toml` when that variable holds an
 * absolute path (XDG Base Directory spec), else `$HOME/.config/tts/config.toml` (home-folder.ts:
 * with no home folder at all, a path that does not exist: no config file).
 */
export function configPath(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CONFIG_HOME'];
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(homeFolder(env), '.config');
  return join(base, 'tts', 'config.toml');
}

/**
 * Reads and checks the config file at `path` against `options` (the union of the synthesis
 * commands' options, first definition of each long name wins; asked for only when the file is
 * there, since building them may load commands the run did not: commands.ts synthesisOptionsOf).
 * @returns the settings; an empty file object when the file does not exist.
 * @throws TtsError `usage` (exit 2) naming the file, the key and its line: a TOML syntax error,
 *   an unknown key, a key named like an API key (pointing to `api-key-file`), a per-run flag,
 *   or a value the flag's own parser refuses; also an unreadable file, one that is not a regular
 *   file (a FIFO, a device, a folder), or one over {@link MAX_CONFIG_BYTES}.
 */
export async function loadConfigFile(path: string, options: readonly Option[] | (() => readonly Option[] | Promise<readonly Option[]>)): Promise<ConfigFile> {
  const empty: ConfigFile = { path, exists: false, top: new Map(), profiles: new Map(), voices: new Map(), profileVoices: new Map() };
  const text = await readConfigText(path);
  if (text === undefined) return empty;
  const doc = await parseSettingsToml(text, path, 'see docs/cli.md §7 for the format');
  // One pass over the text finds every key's line: looking each key up anew was quadratic.
  const lines = lineIndex(text);
  const byLong = new Map<string, Option>();
  for (const o of typeof options === 'function' ? await options() : options) if (o.long !== undefined && !byLong.has(o.long.slice(2))) byLong.set(o.long.slice(2), o);
  const file: ConfigFile = { path, exists: true, top: new Map(), profiles: new Map(), voices: new Map(), profileVoices: new Map() };
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'profile') {
      if (!isTable(value)) throw bad(path, lines, [], key, 'must be a table of profiles: [profile.NAME]');
      for (const [name, table] of Object.entries(value)) {
        if (!isTable(table)) throw bad(path, lines, ['profile'], name, `must be a table: [profile.${name}] with settings under it`);
        const settings = new Map<string, ConfigEntry>();
        for (const [k, v] of Object.entries(table)) {
          if (k === 'voices') file.profileVoices.set(name, voicesTable(path, lines, ['profile', name], v));
          else addSetting(settings, byLong, { path, lines }, ['profile', name], k, v);
        }
        file.profiles.set(name, settings);
      }
      continue;
    }
    if (key === 'voices') file.voices = voicesTable(path, lines, [], value);
    else addSetting(file.top, byLong, { path, lines }, [], key, value);
  }
  return file;
}

/**
 * A `[voices]` table (docs/cli.md §11.2): speaker names to voice ids, each a non-empty string.
 * @throws TtsError `usage` (exit 2) naming the file and line of a value that is not one.
 */
function voicesTable(path: string, lines: LineIndex, table: string[], value: unknown): Map<string, string> {
  if (!isTable(value)) throw bad(path, lines, table, 'voices', 'must be a table of speaker names: [voices] with Alice = "en-woman-1" under it');
  const voices = new Map<string, string>();
  for (const [name, voice] of Object.entries(value)) {
    if (typeof voice !== 'string' || voice.trim() === '') throw bad(path, lines, [...table, 'voices'], name, 'must be a voice id such as "en-woman-1" (see `tts voices`)');
    voices.set(name, voice.trim());
  }
  return voices;
}

/**
 * Checks one `key = value` and stores it under the option's attribute name.
 * @param source the file's path and the index of its keys' places.
 */
function addSetting(into: Map<string, ConfigEntry>, byLong: Map<string, Option>, source: { path: string; lines: LineIndex }, table: string[], key: string, value: unknown): void {
  const { path, lines } = source;
  const where = (): number => lineIn(lines, table, key);
  if (SECRET_KEY.test(key) && key !== 'api-key-file') {
    throw new TtsError('usage', `${path}:${where()}: "${quoteInput(key)}" looks like an API key; keys are not kept in the config file`, {
      hint: 'put the key in a file only you can read (chmod 600) and set api-key-file = "PATH", or use TTS_API_KEY',
    });
  }
  if (NOT_SETTINGS.has(key)) {
    const why = key === 'profile' ? 'chooses a profile; give it as --profile NAME or TTS_PROFILE' : key === 'cast' ? 'is not a setting: give the voices as a [voices] table (Alice = "en-woman-1")' : `is about one run, not a setting; give --${key} on the command line`;
    throw bad(path, lines, table, key, why);
  }
  const option = byLong.get(key);
  if (option === undefined) {
    const near = [...byLong.keys()].filter((k) => !NOT_SETTINGS.has(k) && leven(k, key) <= 2);
    throw bad(path, lines, table, key, `is not a setting of tts${near.length > 0 ? ` (did you mean ${near.join(' or ')}?)` : ''}`, 'the keys are the long flag names of `tts say --help`, without the dashes');
  }
  // The number as written, wherever the key is (its own line, an inline table): the parsed one has lost it.
  const asWritten = (): string | undefined => lines.get([...table, key].join('.'))?.value;
  into.set(option.attributeName(), { key, value: flagValue(option, value, (why) => bad(path, lines, table, key, why), asWritten), line: where() });
}

function bad(path: string, lines: LineIndex, table: string[], key: string, why: string, hint?: string): TtsError {
  // Each part as error messages quote input (a [voices] name or a profile's of a megabyte: its start).
  const name = [...table, key].map((part) => quoteInput(part)).join('.');
  const line = lineIn(lines, table, key);
  return new TtsError('usage', `${path}${line > 0 ? `:${line}` : ''}: ${name} ${why}`, { hint: hint ?? 'fix or remove that line (docs/cli.md §7)' });
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/**
 * Where bin/tts.js leaves the config file it read for its guess of the engine (issue 20): on
 * `globalThis`, under this registered symbol, so that a run reads the file once.
 */
export const EARLY_CONFIG_FILE: unique symbol = Symbol.for('tts.early-config-file') as never;

/**
 * What bin/tts.js keeps under {@link EARLY_CONFIG_FILE}: a regular file of at most 256 KiB read
 * whole (UTF-8), or that there was none. Anything else it leaves to {@link readConfigText}.
 */
export interface EarlyConfigFile {
  /** The file's path, as {@link configPath} gives it. */
  path: string;
  /** Its text; undefined when there was no file. */
  text: string | undefined;
}

/**
 * The config file bin/tts.js read, removed from `globalThis` (once: a later reader reads the file),
 * when it is the file at `path`; undefined otherwise.
 */
function takeEarlyConfig(path: string): EarlyConfigFile | undefined {
  const holder = globalThis as { [EARLY_CONFIG_FILE]?: EarlyConfigFile | undefined };
  const early = holder[EARLY_CONFIG_FILE];
  delete holder[EARLY_CONFIG_FILE];
  return early?.path === path ? early : undefined;
}

/**
 * The config file's text: what bin/tts.js read of it for this run ({@link EARLY_CONFIG_FILE}),
 * else read here without ever blocking or reading without end (settings-file.ts): a FIFO with
 * no writer would otherwise hang every command; a symlink is followed (a config kept with one's
 * dotfiles is common); never more than {@link MAX_CONFIG_BYTES} read, even if it grows.
 * @returns the text (UTF-8), or undefined when there is no file.
 * @throws TtsError `usage` (exit 2) naming the file: unreadable, not a regular file, too big, not UTF-8.
 */
async function readConfigText(path: string): Promise<string | undefined> {
  const early = takeEarlyConfig(path);
  if (early !== undefined) return early.text;
  return readSettingsFile(path, {
    what: 'the config file',
    maxBytes: MAX_CONFIG_BYTES,
    required: false,
    hint: 'fix its permissions, or move it away',
    tooBigHint: 'a config file holds settings and profiles; move this one away',
  });
}

/** The line of `key` in `table` (`[]` for the top level, `['profile','work']`) from an index; 0 when not found. */
function lineIn(index: LineIndex, table: readonly string[], key: string): number {
  return index.get([...table, key].join('.'))?.line ?? 0;
}

/**
 * The 1-based line where `key` is set inside the table `table` (`[]` for the top level,
 * `['profile','work']` for `[profile.work]`); a dotted key at the top level
 * (`profile.work.voice = …`), a key of an inline table (`profile = { work = { voice = … } }`)
 * and a table header itself are found too. 0 when not found.
 * Reads the whole text: to look up many keys, build one {@link lineIndex}.
 */
export function lineOf(text: string, table: readonly string[], key: string): number {
  return lineIn(lineIndex(text), table, key);
}
