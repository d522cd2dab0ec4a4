/**
 * The jobs of `tts batch` (docs/cli.md §9), read from its input: JSON Lines — one object per
 * line, `{"text": …}` or `{"file": …}`, `"output"`, and any synthesis flag by its long name — or
 * with `--lines` plain text, one job per non-empty line. The input is read whole before any job
 * starts (strict UTF-8, no NUL, at most `--max-input` bytes, {@link MAX_LINES} lines of at most
 * {@link MAX_LINE_BYTES} bytes), so a bad byte on line 900 fails the batch before line 1 is spoken.
 * A line that is not a valid job becomes a failed job with its line number; it stops no other.
 */
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { TtsError } from '../errors.js';
import { LineCutter, openText } from '../text/read.js';
import { flagValue, type SynthesisFlags } from './flags.js';
import type { CommandIo } from './report.js';

/** Longest line of a batch input, in UTF-8 bytes (1 MiB). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** Most lines in a batch input. */
export const MAX_LINES = 100_000;

/** One job of a batch: a line that parsed, or the reason it did not. */
export interface BatchJob {
  /** Line number in the input, from 1. */
  line: number;
  /** The text to speak (from `text`, or the plain line). */
  text?: string | undefined;
  /** A file to read the text from (`file`). */
  file?: string | undefined;
  /** Where the audio goes. */
  output: string;
  /** The batch's flags with this line's own over them. */
  flags: SynthesisFlags;
  /** Attribute names (`sampleRate`) the line set itself: like flags, they beat the config file. */
  own: Set<string>;
  /** Why the line is not a job (exit 2), when it is not. */
  invalid?: TtsError | undefined;
}

/**
 * The document flags (docs/cli.md §10, §11.2), refused on a batch's command line and on its lines
 * alike: a batch reads plain text and SSML (§9), so on a line they would be ignored, reading the
 * markup aloud (`"input-format": "markdown"`) or writing audio for a `"dry-run"`.
 */
export const DOCUMENT_FLAGS = ['inputFormat', 'chapterLevel', 'chapters', 'splitChapters', 'chapterRange', 'codePhrase', 'printText', 'dryRun', 'cast'] as const;

/**
 * Keys a line may not set: they belong to the whole batch, or are given their own way
 * (`profile`: the config file is read once for the batch; give `--profile` on the command line).
 */
const BATCH_WIDE = new Set(['profile', 'lines', 'quiet', 'verbose', 'json', 'base-url', 'ws-base-url', 'api-key-file', 'offline', 'allow-insecure', 'api', 'play', 'cache', 'cache-size', 'jobs', 'output-dir', 'version', 'help']);

/**
 * Reads the batch input whole.
 * @param path a file, or `-` for stdin.
 * @returns each line with its number (1-based), blank lines included (callers skip them).
 * @throws TtsError `usage` (exit 2): unreadable input, invalid UTF-8 or a NUL byte, more than
 *   `maxInputBytes`, a line over {@link MAX_LINE_BYTES}, more than {@link MAX_LINES} lines.
 */
export async function readBatchLines(path: string, io: CommandIo, maxInputBytes: number, signal: AbortSignal): Promise<string[]> {
  const what = path === '-' ? 'standard input' : path;
  const blocks = await openText({ words: [], file: path, stdin: io.stdin, maxInputBytes, signal });
  const lines: string[] = [];
  const cutter = new LineCutter<string>('\n', (parts) => parts.join(''), (part) => Buffer.byteLength(part));
  const tooLong = (): TtsError =>
    new TtsError('usage', `line ${lines.length + 1} of ${what} is longer than ${MAX_LINE_BYTES} bytes`, { hint: 'put a long text in a file and give it as {"file": …}' });
  const push = (line: string): void => {
    if (lines.length >= MAX_LINES) throw new TtsError('usage', `${what} has more than ${MAX_LINES} lines`, { hint: 'split the batch into several' });
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) throw tooLong();
    lines.push(line);
  };
  for await (const block of blocks) {
    for (const line of cutter.cut(block)) push(line);
    // A line that never ends is refused as it grows, not once it is all in memory.
    if (cutter.pendingSize > MAX_LINE_BYTES) throw tooLong();
  }
  const last = cutter.end();
  if (last !== undefined) push(last);
  return lines;
}

/**
 * The jobs of a plain-text batch (`--lines`): one per non-empty line, written to
 * `DIR/0001.wav`, `DIR/0002.wav`, … in the order of the non-empty lines (four digits, more when
 * there are more lines); the extension of `--container` (`.raw` with `--raw`).
 */
export function plainJobs(lines: readonly string[], outputDir: string, flags: SynthesisFlags): BatchJob[] {
  const kept = lines.map((text, i) => ({ text, line: i + 1 })).filter((l) => l.text.trim() !== '');
  const digits = Math.max(4, String(kept.length).length);
  const ext = fileExtension(flags);
  return kept.map((l, i) => ({ line: l.line, text: l.text, output: join(outputDir, `${String(i + 1).padStart(digits, '0')}.${ext}`), flags: jobFlags(flags), own: new Set<string>() }));
}

/**
 * The jobs of a JSON Lines batch: one per non-blank line. Each line's keys other than `text`,
 * `file` and `output` are looked up among the command's own options by long name (`voice`,
 * `sample-rate`; `sample_rate` and `sampleRate` too) and parsed by that option's own parser, so a
 * flag added to the synthesis commands is accepted here without more code.
 * @param outputDir with `--output-dir`: relative outputs go there, and a line without `output`
 *   writes `NNNN.wav` named by its line number.
 */
export function jsonJobs(lines: readonly string[], command: Command, flags: SynthesisFlags, outputDir: string | undefined): BatchJob[] {
  const jobs: BatchJob[] = [];
  const digits = Math.max(4, String(lines.length).length);
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    const line = i + 1;
    const job: BatchJob = { line, output: '', flags: jobFlags(flags), own: new Set() };
    try {
      parseJsonJob(raw, job, command);
      if (job.output === '') {
        if (outputDir === undefined) throw new TtsError('usage', 'no "output"', { hint: 'give each line an "output" file, or use --output-dir DIR' });
        job.output = `${String(line).padStart(digits, '0')}.${fileExtension(job.flags)}`;
      }
      if (outputDir !== undefined && !job.output.startsWith('/')) job.output = join(outputDir, job.output);
    } catch (error) {
      job.invalid = error instanceof TtsError ? error : new TtsError('usage', String(error));
      // A refused line names its output as a line that ran would (`--json`): in --output-dir.
      if (outputDir !== undefined && job.output !== '' && !job.output.startsWith('/')) job.output = join(outputDir, job.output);
    }
    jobs.push(job);
  });
  return jobs;
}

/** The batch's flags as a job starts from them: no `--lines` (in a batch it names the input form). */
function jobFlags(flags: SynthesisFlags): SynthesisFlags {
  const copy: SynthesisFlags = { ...flags };
  delete copy.lines;
  return copy;
}

function parseJsonJob(raw: string, job: BatchJob, command: Command): void {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new TtsError('usage', `not JSON (${error instanceof Error ? error.message : String(error)})`, { hint: 'each line is one JSON object, e.g. {"text": "Hello", "output": "hello.wav"}' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TtsError('usage', 'not a JSON object');
  // An escaped \u0000 is a NUL like a raw one, refused in every text tts reads (docs/cli.md §9).
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' && v.includes('\0')) throw new TtsError('usage', `"${key}" contains a NUL character (\\u0000)`, { hint: 'remove it from the line' });
  }
  const flags = job.flags as unknown as Record<string, unknown>;
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'text' || key === 'file' || key === 'output') {
      if (typeof v !== 'string' || v === '') throw new TtsError('usage', `"${key}" must be a non-empty string`);
      if (key === 'text') job.text = v;
      else if (key === 'file') job.file = v;
      else job.output = v;
      continue;
    }
    const kebab = key.replace(/_/g, '-').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const option = command.options.find((o: Option) => o.long === `--${kebab}` && !o.negate);
    if (option === undefined || BATCH_WIDE.has(kebab)) {
      throw new TtsError('usage', `"${key}" is not a flag a line can set`, { hint: 'use the long name of a synthesis flag (voice, language, format, sample-rate, …); service and output flags go on the command line' });
    }
    if ((DOCUMENT_FLAGS as readonly string[]).includes(option.attributeName())) {
      throw new TtsError('usage', `"${key}" is not a flag a line can set: tts batch reads plain text and SSML`, { hint: 'speak a document or a dialogue script with tts stream -f FILE' });
    }
    flags[option.attributeName()] = flagValue(option, v, (why) => new TtsError('usage', `"${kebab}" ${why}`), () => jsonNumberAsWritten(raw, key));
    job.own.add(option.attributeName());
  }
  if ((job.text === undefined) === (job.file === undefined)) throw new TtsError('usage', 'give either "text" or "file"');
  if (job.file === '-') throw new TtsError('usage', '"file" cannot be standard input in a batch');
  if (job.flags.wav === true && job.flags.raw === true) throw new TtsError('usage', '"wav" and "raw" cannot both be set');
}

/** The extension of the files a batch names itself: `--container`'s (opus → .opus), else raw or wav. */
function fileExtension(flags: { container?: string | undefined; raw?: boolean | undefined }): string {
  return flags.container ?? (flags.raw === true ? 'raw' : 'wav');
}

/**
 * The number a JSON line gives `key` (`{"sample-rate": 99999999999999999999}`) as it is written
 * there, for a message: JSON.parse has rounded it (1e+20; 1e400 is Infinity), and Node 20's has
 * no access to the source text. Found as a member of the line's object: after `{` or `,`, the key
 * spelt as JSON.stringify spells it, `:`, a JSON number, then `,` or `}` — inside a string every
 * `"` is escaped, so no string can hold that; the last such member, as JSON.parse keeps the last
 * of a key given twice. Undefined when the key is spelt otherwise (with `\u` escapes).
 */
function jsonNumberAsWritten(line: string, key: string): string | undefined {
  const name = JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const members = line.matchAll(new RegExp(`[{,]\\s*${name}\\s*:\\s*(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\s*(?=[,}])`, 'g'));
  let last: string | undefined;
  for (const m of members) last = m[1];
  return last;
}
