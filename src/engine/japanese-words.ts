/**
 * The words of Japanese text (issue 23 point 1, docs/cli.md §12.1), which eSpeak NG reads as
 * kana without spaces and so times as one "word" per clause.
 *
 * - Text with kanji (kuromoji loaded for its readings anyway): the words are kuromoji's IPADIC
 *   tokens of the text as written, an auxiliary verb (助動詞: ます, た, です…) joined to the token
 *   before it (書き|ます → 書きます), a number IPADIC cuts at `,` or `.` one word (1,000,000,
 *   3.14), symbols and spaces left out; a word's reading is the one
 *   the spoken text takes (japanese.ts tokenReadings: decided in context, else its pronunciation,
 *   は → ワ), or for an unknown word its kanji read one by one (kanjiToKana).
 * - Kana-only text (no dictionary load, ~55 ms and ~70 MiB, for it): the word-like segments of
 *   ICU's dictionary-based word boundaries (`Intl.Segmenter('ja')`, as the subtitles' line
 *   breaking uses); a word's reading is its own kana.
 *
 * Their times come from eSpeak NG's phoneme events (japanese-timings.ts). When eSpeak reported no
 * phonemes, a stretch's sounding time is shared among its words by estimated morae
 * ({@link spreadWords}: each inner boundary moved into a pause within {@link GAP_SEARCH} sounding
 * frames, else to the quietest 5 ms frame within {@link SNAP_FRAMES} frames).
 */
import type { JapaneseTokenizer } from './kuromoji-dictionary.js';
import { fixKanaForEspeak, kanjiToKana, LATIN_RUN, tokenReadings } from './japanese.js';
import { digitNumberReadings, kanjiNumeralReadings, readNumbers, type NumberReading } from './japanese-numbers.js';
import { ENVELOPE_FRAME, SILENCE_PEAK, type EnergyEnvelope, type PieceWord, type TextToken } from './word-timings.js';

/** A stretch of (NFKC) text read in one language: a Latin run (`en`) or what lies between (`ja`). */
export interface Stretch {
  language: 'ja' | 'en';
  start: number;
  end: number;
}

/** The Latin units japanese-numbers.ts reads after a number. */
const LATIN_UNITS = new Set(['km', 'kg', 'cm', 'mm', 'm', 'g', 'L']);

/** Something spoken: a letter or digit. */
const SPEAKABLE = /[\p{L}\p{N}]/u;

/**
 * `text` (NFKC-normalized Japanese) cut as japanese.ts splitLatinRuns cuts it: Latin runs and
 * the stretches between, those with nothing speakable left out, neighbours of one language merged.
 */
export function stretches(text: string): Stretch[] {
  const out: Stretch[] = [];
  const push = (language: 'ja' | 'en', start: number, end: number): void => {
    if (!SPEAKABLE.test(text.slice(start, end))) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.language === language) last.end = end;
    else out.push({ language, start, end });
  };
  let at = 0;
  for (const m of text.matchAll(LATIN_RUN)) {
    // A unit after a number (5km, 30°C) is read with it in katakana (japanese-numbers.ts): Japanese.
    const before = text.slice(Math.max(0, m.index - 3), m.index);
    if ((LATIN_UNITS.has(m[0]) && /\d[ \t]?$/.test(before)) || (m[0] === 'C' && /\d[ \t]?°$/.test(before))) continue;
    push('ja', at, m.index);
    push('en', m.index, m.index + m[0].length);
    at = m.index + m[0].length;
  }
  push('ja', at, text.length);
  return out;
}

let segmenter: Intl.Segmenter | undefined;

/** Word-like segments of `text` between `start` and `end` (UTF-16 ranges of `text`). */
export function japaneseWords(text: string, start: number, end: number): TextToken[] {
  segmenter ??= new Intl.Segmenter('ja', { granularity: 'word' });
  const words: TextToken[] = [];
  for (const s of segmenter.segment(text.slice(start, end))) {
    if (s.isWordLike === true && SPEAKABLE.test(s.segment)) words.push({ start: start + s.index, end: start + s.index + s.segment.length });
  }
  return words;
}

/** A Japanese word: its UTF-16 range in the text and the kana eSpeak NG says for it ('' if none). */
export interface JapaneseToken extends TextToken {
  reading: string;
}

/** Han characters (no reading of their own to give eSpeak). */
const HAN = /\p{Script=Han}/gu;

/**
 * The words of `text` (NFKC) between `start` and `end`, as the module comment says: kuromoji
 * tokens when `tokenizer` is given, else ICU word segments. Ranges are UTF-16 offsets of `text`.
 */
export function japaneseTokens(text: string, start: number, end: number, tokenizer: JapaneseTokenizer | undefined): JapaneseToken[] {
  if (tokenizer === undefined) {
    // A number in digits is said as the number reader reads it (5さい ゴサイ), as in the spoken text.
    const words = japaneseWords(text, start, end);
    const surfaces = words.map((w) => ({ surface_form: text.slice(w.start, w.end) }));
    const numbers = numberReadings(digitNumberReadings(text.slice(start, end)), surfaces, words.map((w) => w.start - start), surfaces.map(() => undefined));
    return words.map((t, i) => ({ ...t, reading: fixKanaForEspeak(numbers[i] ?? text.slice(t.start, t.end)).replace(HAN, '') }));
  }
  const slice = text.slice(start, end);
  const out: JapaneseToken[] = [];
  let at = 0;
  let joinable = false;
  const tokens = tokenizer.tokenize(slice);
  const readings = tokenReadings(tokens, tokenizer);
  const starts: number[] = [];
  for (const token of tokens) {
    const found = slice.indexOf(token.surface_form, at);
    starts.push(found);
    if (found >= 0) at = found + token.surface_form.length;
  }
  // A number the number reader reads (二十歳 ハタチ, 5日 イツカ) is said as one: its tokens share that reading.
  const numbers = numberReadings(numbersOf(slice, tokenizer), tokens, starts, readings);
  at = 0;
  for (const [i, token] of tokens.entries()) {
    const surface = token.surface_form;
    const found = starts[i]!;
    if (found < 0) continue;
    at = found + surface.length;
    if (!SPEAKABLE.test(surface)) {
      joinable = false;
      continue;
    }
    // As japanese.ts kanjiToKana reads it: the number reader's reading, the context's or IPADIC's
    // (tokenReadings), else (an unknown word) each kanji looked up alone.
    const spoken = numbers[i] ?? readings[i] ?? kanjiToKana(surface, tokenizer);
    const reading = fixKanaForEspeak(spoken).replace(HAN, '');
    const last = out[out.length - 1];
    if (joinable && last !== undefined && token.pos === '助動詞' && last.end === start + found) {
      last.end = start + at;
      last.reading += reading;
    } else if (last !== undefined && continuesNumber(text.slice(last.start, last.end), text.slice(last.end, start + found), surface)) {
      // 1,000,000 and 3.14 are one word each, as in English, though IPADIC cuts them at , and .
      last.end = start + at;
      last.reading += reading;
    } else out.push({ start: start + found, end: start + at, reading });
    joinable = true;
  }
  return out;
}

/**
 * The stretches of `text` the number reader reads, in order, not overlapping: in kanji numerals
 * ({@link kanjiNumeralReadings}), and in digits ({@link digitNumberReadings}) outside those, as
 * japanese.ts speechSegments reads them (kanji numerals first, then digits).
 */
function numbersOf(text: string, tokenizer: JapaneseTokenizer): NumberReading[] {
  const kanji = kanjiNumeralReadings(text, tokenizer);
  const digits = digitNumberReadings(text).filter((d) => kanji.every((k) => d.end <= k.start || d.start >= k.end));
  return [...kanji, ...digits].sort((a, b) => a.start - b.start);
}

/**
 * Whether digits `surface`, after `between` (nothing, or one `,` or `.`), go on the number `word`
 * ends with: 1|,|000 and 3|.|14 are one number, which IPADIC cuts into tokens.
 */
function continuesNumber(word: string, between: string, surface: string): boolean {
  return /^\d+$/u.test(surface) && /^[.,]?$/u.test(between) && /\d$/u.test(word) && /^[\d.,]+$/u.test(word);
}

/** Small kana, which share a mora with the kana before them. */
const SMALL_KANA = /[ぁぃぅぇぉゃゅょゎァィゥェォャュョヮ]/u;

/** Kana units of a reading: a kana with the small kana, ー, ッ and ン after it (ジュー, サン, ハッ, ビャ|ク). */
const KANA_UNIT = /[^ぁぃぅぇぉゃゅょゎァィゥェォャュョヮーッっンん][ぁぃぅぇぉゃゅょゎァィゥェォャュョヮーッっンん]*|[^]/gu;

/**
 * The readings the number reader gives the tokens of a sentence (`tokens`, each at `starts[i]` in
 * the text, `ipadic[i]` its own reading): for each of `numbers` (japanese-numbers.ts
 * kanjiNumeralReadings) that begins and ends at token boundaries, its reading cut into kana units
 * shared among its tokens in order, in proportion to the units of their own readings (ハタチ over
 * 二|十|歳 → ハ|タ|チ), at least one each while there are enough; so the words are timed by the
 * phonemes said, the boundaries before and after the number exact, those inside it estimated.
 * Other tokens: undefined.
 */
function numberReadings(numbers: readonly NumberReading[], tokens: readonly { surface_form: string }[], starts: readonly number[], ipadic: readonly (string | undefined)[]): (string | undefined)[] {
  const out: (string | undefined)[] = tokens.map(() => undefined);
  for (const { start, end, reading } of numbers) {
    const first = starts.indexOf(start);
    const last = starts.findIndex((s, i) => s >= 0 && s + tokens[i]!.surface_form.length === end);
    if (first < 0 || last < first) continue;
    const units = reading.match(KANA_UNIT) ?? [];
    // Only the tokens said share the reading: a "," or "." inside 1,000,000 is never a word.
    const said: number[] = [];
    for (let i = first; i <= last; i++) if (SPEAKABLE.test(tokens[i]!.surface_form)) said.push(i);
    // A token's own reading weighs its share; digits, which IPADIC does not read, by theirs (1 イチ).
    const own = (r: string | undefined, surface: string): string => r ?? (/^\d+$/u.test(surface) ? readNumbers(surface) : surface);
    const weights = said.map((i) => Math.max(1, own(ipadic[i], tokens[i]!.surface_form).match(KANA_UNIT)?.length ?? 1));
    const total = weights.reduce((a, b) => a + b, 0);
    const n = weights.length;
    let cut = 0;
    let sum = 0;
    weights.forEach((w, k) => {
      sum += w;
      const next = k === n - 1 ? units.length : Math.min(units.length - (n - 1 - k), Math.max(cut + 1, Math.round((units.length * sum) / total)));
      out[said[k]!] = units.slice(cut, Math.max(cut, next)).join('');
      cut = Math.max(cut, next);
    });
  }
  return out;
}

/**
 * Estimated morae of a word as written: a kana 1 (small ゃ-like ones 0), a kanji 2 (most
 * readings have two), a digit 2, a Latin letter ½; at least ½.
 */
export function moraWeight(word: string): number {
  let n = 0;
  for (const ch of word) {
    if (SMALL_KANA.test(ch)) continue;
    if (/[\p{Script=Hiragana}\p{Script=Katakana}ー]/u.test(ch)) n += 1;
    else if (/\p{Script=Han}/u.test(ch)) n += 2;
    else if (/\p{N}/u.test(ch)) n += 2;
    else if (/\p{L}/u.test(ch)) n += 0.5;
  }
  return Math.max(0.5, n);
}

/** Frames (5 ms each) an inner boundary may move to reach a quieter frame: ±30 ms. */
export const SNAP_FRAMES = 6;
/** Sounding frames (5 ms each) around an inner boundary searched for a pause to put it in: ±100 ms. */
export const GAP_SEARCH = 20;

/**
 * Spreads `weights.length` words over the sounding frames of `envelope` (samples 0 to `total`):
 * word i spans the sounding time between the cumulative weights before and after it, inner
 * boundaries snapped to the quietest frame near them; each word is then narrowed to its sound.
 * @returns one entry per word with sound, `token` its index in `weights`.
 */
export function spreadWords(weights: readonly number[], envelope: EnergyEnvelope, total: number): PieceWord[] {
  const peaks = envelope.peaks;
  const sounding: number[] = [];
  peaks.forEach((p, i) => {
    if (p >= SILENCE_PEAK) sounding.push(i);
  });
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sounding.length === 0 || sum <= 0) return [];
  // Frame index where each word starts: the k-th sounding frame at its share of the weight.
  const bounds: number[] = [sounding[0]!];
  let acc = 0;
  for (let i = 0; i < weights.length - 1; i++) {
    acc += weights[i]!;
    const k = Math.min(sounding.length - 1, Math.round((acc / sum) * sounding.length));
    const target = sounding[k]!;
    // A pause (a gap between sounding frames) near the target is where the words part.
    let best = -1;
    for (let d = 0; d <= GAP_SEARCH && best < 0; d++) {
      for (const j of [k - d, k + d]) {
        if (j >= 1 && j < sounding.length && sounding[j]! - sounding[j - 1]! > 2 && sounding[j - 1]! + 1 > bounds[i]!) {
          best = sounding[j - 1]! + 1;
          break;
        }
      }
    }
    if (best < 0) {
      best = target;
      for (let f = Math.max(bounds[i]! + 1, target - SNAP_FRAMES); f <= Math.min(peaks.length - 1, target + SNAP_FRAMES); f++) {
        if (peaks[f]! < peaks[best]!) best = f;
      }
    }
    bounds.push(Math.max(best, bounds[i]! + 1));
  }
  bounds.push(sounding[sounding.length - 1]! + 1);
  const words: PieceWord[] = [];
  for (let i = 0; i < weights.length; i++) {
    const [start, end] = envelope.trim(bounds[i]! * ENVELOPE_FRAME, Math.min(total, bounds[i + 1]! * ENVELOPE_FRAME));
    if (end > start && (words.length === 0 || start >= words[words.length - 1]!.end)) words.push({ token: i, start, end });
  }
  return words;
}
