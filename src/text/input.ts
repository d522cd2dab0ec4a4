/**
 * Where the text comes from (docs/cli.md §1 "Text input"): positional words, stdin, or `-f FILE`.
 * Text is validated before any request: invalid UTF-8 or nothing to say is exit 2.
 */
import { readFile } from 'node:fs/promises';
import { TtsError } from '../errors.js';

/** Where to read text from, as the flags said. */
export interface TextSource {
  /** Positional words (joined with single spaces). */
  words: readonly string[];
  /** `-f PATH`; `-` is stdin. */
  file: string | undefined;
  /** The process's stdin. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/**
 * Reads the whole text to speak.
 * @returns the text, non-empty after trimming.
 * @throws TtsError `usage` (exit 2): both words and -f; no text at all (stdin is a terminal and
 *   no words); empty or whitespace-only text; invalid UTF-8; an unreadable file.
 */
export async function readText(source: TextSource): Promise<string> {
  let text: string;
  if (source.file !== undefined) {
    if (source.words.length > 0) throw new TtsError('usage', 'give the text either as words or with -f, not both');
    text = source.file === '-' ? await readStdin(source.stdin) : await readTextFile(source.file);
  } else if (source.words.length > 0) {
    text = source.words.join(' ');
  } else if (source.stdin.isTTY !== true) {
    text = await readStdin(source.stdin);
  } else {
    throw new TtsError('usage', 'no text to speak', { hint: 'give it as words (tts say "hello"), pipe it in, or use -f FILE' });
  }
  return checkText(text);
}

/** Fails with exit 2 when there is nothing to say; returns `text` unchanged otherwise. */
export function checkText(text: string): string {
  if (text.trim() === '') throw new TtsError('usage', 'the text is empty', { hint: 'give some text to speak' });
  return text;
}

/**
 * Decodes bytes as strict UTF-8 (a leading BOM is dropped).
 * @throws TtsError `usage` naming the byte offset of the first invalid sequence.
 */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new TtsError('usage', `${what} is not valid UTF-8 text (first bad byte at offset ${firstInvalidOffset(bytes)})`, {
      hint: 'convert it first, e.g. iconv -f SHIFT_JIS -t UTF-8',
    });
  }
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of stdin as AsyncIterable<Buffer | string>) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return decodeUtf8(Buffer.concat(parts), 'standard input');
}

async function readTextFile(path: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : String(code ?? cause);
    throw new TtsError('usage', `cannot read ${path}: ${why}`, { cause });
  }
  return decodeUtf8(bytes, path);
}

function firstInvalidOffset(bytes: Uint8Array): number {
  // Binary search for the shortest prefix that fails to decode; with stream: true a sequence
  // merely cut off at the end of a prefix is not an error, so failure is monotone in length.
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid + 1), { stream: true });
      lo = mid + 1;
    } catch {
      hi = mid;
    }
  }
  return lo;
}
