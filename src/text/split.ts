/**
 * Splitting long text into requests of at most N characters (docs/cli.md §1 `--max-chars`).
 *
 * Boundaries come from ICU through `Intl.Segmenter` (Unicode UAX #29 sentence and word
 * segmentation, with a dictionary for Japanese words), so "e.g. this" and "3.14" stay whole and
 * 。！？ and line breaks end sentences. A sentence longer than the limit falls back to clause
 * boundaries (、，,;:), then to word boundaries, and a single word longer than the limit to
 * grapheme boundaries: never inside a surrogate pair or a combining sequence.
 *
 * Lengths are counted in Unicode code points, as the built-in service counts them.
 *
 * ICU's segmenters take time (and, spread into an array, memory) that grows faster than the
 * text: 100 000 characters segment in ~0.1 s, 200 000 in ~1.5 s, 1 MB runs out of memory. So
 * text is segmented in windows of {@link WINDOW_CHARS}: the complete sentences of a window are
 * packed into pieces and handed on, and the window's last sentence — which may go on past the
 * window — is carried into the next one. Since the greedy packing restarts from the last piece
 * of each window, the pieces are the same as one pass over the whole text would make, as long as
 * no sentence is longer than half a window (one that is gets cut at the window, and the words at
 * the cut may be segmented otherwise; the pieces still join back to the text and fit the limit).
 */

// Made on first use: building ICU segmenters costs ~13 ms, which short texts never need.
let segmenters: { sentence: Intl.Segmenter; word: Intl.Segmenter; grapheme: Intl.Segmenter } | undefined;
function segmenter(kind: 'sentence' | 'word' | 'grapheme'): Intl.Segmenter {
  segmenters ??= {
    sentence: new Intl.Segmenter(undefined, { granularity: 'sentence' }),
    word: new Intl.Segmenter('ja', { granularity: 'word' }),
    grapheme: new Intl.Segmenter(undefined, { granularity: 'grapheme' }),
  };
  return segmenters[kind];
}

/** Length of `s` in code points. */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Splits `text` into pieces of at most `maxChars` code points each, at the best boundaries.
 * Concatenating the pieces gives back `text` exactly (whitespace rides with the piece before it).
 * Pieces may be whitespace-only (callers skip those: there is nothing to say).
 * @param maxChars the limit, ≥ 1.
 * @returns the pieces, in order; `[]` for an empty text.
 */
export function splitText(text: string, maxChars: number): string[] {
  if (!(maxChars >= 1)) throw new RangeError(`maxChars must be at least 1, got ${maxChars}`);
  if (text === '') return [];
  if (codePointLength(text) <= maxChars) return [text];
  const pieces: string[] = [];
  const splitter = new StreamSplitter(maxChars);
  pieces.push(...splitter.push(text), ...splitter.end());
  return pieces;
}

/**
 * Splits text that arrives in blocks (see {@link StreamSplitter}) into pieces, as they become final.
 * @param blocks the text, in blocks of any size (a block never splits a UTF-16 surrogate pair).
 * @param maxChars the limit per piece, in code points (≥ 1).
 */
export async function* splitStream(blocks: AsyncIterable<string>, maxChars: number): AsyncGenerator<string, void, undefined> {
  const splitter = new StreamSplitter(maxChars);
  for await (const block of blocks) yield* splitter.push(block);
  yield* splitter.end();
}

/**
 * Text of at most this many UTF-16 code units is segmented at once (see the module comment); a
 * window always holds several pieces of the largest sensible limit.
 */
export const WINDOW_CHARS = 16 * 1024;

/**
 * Splits text that arrives in blocks (a file read as a stream) into the pieces
 * {@link splitText} would make of the whole, handing each on as soon as the text after it can no
 * longer change it. Holds at most about {@link WINDOW_CHARS} (or, for a larger `maxChars`, a few
 * pieces) plus one block of text.
 */
export class StreamSplitter {
  readonly #maxChars: number;
  /** Text received and not yet handed on as pieces. */
  #text = '';
  readonly #window: number;

  /**
   * @param maxChars the limit per piece, in code points (≥ 1).
   * @param windowChars text segmented at once, in UTF-16 code units (tests make it small); at
   *   least 4 × maxChars is used.
   */
  constructor(maxChars: number, windowChars: number = WINDOW_CHARS) {
    if (!(maxChars >= 1)) throw new RangeError(`maxChars must be at least 1, got ${maxChars}`);
    this.#maxChars = maxChars;
    this.#window = Math.max(windowChars, 4 * maxChars);
  }

  /** Takes the next block of text. @returns the pieces that are final now, in order. */
  push(block: string): string[] {
    this.#text += block;
    const pieces: string[] = [];
    while (this.#text.length >= this.#window) {
      const taken = this.#settled();
      pieces.push(...taken);
      this.#text = this.#text.slice(taken.reduce((n, p) => n + p.length, 0));
    }
    return pieces;
  }

  /** Ends the text. @returns the last pieces. */
  end(): string[] {
    const text = this.#text;
    this.#text = '';
    if (text === '') return [];
    if (codePointLength(text) <= this.#maxChars) return [text];
    return pack(
      [...segmenter('sentence').segment(text)].flatMap((s) => fit(s.segment, this.#maxChars, 0)),
      this.#maxChars,
    );
  }

  /**
   * The pieces at the start of the held text that more text cannot change: those of the
   * window's complete sentences but the last piece (which later sentences may still join).
   * Never empty, so every call makes progress.
   */
  #settled(): string[] {
    let end = this.#window;
    // Never cut a surrogate pair in two.
    if (/[\ud800-\udbff]/.test(this.#text[end - 1] ?? '')) end--;
    const window = this.#text.slice(0, end);
    const sentences = [...segmenter('sentence').segment(window)].map((s) => s.segment);
    // The last sentence may go on past the window: it is segmented again with what follows.
    if (sentences.length > 1) sentences.pop();
    const pieces = pack(
      sentences.flatMap((s) => fit(s, this.#maxChars, 0)),
      this.#maxChars,
    );
    // The last piece may still be joined by the next sentences; keep it unless it is all there is.
    if (pieces.length > 1) pieces.pop();
    return pieces;
  }
}

/**
 * The text to send for a piece: the piece itself, or without its trailing whitespace when only
 * that whitespace takes it over the limit (see {@link splitText}).
 */
export function requestText(piece: string, maxChars: number): string {
  return codePointLength(piece) <= maxChars ? piece : piece.trimEnd();
}

/** True when a piece has something to say. */
export function hasSpeech(piece: string): boolean {
  return piece.trim() !== '';
}

/**
 * Breaks one unit (a sentence, clause or word) into parts that each fit, trying ever finer
 * boundaries: clauses (level 0), words (1), graphemes (2).
 */
function fit(unit: string, maxChars: number, level: number): string[] {
  if (codePointLength(unit) <= maxChars) return [unit];
  let parts: string[];
  if (level === 0) parts = splitClauses(unit);
  else if (level === 1) parts = [...segmenter('word').segment(unit)].map((s) => s.segment);
  else return pack([...segmenter('grapheme').segment(unit)].map((s) => s.segment), maxChars);
  if (parts.length <= 1) return fit(unit, maxChars, level + 1);
  return pack(
    parts.flatMap((p) => fit(p, maxChars, level + 1)),
    maxChars,
  );
}

/** Splits after clause punctuation (and the spaces that follow it). */
function splitClauses(s: string): string[] {
  return s.split(/(?<=[、，,;；:：][\s　]*)(?=[^\s　])/u);
}

/**
 * Greedily joins consecutive parts while the joined piece fits. Trailing whitespace never
 * starts a piece: it is attached to the piece before it even when that piece then exceeds the
 * limit by whitespace only — it is never sent alone.
 */
function pack(parts: string[], maxChars: number): string[] {
  const pieces: string[] = [];
  let current = '';
  let currentLength = 0;
  for (const part of parts) {
    const len = codePointLength(part);
    if (current !== '' && currentLength + len > maxChars && hasSpeech(part)) {
      pieces.push(current);
      current = '';
      currentLength = 0;
    }
    current += part;
    currentLength += len;
  }
  if (current !== '') pieces.push(current);
  return pieces;
}
