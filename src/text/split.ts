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
  return pack(
    [...segmenter('sentence').segment(text)].flatMap((s) => fit(s.segment, maxChars, 0)),
    maxChars,
  );
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
