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
import type { Cue, CueWord } from './audio-stage.js';
import type { RunMappedText, SourceRange } from '../engine/mapped-text.js';
import type { SpanSettings } from '../text/spans.js';

/**
 * Where a piece as requested is in the text as read ({@link TextOffsets.locate}): its text as
 * written and how its offsets map there.
 */
export interface PieceInText {
  /** The piece as the user wrote it: the requested text itself, or what the lexicon made it of. */
  written: string;
  /** True when {@link written} is the requested text (no lexicon changed it): its offsets are the piece's. */
  same: boolean;
  /**
   * A UTF-16 range of the requested text → the range of {@link written} it came from: a word the
   * lexicon wrote maps to the whole stretch it replaced (engine/mapped-text.ts RunMappedText).
   */
  range(start: number, end: number): SourceRange;
  /** The code point offset in the text as read of UTF-16 offset `at` of {@link written}. */
  offset(at: number): number;
}

/** A text pieces are located in: one piece's text, or the whole text a lexicon's map covers. */
interface Tracked {
  /** The text as requested (parts of it are the pieces). */
  text: string;
  /** Its map to the text as written; undefined when it is as written. */
  written: RunMappedText | undefined;
  /** Code points of the text as read before it. */
  base: number;
  /** UTF-16 offset of `text` located up to. */
  used: number;
  /** Code points of the text as written before its UTF-16 offset {@link countedAt} (counted as pieces pass, not from its start each time). */
  counted: number;
  countedAt: number;
}

/**
 * Where each piece is in the text as read: pieces are pieces of the input in order (text/split.ts:
 * concatenated, they give it back), so their offsets are counted as they pass. A piece's end
 * marker names its text as requested (maybe a part, or trimmed): {@link locate} finds it in the
 * oldest piece that still holds it. A text the pronunciation lexicon changed (docs/cli.md §11.3)
 * comes as parts that carry its map (text/source.ts WrittenPiece, a span's `written`): it is
 * counted by its text as written, and its parts are located in it and told there (§12.1). A
 * `--lines` line's first piece counts the input before it that no piece holds (its `before`:
 * line breaks, blank lines; text/source.ts LinePiece).
 */
export class TextOffsets {
  /** Texts passed and not yet all located. */
  #pending: Tracked[] = [];
  #total = 0;
  /** The map of the text whose parts are passing. */
  #map: RunMappedText | undefined;

  /** `pieces` (texts, or span pieces: text/span-pieces.ts), passing through, each one's offset counted. */
  async *track<T extends string | { text: string; written?: RunMappedText | undefined; span?: SpanSettings; before?: number | undefined }>(pieces: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
    for await (const piece of pieces) {
      const text = typeof piece === 'string' ? piece : piece.text;
      // The input no piece holds before a `--lines` line: its line breaks and blank lines.
      if (typeof piece !== 'string') this.#total += piece.before ?? 0;
      const map = typeof piece === 'string' ? undefined : (piece.written ?? piece.span?.written);
      // A later part of the text already counted whole.
      if (map !== undefined && map === this.#map) {
        yield piece;
        continue;
      }
      this.#map = map;
      this.#pending.push({ text: map?.text ?? text, written: map, base: this.#total, used: 0, counted: 0, countedAt: 0 });
      const read = map?.source ?? text;
      this.#total += codePoints(read, read.length);
      // Bounded: a piece not located within the last 1024 (said nothing) is forgotten. No more
      // are read and not yet spoken: the pipeline reads at most 512 ahead (speak/pipeline.ts
      // MAX_PIECES_AHEAD), besides those in flight (--concurrency, at most 32).
      if (this.#pending.length > 1024) this.#pending.shift();
      yield piece;
    }
  }

  /**
   * Where `requested` (a piece's text as requested) is in the text as read, or undefined when the
   * piece is not found among those passed. Each piece is located once, when it ended: the pieces
   * before it are then forgotten, and the next search starts after it.
   */
  locate(requested: string): PieceInText | undefined {
    return this.#find(requested, true);
  }

  /**
   * Where {@link locate} would find `requested` now, changing nothing: what a piece is as written
   * when it starts (the interactive player's line, docs/cli.md §12.2), before it is located at its
   * end — asked again for a piece requested again, it gives the same.
   */
  peek(requested: string): PieceInText | undefined {
    return this.#find(requested, false);
  }

  /** {@link locate} (`consume`) or {@link peek}. */
  #find(requested: string, consume: boolean): PieceInText | undefined {
    for (let i = 0; i < this.#pending.length; i++) {
      const entry = this.#pending[i]!;
      const found = entry.text.indexOf(requested, entry.used);
      if (found < 0) continue;
      if (consume) {
        // Earlier pieces were never spoken (nothing to say): forget them.
        this.#pending.splice(0, i);
        entry.used = found + requested.length;
      }
      const map = entry.written;
      if (map === undefined) {
        const before = entry.base + codePoints(entry.text, found);
        return { written: requested, same: true, range: (start, end) => ({ start, end }), offset: (at) => before + codePoints(requested, at) };
      }
      const piece = map.sourceRange(found, found + requested.length);
      const written = map.source.slice(piece.start, piece.end);
      const before = entry.base + countTo(entry, map.source, piece.start);
      const inPiece = (at: number): number => Math.min(written.length, Math.max(0, at - piece.start));
      return {
        written,
        same: false,
        range: (start, end) => {
          const r = map.sourceRange(found + start, found + end);
          return { start: inPiece(r.start), end: inPiece(r.end) };
        },
        offset: (at) => before + codePoints(written, at),
      };
    }
    return undefined;
  }
}

/** Code points of `source` before UTF-16 offset `at`, counted on from where `entry` last counted (pieces come in order). */
function countTo(entry: Tracked, source: string, at: number): number {
  if (at < entry.countedAt) {
    entry.counted = 0;
    entry.countedAt = 0;
  }
  entry.counted += codePointLength(source.slice(entry.countedAt, at));
  entry.countedAt = at;
  return entry.counted;
}

/**
 * A piece's cue told in the text as written ({@link PieceInText}): its text the piece as the user
 * wrote it, each word the stretch it came from — words the lexicon made of one stretch (SQL said
 * "structured query language") one word, the stretch as written, from the first one's start to
 * the last one's end (docs/cli.md §12.1). The cue itself when nothing was rewritten.
 */
export function writtenCue(cue: Cue, at: PieceInText | undefined): Cue {
  if (at === undefined || at.same) return cue;
  const shown: Cue = { ...cue, text: at.written };
  if (cue.words === undefined) return shown;
  const words: CueWord[] = [];
  for (const w of cue.words) {
    const r = at.range(w.charStart, w.charEnd);
    if (r.end <= r.start) continue;
    const last = words[words.length - 1];
    if (last !== undefined && r.start < last.charEnd) {
      last.end = Math.max(last.end, w.end);
      if (r.end > last.charEnd) {
        last.charEnd = r.end;
        last.text = at.written.slice(last.charStart, last.charEnd);
      }
      continue;
    }
    words.push({ text: at.written.slice(r.start, r.end), start: w.start, end: w.end, charStart: r.start, charEnd: r.end });
  }
  shown.words = words;
  return shown;
}

/** Code points in `text.slice(0, end)`. */
function codePoints(text: string, end: number): number {
  return codePointLength(text.slice(0, end));
}

/** A `--word-timings` file being written. */
export interface WordTimingsWriter {
  /** Words written so far. */
  readonly count: number;
  /** Appends the words of one piece's cue (`piece`: its number from 0; `offset`: PieceInText.offset, of the text the cue's offsets are in). */
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

