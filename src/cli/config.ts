/**
 * Settings from the config file and its profiles, applied under the flags (docs/cli.md §7):
 * flag > environment > `[profile.NAME]` > top level > built-in default. Commander's option value
 * source tells whether a flag was given; environment variables that stand for a setting
 * (`TTS_BASE_URL`, …) win over the file. `tts config path` and `tts config show` live here too.
 */
import type { Command, Option } from 'commander';
import { TtsError } from '../errors.js';
import { configPath, loadConfigFile, NOT_SETTINGS, type ConfigEntry, type ConfigFile } from './config-file.js';
import type { CommandDone } from './flags.js';
import { createReporter, reportError, type CommandIo } from './report.js';
import { escapeControls } from './escape.js';
import { withoutCredentials } from '../client/safe-origin.js';

/** Environment variables that stand for a setting (docs/cli.md §1); they win over the file. */
const ENV_FOR: Readonly<Record<string, string>> = {
  'base-url': 'TTS_BASE_URL',
  'ws-base-url': 'TTS_WS_BASE_URL',
  // A key in the environment wins over a key file named in the config file.
  'api-key-file': 'TTS_API_KEY',
};

/** Flags shown by `config show` only when set: they are about one run, or about the file itself (the ones the file refuses). */
const PER_RUN = NOT_SETTINGS;

/** Where one effective setting came from. */
export type SettingSource = 'flag' | 'environment' | 'profile' | 'config file' | 'default';

/** One effective setting of a synthesis command. */
export interface Setting {
  /** Long flag name without dashes, e.g. `sample-rate`. */
  key: string;
  /** Commander attribute name, e.g. `sampleRate`. */
  attr: string;
  /** The attribute's value (for a `--no-x` flag, false means `no-x = true`). */
  value: unknown;
  /** True for a `--no-x` flag. */
  negate: boolean;
  source: SettingSource;
  /** The environment variable, or `file:line`, that set it. */
  detail?: string | undefined;
}

/** The commands that synthesize (those with a `--voice` flag: say, stream, realtime, and any added later). */
export function synthesisCommands(program: Command): Command[] {
  return program.commands.filter((c) => c.options.some((o) => o.long === '--voice'));
}

/** Every option of the synthesis commands: what the config file may set. */
export function synthesisOptions(program: Command): Option[] {
  return synthesisCommands(program).flatMap((c) => c.options);
}

/** The profile chosen by `--profile NAME` (given as `flag`), else `TTS_PROFILE`; undefined for none. */
export function chosenProfile(flag: string | undefined, env: NodeJS.ProcessEnv): { name: string; from: string } | undefined {
  if (flag !== undefined && flag !== '') return { name: flag, from: '--profile' };
  const fromEnv = env['TTS_PROFILE'];
  return fromEnv !== undefined && fromEnv !== '' ? { name: fromEnv, from: 'TTS_PROFILE' } : undefined;
}

/**
 * Loads the config file for `program` and checks that the chosen profile exists. `options` gives
 * the keys the file may hold (default: the options of `program`'s synthesis commands, which a
 * command that reads the config file loads all of); it is called only when the file exists.
 * @throws TtsError `usage` (exit 2): see loadConfigFile; or a profile that the file does not have.
 */
export async function loadSettingsFile(
  program: Command,
  env: NodeJS.ProcessEnv,
  profile: { name: string; from: string } | undefined,
  options: () => readonly Option[] | Promise<readonly Option[]> = () => synthesisOptions(program),
): Promise<ConfigFile> {
  const file = await loadConfigFile(configPath(env), options);
  checkContainerChoice(file.path, file.top, '');
  for (const [name, table] of file.profiles) checkContainerChoice(file.path, table, `[profile.${name}] `);
  if (profile !== undefined && !file.profiles.has(profile.name)) {
    const names = [...file.profiles.keys()];
    throw new TtsError('usage', `${profile.from} ${profile.name}: ${file.path} has no [profile.${profile.name}]`, {
      hint: names.length > 0 ? `profiles there: ${names.join(', ')}` : file.exists ? 'the file has no profiles' : 'the file does not exist; `tts config path` says where to create it',
    });
  }
  return file;
}

/** The attributes that together choose the container (docs/cli.md §7). */
const CONTAINER_KEYS: readonly string[] = ['container', 'wav', 'raw'];

/**
 * One table of the file chooses at most one container (docs/cli.md §7): `wav = true` beside
 * `raw = true`, or either beside a `container` that names another, contradict each other as the
 * flags would (`--wav --raw` is exit 2), and no run could say which the user meant.
 * @param where `''` for the top level, `[profile.NAME] ` for a profile, for the message.
 * @throws TtsError `usage` (exit 2) naming the file, both keys and their lines.
 */
function checkContainerChoice(path: string, table: ReadonlyMap<string, ConfigEntry>, where: string): void {
  const chosen: { entry: ConfigEntry; container: string }[] = [];
  const container = table.get('container');
  if (container !== undefined) chosen.push({ entry: container, container: String(container.value) });
  for (const attr of ['wav', 'raw'] as const) {
    const entry = table.get(attr);
    if (entry !== undefined && entry.value === true) chosen.push({ entry, container: attr });
  }
  // The earlier line is the choice, the later one contradicts it.
  chosen.sort((a, b) => a.entry.line - b.entry.line);
  const [first, other] = [chosen[0], chosen.find((c) => c.container !== chosen[0]?.container)];
  if (first === undefined || other === undefined) return;
  throw new TtsError('usage', `${path}:${other.entry.line}: ${where}${other.entry.key} contradicts ${first.entry.key} (line ${first.entry.line}): a table chooses one container`, {
    hint: 'keep one of them: container = "wav|raw|flac|mp3|opus", wav = true or raw = true',
  });
}

/**
 * The effective settings of `cmd` with the precedence of docs/cli.md §7, before the action runs.
 * Flags that are about one run (`-o`, `-f`, `--lines`, `--profile`) are left out.
 */
export function effectiveSettings(cmd: Command, file: ConfigFile, profile: string | undefined, env: NodeJS.ProcessEnv): Setting[] {
  const chosen = profile === undefined ? undefined : file.profiles.get(profile);
  const seen = new Set<string>();
  const settings: Setting[] = [];
  const at = (e: ConfigEntry): string => `${file.path}:${e.line}`;
  // `container`, `wav` and `raw` are one setting (the container): when the profile chooses it,
  // the top level's choice is not merged beside it (profile > top level, §7), else top-level
  // `wav = true` beat a profile's `raw = true`, or contradicted a profile's `wav` as if flags.
  const profileChoosesContainer = CONTAINER_KEYS.some((attr) => chosen?.has(attr) === true);
  for (const option of cmd.options) {
    const key = option.long?.slice(2);
    if (key === undefined || PER_RUN.has(key)) continue;
    const attr = option.attributeName();
    if (seen.has(attr)) continue;
    seen.add(attr);
    const source = cmd.getOptionValueSource(attr);
    const envName = option.envVar ?? ENV_FOR[key];
    const fromProfile = chosen?.get(attr);
    const fromTop = profileChoosesContainer && CONTAINER_KEYS.includes(attr) ? undefined : file.top.get(attr);
    const negate = option.negate;
    let s: Setting;
    if (source === 'cli') s = { key, attr, negate, value: cmd.getOptionValue(attr), source: 'flag' };
    else if (source === 'env' || (envName !== undefined && (env[envName] ?? '').trim() !== '')) {
      s = { key, attr, negate, value: source === 'env' ? cmd.getOptionValue(attr) : envName === 'TTS_API_KEY' ? undefined : env[envName!], source: 'environment', detail: envName };
    } else if (fromProfile !== undefined) s = { key, attr, negate, value: fromProfile.value, source: 'profile', detail: at(fromProfile) };
    else if (fromTop !== undefined) s = { key, attr, negate, value: fromTop.value, source: 'config file', detail: at(fromTop) };
    else s = { key, attr, negate, value: cmd.getOptionValue(attr), source: 'default' };
    settings.push(s);
  }
  return settings;
}

/**
 * Applies the config file to a command about to run (a commander `preAction` hook): every
 * setting whose winner is the file is set on `cmd` with source `config`.
 * @param only the long option names (without `--`) the file may set on `cmd`; all when absent
 *   (a synthesis command). `tts voices` takes only its service keys (`api`, `base-url`…).
 * @param options the keys the file may hold ({@link loadSettingsFile}); a synthesis command, loaded
 *   alone, passes every synthesis command's (commands.ts synthesisOptionsOf).
 * @throws TtsError `usage` (exit 2) for a bad file or a missing profile.
 */
export async function applyConfig(program: Command, cmd: Command, env: NodeJS.ProcessEnv, only?: ReadonlySet<string>, options?: () => readonly Option[] | Promise<readonly Option[]>): Promise<void> {
  const profile = chosenProfile(cmd.getOptionValue('profile') as string | undefined, env);
  const file = await loadSettingsFile(program, env, profile, options);
  if (!file.exists) return;
  // Dialogue scripts' voices (docs/cli.md §11.2): the profile's names over the top level's; --cast wins over both in the run.
  if (only === undefined && (file.voices.size > 0 || file.profileVoices.size > 0)) {
    const voices = new Map([...file.voices, ...(profile === undefined ? [] : (file.profileVoices.get(profile.name) ?? []))]);
    cmd.setOptionValueWithSource('configVoices', voices, 'config');
  }
  for (const s of effectiveSettings(cmd, file, profile?.name, env)) {
    if (only !== undefined && !only.has(s.key)) continue;
    if (s.source !== 'profile' && s.source !== 'config file') continue;
    cmd.setOptionValueWithSource(s.attr, s.value, 'config');
    // Hints name the line that gave the service's URL (choose-service.ts ServiceChoice.baseUrlFrom).
    if (URL_SETTINGS.has(s.key)) cmd.setOptionValueWithSource(`${s.attr}From`, settingPlace(s, profile?.name), 'config');
  }
}

/**
 * Where the config file set `s`, for messages: `base-url in [profile.work] (PATH:3)` or
 * `base-url in the config file (PATH:3)`.
 */
function settingPlace(s: Setting, profile: string | undefined): string {
  const table = s.source === 'profile' && profile !== undefined ? `[profile.${profile}]` : 'the config file';
  return `${s.key} in ${table}${s.detail === undefined ? '' : ` (${s.detail})`}`;
}

/** Where the API key would come from, never the key itself (docs/cli.md §1). */
export function keySource(settings: readonly Setting[], env: NodeJS.ProcessEnv): string {
  const file = settings.find((s) => s.key === 'api-key-file');
  if ((env['TTS_API_KEY'] ?? '').trim() !== '' && file?.source !== 'flag') return 'TTS_API_KEY (***)';
  if (file !== undefined && typeof file.value === 'string') return `the file ${file.value} (api-key-file, from ${describeSource(file)})`;
  return 'none';
}

/** "flag", "TTS_BASE_URL", "profile work (file:3)", "config file (file:3)", "default". */
export function describeSource(s: Setting): string {
  if (s.source === 'environment') return s.detail ?? 'environment';
  if (s.detail !== undefined) return `${s.source} (${s.detail})`;
  return s.source;
}

/** Adds `tts config path` and `tts config show` (docs/cli.md §7). */
export function addConfigCommand(program: Command, io: CommandIo, done: CommandDone): void {
  const config = program.command('config').description('where the config file is, and the settings in effect');
  config
    .command('path')
    .description('print the path of the config file (it may not exist yet)')
    .action(() => {
      io.stdout.write(`${configPath(io.env)}\n`);
      done(0);
    });
  config
    .command('show')
    .description('print the settings in effect for `tts say` and where each came from (the key masked)')
    .option('--profile <name>', 'show the settings of [profile.NAME] (env TTS_PROFILE)')
    .action(async (flags: { profile?: string }) => done(await showConfig(program, flags, io)));
}

/**
 * Prints the effective settings of `tts say` on stdout: `key = value   source`, one a line.
 * @returns 0, or 2 for a bad config file (reported on stderr).
 */
/** Settings that hold a service's URL: `config show` lists them without a user name or password. */
const URL_SETTINGS = new Set(['base-url', 'ws-base-url']);

async function showConfig(program: Command, flags: { profile?: string }, io: CommandIo): Promise<number> {
  const say = program.commands.find((c) => c.name() === 'say');
  if (say === undefined) return 1;
  try {
    const profile = chosenProfile(flags.profile, io.env);
    const file = await loadSettingsFile(program, io.env, profile);
    const settings = effectiveSettings(say, file, profile?.name, io.env);
    const out = (line: string): void => void io.stdout.write(`${escapeControls(line)}\n`);
    out(`# config file: ${file.path}${file.exists ? '' : ' (does not exist)'}`);
    out(`# profile: ${profile === undefined ? 'none' : `${profile.name} (from ${profile.from})`}`);
    out(`# api key: ${keySource(settings, io.env)}`);
    const width = Math.max(...settings.map((s) => s.key.length));
    for (const s of settings) {
      if (s.value === undefined && s.source === 'default') continue;
      const shown = typeof s.value === 'string' && URL_SETTINGS.has(s.key) ? withoutCredentials(s.value) : s.value;
      const value = shown === undefined ? `(not used: ${s.detail ?? 'the environment'} wins)` : JSON.stringify(s.negate ? !shown : shown);
      out(`${s.key.padEnd(width)} = ${value.padEnd(12)} # ${describeSource(s)}`);
    }
    // The voices of dialogue scripts (docs/cli.md §11.2): the profile's names over the top level's.
    const mine = profile === undefined ? undefined : file.profileVoices.get(profile.name);
    for (const [name, voice] of new Map([...file.voices, ...(mine ?? [])])) {
      out(`voices.${JSON.stringify(name)} = ${JSON.stringify(voice)} # ${mine?.has(name) === true ? `profile [profile.${profile!.name}.voices]` : 'config file [voices]'}`);
    }
    return 0;
  } catch (error) {
    return reportError(error, createReporter(io.stderr, {}));
  }
}
