/**
 * The flags shared by `say`, `stream` and `realtime` (docs/cli.md §1), defined and validated in
 * one place; values that cannot be right fail with exit 2 before anything else happens.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CommandIo } from './report.js';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/types.js';
import { DEFAULT_VOICE } from '../protocol/voices.js';

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
  /** False with --no-cache (docs/cli.md §7). */
  cache?: boolean;
  /** --cache-size, in bytes. */
  cacheSize?: number;
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
 * (`65536`, `512K`, `64MiB`, `1 GiB`; K/M/G mean 1024, 1024², 1024³).
 */
export function bytesIn(min: number, max: number, what: string): (value: string) => number {
  return (value) => {
    const m = /^\s*(\d+)\s*(?:([kmg])(?:i?b)?|b|bytes?)?\s*$/i.exec(value);
    if (m === null) throw new InvalidArgumentError(`${what} must be a size such as 65536, 512K or 64MiB`);
    const unit = m[2]?.toLowerCase();
    const n = Number(m[1]) * (unit === 'g' ? 2 ** 30 : unit === 'm' ? 2 ** 20 : unit === 'k' ? 2 ** 10 : 1);
    if (n < min || n > max) throw new InvalidArgumentError(`${what} must be between ${min} and ${max} bytes`);
    return n;
  };
}

function seconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 86_400) throw new InvalidArgumentError('--timeout must be a number of seconds above 0');
  return n;
}

/** Adds the synthesis flags of docs/cli.md §1 to a command. */
export function addSynthesisOptions(cmd: Command): Command {
  return cmd
    .option('-v, --voice <id>', 'preset voice id, e.g. ja-man-1, en-woman-1', DEFAULT_VOICE)
    .option('-l, --language <ja|en>', 'language of the text (default: from the voice prefix)')
    .addOption(new Option('--format <encoding>', 'audio encoding requested from the service').choices(AUDIO_FORMATS).default('pcm16'))
    .option('-r, --sample-rate <hz>', 'sample rate of the audio, in Hz', intIn(1000, 384_000, '--sample-rate'), 24000)
    .option('-c, --channels <n>', 'number of channels', intIn(1, 8, '--channels'), 1)
    .option('-o, --output <path>', 'write audio here (.wav → WAV, other names → raw; - = stdout)')
    .addOption(new Option('--wav', 'write a WAV container whatever the name').conflicts('raw'))
    .option('--raw', 'write raw samples whatever the name')
    .option('--play', 'play on the sound card too (with -o)')
    .option('-f, --file <path>', 'read the text from a file (- = stdin)')
    .option('--lines', 'read stdin line by line and speak each line as it arrives')
    .option('--max-input <size>', 'refuse a text larger than this (bytes, or e.g. 64MiB)', bytesIn(1, 2 ** 40, '--max-input'), DEFAULT_MAX_INPUT_BYTES)
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
    .option('--no-cache', 'neither read nor store pieces in the piece cache (env TTS_NO_CACHE=1)')
    .option('--cache-size <size>', 'size cap of the piece cache; least recently used pieces go first (default 1GiB)', bytesIn(0, 2 ** 50, '--cache-size'));
}

/** Receives a command's exit code (docs/cli.md §3); `main` sets it as the process's once. */
export type CommandDone = (exitCode: number) => void;

/**
 * Adds one of the synthesis commands (say, stream, realtime) with the shared flags; its action
 * loads the synthesis code only when it runs, so `--help` and other commands stay fast.
 */
export function synthesisCommand(program: Command, name: 'say' | 'stream' | 'realtime', summary: string, io: CommandIo, done: CommandDone): Command {
  return addSynthesisOptions(program.command(name).argument('[text...]', 'text to speak (default: stdin)').description(summary)).action(
    async (words: string[], flags: SynthesisFlags) => {
      const { runSynthesis } = await import('./synthesis.js');
      done(await runSynthesis(name, words, flags, io));
    },
  );
}
