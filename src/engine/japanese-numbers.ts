/**
 * Numbers in Japanese text, read out in katakana with the counter or unit after them, before the
 * text goes to kuromoji (japanese.ts). eSpeak NG's `ja` voice reads bare digits, but knows no
 * counters, and kuromoji reads a counter kanji after digits as a word of its own (3月 → "3 ツキ",
 * 3本 → "3 ホン"): so 3本 was said "san hon", not サンボン, and 3月 "san tsuki", not サンガツ.
 *
 * Rules (standard Tokyo readings, as in NHK's pronunciation dictionary):
 * - numbers up to 10¹⁶ by 万/億/兆 groups: 300 サンビャク, 600 ロッピャク, 800 ハッピャク,
 *   3000 サンゼン, 8000 ハッセン, 1兆 イッチョー; longer digit strings digit by digit; decimals
 *   with テン and the digits after the point one by one (3.14 サンテンイチヨン);
 * - the sound changes a counter causes in the number's last part: gemination (1, 6, 8, 10, 100 before
 *   k/h; 1, 8, 10 before s/t; only 10 before a p-initial loanword: イッコ, ロッポン, ハッサツ,
 *   ジュッカイ, ヒャッキロ, ジュッパーセント but ヒャクパーセント) and p/b after them (ロッポン,
 *   サンボン, サンプン, ヨンプン);
 * - counters with their own readings: 人 (ヒトリ, フタリ, ヨニン), つ (ヒトツ … ココノツ),
 *   dates 日 (ツイタチ, フツカ … トーカ, ハツカ, ジューヨッカ), 月 (シガツ, シチガツ, クガツ),
 *   時 (ヨジ, シチジ, クジ), 年 and 円 (ヨネン, ヨエン);
 * - units after digits: km キロメートル, kg キログラム, cm センチメートル, mm, m, g, L, %, °C;
 *   a time written 14:30 → ジューヨジ サンジュップン.
 */

/** Japanese digit readings, the counting ones (4 ヨン, 7 ナナ, 9 キュー); also say-as digits (text/say-as.ts). */
export const DIGIT = ['ゼロ', 'イチ', 'ニ', 'サン', 'ヨン', 'ゴ', 'ロク', 'ナナ', 'ハチ', 'キュー'];

/** Parts of a number's reading; counters change the last one (e.g. イチ → イッ). */
type Parts = string[];

/** Reading of 0–9999 as parts (empty for 0). */
function belowTenThousand(n: number): Parts {
  const parts: Parts = [];
  const th = Math.floor(n / 1000);
  const hu = Math.floor(n / 100) % 10;
  const te = Math.floor(n / 10) % 10;
  const un = n % 10;
  if (th > 0) parts.push(...(th === 1 ? ['セン'] : th === 3 ? ['サン', 'ゼン'] : th === 8 ? ['ハッ', 'セン'] : [DIGIT[th]!, 'セン']));
  if (hu > 0) parts.push(...(hu === 1 ? ['ヒャク'] : hu === 3 ? ['サン', 'ビャク'] : hu === 6 ? ['ロッ', 'ピャク'] : hu === 8 ? ['ハッ', 'ピャク'] : [DIGIT[hu]!, 'ヒャク']));
  if (te > 0) parts.push(...(te === 1 ? ['ジュー'] : [DIGIT[te]!, 'ジュー']));
  if (un > 0) parts.push(DIGIT[un]!);
  return parts;
}

/** Reading of a non-negative integer given as decimal digits, as parts; digit by digit beyond 10¹⁶. */
export function integerParts(digits: string): Parts {
  const clean = digits.replace(/^0+(?=\d)/, '');
  if (clean.length > 16 || (digits.length > 1 && digits.startsWith('0'))) return [...digits].map((d) => DIGIT[Number(d)]!);
  let n = BigInt(clean);
  if (n === 0n) return ['ゼロ'];
  const units = ['', 'マン', 'オク', 'チョー'];
  const groups: Parts[] = [];
  for (let i = 0; n > 0n; i++, n /= 10000n) {
    const g = Number(n % 10000n);
    if (g === 0) continue;
    const parts = belowTenThousand(g);
    if (i > 0) {
      // 1兆 is イッチョー; 1万, 1億 keep イチ.
      if (g === 1) parts.splice(0, 1, i === 3 ? 'イッ' : 'イチ');
      else if (i === 3 && parts.at(-1) === 'ハチ') parts[parts.length - 1] = 'ハッ';
      else if (i === 3 && parts.at(-1) === 'ジュー') parts[parts.length - 1] = 'ジュッ';
      parts.push(units[i]!);
    }
    groups.unshift(parts);
  }
  return groups.flat();
}

/** How a counter changes the last part of the number before it. */
type Change = 'none' | 'k' | 'st' | 'h' | 'fun' | 'pct';

/** Counters and units: reading, sound-change class, voiced reading after 3 (and 千, 万, 何). */
const COUNTERS: Record<string, { reading: string; change: Change; voiced?: string; p?: string }> = {
  本: { reading: 'ホン', change: 'h', voiced: 'ボン', p: 'ポン' },
  匹: { reading: 'ヒキ', change: 'h', voiced: 'ビキ', p: 'ピキ' },
  杯: { reading: 'ハイ', change: 'h', voiced: 'バイ', p: 'パイ' },
  泊: { reading: 'ハク', change: 'fun', voiced: 'パク', p: 'パク' },
  分: { reading: 'フン', change: 'fun', voiced: 'プン', p: 'プン' },
  個: { reading: 'コ', change: 'k' },
  回: { reading: 'カイ', change: 'k' },
  階: { reading: 'カイ', change: 'k', voiced: 'ガイ' },
  軒: { reading: 'ケン', change: 'k', voiced: 'ゲン' },
  件: { reading: 'ケン', change: 'k' },
  曲: { reading: 'キョク', change: 'k' },
  か月: { reading: 'カゲツ', change: 'k' },
  ヶ月: { reading: 'カゲツ', change: 'k' },
  カ月: { reading: 'カゲツ', change: 'k' },
  km: { reading: 'キロメートル', change: 'k' },
  kg: { reading: 'キログラム', change: 'k' },
  キロ: { reading: 'キロ', change: 'k' },
  冊: { reading: 'サツ', change: 'st' },
  歳: { reading: 'サイ', change: 'st' },
  才: { reading: 'サイ', change: 'st' },
  週間: { reading: 'シューカン', change: 'st' },
  cm: { reading: 'センチメートル', change: 'st' },
  センチ: { reading: 'センチ', change: 'st' },
  点: { reading: 'テン', change: 'st' },
  通: { reading: 'ツー', change: 'st' },
  頭: { reading: 'トー', change: 'st' },
  '%': { reading: 'パーセント', change: 'pct' },
  パーセント: { reading: 'パーセント', change: 'pct' },
  ページ: { reading: 'ページ', change: 'pct' },
  枚: { reading: 'マイ', change: 'none' },
  台: { reading: 'ダイ', change: 'none' },
  番: { reading: 'バン', change: 'none' },
  倍: { reading: 'バイ', change: 'none' },
  位: { reading: 'イ', change: 'none' },
  度: { reading: 'ド', change: 'none' },
  '°C': { reading: 'ド', change: 'none' },
  秒: { reading: 'ビョー', change: 'none' },
  mm: { reading: 'ミリメートル', change: 'none' },
  m: { reading: 'メートル', change: 'none' },
  g: { reading: 'グラム', change: 'none' },
  L: { reading: 'リットル', change: 'none' },
  メートル: { reading: 'メートル', change: 'none' },
  億: { reading: 'オク', change: 'none' },
  万: { reading: 'マン', change: 'none' },
};

/** Replaces the last part for a counter of class `change` (gemination), if it applies. */
function geminate(parts: Parts, change: Change): boolean {
  const last = parts.at(-1);
  const table: Record<string, string> =
    change === 'st'
      ? { イチ: 'イッ', ハチ: 'ハッ', ジュー: 'ジュッ' }
      : { イチ: 'イッ', ロク: 'ロッ', ハチ: 'ハッ', ジュー: 'ジュッ', ヒャク: 'ヒャッ', ビャク: 'ビャッ', ピャク: 'ピャッ' };
  if (change === 'none' || last === undefined || !(last in table)) return false;
  parts[parts.length - 1] = table[last]!;
  return true;
}

/** Reading of `digits` followed by counter `name` (a key of COUNTERS). */
function withCounter(digits: string, name: string): string {
  const c = COUNTERS[name]!;
  const parts = integerParts(digits);
  const last = parts.at(-1) ?? '';
  if (c.change === 'h' || c.change === 'fun') {
    if (geminate(parts, 'k')) return parts.join('') + (c.p ?? c.reading);
    if (last === 'サン' || last === 'セン' || last === 'ゼン' || last === 'マン') return parts.join('') + (c.voiced ?? c.reading);
    if (c.change === 'fun' && last === 'ヨン') return `${parts.join('')}${c.p}`;
    return parts.join('') + c.reading;
  }
  if (c.change === 'pct') {
    // Before a p-initial loanword only 10 geminates: ジュッパーセント, but イチパーセント, ヒャクパーセント.
    if (last === 'ジュー') parts[parts.length - 1] = 'ジュッ';
  } else if (c.change !== 'none') geminate(parts, c.change);
  if (c.voiced !== undefined && last === 'サン') return parts.join('') + c.voiced;
  return parts.join('') + c.reading;
}

const DATE_DAYS = ['', 'ツイタチ', 'フツカ', 'ミッカ', 'ヨッカ', 'イツカ', 'ムイカ', 'ナノカ', 'ヨーカ', 'ココノカ', 'トーカ'];
const NATIVE = ['', 'ヒトツ', 'フタツ', 'ミッツ', 'ヨッツ', 'イツツ', 'ムッツ', 'ナナツ', 'ヤッツ', 'ココノツ'];

/** Parts with the last one's 4/7/9 read ヨ/シチ/ク (月, 時: シガツ, シチジ, クジ; 年, 円: ヨ only). */
function withSpecialLast(digits: string, map: Record<string, string>): string {
  const parts = integerParts(digits);
  const last = parts.at(-1);
  if (last !== undefined && last in map) parts[parts.length - 1] = map[last]!;
  return parts.join('');
}

/** Day of the month or a count of days: ツイタチ (only as a date), フツカ … トーカ, ハツカ, ジューヨッカ. */
function days(digits: string, isDate: boolean): string {
  const n = Number(digits);
  if (n === 1 && !isDate) return 'イチニチ';
  if (n >= 1 && n <= 10) return DATE_DAYS[n]!;
  if (n === 20) return 'ハツカ';
  if (n % 10 === 4 && n < 100) return `${integerParts(String(n - 4)).join('')}ヨッカ`;
  return `${withSpecialLast(digits, { ナナ: 'シチ', キュー: 'ク' })}ニチ`;
}

/** Reading of a number written with a decimal point: サンテンイチヨン. */
function decimal(int: string, frac: string): string {
  return `${integerParts(int).join('')}テン${[...frac].map((d) => DIGIT[Number(d)]).join('')}`;
}

const COUNTER_NAMES = Object.keys(COUNTERS).sort((a, b) => b.length - a.length);
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Latin units need a word boundary after them (5km, not 5kmph); the others do not. */
const COUNTER_PATTERN = COUNTER_NAMES.map((n) => (/^[A-Za-z]+$/.test(n) ? `${escape(n)}(?![A-Za-z])` : escape(n))).join('|');
const NUMBER = String.raw`(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?`;
const PATTERN = new RegExp(
  // 14:30; then a number (not inside a Latin word: MP3 stays for the English voice) and its counter.
  String.raw`(?<![A-Za-z\d])(\d{1,2}):(\d{2})(?!\d)|(?<![A-Za-z\d.,])` +
    NUMBER +
    String.raw`[ \t]?(日間|時間|月|日|時|年|円|人|つ(?=[目め]|[^\p{Script=Hiragana}]|$)|` +
    COUNTER_PATTERN +
    ')?',
  'gu',
);

/**
 * Replaces every number in `text` (NFKC-normalized: ASCII digits) and the counter or unit after it
 * by its katakana reading; other text is kept. 1,000 counts as one number.
 */
export function readNumbers(text: string): string {
  return text.replace(PATTERN, (_match, hh: string | undefined, mm: string | undefined, int: string | undefined, frac: string | undefined, counter: string | undefined, offset: number) => {
    if (hh !== undefined && mm !== undefined) {
      const minutes = Number(mm) === 0 ? '' : withCounter(String(Number(mm)), '分');
      return `${withSpecialLast(hh, { ヨン: 'ヨ', ナナ: 'シチ', キュー: 'ク' })}ジ${minutes}`;
    }
    const digits = int!.replace(/,/g, '');
    if (frac !== undefined) return decimal(digits, frac) + (counter === undefined ? '' : (COUNTERS[counter]?.reading ?? counterReading(counter)));
    if (counter === undefined) return integerParts(digits).join('');
    const before = text.slice(Math.max(0, offset - 1), offset);
    switch (counter) {
      case '日':
        return days(digits, before === '月');
      case '日間':
        return `${days(digits, false)}カン`;
      case '月':
        return `${withSpecialLast(digits, { ヨン: 'シ', ナナ: 'シチ', キュー: 'ク' })}ガツ`;
      case '時':
        return `${withSpecialLast(digits, { ヨン: 'ヨ', ナナ: 'シチ', キュー: 'ク' })}ジ`;
      case '時間':
        return `${withSpecialLast(digits, { ヨン: 'ヨ', キュー: 'ク' })}ジカン`;
      case '年':
        return `${withSpecialLast(digits, { ヨン: 'ヨ' })}ネン`;
      case '円':
        return `${withSpecialLast(digits, { ヨン: 'ヨ' })}エン`;
      case '人': {
        const n = Number(digits);
        return n === 1 ? 'ヒトリ' : n === 2 ? 'フタリ' : `${withSpecialLast(digits, { ヨン: 'ヨ' })}ニン`;
      }
      case 'つ': {
        const n = Number(digits);
        return n >= 1 && n <= 9 ? NATIVE[n]! : n === 10 ? 'トー' : `${integerParts(digits).join('')}`;
      }
      default:
        return withCounter(digits, counter);
    }
  });
}

function counterReading(counter: string): string {
  return { 日: 'ニチ', 時: 'ジ', 月: 'ガツ', 年: 'ネン', 円: 'エン', 人: 'ニン', つ: 'ツ', 日間: 'ニチカン', 時間: 'ジカン' }[counter] ?? counter;
}
