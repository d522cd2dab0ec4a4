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
 * - Either way, the words of a number take the reading the number reader gives it in the spoken
 *   text (japanese-numbers.ts readAllNumbers, told in the text's offsets): 5日 イツカ, 3-5日
 *   サンカラ|イツカ, 03-1234-5678 ゼロサンノ|イチニーサンヨンノ|…, 2024-01-05 by year, month and day.
 *
 * Their times come from eSpeak NG's phoneme events (japanese-timings.ts). When eSpeak reported no
 * phonemes, a stretch's sounding time is shared among its words by estimated morae
 * ({@link spreadWords}: each inner boundary moved into a pause within {@link GAP_SEARCH} sounding
 * frames, else to the quietest 5 ms frame within {@link SNAP_FRAMES} frames).
 */
import type { JapaneseTokenizer } from './kuromoji-dictionary.js';
import { fixKanaForEspeak, kanjiToKana, LATIN_RUN, tokenReadings } from './japanese.js';
import { readAllNumbers, readNumbers } from './japanese-numbers.js';
import type { Rewrite, SourceRange } from './mapped-text.js';
import { ENVELOPE_FRAME, SILENCE_PEAK, type EnergyEnvelope, type PieceWord, type TextToken } from './word-timings.js';

/** A stretch of (NFKC) text read in one language: a Latin run (`en`) or what lies between (`ja`). */
export interface Stretch {
  language: 'ja' | 'en';
  start: number;
  end: number;
}

/** Something spoken: a letter or digit. */
const SPEAKABLE = /[\p{L}\p{N}]/u;

/**
 * `text` (NFKC-normalized Japanese) cut as japanese.ts speechSegments cuts it: Latin runs and
 * the stretches between, those with nothing speakable left out, neighbours of one language merged.
 * The Latin runs are found as speechSegments finds them, after the numbers are read: `numbers`
 * (the stretches the number reader rewrote, japanese-numbers.ts readAllNumbers) are Japanese,
 * with what they read after a number (5km, 30°C), and a Latin word ends where one begins (A-3:
 * the 3 is read サン, the A is a run of its own).
 */
export function stretches(text: string, numbers: readonly SourceRange[]): Stretch[] {
  const out: Stretch[] = [];
  const push = (language: 'ja' | 'en', start: number, end: number): void => {
    if (!SPEAKABLE.test(text.slice(start, end))) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.language === language) last.end = end;
    else out.push({ language, start, end });
  };
  // Each number read becomes kana, which no Latin run takes in: the same length of kana here.
  let masked = '';
  let copied = 0;
  for (const n of numbers) {
    masked += text.slice(copied, n.start) + 'ア'.repeat(n.end - n.start);
    copied = n.end;
  }
  masked += text.slice(copied);
  let at = 0;
  for (const m of masked.matchAll(LATIN_RUN)) {
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
 * tokens when `tokenizer` is given, else ICU word segments; `numbers` are the stretches of `text`
 * the number reader rewrites (japanese-numbers.ts readAllNumbers, the default), whose readings the
 * words there take. Ranges are UTF-16 offsets of `text`.
 */
export function japaneseTokens(
  text: string,
  start: number,
  end: number,
  tokenizer: JapaneseTokenizer | undefined,
  numbers: readonly Rewrite[] = readAllNumbers(text, tokenizer).rewritten(),
): JapaneseToken[] {
  if (tokenizer === undefined) {
    // A number in digits is said as the number reader reads it (5さい ゴサイ), as in the spoken text.
    const words = japaneseWords(text, start, end);
    const read = numberReadings(numbers, words, text, words.map(() => undefined));
    return words.map((t, i) => ({ ...t, reading: fixKanaForEspeak(read[i] ?? text.slice(t.start, t.end)).replace(HAN, '') }));
  }
  const slice = text.slice(start, end);
  const out: JapaneseToken[] = [];
  let at = 0;
  let joinable = false;
  const tokens = tokenizer.tokenize(slice);
  const readings = tokenReadings(tokens, tokenizer);
  // Where each token is in `text` (undefined for one not found, which is left out).
  const ranges: (TextToken | undefined)[] = [];
  for (const token of tokens) {
    const found = slice.indexOf(token.surface_form, at);
    ranges.push(found < 0 ? undefined : { start: start + found, end: start + found + token.surface_form.length });
    if (found >= 0) at = found + token.surface_form.length;
  }
  // A number the number reader reads (二十歳 ハタチ, 5日 イツカ) is said as one: its tokens share that reading.
  const found = ranges.flatMap((r, i) => (r === undefined ? [] : [{ ...r, i }]));
  const read = numberReadings(
    numbers,
    found,
    text,
    found.map(({ i }) => readings[i]),
  );
  const numberReading: (string | undefined)[] = tokens.map(() => undefined);
  found.forEach(({ i }, k) => (numberReading[i] = read[k]));
  for (const [i, token] of tokens.entries()) {
    const surface = token.surface_form;
    const range = ranges[i];
    if (range === undefined) continue;
    if (!SPEAKABLE.test(surface)) {
      joinable = false;
      continue;
    }
    // As japanese.ts kanjiToKana reads it: the number reader's reading, the context's or IPADIC's
    // (tokenReadings), else (an unknown word) each kanji looked up alone.
    const spoken = numberReading[i] ?? readings[i] ?? kanjiToKana(surface, tokenizer);
    const reading = fixKanaForEspeak(spoken).replace(HAN, '');
    const last = out[out.length - 1];
    if (joinable && last !== undefined && token.pos === '助動詞' && last.end === range.start) {
      last.end = range.end;
      last.reading += reading;
    } else if (last !== undefined && continuesNumber(text.slice(last.start, last.end), text.slice(last.end, range.start), surface)) {
      // 1,000,000 and 3.14 are one word each, as in English, though IPADIC cuts them at , and .
      last.end = range.end;
      last.reading += reading;
    } else out.push({ ...range, reading });
    joinable = true;
  }
  return out;
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
 * The readings the number reader gives the words of a stretch (`tokens`: UTF-16 ranges of `text`,
 * in order; `own[i]` token i's reading without it, IPADIC's, when known): each of `numbers`
 * (japanese-numbers.ts readAllNumbers, the stretches rewritten with their readings) has its
 * reading cut into kana units shared among the tokens with a letter or digit that overlap it, in
 * order, in proportion to the units of their own readings (ハタチ over 二|十|歳 → ハ|タ|チ; a
 * token only partly in it by the part inside), at least one each while there are enough; so the
 * words are timed by the phonemes said, the boundaries before and after the number exact, those
 * inside it estimated. A token a number overlaps reads its shares, in order, and the letters and
 * digits no number covers as written (a word longer than the number keeps the rest). Other
 * tokens: undefined.
 */
function numberReadings(numbers: readonly Rewrite[], tokens: readonly TextToken[], text: string, own: readonly (string | undefined)[]): (string | undefined)[] {
  const parts: { at: number; text: string }[][] = tokens.map(() => []);
  const covered: SourceRange[][] = tokens.map(() => []);
  for (const n of numbers) {
    // Only the tokens said share the reading: a "," or "-" inside a number is never a word.
    const said: number[] = [];
    tokens.forEach((t, i) => {
      if (t.start < n.end && t.end > n.start && SPEAKABLE.test(text.slice(t.start, t.end))) said.push(i);
    });
    if (said.length === 0) continue;
    const units = n.text.match(KANA_UNIT) ?? [];
    // A token's own reading weighs its share; digits, which IPADIC does not read, by theirs (1 イチ).
    const weights = said.map((i) => {
      const t = tokens[i]!;
      const inside = text.slice(Math.max(t.start, n.start), Math.min(t.end, n.end));
      const whole = t.start >= n.start && t.end <= n.end;
      const reading = (whole ? own[i] : undefined) ?? (/^\d+$/u.test(inside) ? readNumbers(inside) : inside);
      return Math.max(1, reading.match(KANA_UNIT)?.length ?? 1);
    });
    const total = weights.reduce((a, b) => a + b, 0);
    const count = weights.length;
    let cut = 0;
    let sum = 0;
    weights.forEach((w, k) => {
      sum += w;
      const next = k === count - 1 ? units.length : Math.min(units.length - (count - 1 - k), Math.max(cut + 1, Math.round((units.length * sum) / total)));
      const i = said[k]!;
      parts[i]!.push({ at: Math.max(n.start, tokens[i]!.start), text: units.slice(cut, Math.max(cut, next)).join('') });
      covered[i]!.push({ start: n.start, end: n.end });
      cut = Math.max(cut, next);
    });
  }
  return tokens.map((t, i) => {
    if (parts[i]!.length === 0) return undefined;
    // The token's characters outside every number, as written.
    for (let c = t.start; c < t.end; ) {
      const inside = covered[i]!.find((r) => r.start <= c && c < r.end);
      if (inside !== undefined) {
        c = inside.end;
        continue;
      }
      let e = c + 1;
      while (e < t.end && !covered[i]!.some((r) => r.start <= e && e < r.end)) e++;
      parts[i]!.push({ at: c, text: text.slice(c, e).replace(/[^\p{L}\p{N}]/gu, '') });
      c = e;
    }
    return parts[i]!.sort((a, b) => a.at - b.at).map((p) => p.text).join('');
  });
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
