/**
 * The flags of the synthesis commands as parsed (docs/cli.md §1) and the value parsers every
 * command's flags use: a value that cannot be right fails with exit 2 (docs/cli.md §3) before
 * anything else happens.
 */
import { InvalidArgumentError, type Option } from 'commander';
import type { TtsError } from '../errors.js';
import { parseByteSize } from '../byte-size.js';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/types.js';
import { CONTAINERS, type Container } from '../audio/containers/registry.js';
import type { CommandName } from '../speak/output-plan.js';
import type { InputFormat } from '../text/documents/formats.js';
import { parseCast } from '../text/script.js';
import { escapeControls, shortenedInput } from './escape.js';

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
  /** Where `baseUrl` came from when the config file set it (config.ts applyConfig); absent = the flag. */
  baseUrlFrom?: string;
  /** The same for `wsBaseUrl`. */
  wsBaseUrlFrom?: string;
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
  /** --words: word cues in the --subtitles file (docs/cli.md §12.1). */
  words?: boolean;
  /** --word-timings: JSON Lines file of the words' timings to write (docs/cli.md §12.1). */
  wordTimings?: string;
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
  /** --input-format (docs/cli.md §10): overrides the file's extension (stdin and words are text unless given). */
  inputFormat?: InputFormat;
  /** --ssml-lenient (docs/cli.md §11.1): unknown SSML elements speak their text content. */
  ssmlLenient?: boolean;
  /** --chapter-level: headings (table of contents entries) of this level or above start chapters. */
  chapterLevel?: number;
  /** --chapters FILE.vtt: a WebVTT chapters track. */
  chapters?: string;
  /** --split-chapters DIR: one numbered file per chapter. */
  splitChapters?: string;
  /** --chapter-range A-B: speak only chapters A to B (1-based, inclusive). */
  chapterRange?: ChapterRange;
  /** --code-phrase TEXT: spoken for each skipped code block (default nothing). */
  codePhrase?: string;
  /** --print-text: print the text as it will be spoken, one sentence a line, and stop. */
  printText?: boolean;
  /** --dry-run: the same as --print-text. */
  dryRun?: boolean;
  /** --cast NAME=VOICE,… (docs/cli.md §11.2): speaker name → voice id. */
  cast?: Map<string, string>;
  /** The config file's `[voices]` (profile over top level), set by the config hook (config.ts). */
  configVoices?: Map<string, string>;
  /** --lexicon FILE (docs/cli.md §11.3); false with --no-lexicon; undefined: lexicon.toml beside the config file. */
  lexicon?: string | boolean;
}

/** What sets one synthesis command apart (docs/cli.md §1). */
export interface SynthesisCommandSpec {
  /** The command's name; it also picks the default destination (`say` plays, the others write stdout). */
  name: CommandName;
  /** One line for `--help`. */
  summary: string;
  /** The channel it speaks over: SSE (docs/protocol.md §3) or the WebSocket (§4). */
  channel: 'sse' | 'realtime';
}

/** Receives a command's exit code (docs/cli.md §3); `main` sets it as the process's once. */
export type CommandDone = (exitCode: number) => void;

/**
 * A parser for a number in [min, max], for commander: decimal, or whole with `whole`; `above`
 * refuses min itself. Every refusal names the range (docs/cli.md §3: exit 2); the value itself is
 * quoted by whoever reports it, as the user wrote it (commander: `argument '…' is invalid`;
 * {@link flagValue}: `has a bad value "…"`).
 */
export function numberIn(min: number, max: number, what: string, how: { above?: boolean; whole?: boolean } = {}): (value: string) => number {
  const kind = how.whole === true ? 'a whole number' : 'a number';
  const range = how.above === true ? `above ${min} and at most ${max}` : `from ${min} to ${max}`;
  return (value) => {
    const pattern = how.whole === true ? /^\s*\+?\d+\s*$/ : /^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$/;
    const n = Number(value.trim());
    if (!pattern.test(value) || !Number.isFinite(n) || n < min || n > max || (how.above === true && n === min)) {
      throw new InvalidArgumentError(`${what} must be ${kind} ${range}`);
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

/**
 * A parser for a duration in seconds above 0 and at most a day (`--timeout`, `serve
 * --write-timeout`), for commander; `what` names the flag in the refusal.
 */
export function secondsIn(what: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 86_400) throw new InvalidArgumentError(`${what} must be a number of seconds above 0`);
    return n;
  };
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

/**
 * The value a flag would have had on the command line, for a setting given outside it — the
 * config file (docs/cli.md §7) and a batch line (§9): a boolean for a flag without a value
 * (`--no-x` stores the opposite), else the TOML or JSON string or number checked against the
 * flag's choices and run through its parser.
 * @param fail makes the error for a refusal, given why (e.g. `must be true or false`).
 * @param asWritten the number as the file wrote it (`99999999999999999999`, `1e400`, `0x10`),
 *   asked for only to quote a refused number: a JavaScript number has lost it (1e+20, Infinity,
 *   16). Undefined, or a result of undefined, quotes the number's value.
 * @throws what `fail` returns (a TtsError `usage`, exit 2).
 */
export function flagValue(option: Option, value: unknown, fail: (why: string) => TtsError, asWritten?: () => string | undefined): unknown {
  if (option.isBoolean() || option.negate) {
    if (typeof value !== 'boolean') throw fail('must be true or false');
    return option.negate ? !value : value;
  }
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint') throw fail('must be a string or a number');
  const raw = String(value);
  // Quoted as JSON, by its first 60 characters (a value of a megabyte costs a line, not a megabyte),
  // with what JSON leaves as it is (bidi overrides, C1, line separators) escaped for the terminal.
  const shown = (): string => escapeControls(JSON.stringify(shortenedInput(typeof value === 'number' ? (writtenAs(value, asWritten?.()) ?? raw) : raw)));
  if (option.argChoices !== undefined && !option.argChoices.includes(raw)) throw fail(`has a bad value ${shown()}: must be one of ${option.argChoices.join(', ')}`);
  if (option.parseArg === undefined) return raw;
  try {
    return option.parseArg(raw, undefined as never);
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^error: /, '') : String(error);
    throw fail(`has a bad value ${shown()}: ${why}`);
  }
}

/**
 * `written` when it is a number literal (TOML 1.0's, which include JSON's: `1e400`, `0x10`,
 * `1_000`, `inf`, `nan`) of `value` itself, else undefined: what {@link flagValue}'s `asWritten`
 * found is quoted only when it is the value refused, never another key's or line's (a line inside
 * a multi-line string, a key of a nested object).
 */
function writtenAs(value: number, written: string | undefined): string | undefined {
  if (written === undefined) return undefined;
  const special = /^([+-]?)(inf|nan)$/.exec(written);
  const parsed = special !== null ? (special[2] === 'nan' ? Number.NaN : special[1] === '-' ? -Infinity : Infinity) : Number(written.replace(/_/g, ''));
  return parsed === value || (Number.isNaN(parsed) && Number.isNaN(value)) ? written : undefined;
}

/**
 * Parses `A-B`, `A-` or `A` (1-based chapter numbers, inclusive; `A-` runs to the last) for
 * --chapter-range (docs/cli.md §10). `given` keeps the value as typed (trimmed), for messages:
 * a number past 2^53 is rounded in `first` and `last`.
 * @throws InvalidArgumentError (exit 2) for anything else, a 0, or B before A.
 */
export function chapterRangeOf(value: string): ChapterRange {
  const m = /^\s*(\d+)\s*(?:(-)\s*(\d*))?\s*$/u.exec(value);
  const first = Number(m?.[1]);
  const last = m?.[2] === undefined ? first : m[3] === '' || m[3] === undefined ? Number.POSITIVE_INFINITY : Number(m[3]);
  if (m === null || first < 1 || last < first) {
    throw new InvalidArgumentError('--chapter-range must be A-B, A- or A with chapter numbers from 1, e.g. 3-5');
  }
  return { first, last, given: value.trim() };
}

/** A `--chapter-range` as parsed by {@link chapterRangeOf}. */
export interface ChapterRange {
  /** The first chapter spoken, 1-based. */
  first: number;
  /** The last chapter spoken, 1-based, inclusive (Infinity for `A-`, whatever A is). */
  last: number;
  /** The value as the user typed it, trimmed: what messages quote. */
  given: string;
}

/**
 * The parser of `--cast Alice=en-woman-1,Bob=en-man-1` (docs/cli.md §11.2) for commander.
 * @throws InvalidArgumentError (exit 2) as text/script.ts `parseCast`.
 */
export function castOf(value: string): Map<string, string> {
  try {
    return parseCast(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}
