/**
 * `tts voices` (docs/cli.md §1): the built-in engine's preset voices, as a table or JSON.
 * This is a listing, not audio, so it goes to stdout like any listing command's output.
 */
import { EXIT } from '../errors.js';
import { allVoices, engineVoices } from '../engine/catalogue.js';
import { voicePackages } from '../engine/voice-packages.js';
import { Option, type Command } from 'commander';
import { applyConfig } from './config.js';
import { escapeControls, jsonLine } from './escape.js';
import { createReporter, reportError } from './report.js';
import type { CommandDone } from './flags.js';
import type { CommandIo } from './report.js';

/** Adds `voices` to the program. */
export function addVoicesCommand(program: Command, io: CommandIo, done: CommandDone): void {
  const voices = program
    .command('voices')
    .description("list the built-in engine's voices, the engine behind each, and optional voice packages")
    .option('--json', 'one JSON array on stdout')
    .addOption(new Option('--api <dialect>', "with openai: the voices the OpenAI-compatible service at TTS_BASE_URL lists").choices(['native', 'openai']).env('TTS_API').default('native'))
    .option('--base-url <url>', 'HTTP base URL of the service (env TTS_BASE_URL), with --api openai')
    .option('--api-key-file <path>', 'read the API key from this file (first line), with --api openai')
    .option('--allow-insecure', 'allow sending the key over http:// to a non-loopback host')
    .option('--profile <name>', 'with --api openai: use [profile.NAME] of the config file (env TTS_PROFILE)')
    .action(async (flags: VoicesFlags) => done(flags.api === 'openai' ? await listOpenAiVoices(flags, io) : listVoices(flags, io)));
  // The config file's service keys count here too, under the environment and the flags (docs/cli.md §7).
  voices.hook('preAction', async () => applyConfig(program, voices, io.env, VOICES_CONFIG_KEYS));
}

/** What the config file (or its profile) may set for `tts voices`: where the service is and its dialect. */
const VOICES_CONFIG_KEYS: ReadonlySet<string> = new Set(['api', 'base-url', 'api-key-file', 'allow-insecure']);

/** Flags of `tts voices`. */
interface VoicesFlags {
  json?: boolean;
  api?: 'native' | 'openai';
  baseUrl?: string;
  /** Where `baseUrl` came from when the config file set it (config.ts applyConfig); absent = the flag. */
  baseUrlFrom?: string;
  apiKeyFile?: string;
  allowInsecure?: boolean;
  /** --profile: the config file's `[profile.NAME]` whose service keys count (docs/cli.md §7); read by applyConfig. */
  profile?: string;
}

/**
 * `tts voices --api openai` (docs/cli.md §1): with no service configured, the names the built-in
 * service's OpenAI route takes (docs/protocol.md §10.3); else what the service's
 * `GET /v1/audio/voices` lists, one id a line (or a JSON array of ids) — or, when it has no such
 * list, a line on stderr saying that tts cannot know (exit 0, nothing on stdout).
 * @returns 0, or the exit code of the failure (no key 3, refusal, transport 6).
 */
async function listOpenAiVoices(flags: VoicesFlags, io: CommandIo): Promise<number> {
  const reporter = createReporter(io.stderr, {});
  // The ids come from the service: escaped like all its text (docs/cli.md §2), so an id can
  // neither drive the terminal nor fake a line of the list.
  const print = (ids: readonly string[]): number => {
    io.stdout.write(flags.json === true ? `${jsonLine(ids)}\n` : ids.map((id) => `${escapeControls(id)}\n`).join(''));
    return EXIT.ok;
  };
  const baseUrl = flags.baseUrl ?? io.env['TTS_BASE_URL'];
  if (baseUrl === undefined || baseUrl.trim() === '') {
    const { OPENAI_VOICES } = await import('../server/openai-voices.js');
    return print([...Object.keys(OPENAI_VOICES), ...engineVoices().map((v) => v.id)]);
  }
  try {
    const { resolveService } = await import('../speak/choose-service.js');
    const target = await resolveService({ baseUrl: flags.baseUrl, baseUrlFrom: flags.baseUrlFrom, wsBaseUrl: undefined, apiKeyFile: flags.apiKeyFile, offline: false, env: io.env, warn: (l) => reporter.warn(l) });
    reporter.setSecret(target.apiKey);
    const { fetchOpenAiVoices } = await import('../client/openai-voices.js');
    const ids = await fetchOpenAiVoices({ baseUrl: target.baseUrl, apiKey: target.apiKey, urlSource: target.baseUrlSource, timeoutMs: 30_000, allowInsecure: flags.allowInsecure === true });
    if (ids !== undefined) return print(ids);
    reporter.warn(`the service does not list its voices (no GET /v1/audio/voices), so tts cannot know them; see its documentation (OpenAI's: alloy, ash, ballad, coral, echo, fable, nova, onyx, sage, shimmer, verse)`);
    return EXIT.ok;
  } catch (error) {
    return reportError(error, reporter);
  }
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
