/**
 * The document flags of the synthesis commands (docs/cli.md §10): which reader a text goes
 * through, where chapters start, where they go, and printing the spoken text instead of speaking.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { INPUT_FORMATS, type InputFormat } from '../text/documents/index.js';
import { intIn } from './options.js';

/** Parsed document flags (part of SynthesisFlags). */
export interface DocumentFlags {
  /** --input-format: overrides the file's extension (stdin and words are text unless given). */
  inputFormat?: InputFormat;
  /** --chapter-level: headings (table of contents entries) of this level or above start chapters. */
  chapterLevel?: number;
  /** --chapters FILE.vtt: a WebVTT chapters track. */
  chapters?: string;
  /** --split-chapters DIR: one numbered file per chapter. */
  splitChapters?: string;
  /** --chapter-range A-B: speak only chapters A to B (1-based, inclusive). */
  chapterRange?: { first: number; last: number };
  /** --code-phrase TEXT: spoken for each skipped code block (default nothing). */
  codePhrase?: string;
  /** --print-text / --dry-run: print the text as it will be spoken, one sentence a line, and stop. */
  printText?: boolean;
  /** --dry-run: the same as --print-text. */
  dryRun?: boolean;
}

/** Parses `A-B`, `A-` or `A` (1-based chapter numbers) for --chapter-range. */
function chapterRange(value: string): { first: number; last: number } {
  const m = /^\s*(\d+)\s*(?:(-)\s*(\d*))?\s*$/u.exec(value);
  const first = Number(m?.[1]);
  const last = m?.[2] === undefined ? first : m[3] === '' || m[3] === undefined ? Number.MAX_SAFE_INTEGER : Number(m[3]);
  if (m === null || first < 1 || last < first) {
    throw new InvalidArgumentError('--chapter-range must be A-B, A- or A with chapter numbers from 1, e.g. 3-5');
  }
  return { first, last };
}

/** Adds the document flags to a synthesis command. */
export function addDocumentOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--input-format <format>', 'read the input as text, markdown, html or epub (default: by the -f extension; stdin is text)').choices(INPUT_FORMATS))
    .option('--chapter-level <n>', 'headings of this level or above start chapters (default: 1 for EPUB tables of contents, 2 for Markdown/HTML)', intIn(1, 6, '--chapter-level'))
    .option('--chapters <file.vtt>', 'write the chapters as a WebVTT chapters track')
    .option('--split-chapters <dir>', 'write one numbered file per chapter into DIR (e.g. "01 Introduction.mp3"; --container picks the format, default mp3)')
    .option('--chapter-range <a-b>', 'speak only these chapters (1-based, e.g. 2-4, 3-, 5)', chapterRange)
    .option('--code-phrase <text>', 'say this for each skipped code block (default: nothing)')
    .option('--print-text', 'print the text as it will be spoken, one sentence per line, on stdout; synthesize nothing')
    .option('--dry-run', 'the same as --print-text');
}
