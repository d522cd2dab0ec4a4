/**
 * SSML `say-as` (W3C SSML 1.1 §3.1.9; the `interpret-as` values of the W3C "SSML say-as"
 * note), rendered to plain text per language before the request (docs/cli.md §11.1 gives the
 * tables): the service only ever sees words, so every service reads them alike. English is
 * written out in words (number-words.ts); Japanese in katakana readings (engine/japanese-numbers.ts
 * gives the counters' sound changes: 3月1日 → サンガツツイタチ).
 */
import { quoteInput, shortenedInput } from '../cli/escape.js';
import { DIGIT, readNumbers } from '../engine/japanese-numbers.js';
import type { Language } from '../protocol/types.js';
import { cardinalWords, DIGIT_WORDS, MAX_CARDINAL, ordinalWords, yearWords } from './number-words.js';
import { collapseWhitespace } from './spans.js';
import { codePointLength, segmentsOf } from './split.js';

/** The `interpret-as` values tts renders. */
export const SAY_AS_KINDS = ['characters', 'spell-out', 'digits', 'cardinal', 'date', 'time', 'telephone'] as const;
/** One of {@link SAY_AS_KINDS}. */
export type SayAsKind = (typeof SAY_AS_KINDS)[number];

/** `date` formats (the say-as note's field orders): d day, m month, y year. */
const DATE_FORMATS = ['mdy', 'dmy', 'ymd', 'md', 'dm', 'ym', 'my', 'y', 'm', 'd'] as const;

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Digits of a Japanese telephone number: 2 and 5 lengthened (ニー, ゴー), as they are read there. */
const JA_PHONE_DIGITS = ['ゼロ', 'イチ', 'ニー', 'サン', 'ヨン', 'ゴー', 'ロク', 'ナナ', 'ハチ', 'キュー'];
/** Latin letter names in katakana, A–Z. */
const JA_LETTERS = ['エー', 'ビー', 'シー', 'ディー', 'イー', 'エフ', 'ジー', 'エイチ', 'アイ', 'ジェー', 'ケー', 'エル', 'エム', 'エヌ', 'オー', 'ピー', 'キュー', 'アール', 'エス', 'ティー', 'ユー', 'ブイ', 'ダブリュー', 'エックス', 'ワイ', 'ゼット'];

/**
 * Longest say-as content, in characters (code points) once its white space is collapsed: a say-as
 * is a date, a number, a code; each character of it may become six (`W` → ダブリュー、), and one
 * element of 16 MB took 0.8 GB to render.
 */
export const MAX_SAY_AS_CHARS = 10_000;

/** A say-as content the renderer cannot read; the message says why (the parser adds where). */
export class SayAsError extends Error {}

/**
 * The content as an error message quotes it: JSON-quoted, cut to 40 characters with `…` — a
 * `say-as` of 100,000 digits must not become a 100 kB message on the terminal.
 */
function shown(content: string): string {
  return JSON.stringify(shortenedInput(content, 40));
}

/**
 * The refusal of say-as content longer than {@link MAX_SAY_AS_CHARS} characters (code points),
 * or undefined when it is not. The parser (text/ssml.ts) asks it of the content read so far, so
 * that an element of megabytes is refused before it is read whole.
 * @param content the content with its white space collapsed and trimmed (as {@link renderSayAs}
 *   makes it); of a longer content, its start so far (the message quotes its first 40 characters).
 */
export function sayAsTooLong(kind: SayAsKind, content: string): SayAsError | undefined {
  // Code units first: a text of more than twice as many cannot have fewer code points.
  if (content.length <= MAX_SAY_AS_CHARS || (content.length <= 2 * MAX_SAY_AS_CHARS && codePointLength(content) <= MAX_SAY_AS_CHARS)) return undefined;
  return new SayAsError(`say-as ${kind}: ${shown(content)} is longer than ${MAX_SAY_AS_CHARS.toLocaleString('en')} characters`);
}

/**
 * Renders one `say-as` element's text content.
 * @param kind the `interpret-as` value (one of {@link SAY_AS_KINDS}).
 * @param format the `format` attribute (`date`: mdy, dmy, ymd (default), md, dm, ym, my, y, m, d;
 *   `time`: hms12 (default for English) or hms24 (default for Japanese)); undefined = the default.
 * @param text the element's content (whitespace collapsed here).
 * @param language the language the content is spoken in.
 * @returns the text to request (never empty).
 * @throws SayAsError for content that is not what `kind` says (`digits` with letters, a month 13),
 *   an unknown `format`, a number beyond 10¹⁵, or content longer than {@link MAX_SAY_AS_CHARS}.
 */
export function renderSayAs(kind: SayAsKind, format: string | undefined, text: string, language: Language): string {
  const content = collapseWhitespace(text).trim();
  if (content === '') throw new SayAsError(`say-as ${kind} has no content`);
  const tooLong = sayAsTooLong(kind, content);
  if (tooLong !== undefined) throw tooLong;
  switch (kind) {
    case 'characters':
    case 'spell-out':
      return characters(content, language);
    case 'digits':
      return digits(content, language);
    case 'cardinal':
      return cardinal(content, language);
    case 'date':
      return date(content, format, language);
    case 'time':
      return time(content, format, language);
    case 'telephone':
      return telephone(content, language);
  }
}

/** Each letter or digit named on its own; other characters (spaces, punctuation) are dropped. */
function characters(content: string, language: Language): string {
  const out: string[] = [];
  for (const g of segmentsOf(content, 'grapheme')) {
    if (/^[0-9]$/u.test(g)) out.push(language === 'ja' ? DIGIT[Number(g)]! : DIGIT_WORDS[Number(g)]!);
    else if (/^[A-Za-z]$/u.test(g)) out.push(language === 'ja' ? JA_LETTERS[g.toUpperCase().charCodeAt(0) - 65]! : g.toUpperCase());
    else if (/^[\p{L}\p{N}]/u.test(g)) out.push(g);
  }
  if (out.length === 0) throw new SayAsError(`say-as characters: ${shown(content)} has no letters or digits`);
  return out.join(language === 'ja' ? '、' : ' ');
}

function digits(content: string, language: Language): string {
  if (!/^[0-9 ]+$/u.test(content)) throw new SayAsError(`say-as digits: ${shown(content)} is not digits`);
  const names = [...content.replace(/ /gu, '')].map((d) => (language === 'ja' ? DIGIT : DIGIT_WORDS)[Number(d)]!);
  return names.join(language === 'ja' ? '' : ' ');
}

/** `-1,234.5` and the like: sign, digits with optional thousands commas, optional decimals. */
function cardinal(content: string, language: Language): string {
  const m = /^([+\-−]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?$/u.exec(content);
  if (m === null) throw new SayAsError(`say-as cardinal: ${shown(content)} is not a number`);
  const whole = m[2]!.replace(/,/gu, '');
  const negative = m[1] === '-' || m[1] === '−';
  if (language === 'ja') {
    // readNumbers reads up to 10¹⁶ with the 万/億/兆 groups; past that, digit by digit.
    const reading = readNumbers(m[3] === undefined ? whole : `${whole}.${m[3]}`);
    return `${negative ? 'マイナス' : ''}${reading}`;
  }
  const n = Number(whole);
  if (n > MAX_CARDINAL) throw new SayAsError(`say-as cardinal: ${shown(content)} is beyond ${MAX_CARDINAL}`);
  const decimals = m[3] === undefined ? '' : ` point ${[...m[3]].map((d) => DIGIT_WORDS[Number(d)]).join(' ')}`;
  return `${negative ? 'minus ' : ''}${cardinalWords(n)}${decimals}`;
}

function date(content: string, format: string | undefined, language: Language): string {
  const order = format ?? 'ymd';
  if (!(DATE_FORMATS as readonly string[]).includes(order)) throw new SayAsError(`say-as date: format "${quoteInput(order)}" is not one of ${DATE_FORMATS.join(', ')}`);
  const fields = content.split(/[-/.\s]+/u);
  if (fields.length !== order.length || !fields.every((f) => /^\d{1,4}$/u.test(f))) throw new SayAsError(`say-as date: ${shown(content)} is not a date of the form ${order}`);
  const value = (letter: string): number | undefined => {
    const at = order.indexOf(letter);
    return at < 0 ? undefined : Number(fields[at]);
  };
  const [y, m, d] = [value('y'), value('m'), value('d')];
  if (m !== undefined && (m < 1 || m > 12)) throw new SayAsError(`say-as date: month ${m} in ${shown(content)}`);
  if (d !== undefined && (d < 1 || d > 31)) throw new SayAsError(`say-as date: day ${d} in ${shown(content)}`);
  if (language === 'ja') return readNumbers(`${y === undefined ? '' : `${y}年`}${m === undefined ? '' : `${m}月`}${d === undefined ? '' : `${d}日`}`);
  const day = d === undefined ? undefined : ordinalWords(d);
  const month = m === undefined ? undefined : MONTHS[m - 1]!;
  const year = y === undefined ? undefined : yearWords(y);
  // "March fifth, twenty twenty-four"; "the fifth" alone; "March twenty twenty-four".
  if (month !== undefined && day !== undefined) return year === undefined ? `${month} ${day}` : `${month} ${day}, ${year}`;
  if (month !== undefined) return year === undefined ? month : `${month} ${year}`;
  if (day !== undefined) return `the ${day}`;
  return year!;
}

function time(content: string, format: string | undefined, language: Language): string {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/u.exec(content);
  if (m === null) throw new SayAsError(`say-as time: ${shown(content)} is not a time of the form hh:mm or hh:mm:ss`);
  const [h, min, s] = [Number(m[1]), Number(m[2]), m[3] === undefined ? undefined : Number(m[3])];
  if (h > 23 || min > 59 || (s !== undefined && s > 59)) throw new SayAsError(`say-as time: ${shown(content)} is not a time of day`);
  const style = format ?? (language === 'ja' ? 'hms24' : 'hms12');
  if (style !== 'hms12' && style !== 'hms24') throw new SayAsError(`say-as time: format "${quoteInput(style)}" is not hms12 or hms24`);
  if (language === 'ja') {
    const hour = style === 'hms12' ? `${h < 12 ? '午前' : '午後'}${h % 12}時` : `${h}時`;
    return readNumbers(`${hour}${min === 0 ? '' : `${min}分`}${s === undefined || s === 0 ? '' : `${s}秒`}`).replace('午前', 'ゴゼン').replace('午後', 'ゴゴ');
  }
  const minutes = min === 0 ? (style === 'hms12' ? "o'clock" : 'hundred') : min < 10 ? `oh ${DIGIT_WORDS[min]}` : cardinalWords(min);
  const seconds = s === undefined || s === 0 ? '' : ` and ${cardinalWords(s)} second${s === 1 ? '' : 's'}`;
  if (style === 'hms24') return `${h === 0 ? 'zero' : cardinalWords(h)} ${minutes}${seconds}`;
  const hour12 = h % 12 === 0 ? 12 : h % 12;
  return `${cardinalWords(hour12)} ${minutes}${seconds} ${h < 12 ? 'A M' : 'P M'}`;
}

/** Digit groups as written (`+81 3-1234-5678`), read digit by digit with a pause between groups. */
function telephone(content: string, language: Language): string {
  if (!/^\+?[0-9][0-9 ()./-]*$/u.test(content)) throw new SayAsError(`say-as telephone: ${shown(content)} is not a telephone number`);
  const groups = content.split(/[^0-9]+/u).filter((g) => g !== '');
  const table = language === 'ja' ? JA_PHONE_DIGITS : DIGIT_WORDS;
  const said = groups.map((g) => [...g].map((d) => table[Number(d)]!).join(language === 'ja' ? '' : ' '));
  const plus = content.startsWith('+') ? (language === 'ja' ? 'プラス ' : 'plus ') : '';
  return plus + said.join(language === 'ja' ? ' ノ ' : ', ');
}
