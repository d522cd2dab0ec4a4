/**
 * Documents in (docs/cli.md §10): which reader a file goes through (`--input-format`, else its
 * extension), and reading it whole into a {@link SpokenDocument}. Plain text is not a document:
 * it keeps the streaming reader of text/read.ts.
 */
import { readFile, stat } from 'node:fs/promises';
import { fileProblem, TtsError } from '../../errors.js';
import { readEpub } from './epub.js';
import { readHtml } from './html.js';
import { readMarkdownBounded } from './markdown-bounded.js';
import { MAX_MARKDOWN_CHARS } from './markdown.js';
import type { SpokenDocument } from './model.js';
import type { InputFormat } from './formats.js';

/** What reading a document needs. */
export interface DocumentOptions {
  /** `--chapter-level`; undefined = the format's default (EPUB 1, Markdown and HTML 2). */
  chapterLevel: number | undefined;
  /** Spoken for each skipped code block (`--code-phrase`); '' = nothing. */
  codePhrase: string;
  /** `--max-input`, bytes: a larger file is refused before it is read. */
  maxInputBytes: number;
}

/** The default `--chapter-level` of a format (docs/cli.md §10 "Chapters"). */
export function defaultChapterLevel(format: InputFormat): number {
  return format === 'epub' ? 1 : 2;
}

/**
 * Reads a document file whole (Markdown and HTML are parsed as trees or event streams of the
 * whole text; an EPUB is read entry by entry from its archive).
 * @param text the document's text when it was read already (stdin, words); else `path` is read.
 * @throws TtsError `usage` (exit 2): unreadable, over `--max-input` or a format's own limit,
 *   not UTF-8, and every refusal of the readers (markdown.ts, html.ts, epub.ts).
 */
export async function readDocument(format: Exclude<InputFormat, 'text'>, path: string, text: string | undefined, options: DocumentOptions): Promise<SpokenDocument> {
  const chapterLevel = options.chapterLevel ?? defaultChapterLevel(format);
  if (format === 'epub') {
    if (text !== undefined) throw new TtsError('usage', 'an EPUB must be given as a file (-f BOOK.epub)', { hint: 'save it to a file first' });
    await checkFile(path, options.maxInputBytes);
    return readEpub(path, { chapterLevel, codePhrase: options.codePhrase, what: path });
  }
  let source = text;
  if (source === undefined) {
    await checkFile(path, Math.min(options.maxInputBytes, format === 'markdown' ? MAX_MARKDOWN_CHARS * 3 : Number.MAX_SAFE_INTEGER));
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (cause) {
      // An open refused after the stat (EACCES), a read that fails (EIO): an unreadable input (docs/cli.md §3).
      throw new TtsError('usage', `cannot read ${path}: ${fileProblem(cause)}`, { cause });
    }
    try {
      source = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new TtsError('usage', `${path} is not valid UTF-8 text`, { hint: 'convert it first, e.g. iconv -f SHIFT_JIS -t UTF-8' });
    }
    if (source.includes('\0')) throw new TtsError('usage', `${path} is not text: it has a NUL byte`, { hint: 'give a text file (UTF-8)' });
  }
  return format === 'markdown' ? readMarkdownBounded(source, { chapterLevel, codePhrase: options.codePhrase, what: path }) : readHtml(source, { chapterLevel, codePhrase: options.codePhrase, what: path });
}

/**
 * @throws TtsError `usage` for a file that is missing or cannot be looked at (its reason: fileProblem), not a regular file, or over `maxBytes` —
 *   before anything of it is read.
 */
async function checkFile(path: string, maxBytes: number): Promise<void> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new TtsError('usage', `cannot read ${path}: a document must be a regular file`, { hint: 'save it to a file first' });
    size = info.size;
  } catch (cause) {
    if (cause instanceof TtsError) throw cause;
    throw new TtsError('usage', `cannot read ${path}: ${fileProblem(cause)}`, { cause });
  }
  if (size > maxBytes) throw new TtsError('usage', `${path} is larger than a document may be (${maxBytes} bytes)`, { hint: 'split it, or raise --max-input if you mean it' });
}
