/**
 * Turns the text of a job into what eSpeak NG should read (docs/cli.md §5).
 *
 * eSpeak NG's `ja` voice reads kana and ASCII digits, but it reads every kanji as "Chinese letter"
 * and spells Latin words letter by letter. So for Japanese text we
 * 1. NFKC-normalize (full-width Ａ１ → A1, half-width ｶﾅ → カナ),
 * 2. replace kanji by their readings from kuromoji's IPADIC morphological analysis — only when the
 *    text has kanji, because loading the dictionary costs ~55 ms and ~70 MiB,
 * 3. cut Latin-letter runs out, to be read by the English voice of the same gender.
 * English text is only NFKC-normalized.
 *
 * Sources: kuromoji.js (https://github.com/takuyaa/kuromoji.js) with IPADIC features
 * `pronunciation` (katakana as spoken: 今日は → キョー ワ) and `reading` (katakana as written:
 * キョウ ハ); Unicode UAX #15 (NFKC) and the Han script property (UAX #24).
 */
import {
  buildTokenizer,
  compactDictionaryDir,
  packageDictionaryDir,
  tokenizerFromShared,
  type DictionarySource,
  type JapaneseTokenizer,
  type SharedDictionary,
} from './kuromoji-dictionary.js';
import type kuromoji from 'kuromoji';
import type { Language } from '../protocol/types.js';
import { lengthenSinoJapaneseE } from './japanese-long-vowels.js';
import { toHiragana, toKatakana } from './kana.js';
import { containsKanji, HAN } from './han.js';
import { DIGITS_BEFORE_LATIN, readAllNumbers } from './japanese-numbers.js';
import { contextReadings } from './japanese-readings.js';
import { readEnglishRates } from './english-units.js';
import { retriedOnce } from './retried-once.js';

/** A piece of text and the language eSpeak NG reads it in. */
export interface SpeechSegment {
  /** `ja` → eSpeak's Japanese voice, `en` → its US English voice (same gender variant). */
  language: Language;
  /** Text handed to the synthesizer: for `ja`, kana, digits and punctuation, never kanji. */
  text: string;
  /**
   * The synthesizer that spoke it, in a job's report (worker.ts): `flite` or `espeak` (`espeak`
   * also when Flite was preferred but could not speak). Absent before synthesis.
   */
  engine?: 'flite' | 'espeak' | 'package';
}

export type { JapaneseTokenizer } from './kuromoji-dictionary.js';

/** Every Han character of a text (han.ts). */
const HAN_GLOBAL = new RegExp(HAN.source, 'gu');

export { containsKanji };

let tokenizerLoaded = false;
let tokenizerSource: DictionarySource | 'shared' | undefined;
let sharedProvider: (() => Promise<SharedDictionary>) | undefined;

/**
 * Makes {@link loadTokenizer} build on a dictionary shared by the whole process, from `provider`
 * (worker.ts asks the pool for it when the pool has several workers, or shares its dictionary with
 * one: EngineOptions.shareDictionary), before reading files
 * itself; when the provider fails, the files are read as usual.
 */
export function useSharedDictionary(provider: () => Promise<SharedDictionary>): void {
  sharedProvider = provider;
}
let tokenizerLoadMs: number | undefined;

/**
 * Loads kuromoji with the IPADIC dictionary, once per thread; later calls return the same
 * tokenizer. Reads the compact copy `npm install` wrote (dist/kuromoji-dict/, ~55 ms and ~70 MiB;
 * kuromoji-dictionary.ts), else — or when that copy cannot be read — the gzipped files shipped
 * inside the `kuromoji` package. A failed load is not cached, so a later call retries.
 * @throws Error when neither copy of the dictionary can be read.
 */
export function loadTokenizer(): Promise<JapaneseTokenizer> {
  return tokenizerOnce();
}

const tokenizerOnce = retriedOnce(async (): Promise<JapaneseTokenizer> => {
  const started = performance.now();
  const compact = compactDictionaryDir();
  let tokenizer: JapaneseTokenizer | undefined;
  if (sharedProvider !== undefined) {
    tokenizerSource = 'shared';
    const provider = sharedProvider;
    tokenizer = await provider().then(tokenizerFromShared).catch(() => undefined);
  }
  if (tokenizer === undefined && compact !== undefined) {
    tokenizerSource = 'unpacked';
    // An unreadable compact copy is no reason to fail: the package's own files still are there.
    tokenizer = await buildTokenizer(compact, 'unpacked').catch(() => undefined);
  }
  if (tokenizer === undefined) {
    tokenizerSource = 'gzip';
    tokenizer = await buildTokenizer(packageDictionaryDir(), 'gzip');
  }
  tokenizerLoaded = true;
  tokenizerLoadMs = performance.now() - started;
  return tokenizer;
});

/**
 * Where this thread's tokenizer came from: the process's shared dictionary, the unpacked files or
 * the gzipped ones (undefined before loading).
 */
export function dictionarySource(): DictionarySource | 'shared' | undefined {
  return tokenizerSource;
}

/**
 * Whether this thread has loaded kuromoji's dictionary (observable so tests can check that kana
 * and English text never pay for it).
 */
export function isTokenizerLoaded(): boolean {
  return tokenizerLoaded;
}

/** Milliseconds the dictionary load took in this thread, or undefined if it was never loaded. */
export function tokenizerLoadTime(): number | undefined {
  return tokenizerLoadMs;
}

/**
 * Replaces every kanji of `text` by its katakana reading, using `tokenizer`.
 *
 * Per token: its reading from {@link tokenReadings} (a context rule's, else IPADIC's
 * `pronunciation`: particle は → ワ, 東京 → トーキョー, else its `reading`; 先生 センセー), else — for
 * an unknown word with kanji — each Han character looked up alone (礼 レー) (々 repeats the previous kanji's reading);
 * whatever still has no reading is dropped, so eSpeak never says "Chinese letter". Kana tokens
 * also take their pronunciation (は → ワ, へ → エ). Tokens without a reading (digits, Latin
 * words, punctuation, spaces) are kept as they are. Tokens are joined without spaces: eSpeak
 * pauses at spaces, which Japanese does not write.
 */
export function kanjiToKana(text: string, tokenizer: JapaneseTokenizer): string {
  let out = '';
  let lastKanjiReading = '';
  const tokens = tokenizer.tokenize(text);
  const readings = tokenReadings(tokens, tokenizer);
  tokens.forEach((token, i) => {
    const surface = token.surface_form;
    const spoken = readings[i];
    if (!containsKanji(surface)) {
      // Kana words take their pronunciation; anything else (digits, Latin, symbols) stays.
      out += spoken !== undefined && /^[\p{Script=Hiragana}\p{Script=Katakana}ー]+$/u.test(surface) ? spoken : surface;
      return;
    }
    if (spoken !== undefined) {
      out += spoken;
      // A lone 々 after a one-kanji word repeats it (人 々 → ヒトヒト); after a longer word the
      // reading of its last kanji is unknown, and repeating the whole word would be wrong.
      lastKanjiReading = [...surface].length === 1 ? spoken : '';
      return;
    }
    for (const ch of surface) {
      if (!containsKanji(ch)) {
        out += ch;
        continue;
      }
      const alone = ch === '々' ? lastKanjiReading : readingOfCharacter(ch, tokenizer);
      if (alone !== undefined && alone !== '') {
        out += alone;
        lastKanjiReading = alone;
      }
    }
  });
  return out;
}

/**
 * How each of a sentence's kuromoji `tokens` (from `tokenizer`, in order) is read aloud, as kana
 * for eSpeak NG: the reading a context rule decides from its neighbours (japanese-readings.ts:
 * 店が開いて アイテ, 食事の後 アト, 一日中 ジュー), else IPADIC's pronunciation, else its reading,
 * with a long e where a kanji's on'yomi ends in エイ (japanese-long-vowels.ts: 先生 センセー);
 * undefined where none is usable (an unknown word: see {@link kanjiToKana}). The spoken text and
 * the words' readings (japanese-words.ts) both take it, so a word is timed as it is said.
 */
export function tokenReadings(tokens: readonly kuromoji.IpadicFeatures[], tokenizer: JapaneseTokenizer): (string | undefined)[] {
  const context = contextReadings(tokens, (surface) => tokenizer.tokenize(surface));
  return tokens.map((token, i) => spokenAs(token.surface_form, context[i] ?? usableReading(token.pronunciation) ?? usableReading(token.reading)));
}

/** `reading` of the word written `surface` with the long e of its Sino-Japanese syllables (japanese-long-vowels.ts). */
function spokenAs(surface: string, reading: string | undefined): string | undefined {
  return reading === undefined ? undefined : lengthenSinoJapaneseE(surface, reading);
}

/** A kuromoji reading usable for eSpeak: defined, not IPADIC's '*' placeholder, without Han. */
function usableReading(reading: string | undefined): string | undefined {
  if (reading === undefined || reading === '' || reading === '*' || containsKanji(reading)) return undefined;
  return reading;
}

/** Readings of lone Han characters that IPADIC only knows inside words. */
const LONE_HAN_READINGS: Readonly<Record<string, string>> = { '〇': 'ゼロ' };

function readingOfCharacter(ch: string, tokenizer: JapaneseTokenizer): string | undefined {
  const fixed = LONE_HAN_READINGS[ch];
  if (fixed !== undefined) return fixed;
  const tokens = tokenizer.tokenize(ch);
  if (tokens.length !== 1) return undefined;
  return spokenAs(ch, usableReading(tokens[0]!.pronunciation) ?? usableReading(tokens[0]!.reading));
}

/**
 * Fixes for characters and notations eSpeak NG's `ja` voice misreads (measured with its IPA
 * output): small ヵ ヶ ゎ ヮ and ・ are "Japanese letter", kana iteration marks ゝゞヽヾ are
 * silent, "~" is read in English as "tilde", "%" as "percent", 1,000 as "いち せん" and 3.14 as
 * "さん じゅうよん". Applied to Japanese segments only.
 */
export function fixKanaForEspeak(text: string): string {
  return (
    text
      .replace(/[ヵゕ]/g, 'カ')
      .replace(/[ヶゖ]/g, 'ケ')
      .replace(/ゎ/g, 'わ')
      .replace(/ヮ/g, 'ワ')
      // Iteration marks repeat the previous kana; the voiced ones voice it.
      .replace(/(.)([ゝヽ])/gu, (_m, prev: string) => prev + prev)
      .replace(/(.)([ゞヾ])/gu, (_m, prev: string) => prev + voiced(prev))
      .replace(/[ゝゞヽヾ]/g, '')
      .replace(/・/g, ' ')
      .replace(/(\d),(?=\d{3}(?!\d))/g, '$1')
      .replace(/(\d+)\.(\d+)/g, (_m, int: string, frac: string) => `${int}テン${[...frac].join(' ')}`)
      .replace(/(\d)\s*[~〜]\s*(?=\d)/g, '$1カラ')
      .replace(/~/g, '〜')
      .replace(/%/g, 'パーセント')
      // A prolonged-sound mark with no kana before it is read as "Japanese letter"; so are a
      // second one (すごーーい: one is kept, as Sudachi's normalizer does), one after ン or ッ
      // (うーんー, あっー) and one after a vowel letter that follows a kana of the same vowel
      // (ねえー, なぁー, and across words: 一人で映画 デ|エーガ, 育ちも大阪 モ|オーサカ), where it
      // becomes that vowel's letter, so the mora stays: デエエガ, said [de:ega] (eSpeak NG 1.51:
      // デエーガ → "t'e (en)Japanese letter 'e (en)Japanese letter k'a …").
      .replace(/(^|[^\p{Script=Hiragana}\p{Script=Katakana}ー])ー+/gu, '$1')
      .replace(/ー{2,}/g, 'ー')
      .replace(/([んンっッ])ー/g, '$1')
      .replace(/(\p{Script=Hiragana}|\p{Script=Katakana})([ぁ-ぉァ-ォ]|[あいうえおアイウエオ])ー/gu, (m: string, before: string, vowel: string) => {
        const row = vowelOf(before);
        if (row === undefined || row !== vowelOf(vowel)) return m;
        const letter = 'あいうえお'[row]!;
        return before + vowel + (/\p{Script=Katakana}/u.test(vowel) ? toKatakana(letter) : letter);
      })
  );
}

/** Kana by the vowel they end in (hiragana; kana.ts turns katakana into them), for {@link vowelOf}. */
const KANA_BY_VOWEL: readonly string[] = [
  'あぁかがさざただなはばぱまやゃらわゎ',
  'いぃきぎしじちぢにひびぴみりゐ',
  'うぅくぐすずつづぬふぶぷむゆゅるゔ',
  'えぇけげせぜてでねへべぺめれゑ',
  'おぉこごそぞとどのほぼぽもよょろを',
];

/** The vowel (0–4: a i u e o) a kana ends in, undefined for ん, っ and anything else. */
function vowelOf(kana: string): number | undefined {
  const hiragana = toHiragana(kana);
  const row = KANA_BY_VOWEL.findIndex((r) => r.includes(hiragana));
  return row < 0 ? undefined : row;
}

function voiced(kana: string): string {
  const composed = (kana + '\u3099').normalize('NFC');
  return composed.length === 1 ? composed : kana;
}

/**
 * A Latin-letter word: letters, then letters/digits, with inner ' ’ . - & (Node.js, don't,
 * AT&T, e-mail) but not a trailing one; or a number glued to Latin letters (5G, 3D, 3LDK, an
 * English ordinal 20th: the English voice says "five G", "twentieth"; japanese-numbers.ts
 * GLUED_NUMBER). Found in text whose numbers are read, where any digits left before letters are
 * such a number (japanese-numbers.ts DIGITS_BEFORE_LATIN): a unit the reader knows is kana by
 * then (5km, 2GB), and the context that kept a letter from being a unit may be too (W杯 → Wハイ).
 * After NFKC, full-width letters are ASCII already.
 */
const LATIN_WORD = String.raw`(?:${DIGITS_BEFORE_LATIN}|\p{Script=Latin})(?:[\p{Script=Latin}\d]|['’.\-&](?=[\p{Script=Latin}\d]))*`;
/**
 * Latin words separated by spaces or a comma stay one run, so English phrases keep their prosody;
 * digits after a word and a space are its model number (iPhone 15, Windows 11 Pro), which the
 * number reader left as digits for the English voice (japanese-numbers.ts: any other number there
 * is kana by now). Global: reset lastIndex or use matchAll.
 */
export const LATIN_RUN = new RegExp(`${LATIN_WORD}(?:(?:[ \\t]+|[ \\t]*,[ \\t]*)${LATIN_WORD}|[ \\t]+\\d+)*`, 'gu');
/** Something eSpeak will say: a letter or digit of any script (punctuation alone is silence). */
const SPEAKABLE = /[\p{L}\p{N}]/u;

/**
 * Splits Japanese text into Japanese pieces and Latin-letter runs (`en`), in order:
 * "東京でPythonを書く" → [ja "東京で", en "Python", ja "を書く"]. Pieces with nothing speakable
 * (only spaces or punctuation) are dropped; eSpeak pauses at each segment's end anyway. Two runs
 * of one language joined over a dropped piece keep a space between them ("Tom & Jerry" →
 * en "Tom Jerry").
 */
export function splitLatinRuns(text: string): SpeechSegment[] {
  const segments: SpeechSegment[] = [];
  // A piece dropped between two runs of one language (`Tom & Jerry`: the ` & `) leaves a space,
  // or the runs' words would be glued into one (`TomJerry`), misread and untimed (word-timings.ts).
  let dropped = false;
  const push = (language: Language, piece: string): void => {
    if (!SPEAKABLE.test(piece)) {
      dropped ||= piece.length > 0;
      return;
    }
    const last = segments[segments.length - 1];
    if (last !== undefined && last.language === language) last.text += dropped && !/\s$/u.test(last.text) && !/^\s/u.test(piece) ? ` ${piece}` : piece;
    else segments.push({ language, text: piece });
    dropped = false;
  };
  let at = 0;
  for (const match of text.matchAll(LATIN_RUN)) {
    push('ja', text.slice(at, match.index));
    push('en', match[0]);
    at = match.index + match[0].length;
  }
  push('ja', text.slice(at));
  return segments;
}

/**
 * The segments eSpeak NG reads for a job's `text` in `language`, in order.
 * - `en`: the NFKC-normalized text as one English segment.
 * - `ja`: NFKC; numbers with their counters, in kanji numerals or digits, read out in katakana
 *   (japanese-numbers.ts: kanji numerals found by kuromoji's analysis, so text with kanji loads
 *   it); if the text had kanji, kuromoji readings replace them, decided in context where IPADIC's
 *   are wrong (japanese-readings.ts; kuromoji is loaded on first use — never for text without
 *   kanji); Latin-letter runs
 *   become English segments; the rest gets {@link fixKanaForEspeak}.
 * Returns [] when nothing is speakable (e.g. only punctuation).
 * @throws Error when kuromoji's dictionary cannot be loaded.
 */
export async function speechSegments(text: string, language: Language): Promise<SpeechSegment[]> {
  let normalized = text.normalize('NFKC');
  // English: units per second said in words (english-units.ts); the rest as Flite reads it.
  if (language === 'en') return SPEAKABLE.test(normalized) ? [{ language: 'en', text: readEnglishRates(normalized).text }] : [];
  // Decided on the text as written: when the number rules below read out its only kanji (3月14日
  // は…), kuromoji is still needed for the particles (は → ワ).
  const hadKanji = containsKanji(normalized);
  // Ranges (3〜5 → 3から5) and numbers with their counters — in kanji numerals as kuromoji's
  // analysis finds them, then in digits — before kuromoji reads the rest.
  const tokenizer = hadKanji ? await loadTokenizer() : undefined;
  normalized = readAllNumbers(normalized, tokenizer).text;
  const kana = tokenizer !== undefined ? kanjiToKana(normalized, tokenizer) : normalized;
  return splitLatinRuns(kana)
    .map((s): SpeechSegment => (s.language === 'ja' ? { language: 'ja', text: fixKanaForEspeak(s.text).replace(HAN_GLOBAL, '') } : s))
    .filter((s) => SPEAKABLE.test(s.text));
}
