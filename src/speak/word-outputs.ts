/**
 * `--word-timings FILE.jsonl` (docs/cli.md §12.1): one JSON line per spoken word,
 * `{"word","start","end","piece","char_start","char_end"}` — seconds of the delivered audio
 * (after -r, --speed, pauses: the cue clock of audio-stage.ts), the piece's number (from 0, in
 * text order) and the word's place in the text as read, in characters (Unicode code points) —
 * written as words come to a temporary file renamed into place only when the run completed, like
 * the subtitles (src/audio/file-sink.ts); into a FIFO, socket or device in place, piece by piece
 * as the audio is made (text-file.ts).
 */
import { jsonLine } from '../cli/escape.js';
import { codePointLength } from '../text/split.js';
import { openTextFile, type TextFileOptions } from './text-file.js';
import type { Cue } from './audio-stage.js';

/**
 * Where each piece is in the text as read: pieces are pieces of the input in order (text/split.ts:
 * concatenated, they give it back), so their offsets are counted as they pass. A piece's end
 * marker names its text as requested (maybe a part, or trimmed): {@link locate} finds it in the
 * oldest piece that still holds it.
 */
export class TextOffsets {
  /** Pieces passed and not yet all located: text, code points before it, UTF-16 offset located up to. */
  #pending: { text: string; base: number; used: number }[] = [];
  #total = 0;

  /** `pieces` (texts, or span pieces: text/span-pieces.ts), passing through, each one's offset counted. */
  async *track<T extends string | { text: string }>(pieces: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    for await (const piece of pieces) {
      const text = typeof piece === 'string' ? piece : piece.text;
      this.#pending.push({ text, base: this.#total, used: 0 });
      this.#total += codePoints(text, text.length);
      // Bounded: a piece not located within the last 1024 (said nothing) is forgotten. No more
      // are read and not yet spoken: the pipeline reads at most 512 ahead (speak/pipeline.ts
      // MAX_PIECES_AHEAD), besides those in flight (--concurrency, at most 32).
      if (this.#pending.length > 1024) this.#pending.shift();
      yield piece;
    }
  }

  /**
   * The code point offset in the text as read of UTF-16 offset `at` of `requested` (a piece's
   * text as requested), or undefined when the piece is not found among those passed.
   */
  locate(requested: string): ((at: number) => number) | undefined {
    for (let i = 0; i < this.#pending.length; i++) {
      const entry = this.#pending[i]!;
      const found = entry.text.indexOf(requested, entry.used);
      if (found < 0) continue;
      // Earlier pieces were never spoken (nothing to say): forget them.
      this.#pending.splice(0, i);
      entry.used = found + requested.length;
      const before = entry.base + codePoints(entry.text, found);
      return (at) => before + codePoints(requested, at);
    }
    return undefined;
  }
}

/** Code points in `text.slice(0, end)`. */
function codePoints(text: string, end: number): number {
  return codePointLength(text.slice(0, end));
}

/** A `--word-timings` file being written. */
export interface WordTimingsWriter {
  /** Words written so far. */
  readonly count: number;
  /** Appends the words of one piece's cue (`piece`: its number from 0; `offset`: see TextOffsets.locate). */
  add(cue: Cue, piece: number, offset: ((at: number) => number) | undefined): Promise<void>;
  /** Completes the file: fsync, close, rename into place (in place: flush and close). */
  finish(): Promise<void>;
  /** Removes the temporary file; an existing file at the target stays untouched (in place: closes). Never rejects. */
  abort(): Promise<void>;
}

/**
 * One JSON line of a word: times in seconds rounded to the millisecond, char offsets in code
 * points of the text as read (`offset` undefined: of the piece). Control characters of the word
 * are escaped as `--json` escapes them (cli/escape.ts `jsonLine`: C1 such as the one-byte CSI
 * U+009B, DEL, line separators and bidirectional controls as `\uHHHH`, besides the C0 controls
 * JSON escapes), so `cat FILE` on a terminal obeys none of them; a JSON reader gets the same word.
 */
export function wordLine(word: { text: string; start: number; end: number; charStart: number; charEnd: number }, piece: number, offset: ((at: number) => number) | undefined): string {
  const round = (s: number): number => Math.round(s * 1000) / 1000;
  const char = offset ?? ((at: number) => at);
  return `${jsonLine({ word: word.text, start: round(word.start), end: round(word.end), piece, char_start: char(word.charStart), char_end: char(word.charEnd) })}\n`;
}

/**
 * Opens a word timings file for writing (or a FIFO, socket or device, in place, each piece's
 * lines leaving as its words are known: text-file.ts).
 * @param options `signal` and `verbose`, as text-file.ts `openTextFile` takes them.
 * @throws TtsError `io_error` (exit 7) when the folder cannot be written or the target is a
 *   folder (and later, when a write or finish fails); as `openTextFile`.
 */
export async function openWordTimings(path: string, options: TextFileOptions = {}): Promise<WordTimingsWriter> {
  const file = await openTextFile(path, 'the word timings', options);
  let count = 0;
  return {
    get count() {
      return count;
    },
    async add(cue, piece, offset) {
      const lines = (cue.words ?? []).map((w) => wordLine(w, piece, offset)).join('');
      count += cue.words?.length ?? 0;
      if (lines !== '') await file.write(lines);
    },
    finish: () => file.finish(),
    abort: () => file.abort(),
  };
}

