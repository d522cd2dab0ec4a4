/**
 * The flags shared by `say`, `stream` and `realtime` (docs/cli.md §1), defined and validated in
 * one place; values that cannot be right fail with exit 2 before anything else happens.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CommandIo } from './report.js';
import { parseByteSize } from '../byte-size.js';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/types.js';
import { CONTAINERS, containerOfPath, type Container } from '../audio/containers/registry.js';
import { DEFAULT_VOICE } from '../protocol/voices.js';
import { PLAYER_NAMES } from '../audio/players.js';

/** Parsed flags of a synthesis command, as commander hands them over. */
export interface SynthesisFlags {
  voice: string;
  language?: string;
  format: AudioFormat;
  sampleRate: number;
  channels: number;
  output?: string;
  wav?: boolean;
  raw?: boolean;
  /** --container: the output's container whatever its name (docs/cli.md §2 "Containers"). */
  container?: Container;
  /** --bitrate, kbit/s (MP3, Opus). */
  bitrate?: number;
  play?: boolean;
  file?: string;
  lines?: boolean;
  maxChars: number;
  /** --max-input, in bytes. */
  maxInput: number;
  concurrency: number;
  retries: number;
  timeout: number;
  quiet?: boolean;
  verbose?: boolean;
  json?: boolean;
  baseUrl?: string;
  wsBaseUrl?: string;
  apiKeyFile?: string;
  offline?: boolean;
  allowInsecure?: boolean;
  /** --player: `auto`, `speaker` or a system player's name (docs/cli.md §2). */
  player?: string;
  /** --profile: the config file's `[profile.NAME]` (docs/cli.md §7). */
  profile?: string;
  /** --speed: tempo factor, pitch kept (1 = unchanged). */
  speed?: number;
  /** --volume: linear gain (1 = unchanged). */
  volume?: number;
  /** --pause: silence between sentences, in milliseconds. */
  pause?: number;
  /** --subtitles: SRT or WebVTT file to write. */
  subtitles?: string;
  /** False with --no-cache (docs/cli.md §8). */
  cache?: boolean;
  /** True when `--cache` itself was given: it beats `no-cache` in the config and TTS_NO_CACHE. */
  cacheForced?: boolean;
  /** --cache-size, in bytes. */
  cacheSize?: number;
  /** --api: the service's dialect (docs/protocol.md §1–9 native, §10 openai); env TTS_API. */
  api?: 'native' | 'openai';
  /** --model: the model asked for with `--api openai` (default tts-1). */
  model?: string;
}

/**
 * A parser for a number in [min, max], for commander: decimal, or whole with `whole`; `above`
 * refuses min itself. Every refusal names the range (docs/cli.md §3: exit 2).
 */
export function numberIn(min: number, max: number, what: string, how: { above?: boolean; whole?: boolean } = {}): (value: string) => number {
  const kind = how.whole === true ? 'a whole number' : 'a number';
  const range = how.above === true ? `above ${min} and at most ${max}` : `from ${min} to ${max}`;
  return (value) => {
    const pattern = how.whole === true ? /^\s*\+?\d+\s*$/ : /^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$/;
    const n = Number(value.trim());
    if (!pattern.test(value) || !Number.isFinite(n) || n < min || n > max || (how.above === true && n === min)) {
      throw new InvalidArgumentError(`${what} must be ${kind} ${range}, got "${value}"`);
    }
    return n;
  };
}

/** A parser for a whole number in [min, max], for commander. */
export function intIn(min: number, max: number, what: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`${what} must be a whole number`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${what} must be between ${min} and ${max}`);
    return n;
  };
}

/** Largest text read by default, in bytes (`--max-input`): far beyond any book, far below a runaway pipe. */
export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * A parser for a size in bytes, for commander: a whole number with an optional binary unit
 * (`65536`, `512K`, `64MiB`, `1 GiB`; K/M/G mean 1024, 1024², 1024³; src/byte-size.ts).
 */
export function bytesIn(min: number, max: number, what: string): (value: string) => number {
  return (value) => {
    const n = parseByteSize(value);
    if (n === undefined) throw new InvalidArgumentError(`${what} must be a size such as 65536, 512K or 64MiB`);
    if (n < min || n > max) throw new InvalidArgumentError(`${what} must be between ${min} and ${max} bytes`);
    return n;
  };
}

function seconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 86_400) throw new InvalidArgumentError('--timeout must be a number of seconds above 0');
  return n;
}

/**
 * The parser of `--format`: one of the service's encodings. A container's name there (`mp3`,
 * `wav`…) is a common mix-up, answered with where that choice is made (docs/cli.md §2).
 */
export function serviceFormat(value: string): AudioFormat {
  if ((AUDIO_FORMATS as readonly string[]).includes(value)) return value as AudioFormat;
  const asked = value.trim().toLowerCase().replace(/^\./, '');
  if ((CONTAINERS as readonly string[]).includes(asked) || asked === 'ogg' || asked === 'pcm') {
    throw new InvalidArgumentError(
      `--format is the encoding the service sends (${AUDIO_FORMATS.join('|')}); for ${asked === 'pcm' ? 'raw' : asked.toUpperCase()} output use --container ${asked === 'ogg' ? 'opus' : asked === 'pcm' ? 'raw' : asked} (or -o name.${asked === 'opus' ? 'opus' : asked})`,
    );
  }
  throw new InvalidArgumentError(`--format must be one of ${AUDIO_FORMATS.join(', ')}`);
}

/** Adds the synthesis flags of docs/cli.md §1 to a command. */
export function addSynthesisOptions(cmd: Command): Command {
  return cmd
    .option('-v, --voice <id>', 'preset voice id, e.g. ja-man-1, en-woman-1', DEFAULT_VOICE)
    .option('-l, --language <ja|en>', 'language of the text (default: from the voice prefix)')
    .addOption(new Option('--format <encoding>', `audio encoding requested from the service (${AUDIO_FORMATS.join('|')})`).argParser(serviceFormat).default('pcm16'))
    .option('-r, --sample-rate <hz>', 'sample rate of the audio, in Hz', intIn(1000, 192_000, '--sample-rate'), 24000)
    .option('-c, --channels <n>', 'number of channels', intIn(1, 8, '--channels'), 1)
    .option('-o, --output <path>', 'write audio here; the extension picks the container (.wav .raw .pcm .flac .mp3 .ogg .opus); - = stdout')
    .addOption(new Option('--wav', 'write a WAV container whatever the name').conflicts('raw'))
    .option('--raw', 'write raw samples whatever the name')
    .addOption(new Option('--container <name>', 'container of the file or stdout, whatever the name').choices(CONTAINERS))
    .option('--bitrate <kbps>', 'bit rate of MP3 or Opus, kbit/s (default 48/channel for MP3, 24 mono / 32 stereo for Opus)', intIn(1, 1000, '--bitrate'))
    .option('--play', 'play on the sound card too (with -o)')
    .option('-f, --file <path>', 'read the text from a file (- = stdin)')
    .option('--lines', 'read stdin line by line and speak each line as it arrives')
    .addOption(new Option('--max-input <size>', 'refuse a text larger than this (bytes, or e.g. 64MiB)').argParser(bytesIn(1, 2 ** 40, '--max-input')).default(DEFAULT_MAX_INPUT_BYTES, '64MiB'))
    .option('--max-chars <n>', 'longest text per request; longer text is split at sentence ends', intIn(1, 1_000_000, '--max-chars'), 1000)
    .option('--concurrency <n>', 'requests in flight at once for split text', intIn(1, 32, '--concurrency'), 2)
    .option('--retries <n>', 'retries of a request on limits, 408, 5xx or network errors', intIn(0, 20, '--retries'), 2)
    .option('--timeout <sec>', 'limit for connect + first audio, and for silence between audio deltas (keep-alives do not count)', seconds, 30)
    .option('-q, --quiet', 'no spinner or notices')
    .option('--verbose', 'protocol detail on stderr (the API key is always redacted)')
    .option('--json', 'print one JSON summary line on stderr at the end')
    .option('--base-url <url>', 'HTTP base URL of the service (env TTS_BASE_URL)')
    .option('--ws-base-url <url>', 'WebSocket base URL (env TTS_WS_BASE_URL; default from the HTTP base)')
    .option('--api-key-file <path>', 'read the API key from this file (first line)')
    .option('--offline', 'use the built-in offline engine even if a service is configured')
    .option('--allow-insecure', 'allow sending the key over http:// or ws:// to a non-loopback host')
    .addOption(new Option('--player <name>', 'how to play: speaker, or a system player (pw-play, paplay, aplay, ffplay, play)').choices(PLAYER_NAMES).default('auto'))
    .option('--profile <name>', 'use [profile.NAME] of the config file (env TTS_PROFILE)')
    .option('--speed <x>', 'speech tempo, pitch kept: 0.5 to 3 (1 = unchanged)', numberIn(0.5, 3, '--speed'))
    .option('--volume <x>', 'linear gain: above 0, at most 4 (1 = unchanged); peaks are limited', numberIn(0, 4, '--volume', { above: true }))
    .option('--pause <ms>', 'silence between sentences, 1 to 10000 ms (text is requested sentence by sentence)', numberIn(1, 10_000, '--pause', { whole: true }))
    .option('--subtitles <file>', 'write one subtitle cue per sentence to FILE.srt or FILE.vtt')
    .option('--no-cache', 'neither read nor store pieces in the piece cache (env TTS_NO_CACHE=1)')
    .option('--cache', 'use the piece cache even when the config file or TTS_NO_CACHE turns it off')
    .option('--cache-size <size>', 'size cap of the piece cache; least recently used pieces go first (default 1GiB)', bytesIn(0, 2 ** 50, '--cache-size'))
    .addOption(new Option('--api <dialect>', 'the service\'s dialect: native (docs/protocol.md) or openai (POST /v1/audio/speech)').choices(['native', 'openai']).env('TTS_API').default('native'))
    .option('--model <name>', 'model asked for with --api openai', 'tts-1');
}

/** Receives a command's exit code (docs/cli.md §3); `main` sets it as the process's once. */
export type CommandDone = (exitCode: number) => void;

/**
 * Adds one of the synthesis commands (say, stream, realtime) with the shared flags; its action
 * loads the synthesis code only when it runs, so `--help` and other commands stay fast.
 */
export function synthesisCommand(program: Command, name: 'say' | 'stream' | 'realtime', summary: string, io: CommandIo, done: CommandDone): Command {
  // `say` is the default command: `tts "hello"` speaks (docs/cli.md §1).
  return addSynthesisOptions(program.command(name, { isDefault: name === 'say' }).argument('[text...]', 'text to speak (default: stdin)').description(summary)).action(
    async (words: string[], flags: SynthesisFlags, cmd: Command) => {
      const { runSynthesis } = await import('./synthesis.js');
      done(await runSynthesis(name, words, softenConfigDefaults(flags, cmd), io));
    },
  );
}

/**
 * Keeps settings that came from the config file (docs/cli.md §7) from refusing a run they were
 * not written for, or from overriding what the run says itself: the configured container
 * choosers (`container`, `wav`, `raw`) are a default for stdout and for names without a known
 * extension — an `-o` extension or any of `--container`/`--wav`/`--raw` given as a flag wins over
 * all three, and playback alone ignores them —; a configured `bitrate` applies only to the MP3
 * and Opus outputs. Given as flags, they keep their strict meaning (an override, exit 2 where
 * they cannot apply). Also marks `--cache` given as a flag ({@link SynthesisFlags.cacheForced}).
 * @returns `flags`, adjusted in place.
 */
export function softenConfigDefaults<F extends SynthesisFlags>(flags: F, cmd: Command): F {
  const toStdout = flags.output === '-' || (flags.output === undefined && cmd.name() !== 'say');
  fitConfigDefaults(flags, (attr) => cmd.getOptionValueSource(attr) === 'config', flags.output === '-' ? undefined : flags.output, toStdout);
  markCacheForced(flags, cmd);
  return flags;
}

/** The attributes that choose the container of a file or stdout. */
const CONTAINER_CHOOSERS = ['container', 'wav', 'raw'] as const;

/**
 * The rule of {@link softenConfigDefaults} for one output, shared by the synthesis commands and
 * every job of `tts batch` (docs/cli.md §7, §9).
 * @param fromConfig whether an attribute's value came from the config file (for a batch job: and
 *   was not set by the job's own line, which counts as a flag).
 * @param output the file written (`-o` or a job's `output`), undefined for none or stdout.
 * @param toStdout whether the audio goes to stdout.
 * @returns `flags`, adjusted in place.
 */
export function fitConfigDefaults<F extends SynthesisFlags>(flags: F, fromConfig: (attr: string) => boolean, output: string | undefined, toStdout: boolean): F {
  const chosen = (attr: (typeof CONTAINER_CHOOSERS)[number]): boolean => (attr === 'container' ? flags.container !== undefined : flags[attr] === true);
  const byFlag = CONTAINER_CHOOSERS.some((attr) => chosen(attr) && !fromConfig(attr));
  const named = output !== undefined && containerOfPath(output) !== undefined;
  const playOnly = output === undefined && !toStdout;
  if (byFlag || named || playOnly) {
    for (const attr of CONTAINER_CHOOSERS) if (fromConfig(attr)) delete flags[attr];
  }
  if (fromConfig('bitrate')) {
    const container = flags.container ?? (flags.wav === true ? 'wav' : flags.raw === true ? 'raw' : output === undefined ? undefined : containerOfPath(output));
    if (container !== 'mp3' && container !== 'opus') delete flags.bitrate;
  }
  return flags;
}

/** Marks `--cache` given as a flag on `cmd` ({@link SynthesisFlags.cacheForced}): it beats `no-cache` in the file and TTS_NO_CACHE. */
export function markCacheForced(flags: SynthesisFlags, cmd: Command): void {
  if (cmd.getOptionValueSource('cache') === 'cli' && flags.cache === true) flags.cacheForced = true;
}

/** The environment the piece cache is chosen from: without TTS_NO_CACHE when `--cache` was given (docs/cli.md §8). */
export function cacheEnv(flags: SynthesisFlags, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return flags.cacheForced === true ? { ...env, TTS_NO_CACHE: undefined } : env;
}
