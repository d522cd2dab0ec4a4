/**
 * The text of one run as pieces to request (docs/cli.md §1 "Text input"): the whole input read as
 * a stream and split at sentence ends, or with `--lines` each non-empty stdin line as soon as it
 * arrives. Shared by `say`/`stream`/`realtime` and every line of `tts batch`.
 */
import { stat } from 'node:fs/promises';
import type { RunMappedText } from '../engine/mapped-text.js';
import { TtsError } from '../errors.js';
import { openText, readLinesAt } from './read.js';
import { splitStream } from './split.js';

/**
 * A piece of a `--lines` line (docs/cli.md §1: the line is the unit — one cue, one pause, one
 * sentence of the player — however many pieces it is cut in at `--max-chars`).
 */
export interface LinePiece {
  text: string;
  /** True for the line's first piece; its later pieces continue it. */
  lineStart: boolean;
  /**
   * On a line's first piece: code points of the input before it that no piece holds — the line
   * breaks and the blank lines since the line before (text/read.ts LineRead), counted in the
   * word timings' offsets (speak/word-outputs.ts TextOffsets, docs/cli.md §12.1).
   */
  before?: number | undefined;
  /** The line as the lexicon rewrote it, with its map ({@link WrittenPiece}); absent when it did not. */
  written?: RunMappedText | undefined;
}

/**
 * A part of a text the pronunciation lexicon changed (text/lexicon.ts `rewritePieces`, a
 * document's chapter): `text` is the part as sent; `written` the whole rewritten text it is a
 * part of — its parts, in order, are all of `written.text` — mapped to that text as the user
 * wrote it (`written.source`), so that its words' offsets and its subtitle cue are told in the
 * text as written (docs/cli.md §12.1). Every part of one text shares the one object.
 */
export interface WrittenPiece {
  text: string;
  written: RunMappedText;
}

/** A piece of a run's text: plain text cut at sentence ends, a piece of a `--lines` line, or a part of a text the lexicon changed. */
export type TextPiece = string | LinePiece | WrittenPiece;

/** Where the text of a run comes from and how it is cut (the flags of docs/cli.md §1). */
export interface TextSourceOptions {
  /** Positional words (joined with single spaces); empty for stdin or `-f`. */
  words: readonly string[];
  /** `-f PATH`; `-` or undefined is stdin. */
  file: string | undefined;
  /** `--lines`: speak stdin line by line. */
  lines: boolean;
  /** `--max-input`, in bytes. */
  maxInputBytes: number;
  /** `--max-chars`: longest piece, in characters (code points). */
  maxChars: number;
  /** The process's stdin. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Stops reading (Ctrl-C, the end of the run). */
  signal: AbortSignal;
  /** Called once when the open of `-f FIFO` begins, which waits for a writer (text/read.ts TextInput `waiting`). */
  waiting?: (() => void) | undefined;
}

/**
 * The text to speak, as pieces of at most `maxChars`. Input that is empty or white space only
 * fails here, before any service or output is opened.
 * @returns the pieces ({@link LinePiece}s with `--lines`, else strings), and the first text read (lets the built-in engine prepare for kanji;
 *   absent with `--lines`), and — instead of the pieces, for a reader of markup such as SSML —
 *   the whole text unsplit, as read (absent with `--lines`). Read one of them, not both.
 * @throws TtsError `usage` (exit 2, docs/cli.md §3): `--lines` with words or `-f FILE`; empty
 *   text; and what {@link openText} refuses.
 */
export async function textSource(options: TextSourceOptions): Promise<{ pieces: AsyncIterable<TextPiece>; text?: string; whole?: AsyncIterable<string> }> {
  const { words, file, maxChars } = options;
  if (options.lines) {
    if (words.length > 0 || (file !== undefined && file !== '-')) {
      throw new TtsError('usage', '--lines reads standard input; give no words and no -f FILE with it');
    }
    const lines = readLinesAt(options.stdin, options.maxInputBytes, options.signal);
    return {
      pieces: (async function* () {
        // A long line is split as it is requested, block by block like a file: split whole at
        // once it held the first piece back and the event loop (Ctrl-C) for 0.5 s a MB.
        for await (const { line, before } of lines) {
          let lineStart = true;
          for await (const text of splitStream(blocksOf(line), maxChars)) {
            yield lineStart ? { text, lineStart, before } : { text, lineStart };
            lineStart = false;
          }
        }
      })(),
    };
  }
  const blocks = (await openText({ words, file, stdin: options.stdin, maxInputBytes: options.maxInputBytes, signal: options.signal, waiting: options.waiting }))[Symbol.asyncIterator]();
  // Read until there is something to say (or the end), so empty text fails before anything starts.
  const head: string[] = [];
  let ended = false;
  for (;;) {
    const next = await blocks.next();
    if (next.done === true) {
      ended = true;
      break;
    }
    head.push(next.value);
    if (next.value.trim() !== '') break;
  }
  if (ended && head.every((b) => b.trim() === '')) throw new TtsError('usage', 'the text is empty', { hint: 'give some text to speak' });
  const text = head.join('');
  const rest = (async function* () {
    yield text;
    if (!ended) yield* { [Symbol.asyncIterator]: () => blocks };
  })();
  return { pieces: splitStream(rest, maxChars), text, whole: rest };
}

/** Size of the blocks a line is split in, in UTF-16 code units (as a file's blocks of 64 KiB). */
const LINE_BLOCK_CHARS = 64 * 1024;

/** `text` in blocks of about {@link LINE_BLOCK_CHARS}, none ending inside a surrogate pair. */
async function* blocksOf(text: string): AsyncGenerator<string, void, undefined> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + LINE_BLOCK_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    yield text.slice(at, end);
    at = end;
  }
}

/**
 * UTF-8 bytes of the whole text when known before reading it: the words' length, or the size of
 * a regular `-f` file; undefined for stdin and `--lines` (progress then shows no share).
 */
export async function knownTextBytes(options: Pick<TextSourceOptions, 'words' | 'file' | 'lines'>): Promise<number | undefined> {
  if (options.lines) return undefined;
  if (options.words.length > 0) return Buffer.byteLength(options.words.join(' '));
  if (options.file === undefined || options.file === '-') return undefined;
  const info = await stat(options.file).catch(() => undefined);
  return info?.isFile() === true ? info.size : undefined;
}
