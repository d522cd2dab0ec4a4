/**
 * Splitting long text into requests of at most N characters (docs/cli.md §1 `--max-chars`).
 *
 * Boundaries come from ICU through `Intl.Segmenter` (Unicode UAX #29 sentence and word
 * segmentation, with a dictionary for Japanese words), so "e.g. this" and "3.14" stay whole and
 * 。！？ and line breaks end sentences. A sentence longer than the limit falls back to clause
 * boundaries (`,;:` followed by white space; 、，；： always, as CJK text has no spaces), then to
 * white space. Only a run without white space longer than the limit (a Japanese clause, a long
 * URL) is cut inside: between two of its ICU words where a letter or digit is on both sides
 * (never next to the punctuation of "1,234,567", "10:30", "2024-01-05", a URL), and a single
 * word longer than the limit at grapheme boundaries: never inside a surrogate pair or a
 * combining sequence.
 *
 * Lengths are counted in Unicode code points, as the built-in service counts them.
 *
 * ICU's segmenters take time and memory that grow with the text's length times its number of
 * segments (every segment object carries its own copy of the input): 1.2 MB of prose segmented
 * at once runs out of memory, and one 100 000-character word split into graphemes took 1.1 GB.
 * So text is segmented into sentences in windows of {@link WINDOW_CHARS} whatever `--max-chars`:
 * the complete sentences of a window are packed into the piece being built and the window's last
 * sentence — which may go on past the window — is carried into the next one; words and graphemes
 * are segmented in slices (see `segmentsOf`), keeping only the segments' strings. The greedy
 * packing runs on across windows, so the pieces are the same as one pass over the whole text
 * would make, as long as no sentence is longer than a window (one that is gets cut at the
 * window, and the words at the cut may be segmented otherwise; the pieces still join back to the
 * text and fit the limit).
 */
import { isSpeakable } from '../protocol/speakable.js';

// Made on first use, each kind alone: building ICU segmenters costs ~13 ms, which short texts never need.
const segmenters = new Map<'sentence' | 'word' | 'grapheme', Intl.Segmenter>();
/** The one segmenter of each kind (UAX #29 through ICU; words in Japanese rules), made on first use. */
export function segmenter(kind: 'sentence' | 'word' | 'grapheme'): Intl.Segmenter {
  let made = segmenters.get(kind);
  if (made === undefined) {
    made = new Intl.Segmenter(kind === 'word' ? 'ja' : undefined, { granularity: kind });
    segmenters.set(kind, made);
  }
  return made;
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
  const splitter = new StreamSplitter(maxChars);
  const pieces = splitter.push(text);
  for (const piece of splitter.end()) pieces.push(piece);
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
 * Text of at most this many UTF-16 code units is segmented into sentences at once (see the module
 * comment), whatever `--max-chars`: the memory of splitting follows the pieces, not the limit.
 */
export const WINDOW_CHARS = 16 * 1024;

/**
 * Splits text that arrives in blocks (a file read as a stream) into the pieces
 * {@link splitText} would make of the whole, handing each on as soon as the text after it can no
 * longer change it. Holds at most about {@link WINDOW_CHARS} of unsegmented text plus the piece
 * being packed (at most `maxChars` code points): a piece larger than the window is packed from
 * the sentences of several windows.
 */
export class StreamSplitter {
  readonly #maxChars: number;
  /** Text received and not yet segmented. */
  #text = '';
  readonly #window: number;
  /** The piece being packed, and its length in code points. */
  #current = '';
  #currentLength = 0;

  /**
   * @param maxChars the limit per piece, in code points (≥ 1).
   * @param windowChars text segmented into sentences at once, in UTF-16 code units (tests make it small).
   */
  constructor(maxChars: number, windowChars: number = WINDOW_CHARS) {
    if (!(maxChars >= 1)) throw new RangeError(`maxChars must be at least 1, got ${maxChars}`);
    this.#maxChars = maxChars;
    this.#window = Math.max(2, windowChars);
  }

  /** Takes the next block of text. @returns the pieces that are final now, in order. */
  push(block: string): string[] {
    const pieces: string[] = [];
    // A window at a time, so a large block is never held twice nor segmented at once.
    for (let at = 0; at < block.length; at += this.#window) {
      this.#text += block.slice(at, at + this.#window);
      while (this.#text.length >= this.#window) {
        let end = this.#window;
        // Never cut a surrogate pair in two.
        if (/[\ud800-\udbff]/.test(this.#text[end - 1] ?? '')) end--;
        const sentences = segmentsOf(this.#text.slice(0, end), 'sentence');
        // The last sentence may go on past the window: it is segmented again with what follows.
        if (sentences.length > 1) sentences.pop();
        // A sentence longer than the window is cut at the window's last grapheme boundary
        // (👍 + 🏽, e + U+0301 stay whole).
        else sentences[0] = wholeGraphemes(sentences[0] ?? '');
        let used = 0;
        for (const sentence of sentences) {
          this.#add(sentence, pieces);
          used += sentence.length;
        }
        this.#text = this.#text.slice(used);
      }
    }
    return pieces;
  }

  /** Ends the text. @returns the last pieces. */
  end(): string[] {
    const pieces: string[] = [];
    // What is left fits beside the piece being packed: #add would only append its sentences one
    // after the other (it cuts where the limit is passed), so it is appended whole, unsegmented.
    // A short text then never builds ICU's sentence segmenter (~9 ms; issue 20).
    if (this.#currentLength + codePointLength(this.#text) <= this.#maxChars) this.#current += this.#text;
    else for (const sentence of segmentsOf(this.#text, 'sentence')) this.#add(sentence, pieces);
    this.#text = '';
    if (this.#current !== '') pieces.push(this.#current);
    this.#current = '';
    this.#currentLength = 0;
    return pieces;
  }

  /** Packs one sentence's parts into the current piece, handing on each piece that is full. */
  #add(sentence: string, out: string[]): void {
    for (const part of fit(sentence, this.#maxChars, 0)) {
      const len = codePointLength(part);
      // As {@link pack}: trailing whitespace never starts a piece.
      if (this.#current !== '' && this.#currentLength + len > this.#maxChars && hasSpeech(part)) {
        out.push(this.#current);
        this.#current = '';
        this.#currentLength = 0;
      }
      this.#current += part;
      this.#currentLength += len;
    }
  }
}

/**
 * `text` without its last grapheme, which more text could still extend (at most the last 64 code
 * units are segmented); `text` itself when it is one grapheme.
 */
function wholeGraphemes(text: string): string {
  const tail = text.slice(-64);
  const last = segmentsOf(tail, 'grapheme').at(-1) ?? '';
  return last.length < text.length ? text.slice(0, text.length - last.length) : text;
}

/** Code units segmented at once by {@link segmentsOf}. */
const SEGMENT_CHUNK_CHARS = 2048;

/**
 * Code units of a carried segment's start that {@link segmentsOf} segments again before its kept
 * slice, as the context of the rules that look back (SB7 `Upper ATerm × Upper`, WB6/WB7, a base
 * before its combining marks); no boundary is taken inside them.
 */
const SEGMENT_CONTEXT_CHARS = 64;

/**
 * What may end a sentence: the characters of UAX #29's Sentence_Break classes ATerm, STerm (the
 * Sentence_Terminal property), Sep, CR and LF. Rules SB4 and SB11 are the only ones that break
 * inside a text, each after one of these: a text with none is one sentence, as ICU finds it.
 */
const SENTENCE_ENDS = /[\p{Sentence_Terminal}.\u2024\uFE52\uFF0E\n\r\u0085\u2028\u2029]/u;

/** Slices of a long segment's start that {@link segmentsFrom} keeps before joining them into one string. */
const HEAD_PARTS = 32;

/**
 * The segments of `text`, as strings. ICU gives every segment object its own copy of the whole
 * input, so segmenting N code units into K segments costs K × N: the text is segmented in slices
 * of {@link SEGMENT_CHUNK_CHARS} (each slice's last segment, which may go on, carried into the
 * next), and only the segment strings are kept. A carried segment longer than a slice (a sentence
 * with no end) is not segmented again whole with every slice, which made the time quadratic
 * (a 3 MB paragraph: 12 s): only its last slice is, the rest kept aside as its start, so each
 * code unit is segmented at most about twice. Memory and time follow the text's length.
 * Boundaries inside a segment's start, over a slice behind, are final: UAX #29 decides a boundary
 * from a few characters around it, which the kept slice is segmented with
 * ({@link SEGMENT_CONTEXT_CHARS} of the start before it, where no boundary is taken: "x.Yz" is
 * no sentence end, SB7, nor "can't" two words, WB6), unless a run of one class (spaces, closing
 * brackets, combining marks, regional indicators) outgrows that.
 * @returns the segments in order; joined, they give `text` back.
 */
export function segmentsOf(text: string, kind: 'sentence' | 'word' | 'grapheme'): string[] {
  if (text.length <= SEGMENT_CHUNK_CHARS) return Array.from(segmenter(kind).segment(text), (s) => s.segment);
  return [...segmentsFrom([text], kind)];
}

/** A piece of a segment ({@link segmentPieces}): a segment is one piece or more, its last one `ends` it. */
export interface SegmentPiece {
  text: string;
  /** True for a segment's last piece. */
  ends: boolean;
}

/**
 * The segments {@link segmentsOf} finds in the text of `blocks` (one after the other), handed
 * on as they are found: a text of 60 MB is never one string, nor its segments one array. The
 * text is sliced where {@link segmentsOf} slices the whole, whatever the blocks.
 * @param blocks the text, in blocks of any size (a block never splits a surrogate pair).
 */
export function* segmentsFrom(blocks: Iterable<string>, kind: 'sentence' | 'word' | 'grapheme'): Generator<string, void, undefined> {
  /** The start of the segment being read, in pieces (joined once). */
  const head: string[] = [];
  /** Pieces of {@link head} already joined (each a string of its own). */
  let joined = 0;
  for (const { text, ends } of segmentPieces(blocks, kind)) {
    if (ends) {
      yield head.length > 0 ? head.splice(0).join('') + text : text;
      joined = 0;
      continue;
    }
    head.push(text);
    // Each piece is a slice of a string segmented, which it keeps whole: joined every so often,
    // the start of a long segment costs its own length, not twice it.
    if (head.length - joined >= HEAD_PARTS) {
      head.push(head.splice(joined).join(''));
      joined = head.length;
    }
  }
}

/**
 * The segments of the text of `blocks` in pieces, as they are found: those of
 * {@link segmentsFrom}, a segment longer than a slice ({@link SEGMENT_CHUNK_CHARS}) in several,
 * so that a reader that needs no segment whole (`--print-text` writing a sentence of 16 MB)
 * never has one.
 * @param blocks the text, in blocks of any size (a block never splits a surrogate pair).
 */
export function* segmentPieces(blocks: Iterable<string>, kind: 'sentence' | 'word' | 'grapheme'): Generator<SegmentPiece, void, undefined> {
  const seg = segmenter(kind);
  const source = blocks[Symbol.iterator]();
  /** Text read and not yet sliced. */
  let pending = '';
  let ended = false;
  /** Reads blocks until more than `units` code units are pending, or the text ends. */
  const fill = (units: number): void => {
    while (!ended && pending.length <= units) {
      const next = source.next();
      if (next.done === true) ended = true;
      else pending += next.value;
    }
  };
  /** The segment being carried into the next slice (its start, beyond its last slice, handed on already). */
  let carry = '';
  /** The end of the carried segment's start, segmented again before `carry` as its context. */
  let context = '';
  // One code unit past the slice tells whether the slice ends the text (and past a surrogate).
  fill(SEGMENT_CHUNK_CHARS + 1);
  while (pending.length > 0) {
    let end = Math.min(pending.length, SEGMENT_CHUNK_CHARS);
    if (end < pending.length && /[\ud800-\udbff]/.test(pending[end - 1] ?? '')) end++;
    const slice = pending.slice(0, end);
    pending = pending.slice(end);
    fill(SEGMENT_CHUNK_CHARS + 1);
    const text = context + carry + slice;
    // Without a sentence end it is one sentence: no call of ICU, whose memory (a copy of the
    // text and of its break iterator for every call) waits for the garbage collector.
    const parts = kind === 'sentence' && !SENTENCE_ENDS.test(text) ? [text] : Array.from(seg.segment(text), (s) => s.segment);
    if (context !== '') {
      // The context is the carried segment's own start: a boundary in it, or where it meets the
      // slice kept, is none.
      let joined = '';
      let taken = 0;
      while (taken < parts.length && joined.length <= context.length) joined += parts[taken++];
      parts.splice(0, taken, joined.slice(context.length));
      context = '';
    }
    carry = pending.length > 0 ? (parts.pop() ?? '') : '';
    for (const part of parts) yield { text: part, ends: true };
    if (carry.length > SEGMENT_CHUNK_CHARS) {
      let cut = carry.length - SEGMENT_CHUNK_CHARS;
      // Never start the slice kept with the second half of a surrogate pair.
      if (/[\udc00-\udfff]/.test(carry[cut] ?? '')) cut--;
      yield { text: carry.slice(0, cut), ends: false };
      let from = Math.max(0, cut - SEGMENT_CONTEXT_CHARS);
      if (/[\udc00-\udfff]/.test(carry[from] ?? '')) from--;
      context = carry.slice(Math.max(0, from), cut);
      carry = carry.slice(cut);
    }
  }
  if (carry !== '') yield { text: carry, ends: true };
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
 * Breaks one unit (a sentence, clause, token or word) into parts that each fit, trying ever finer
 * boundaries: clauses (level 0), white space (1), words inside a token (2), graphemes (3).
 */
function fit(unit: string, maxChars: number, level: number): string[] {
  if (codePointLength(unit) <= maxChars) return [unit];
  let parts: string[];
  if (level === 0) parts = splitClauses(unit);
  else if (level === 1) parts = glue(splitTokens(unit), maxChars);
  else if (level === 2) parts = glue(wordsInside(unit), maxChars);
  else return pack(glue(segmentsOf(unit, 'grapheme'), maxChars), maxChars);
  if (parts.length <= 1) return fit(unit, maxChars, level + 1);
  return pack(
    parts.flatMap((p) => fit(p, maxChars, level + 1)),
    maxChars,
  );
}

/**
 * Joins each part that has nothing to speak but is not whitespace (a full stop, a bracket, an
 * emoji) to the part before it, when both fit in `maxChars` code points: cut alone into a piece of
 * its own, the service would refuse it (`text_string_required`, docs/protocol.md §7), e.g. the `.`
 * left after "This is sentence number 1 here" at `--max-chars 30`. Whitespace is left to
 * {@link pack}. A part that does not fit beside the one before it (a word of exactly `maxChars`
 * and its full stop) stays alone: the piece must keep to the limit first.
 */
function glue(parts: string[], maxChars: number): string[] {
  const out: string[] = [];
  for (const part of parts) {
    if (hasSpeech(part) && !isSpeakable(part)) {
      // To the last part with content, with the whitespace between: "word 😀", not " 😀".
      let k = out.length - 1;
      while (k >= 0 && !hasSpeech(out[k]!)) k--;
      const joined = k < 0 ? undefined : out.slice(k).join('') + part;
      if (joined !== undefined && codePointLength(joined) <= maxChars) {
        out.splice(k, out.length - k, joined);
        continue;
      }
    }
    out.push(part);
  }
  return out;
}

/**
 * Splits after clause punctuation and the white space that follows it: `,;:` only when white
 * space follows (inside a token, "1,234,567", "10:30", "a:b", it is no clause break); the CJK
 * 、，；： always (Japanese and Chinese put no space after them).
 */
function splitClauses(s: string): string[] {
  return s.split(/(?<=[,;:]\s+|[、，；：]\s*)(?=\S)/u);
}

/**
 * Splits at white space, each run of it a part of its own: `"a b  c"` → `["a", " ", "b", "  ",
 * "c"]`. {@link pack} then puts white space with the piece before it without counting it against
 * the limit's cut, so a sentence of exactly `maxChars` and the space after it stay one piece.
 */
function splitTokens(s: string): string[] {
  return s.split(/(\s+)/u).filter((part) => part !== '');
}

/** A letter, combining mark or digit: {@link wordsInside} cuts only between two of these. */
const WORD_CHARACTER = /[\p{L}\p{M}\p{N}]/u;

/**
 * Punctuation that joins the letters or digits on both sides of it into one thing to say, at most
 * three in a row: a time or a ratio (`10:30`), a date (`2024-01-05`), a decimal or a grouped number
 * (`3.14`, `1,234`), a path or a URL (`a/b`, `https://…`, `x.com?a=1&b=2`), an address (`me@host`).
 */
const JOINER = /^[-:.,/'’_@#?=&%+~]{1,3}$/u;

/**
 * The ICU words (UAX #29, Japanese dictionary) of a token with no white space inside, as the parts
 * it may be cut between: two words with a letter, mark or digit on both sides of the boundary
 * (Japanese "午前" | "10:30" | "に") are two parts; a {@link JOINER} between two such words joins
 * them into one (`10` `:` `30` → "10:30"; "1,234,567" and a URL's pieces stay together); any other
 * punctuation — at the token's start or end (`10:30,`, `(10:30)`), brackets, CJK punctuation — is
 * a part of its own, so a number that fits is never cut because the comma after it does not
 * (glue then keeps the punctuation with its neighbour where both fit). Joined, the parts give
 * `token` back.
 */
function wordsInside(token: string): string[] {
  const isWordy = (w: string): boolean => WORD_CHARACTER.test(w);
  // ICU gives each punctuation mark a segment of its own: a run of them ("://") is one here.
  const words: string[] = [];
  for (const w of segmentsOf(token, 'word')) {
    const last = words.at(-1);
    if (last !== undefined && !isWordy(last) && !isWordy(w)) words[words.length - 1] = last + w;
    else words.push(w);
  }
  const parts: string[] = [];
  /** Whether the last part ends in a joiner still waiting for the word after it. */
  let joining = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const before = parts.at(-1);
    const endsInWord = before !== undefined && WORD_CHARACTER.test(lastCodePoint(before));
    const next = words[i + 1];
    if (joining) {
      parts[parts.length - 1] = before! + word;
      joining = false;
    } else if (endsInWord && !isWordy(word) && JOINER.test(word) && next !== undefined && WORD_CHARACTER.test(String.fromCodePoint(next.codePointAt(0)!))) {
      parts[parts.length - 1] = before + word;
      joining = true;
    } else {
      parts.push(word);
    }
  }
  return parts;
}

/** The last code point of a non-empty string, as a string. */
function lastCodePoint(s: string): string {
  const last = s.charCodeAt(s.length - 1);
  return last >= 0xdc00 && last <= 0xdfff && s.length > 1 ? s.slice(-2) : s.slice(-1);
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
