/**
 * Numbers in Japanese text, in Arabic digits (3本, 2024年, 14:30) or in kanji numerals (三本,
 * 二〇二四年, 三万八千円), read out in katakana with the counter or unit after them before the text
 * goes to kuromoji for its other kanji (japanese.ts speechSegments). eSpeak NG's `ja` voice reads
 * bare digits but knows no counters, and kuromoji reads a number and its counter as two words
 * (三本 サン ホン, 六個 ロク コ, 五日 ゴ ニチ, 四時 ヨン ジ, 八百 ハチ ヒャク), so neither says サンボン.
 *
 * There is one number reader ({@link integerParts} and the counters below) and two ways into it:
 * - digits: {@link readNumbers} finds them by a regular expression, the counter being the longest
 *   known one after the number (no dictionary needed: kana text with digits never loads kuromoji);
 * - kanji numerals: {@link readKanjiNumerals} decides what is a number by kuromoji's IPADIC
 *   analysis, not by the characters: a run of tokens tagged 名詞,数 (二|十|五, 三|万|八|千) is a
 *   number, turned into its value ({@link numeralValue}: 25, 38000, 二〇二四 → 2024) and read with
 *   the token after it as its counter when that is one (名詞,接尾,助数詞, or a counter of the
 *   table). Words that merely contain numeral kanji are single IPADIC words of other parts of speech
 *   (一緒, 一番, 一生懸命, 万一, 十分 "enough", 一部, 一般, 三日月, 七夕, 八百屋, 一石二鳥, 九州,
 *   二人三脚, 三味線, 千葉, 十字路, 五月雨, 一時) and keep their readings — but for such a word of
 *   a numeral and a counter directly before a verb, a floating quantifier (馬を八頭飼う ハットー,
 *   not ヤツガシラ), or before an ordinal's 目 or a bound (一行目 イチギョーメ, not イッコー "the
 *   party"; 八文字以上 ハチモジ). A counter IPADIC cuts in two is read as one (四人|掛け).
 *
 * Rules (standard Tokyo readings as given by the NHK pronunciation dictionary, NHK日本語発音アクセント
 * 新辞典 (2016), appendix on numerals with counters, and NHK ことばのハンドブック):
 * - numbers up to 10¹⁶ by 万/億/兆 groups: 300 サンビャク, 600 ロッピャク, 800 ハッピャク,
 *   3000 サンゼン, 8000 ハッセン, 1兆 イッチョー; longer digit strings, and strings with leading
 *   zeros, digit by digit; decimals with テン and the digits after the point one by one
 *   (3.14 サンテンイチヨン);
 * - what a counter does to the number's last part, by the counter's first sound:
 *   k (個 回 階 軒 件 曲 か月 か所 か国 缶 巻 機 基 脚 戸 校 課 貫 斤 and the キロ units km kg KB kHz
 *   kbps kW kWh, KiB): 1, 6, 8, 10, 100 geminate
 *   (イッコ, ロッカイ, ハッコ, ジュッカイ, ヒャッコ, イッキャク); 階 軒 are voiced after 3 and 何
 *   (サンガイ, ナンゲン);
 *   s/t (冊 歳 週 週間 点 通 頭 着 足 丁目 社 席 種類 隻 艘 章 勝 周 食 滴 棟 cm): 1, 8, 10 geminate
 *   (イッサツ, ハッサイ, ジュッテン, イッチャク, イッチョーメ, ハッチョーメ, ジュッチョーメ,
 *   ハッセキ, サントー, ジュットー); 足 is voiced after 3 and 何 (サンゾク);
 *   h (本 匹 杯 票 品): 1, 6, 8, 10, 100 geminate and take p (イッポン, ロッポン, ハッポン, ジュッポン,
 *   ヒャッポン, イッピン); after 3, 千, 万 and 何 b (サンボン, センボン, ナンボン; 品 p: サンピン);
 *   分 and 泊 also p after 3 and 4 (サンプン, ヨンプン, サンパク);
 *   羽: ワ; 6, 10, 100 geminate with パ (ロッパ, ジュッパ), b after 3, 千, 万, 何 (サンバ, センバ);
 *   a p-initial loanword (パーセント, ページ) and テラ (TB, TiB): only 10 geminates (ジュッパーセント,
 *   ヒャクパーセント, ジュッテラバイト; 1TB イチテラバイト);
 *   the others (枚 台 番 番地 号 倍 度 秒 行 膳 錠 畳 面 …) change nothing (行 as a counter is
 *   ギョー, lines: 三行目 サンギョーメ);
 * - counters with readings of their own: 人 (ヒトリ, フタリ, then ヨニン … with ニン; 人前 ニンマエ:
 *   イチニンマエ; 人掛け, seats, voiced: フタリガケ, ヨニンガケ), つ (ヒトツ … ココノツ), 日
 *   (フツカ … トーカ, ジューヨッカ, ハツカ, ニジューヨッカ; 1 is ツイタチ as a date — after 月 or 〜月の, or before 付 — and イチニチ as a
 *   span: 一日中, 一日に三回), 月 (シガツ, シチガツ, クガツ), 時 (ヨジ, シチジ, クジ), 時間
 *   (ヨジカン, クジカン), 年 円 (ヨネン, ヨエン), 歳 (20 is ハタチ), 0 before 時 点 度 (レイジ,
 *   レイテン, レイド); counters read with native numbers for 1 and 2 (晩 口 箱 皿 袋 粒 桁 切れ 通り:
 *   ヒトバン, フタクチ, ヒトトーリ;
 *   also 文字 部屋 駅 束 坪: ヒトモジ, フタヘヤ, ヒトエキ);
 * - 何 before a counter is a number: ナンボン, ナンガイ, ナンプン, ナンニン;
 * - IPADIC's one word 十分 (ジューブン, "enough") is ten minutes (ジュップン) after an hour (三時十分)
 *   or after 約/あと, and before a word of time span (前, 後, 間, 以内, ほど, くらい, おき …) or a
 *   verb that takes one (かかる, 経つ, 遅れる, 待つ) — before any other verb it is "enough"
 *   (時間は十分ある ジューブン); so
 *   are 二分 (ニブン "halve") and 九分 (クブ) two and nine minutes; 何分 is ナンプン but for the
 *   adverb ナニブン (何分にも, 何分よろしく);
 * - units after digits: km キロメートル, kg キログラム, cm センチメートル, mm, m, g, L, %, °C;
 *   and the units of machines, said in Japanese with a Japanese number (2GB ニギガバイト, 100Mbps
 *   ヒャクメガビーピーエス), read as UniDic 3.1.1 reads the symbol as a unit (助数詞可能), else by
 *   the unit's name (TB, which UniDic has only as the noun ティービー; V, only the letter ブイ;
 *   mAh, the binary prefixes): information KB kB MB GB TB キロ/メガ/ギガ/テラバイト and KiB MiB
 *   GiB TiB キビ/メビ/ギビ/テビバイト, bit ビット; frequency Hz kHz (and KHz) MHz GHz ヘルツ; bit
 *   rates bps kbps キロビーピーエス, Kbps ケービーピーエス, Mbps, Gbps; fps エフピーエス; power W
 *   ワット (not before a digit or 杯: 5W1H, W杯), kW, Wh, kWh キロワットアワー, V ボルト (not before
 *   a digit: 1V1), mA, mAh ミリアンペアアワー. Left to the English voice, as symbols whose meaning
 *   or reading is in doubt: B (a pencil's 2B), Kb Mb Gb and lower-case kb mb gb (bits or bytes),
 *   PB and dB (UniDic: ピービー, ディービー; デシベル is also said), A (2A, a class), ms (ミリビョー,
 *   ミリセック);
 *   a time written 14:30 → ジューヨジ サンジュップン;
 * - codes: a postal code (after 〒, read ユービンバンゴー, or after 郵便番号: 150-0002) and a phone
 *   number (0 and hyphenated groups: 03-1234-5678) are read digit by digit, 0 ゼロ and 2 and 5
 *   lengthened (ニー, ゴー) as digits are read out over the phone, each hyphen ノ; an address of
 *   three hyphenated numbers (1-2-3 for 丁目-番-号), or two after a place name (千代田1-1), number
 *   by number with ノ (イチノニノサン); but a four-digit year, a month and a day joined by - / or .
 *   (2024-12-31, 2024/1/1, 2024.12.31) is a date, read with 年 月 日;
 * - a version or section number, three or more numbers joined by dots (3.5.1, 192.168.0.1), is
 *   read number by number with テン, as one says it (サンテンゴテンイチ), not as the decimal 3.5
 *   and then 1; two numbers (3.14, 3.12) are a decimal;
 * - a number glued to the Latin letters after it (5G, 3D, 4K, 3LDK, an English ordinal 1st, 20th),
 *   other than a unit the reader knows (5km, 2GB), and an integer after a Latin word and a space (a
 *   model number: iPhone 15, Windows 11) are no Japanese numbers: the English voice reads the
 *   token whole ("five G", "three D", "twentieth", "iPhone fifteen"), as Japanese readers say
 *   them (ファイブジー, スリーディー, アイフォーンフィフティーン) and as it reads the letters-first
 *   ones (G7, MP3, USB3); a model number that counts something is Japanese (iPhone 15台
 *   ジューゴダイ), and so is 第20回.
 *
 * The passes are rewrites of a {@link MappedText}, so what each number became is also told in the
 * offsets of the text as written ({@link readAllNumbers}), for the words' timings.
 */
import type { JapaneseTokenizer } from './kuromoji-dictionary.js';
import { MappedText, type Piece } from './mapped-text.js';

/** Japanese digit readings, the counting ones (4 ヨン, 7 ナナ, 9 キュー); also say-as digits (text/say-as.ts). */
export const DIGIT = ['ゼロ', 'イチ', 'ニ', 'サン', 'ヨン', 'ゴ', 'ロク', 'ナナ', 'ハチ', 'キュー'];

/** Digits as a code (phone number, postal code) is read: 2 and 5 lengthened to two morae. */
const CODE_DIGIT = ['ゼロ', 'イチ', 'ニー', 'サン', 'ヨン', 'ゴー', 'ロク', 'ナナ', 'ハチ', 'キュー'];

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

/** How a counter changes the last part of the number before it (see the module comment). */
type Change = 'none' | 'k' | 'st' | 'h' | 'fun' | 'wa' | 'pct';

/** A counter or unit: its reading, sound-change class, voiced reading (after 3, and 千 万 何 for h/fun/wa), p reading (after gemination). */
interface Counter {
  reading: string;
  change: Change;
  voiced?: string;
  p?: string;
}

/** Counters and units read by the sound changes of their class (the ones with readings of their own are in {@link readCount}). */
const COUNTERS: Record<string, Counter> = {
  本: { reading: 'ホン', change: 'h', voiced: 'ボン', p: 'ポン' },
  匹: { reading: 'ヒキ', change: 'h', voiced: 'ビキ', p: 'ピキ' },
  杯: { reading: 'ハイ', change: 'h', voiced: 'バイ', p: 'パイ' },
  票: { reading: 'ヒョー', change: 'h', voiced: 'ビョー', p: 'ピョー' },
  泊: { reading: 'ハク', change: 'fun', voiced: 'パク', p: 'パク' },
  分: { reading: 'フン', change: 'fun', voiced: 'プン', p: 'プン' },
  分間: { reading: 'フンカン', change: 'fun', voiced: 'プンカン', p: 'プンカン' },
  品: { reading: 'ヒン', change: 'h', voiced: 'ピン', p: 'ピン' },
  羽: { reading: 'ワ', change: 'wa', voiced: 'バ', p: 'パ' },
  個: { reading: 'コ', change: 'k' },
  回: { reading: 'カイ', change: 'k' },
  階: { reading: 'カイ', change: 'k', voiced: 'ガイ' },
  軒: { reading: 'ケン', change: 'k', voiced: 'ゲン' },
  件: { reading: 'ケン', change: 'k' },
  曲: { reading: 'キョク', change: 'k' },
  缶: { reading: 'カン', change: 'k' },
  巻: { reading: 'カン', change: 'k' },
  機: { reading: 'キ', change: 'k' },
  基: { reading: 'キ', change: 'k' },
  脚: { reading: 'キャク', change: 'k' },
  戸: { reading: 'コ', change: 'k' },
  校: { reading: 'コー', change: 'k' },
  課: { reading: 'カ', change: 'k' },
  貫: { reading: 'カン', change: 'k' },
  斤: { reading: 'キン', change: 'k' },
  か月: { reading: 'カゲツ', change: 'k' },
  ヶ月: { reading: 'カゲツ', change: 'k' },
  カ月: { reading: 'カゲツ', change: 'k' },
  か月間: { reading: 'カゲツカン', change: 'k' },
  ヶ月間: { reading: 'カゲツカン', change: 'k' },
  カ月間: { reading: 'カゲツカン', change: 'k' },
  か所: { reading: 'カショ', change: 'k' },
  ヶ所: { reading: 'カショ', change: 'k' },
  カ所: { reading: 'カショ', change: 'k' },
  箇所: { reading: 'カショ', change: 'k' },
  か国: { reading: 'カコク', change: 'k' },
  ヶ国: { reading: 'カコク', change: 'k' },
  カ国: { reading: 'カコク', change: 'k' },
  km: { reading: 'キロメートル', change: 'k' },
  kg: { reading: 'キログラム', change: 'k' },
  キロ: { reading: 'キロ', change: 'k' },
  // Units of information, frequency, bit rate and power (the module comment): the キロ ones
  // change the number as km does (イッキロバイト, ハッキロヘルツ, ジュッキロワット).
  KB: { reading: 'キロバイト', change: 'k' },
  kB: { reading: 'キロバイト', change: 'k' },
  KiB: { reading: 'キビバイト', change: 'k' },
  kHz: { reading: 'キロヘルツ', change: 'k' },
  KHz: { reading: 'キロヘルツ', change: 'k' },
  kbps: { reading: 'キロビーピーエス', change: 'k' },
  kW: { reading: 'キロワット', change: 'k' },
  kWh: { reading: 'キロワットアワー', change: 'k' },
  冊: { reading: 'サツ', change: 'st' },
  歳: { reading: 'サイ', change: 'st' },
  才: { reading: 'サイ', change: 'st' },
  週間: { reading: 'シューカン', change: 'st' },
  週: { reading: 'シュー', change: 'st' },
  社: { reading: 'シャ', change: 'st' },
  首: { reading: 'シュ', change: 'st' },
  席: { reading: 'セキ', change: 'st' },
  隻: { reading: 'セキ', change: 'st' },
  艘: { reading: 'ソー', change: 'st' },
  章: { reading: 'ショー', change: 'st' },
  勝: { reading: 'ショー', change: 'st' },
  周: { reading: 'シュー', change: 'st' },
  食: { reading: 'ショク', change: 'st' },
  滴: { reading: 'テキ', change: 'st' },
  棟: { reading: 'トー', change: 'st' },
  種類: { reading: 'シュルイ', change: 'st' },
  足: { reading: 'ソク', change: 'st', voiced: 'ゾク' },
  着: { reading: 'チャク', change: 'st' },
  丁目: { reading: 'チョーメ', change: 'st' },
  cm: { reading: 'センチメートル', change: 'st' },
  センチ: { reading: 'センチ', change: 'st' },
  点: { reading: 'テン', change: 'st' },
  通: { reading: 'ツー', change: 'st' },
  頭: { reading: 'トー', change: 'st' },
  '%': { reading: 'パーセント', change: 'pct' },
  パーセント: { reading: 'パーセント', change: 'pct' },
  ページ: { reading: 'ページ', change: 'pct' },
  TB: { reading: 'テラバイト', change: 'pct' },
  TiB: { reading: 'テビバイト', change: 'pct' },
  枚: { reading: 'マイ', change: 'none' },
  台: { reading: 'ダイ', change: 'none' },
  番: { reading: 'バン', change: 'none' },
  行: { reading: 'ギョー', change: 'none' },
  膳: { reading: 'ゼン', change: 'none' },
  錠: { reading: 'ジョー', change: 'none' },
  畳: { reading: 'ジョー', change: 'none' },
  面: { reading: 'メン', change: 'none' },
  番地: { reading: 'バンチ', change: 'none' },
  番線: { reading: 'バンセン', change: 'none' },
  号: { reading: 'ゴー', change: 'none' },
  号室: { reading: 'ゴーシツ', change: 'none' },
  号車: { reading: 'ゴーシャ', change: 'none' },
  号館: { reading: 'ゴーカン', change: 'none' },
  号線: { reading: 'ゴーセン', change: 'none' },
  倍: { reading: 'バイ', change: 'none' },
  位: { reading: 'イ', change: 'none' },
  度: { reading: 'ド', change: 'none' },
  '°C': { reading: 'ド', change: 'none' },
  秒: { reading: 'ビョー', change: 'none' },
  秒間: { reading: 'ビョーカン', change: 'none' },
  mm: { reading: 'ミリメートル', change: 'none' },
  m: { reading: 'メートル', change: 'none' },
  g: { reading: 'グラム', change: 'none' },
  L: { reading: 'リットル', change: 'none' },
  MB: { reading: 'メガバイト', change: 'none' },
  GB: { reading: 'ギガバイト', change: 'none' },
  MiB: { reading: 'メビバイト', change: 'none' },
  GiB: { reading: 'ギビバイト', change: 'none' },
  bit: { reading: 'ビット', change: 'none' },
  Hz: { reading: 'ヘルツ', change: 'none' },
  MHz: { reading: 'メガヘルツ', change: 'none' },
  GHz: { reading: 'ギガヘルツ', change: 'none' },
  bps: { reading: 'ビーピーエス', change: 'none' },
  Kbps: { reading: 'ケービーピーエス', change: 'none' },
  Mbps: { reading: 'メガビーピーエス', change: 'none' },
  Gbps: { reading: 'ギガビーピーエス', change: 'none' },
  fps: { reading: 'エフピーエス', change: 'none' },
  W: { reading: 'ワット', change: 'none' },
  Wh: { reading: 'ワットアワー', change: 'none' },
  V: { reading: 'ボルト', change: 'none' },
  mA: { reading: 'ミリアンペア', change: 'none' },
  mAh: { reading: 'ミリアンペアアワー', change: 'none' },
  メートル: { reading: 'メートル', change: 'none' },
  億: { reading: 'オク', change: 'none' },
  万: { reading: 'マン', change: 'none' },
};

/** Counters read with native numbers for 1 and 2 (ヒトバン, フタクチ), Sino-Japanese ones after. */
const NATIVE_ONE_TWO: Record<string, string> = {
  晩: 'バン',
  口: 'クチ',
  箱: 'ハコ',
  皿: 'サラ',
  袋: 'フクロ',
  粒: 'ツブ',
  桁: 'ケタ',
  切れ: 'キレ',
  通り: 'トーリ',
  文字: 'モジ',
  部屋: 'ヘヤ',
  駅: 'エキ',
  束: 'タバ',
  坪: 'ツボ',
};

/** Counters with readings of their own, handled case by case in {@link readCount}. */
const OWN_READINGS = ['日', '日間', '月', '時', '時間', '年', '年間', '年生', '円', '人', '人前', '人掛け', 'つ', '分の'];

/** Every counter the reader knows, longest first (a regular expression's alternatives). */
const COUNTER_NAMES = [...Object.keys(COUNTERS), ...Object.keys(NATIVE_ONE_TWO), ...OWN_READINGS].sort((a, b) => b.length - a.length);

/** Replaces the last part for a counter of class `change` (gemination), if it applies. */
function geminate(parts: Parts, change: Change): boolean {
  const last = parts.at(-1);
  const table: Record<string, string> =
    change === 'st'
      ? { イチ: 'イッ', ハチ: 'ハッ', ジュー: 'ジュッ' }
      : change === 'wa'
        ? { ロク: 'ロッ', ジュー: 'ジュッ', ヒャク: 'ヒャッ', ビャク: 'ビャッ', ピャク: 'ピャッ' }
        : change === 'pct'
          ? { ジュー: 'ジュッ' }
          : { イチ: 'イッ', ロク: 'ロッ', ハチ: 'ハッ', ジュー: 'ジュッ', ヒャク: 'ヒャッ', ビャク: 'ビャッ', ピャク: 'ピャッ' };
  if (change === 'none' || last === undefined || !(last in table)) return false;
  parts[parts.length - 1] = table[last]!;
  return true;
}

/** Reading of a number (`parts`) followed by counter `c` of the table, with its class's sound changes. */
function withCounter(parts: Parts, c: Counter): string {
  const last = parts.at(-1) ?? '';
  if (c.change === 'h' || c.change === 'fun' || c.change === 'wa') {
    if (geminate(parts, c.change === 'wa' ? 'wa' : 'k')) return parts.join('') + (c.p ?? c.reading);
    if (last === 'サン' || last === 'セン' || last === 'ゼン' || last === 'マン' || last === 'ナン') return parts.join('') + (c.voiced ?? c.reading);
    if (c.change === 'fun' && last === 'ヨン') return `${parts.join('')}${c.p}`;
    return parts.join('') + c.reading;
  }
  geminate(parts, c.change);
  if (c.voiced !== undefined && (last === 'サン' || last === 'ナン')) return parts.join('') + c.voiced;
  return parts.join('') + c.reading;
}

const DATE_DAYS = ['', 'ツイタチ', 'フツカ', 'ミッカ', 'ヨッカ', 'イツカ', 'ムイカ', 'ナノカ', 'ヨーカ', 'ココノカ', 'トーカ'];
const NATIVE = ['', 'ヒトツ', 'フタツ', 'ミッツ', 'ヨッツ', 'イツツ', 'ムッツ', 'ナナツ', 'ヤッツ', 'ココノツ'];

/** `parts` with the last one's 4/7/9 read as `map` says (月, 時: シガツ, シチジ, クジ; 年, 円: ヨ only), joined. */
function withSpecialLast(parts: Parts, map: Record<string, string>): string {
  const last = parts.at(-1);
  if (last !== undefined && last in map) parts[parts.length - 1] = map[last]!;
  return parts.join('');
}

/** Day of the month or a count of days (`n` its value): ツイタチ (only as a date), フツカ … トーカ, ハツカ, ジューヨッカ. */
function days(parts: Parts, n: number | undefined, isDate: boolean): string {
  if (n === 1 && !isDate) return 'イチニチ';
  if (n !== undefined && n >= 1 && n <= 10) return DATE_DAYS[n]!;
  if (n === 20) return 'ハツカ';
  if (n !== undefined && n % 10 === 4 && n < 100) return `${integerParts(String(n - 4)).join('')}ヨッカ`;
  return `${withSpecialLast(parts, { ナナ: 'シチ', キュー: 'ク' })}ニチ`;
}

/** The text around a number: what comes before it and after its counter. */
interface Surroundings {
  before: string;
  after: string;
}

/** 1日 is a date (ツイタチ) after a month (4月, 来月, 毎月, 来月の) or before 付 (1日付で), else a span (イチニチ). */
function isDate(at: Surroundings): boolean {
  return /月の?$/u.test(at.before) || /^付/u.test(at.after);
}

/**
 * A number to be read with a counter: the parts of its reading, and its value — undefined for an
 * indeterminate number (何 "how many", 何百 "hundreds of", 数十 "tens of"), which the counters'
 * own readings (ヒトリ, ツイタチ, ハタチ) do not apply to.
 */
interface Quantity {
  parts: Parts;
  value: number | undefined;
}

/** The quantity written with decimal digits `digits`. */
function quantity(digits: string): Quantity {
  return { parts: integerParts(digits), value: Number(digits) };
}

/**
 * Reading of quantity `q` followed by `counter`, with the counter's sound changes (module comment);
 * undefined when the reader does not know `counter`.
 */
function readCount(q: Quantity, counter: string, at: Surroundings): string | undefined {
  const parts = [...q.parts];
  const n = q.value;
  // The emergency number 110番 is ヒャクトーバン (トー, the native ten, keeps it apart from 100番).
  if (n === 110 && counter === '番') return 'ヒャクトーバン';
  const table = COUNTERS[counter];
  if (n === 0 && (counter === '時' || counter === '点' || counter === '度')) return `レイ${table?.reading ?? 'ジ'}`;
  if (table !== undefined) return n === 20 && (counter === '歳' || counter === '才') ? 'ハタチ' : withCounter(parts, table);
  const native = NATIVE_ONE_TWO[counter];
  if (native !== undefined) return (n === 1 ? 'ヒト' : n === 2 ? 'フタ' : parts.join('')) + native;
  switch (counter) {
    case '日':
      return days(parts, n, isDate(at));
    case '日間':
      return `${days(parts, n, false)}カン`;
    case '月':
      return `${withSpecialLast(parts, { ヨン: 'シ', ナナ: 'シチ', キュー: 'ク' })}ガツ`;
    case '時':
      return `${withSpecialLast(parts, { ヨン: 'ヨ', ナナ: 'シチ', キュー: 'ク' })}ジ`;
    case '時間':
      return `${withSpecialLast(parts, { ヨン: 'ヨ', キュー: 'ク' })}ジカン`;
    case '年':
    case '年間':
    case '年生':
      return `${withSpecialLast(parts, { ヨン: 'ヨ' })}${{ 年: 'ネン', 年間: 'ネンカン', 年生: 'ネンセー' }[counter]}`;
    case '円':
      return `${withSpecialLast(parts, { ヨン: 'ヨ' })}エン`;
    case '人':
      return n === 1 ? 'ヒトリ' : n === 2 ? 'フタリ' : `${withSpecialLast(parts, { ヨン: 'ヨ' })}ニン`;
    case '人掛け':
      // Seats for so many (四人掛けのテーブル): the count of people, then 掛け voiced (rendaku).
      return `${readCount(q, '人', at)!}ガケ`;
    case '人前':
      return `${withSpecialLast(parts, { ヨン: 'ヨ' })}ニンマエ`;
    case '分の':
      // A fraction (3分の1 サンブンノイチ) before a number, else minutes and の (45分の電車).
      return /^[\d〇一二三四五六七八九十百千]/u.test(at.after) ? `${parts.join('')}ブンノ` : `${withCounter(parts, COUNTERS['分']!)}ノ`;
    case 'つ':
      return n !== undefined && n >= 1 && n <= 9 ? NATIVE[n]! : n === 10 ? 'トー' : undefined;
    default:
      return undefined;
  }
}

/**
 * A counter's reading without sound changes, as said after a number with a decimal point
 * (1.5キロ: no gemination) and as IPADIC begins a compound counter with it (時半 ジハン).
 */
function plainReading(counter: string): string {
  return (
    COUNTERS[counter]?.reading ??
    NATIVE_ONE_TWO[counter] ??
    { 日: 'ニチ', 日間: 'ニチカン', 月: 'ガツ', 時: 'ジ', 時間: 'ジカン', 年: 'ネン', 年間: 'ネンカン', 年生: 'ネンセー', 円: 'エン', 人: 'ニン', 人前: 'ニンマエ', 人掛け: 'ニンガケ', つ: 'ツ', 分の: 'フンノ' }[counter] ??
    counter
  );
}

/** Reading of a number written with a decimal point: サンテンイチヨン. */
function decimal(int: string, frac: string): string {
  return `${integerParts(int).join('')}テン${[...frac].map((d) => DIGIT[Number(d)]).join('')}`;
}

/**
 * A digit string read as a code, as pieces of it (MappedText.replace): each group of digits digit
 * by digit (CODE_DIGIT), with a bracket before the first (an area code, (03)) read as nothing, and
 * each hyphen or bracket between two groups ノ.
 */
function code(text: string): Piece[] {
  const pieces: Piece[] = [];
  for (const m of text.matchAll(/(\D*)(\d+)/gu)) {
    const digits = [...m[2]!].map((d) => CODE_DIGIT[Number(d)]).join('');
    if (pieces.length === 0) pieces.push({ length: m[0].length, text: digits });
    else pieces.push({ length: m[1]!.length, text: 'ノ' }, { length: m[2]!.length, text: digits });
  }
  return pieces;
}

/**
 * Numbers joined by `separator` (an address 1-2-3, a version 3.5.1) read number by number, each
 * separator said `said` (イチノニノサン, サンテンゴテンイチ), as pieces of `text` (MappedText.replace).
 */
function numberByNumber(text: string, separator: string, said: string): Piece[] {
  return text.split(separator).flatMap((g, i) => [...(i === 0 ? [] : [{ length: separator.length, text: said }]), { length: g.length, text: integerParts(g).join('') }]);
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * Characters that, after a counter's kanji, make it the start of another word (3口座 is サンコーザ,
 * not サンクチ; 3通り サントーリ): the digit reader, which sees no words, does not take the counter there.
 */
const NOT_COUNTER_BEFORE: Readonly<Record<string, string>> = {
  口: '座調癖紅論実述頭径語',
  機: '能関会械種器材構',
  社: '長員会内',
  首: '相都位脳',
  着: '用陸信席',
  羽: '田根',
  晩: '年御ご飯',
  箱: '根',
  通: 'じ',
  足: 'さしすせそり',
  行: '事政動進為程方楽使儀',
  品: '質種物詞番格位',
  戸: '籍外惑締棚口',
  基: '準本地盤礎金調幹',
  脚: '本色注光',
  校: '舎長庭門則歌内正閲了',
  課: '長題程税金外',
  貫: '通禄徹',
  章: '典',
  勝: '負手利者',
  周: '辺囲知波',
  食: '事堂品器卓欲料費',
  棟: '梁上',
  面: '積接会談倒白目',
  駅: '長員舎弁伝',
  束: '縛',
};
/**
 * What besides a letter may not follow a one-letter Latin unit, which is a letter of a word there:
 * W before a digit or 杯 (5W1H, W杯 "the World Cup"), V before a digit (1V1 "one versus one").
 */
const NOT_UNIT_BEFORE: Readonly<Record<string, string>> = { W: String.raw`\d杯`, V: String.raw`\d` };
/** A Latin unit symbol as a regular expression's source: the whole symbol (5km, not 5kmph; 600W, not 5W1H). */
const latinUnit = (name: string): string => `${escape(name)}(?![A-Za-z${NOT_UNIT_BEFORE[name] ?? ''}])`;
/** Latin units need a word boundary after them (latinUnit); つ only before 目 or a non-hiragana; some kanji not before the rest of a word (NOT_COUNTER_BEFORE). */
const COUNTER_PATTERN = COUNTER_NAMES.map((n) =>
  /^[A-Za-z]+$/.test(n)
    ? latinUnit(n)
    : n === 'つ'
      ? 'つ(?=[目め]|[^\\p{Script=Hiragana}]|$)'
      : n in NOT_COUNTER_BEFORE
        ? `${escape(n)}(?![${NOT_COUNTER_BEFORE[n]}])`
        : escape(n),
).join('|');
const NUMBER = String.raw`(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?`;
/** The Latin unit symbols the reader reads after a number (5km キロメートル), each as a whole symbol (not 5kmh). */
const LATIN_UNIT = COUNTER_NAMES.filter((n) => /^[A-Za-z]+$/u.test(n))
  .map(latinUnit)
  .join('|');
/**
 * A number glued to the Latin letters after it, other than a unit the reader knows (5G, 3D, 4K,
 * 3LDK, 2B, an English ordinal 20th or 1,000th; not 5km, 3cm, 2L, 2GB): one alphanumeric token with
 * the letters, read whole by the English voice ("five G", "three D", "twentieth"; japanese.ts
 * LATIN_WORD), as the letters-first ones already are (G7, MP3, USB3), never its number in
 * Japanese and its letters in English (ゴ + "G"). A regular expression's source matching the
 * digits only (not after a digit, a decimal point or a comma: 1.5G stays a decimal).
 */
const GLUED_NUMBER = String.raw`(?<![\d.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?!${LATIN_UNIT})(?=\p{Script=Latin})`;
/**
 * Digits glued to the Latin letters after them, whatever the letters (not after a digit, a decimal
 * point or a comma): in text the number reader has read ({@link readAllNumbers}), the digits it
 * left before letters, which go to the English voice with them — GLUED_NUMBER's (5G, 20th, 2022W
 * of 2022W杯, whose 杯 is kana by then) and those it could not read (the 3km of 5km3km, after a
 * letter). A regular expression's source matching the digits only.
 */
export const DIGITS_BEFORE_LATIN = String.raw`(?<![\d.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?=\p{Script=Latin})`;
/**
 * A model number: an integer after a Latin word and a space (iPhone 15, Windows 11, Wi-Fi 6,
 * Python 3), which the English voice reads with the word ("iPhone fifteen", japanese.ts
 * LATIN_RUN) as Japanese readers say it in English (アイフォーンフィフティーン). Not one that
 * counts or measures something (iPhone 15台, NHK 7時, 50%, 5 km: the counter decides, as for any
 * number), nor a decimal, a time, a date, a range or a code (USB 3.0, Python 3.12: サンテンイチニ;
 * 14:30, 1,000). The word is the letters and digits right before the space, from a letter (Fi of
 * Wi-Fi, js of Node.js), and not right after a number and a space or a digit (5 km 3, 5km 3: km
 * is that number's unit, which the reader turns into kana; 5G 2): the number after it is then
 * read in Japanese, so that no digits are left where japanese.ts finds no Latin run to take them.
 * A regular expression's source matching the digits only.
 */
const MODEL_NUMBER = String.raw`(?<=(?<![\p{Script=Latin}\d])(?<!\d[ \t])\p{Script=Latin}[\p{Script=Latin}\d]*[ \t]+)\d+(?!\d|[.,:/\-]\d|[ \t]?(?:${COUNTER_PATTERN}))`;
const PATTERN = new RegExp(
  // 14:30; then a number (not inside a Latin word: MP3 stays for the English voice, nor glued to
  // Latin letters, 5G, 20th, nor a model number, iPhone 15) and its counter.
  String.raw`(?<![A-Za-z\d])(\d{1,2}):(\d{2})(?!\d)|(?<![A-Za-z\d.,])(?!${GLUED_NUMBER})(?!${MODEL_NUMBER})` + NUMBER + `[ \\t]?(${COUNTER_PATTERN})?`,
  'gu',
);

/**
 * Codes read digit by digit: a postal code after 〒 (group 1) or after 郵便番号 (group 2); a phone
 * number, 0 then hyphenated groups or an area code in brackets (group 3). A date, a four-digit
 * year, a month (1–12) and a day (1–31) joined by one of - / . (2024-12-31, 2024/1/1: group 4,
 * its separator group 5), becomes 年 月 日 for the counters below. An address of three hyphenated
 * numbers not starting with 0, or of two after a place name in kanji (千代田1-1: group 6, read
 * number by number). A version or section number, three or more integers joined by dots and not
 * after a letter (3.5.1, 192.168.0.1: group 7; v3.5.1 is a Latin word), number by number with
 * テン (サンテンゴテンイチ): no decimal (3.5 and then a pause before 1).
 */
/**
 * What follows the second number of a range with a counter (3-5日, 10-20人, 第2-3章, 2-3時, 5-10%):
 * a kanji or a counter in kana. Such a pair is a range, read with カラ, not two parts of an
 * address (千代田1-1 チヨダイチノイチ), which has no counter after it.
 */
const RANGE_COUNTER = String.raw`\p{Script=Han}|ページ|パーセント|%|[A-Za-z]`;
const RANGE = new RegExp(String.raw`(?<=\d)-(?=\d+(?:${RANGE_COUNTER}))`, 'gu');

const CODES = new RegExp(
  String.raw`〒[ \t]?(\d{3}-\d{4})(?![\d-])` +
    String.raw`|(?<=郵便番号[はがもを]?[:：]?[ \t]{0,3})(\d{3}-?\d{4})(?![\d-])` +
    String.raw`|(?<![\d-])(0\d{1,4}-\d{1,4}-\d{3,4}|\(0\d{1,4}\)\d{1,4}-\d{4})(?![\d-])` +
    String.raw`|(?<![A-Za-z\d\-/.,])([12]\d{3}([-/.])(?:1[0-2]|0?[1-9])\5(?:3[01]|[12]\d|0?[1-9]))(?![\d]|[\-/.]\d)` +
    String.raw`|(?<![\d-])([1-9]\d{0,3}-[1-9]\d{0,3}-[1-9]\d{0,3}|(?<=\p{Script=Han})[1-9]\d{0,3}-[1-9]\d{0,3}(?!${RANGE_COUNTER}))(?![\d-])` +
    String.raw`|(?<![A-Za-z\d\-/.,])(\d+(?:\.\d+){2,})(?!\d|\.\d)`,
  'gu',
);

/**
 * Replaces every number in `text` (NFKC-normalized: ASCII digits) and the counter or unit after it
 * by its katakana reading, and reads codes (postal codes, phone numbers, addresses 1-2-3) as the
 * module comment says; other text is kept. 1,000 counts as one number.
 */
export function readNumbers(text: string): string {
  return digitPass(MappedText.of(text)).text;
}

/** A range between digits written with a tilde (3〜5, 3 ~ 5): read カラ. */
const TILDE_RANGE = /(?<=\d)\s*[~〜]\s*(?=\d)/gu;

/**
 * Every number of `text` (NFKC-normalized) read, as japanese.ts speechSegments reads them before
 * kuromoji reads the other kanji: ranges written with a tilde (3〜5 → 3カラ5), then — when
 * `tokenizer` is given (the text has kanji) — numbers in kanji numerals
 * ({@link readKanjiNumerals}), then numbers in digits with codes and ranges ({@link readNumbers}).
 * The result's `text` is what is spoken; its `rewritten()` are the stretches of `text` each number
 * was read from, with their readings (3-5日: 3- サンカラ, 5日 イツカ; 03-1234-5678: 03- ゼロサンノ,
 * 1234- …), which the word timings give the words there (japanese-words.ts).
 */
export function readAllNumbers(text: string, tokenizer: JapaneseTokenizer | undefined): MappedText {
  const ranged = MappedText.of(text).replace(TILDE_RANGE, () => 'カラ');
  return digitPass(tokenizer === undefined ? ranged : kanjiNumeralPass(ranged, tokenizer));
}

/**
 * {@link readNumbers}' work on text that may have been rewritten before: codes and dates first, in
 * pieces (a date's year, month and day keep their digits, for the counters below), then ranges
 * with a counter (3-5日: the hyphen read カラ), then each number with its counter.
 */
function digitPass(text: MappedText): MappedText {
  const coded = text.replace(CODES, (m) => {
    const [match, mark, postal, phone, date, separator, address, version] = m as unknown as (string | undefined)[];
    if (mark !== undefined) return [{ length: match!.length - mark.length, text: 'ユービンバンゴー' }, ...code(mark)];
    if (postal !== undefined) return postal.length === 7 ? [...code(postal.slice(0, 3)), { length: 0, text: 'ノ' }, ...code(postal.slice(3))] : code(postal);
    if (phone !== undefined) return code(phone);
    if (date !== undefined) {
      const [year, month, day] = date.split(separator!);
      return [
        { length: year!.length, text: String(Number(year)) },
        { length: 1, text: '年' },
        { length: month!.length, text: String(Number(month)) },
        { length: 1, text: '月' },
        { length: day!.length, text: `${Number(day)}日` },
      ];
    }
    return address !== undefined ? numberByNumber(address, '-', 'ノ') : numberByNumber(version!, '.', 'テン');
  });
  // A range with a counter left after the codes: 3-5日 is 3から5日 (サンカライツカ).
  const ranged = coded.replace(RANGE, () => 'カラ');
  return ranged.replace(PATTERN, (m) => numberReading(ranged.text, m[0], m.index, m[1], m[2], m[3], m[4], m[5]));
}

/** The reading of one match of PATTERN at `offset` in `text` (its groups as named there). */
function numberReading(text: string, match: string, offset: number, hh: string | undefined, mm: string | undefined, int: string | undefined, frac: string | undefined, counter: string | undefined): string {
  if (hh !== undefined && mm !== undefined) {
    const minutes = Number(mm) === 0 ? '' : readCount(quantity(String(Number(mm))), '分', { before: '', after: '' })!;
    return `${readCount(quantity(String(Number(hh))), '時', { before: '', after: '' })!}${minutes}`;
  }
  const digits = int!.replace(/,/g, '');
  if (frac !== undefined) return decimal(digits, frac) + (counter === undefined ? '' : plainReading(counter));
  if (counter === undefined) return integerParts(digits).join('');
  const at = { before: text.slice(0, offset), after: text.slice(offset + match.length) };
  return readCount(quantity(digits), counter, at) ?? integerParts(digits).join('') + counter;
}

const KANJI_DIGITS: Readonly<Record<string, number>> = { 〇: 0, 零: 0, 一: 1, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };
const SMALL_UNITS: Readonly<Record<string, number>> = { 十: 1, 百: 2, 千: 3 };
const LARGE_UNITS: Readonly<Record<string, number>> = { 万: 4, 億: 8, 兆: 12 };

/**
 * The value of a numeral written in kanji, digits or both, as decimal digits: 二十五 → "25",
 * 三百三十三 → "333", 三万八千 / 3万8千 → "38000", 1,000万 → "10000000"; a string of digits alone is
 * positional and keeps its leading zeros (二〇二四 → "2024", 〇三 → "03"). Undefined when `numeral`
 * is not one well-formed number: units out of order (十百), a digit string before 十百千 (二三十),
 * a unit with nothing to count (万 alone), and two or three kanji digits without 〇, which are a
 * range (二三日 "two or three days", 四五人) or a word (七五三), not a positional number.
 */
export function numeralValue(numeral: string): string | undefined {
  let total = 0n;
  let section = 0n;
  let digits = '';
  let smallest = 4;
  let largest = 16;
  for (const ch of numeral.replace(/(?<=\d),(?=\d{3})/gu, '')) {
    const d = KANJI_DIGITS[ch] ?? (/^\d$/u.test(ch) ? Number(ch) : undefined);
    if (d !== undefined) {
      digits += String(d);
      continue;
    }
    const small = SMALL_UNITS[ch];
    if (small !== undefined) {
      if (small >= smallest || digits.length > 1) return undefined;
      section += BigInt(digits === '' ? 1 : digits) * 10n ** BigInt(small);
      digits = '';
      smallest = small;
      continue;
    }
    const large = LARGE_UNITS[ch];
    if (large === undefined || large >= largest) return undefined;
    if (section > 0n && digits.length > 1) return undefined;
    const group = section + (digits === '' ? 0n : BigInt(digits));
    if (group === 0n || group >= 10000n) return undefined;
    total += group * 10n ** BigInt(large);
    section = 0n;
    digits = '';
    smallest = 4;
    largest = large;
  }
  if (total === 0n && section === 0n) {
    if (digits === '' || (digits.length > 1 && digits.length < 4 && !digits.includes('0') && /^[一二三四五六七八九]+$/u.test(numeral))) return undefined;
    return digits;
  }
  if (section > 0n && digits.length > 1) return undefined;
  return String(total + section + (digits === '' ? 0n : BigInt(digits)));
}

type Token = ReturnType<JapaneseTokenizer['tokenize']>[number];

/** Characters of a numeral token (kuromoji tags digits and kanji numerals 名詞,数; 数 and 何 are not numerals). */
const NUMERAL_TOKEN = /^[\d〇零一二三四五六七八九十百千万億兆]+$/u;
/** A kanji numeral (a run with none is digits, which {@link readNumbers} reads). */
const KANJI_NUMERAL = /[〇零一二三四五六七八九十百千万億兆]/u;
/** Digit kanji in a row with a 〇 among them: positional (二〇二四, 一二〇), whatever IPADIC makes of them (一二 is a name to it). */
/** A run of kanji digits; a positional number when it has 〇 (tested in the callback: a pattern that must contain 〇 backtracks on long runs without one). */
const POSITIONAL = /[〇一二三四五六七八九]+/gu;
/**
 * IPADIC's words of a numeral and 分 that are not minutes to it: 二分 ニブン "halve", 九分 クブ
 * "nine tenths", 十分 ジューブン "enough", 何分 ナニブン "anyway" — minutes in a context of time.
 */
const MINUTE_WORDS: Readonly<Record<string, Quantity>> = {
  二分: quantity('2'),
  九分: quantity('9'),
  十分: quantity('10'),
  何分: { parts: ['ナン'], value: undefined },
};
/** Words after 十分 (二分, 九分) that make it a span of time, ten minutes (十分前, 十分ほど), not "enough". */
const AFTER_MINUTES = new Set(['前', '後', '間', '以内', '以上', '以下', '程度', 'ほど', 'くらい', 'ぐらい', 'おき', '置き', '毎', '遅れ', '経っ', 'たっ', '待ち']);
/**
 * Verbs (basic forms) that take a span of time, so that 十分 (二分, 九分) right before them is
 * minutes (十分かかる, 十分遅れる); before any other verb or adjective it is "enough" (十分ある).
 */
const DURATION_VERBS = new Set(['かかる', '掛かる', '経つ', 'たつ', '過ぎる', '遅れる', '待つ']);
/** Words before 十分 that make it ten minutes: 約 "about", あと "… more" (and an hour's 時, {@link isMinutes}). */
const BEFORE_MINUTES = new Set(['約', 'あと', '残り', 'およそ']);
/** Words after 何分 that make it the adverb なにぶん "anyway" (何分にも, 何分よろしく), not なんぷん "how many minutes". */
const ANYWAY = new Set(['に', 'にも', 'の', 'よろしく']);

/**
 * Whether IPADIC's word at `i` (one of MINUTE_WORDS) is minutes: 何分 unless it is the adverb (何分にも,
 * 何分よろしく); the others after an hour (三時十分) or 約/あと, or before a word of time span
 * (十分後, 二分ほど) or a verb that takes one (十分かかる) — else "enough", "halve" (十分な,
 * 十分に, 十分ある, 二分する).
 */
function isMinutes(tokens: readonly Token[], i: number): boolean {
  if (tokens[i]!.surface_form === '何分') return !ANYWAY.has(tokens[i + 1]?.surface_form ?? '');
  const before = tokens[i - 1];
  const after = tokens[i + 1];
  return (
    AFTER_MINUTES.has(after?.surface_form ?? '') ||
    (after?.pos === '動詞' && DURATION_VERBS.has(after.basic_form)) ||
    BEFORE_MINUTES.has(before?.surface_form ?? '') ||
    (before?.surface_form === '時' && before.pos_detail_2 === '助数詞')
  );
}

/** Whether kuromoji's `token` is a numeral (名詞,数 of digits or numeral kanji). */
function isNumeral(token: Token): boolean {
  return token.pos === '名詞' && token.pos_detail_1 === '数' && NUMERAL_TOKEN.test(token.surface_form);
}

/**
 * Whether `token` counts what a number before it counts: a counter of ours or IPADIC's 助数詞 —
 * not a Latin unit (三km): after kanji numerals the text splits it off for the English voice
 * (japanese-words.ts stretches), only after digits is it read as Japanese.
 */
function isCounter(token: Token | undefined): token is Token {
  if (token === undefined || /[A-Za-z%°]/u.test(token.surface_form)) return false;
  return COUNTER_NAMES.includes(token.surface_form) || (token.pos_detail_1 === '接尾' && token.pos_detail_2 === '助数詞');
}

/**
 * The counter that may start at token `k`: one of ours that IPADIC cuts in two (人|掛け → 人掛け)
 * as one token, else token `k`; with the index of the token after it. Undefined past the end.
 */
function counterAt(tokens: readonly Token[], k: number): { token: Token; end: number } | undefined {
  const first = tokens[k];
  if (first === undefined) return undefined;
  const second = tokens[k + 1];
  const joined = first.surface_form + (second?.surface_form ?? '');
  return second !== undefined && COUNTER_NAMES.includes(joined) ? { token: { ...first, surface_form: joined }, end: k + 2 } : { token: first, end: k + 1 };
}

/**
 * A counter token's reading after `number`: ours when the reader knows the counter; for a compound
 * counter of IPADIC's that begins with one of ours (時半, 歳児, 人組, 回戦), ours and then the rest
 * of IPADIC's reading (ヨジハン, イッサイジ, フタリグミ); else the number read alone and IPADIC's
 * reading of the counter.
 */
function counted(q: Quantity, counter: Token, at: Surroundings): string {
  const surface = counter.surface_form;
  const own = readCount(q, surface, at);
  if (own !== undefined) return own;
  const pronunciation = counter.pronunciation ?? counter.reading;
  const kana = pronunciation === undefined || pronunciation === '*' ? surface : pronunciation;
  const head = COUNTER_NAMES.find((name) => surface.startsWith(name) && kana.startsWith(plainReading(name)));
  const headReading = head === undefined ? undefined : readCount(q, head, at);
  if (head !== undefined && headReading !== undefined) return headReading + kana.slice(plainReading(head).length);
  return q.parts.join('') + kana;
}

/** Readings of 十百千万億 after an indeterminate 何 (voiced like after 3: ナンビャク, ナンゼン) or 数 (スーヒャク). */
const INDETERMINATE_UNITS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  何: { 十: 'ジュー', 百: 'ビャク', 千: 'ゼン', 万: 'マン', 億: 'オク' },
  数: { 十: 'ジュー', 百: 'ヒャク', 千: 'セン', 万: 'マン', 億: 'オク' },
};
/** Words after 何時 that make it いつ "when" (何時でも, 何時も, 何時か), not なんじ "what time". */
const WHEN = new Set(['でも', 'も', 'か', 'までも']);
/** A word of a numeral and a counter of ours as IPADIC may have it (八頭 ヤツガシラ, 四足 ヨツアシ, 百足 ムカデ). */
const NUMERAL_COUNTER_WORD = new RegExp(`^([〇一二三四五六七八九十百千万]+)(${COUNTER_NAMES.filter((n) => !/[A-Za-z%°]/u.test(n)).map(escape).join('|')})$`, 'u');

/** Words after a numeral and a counter that make them a count: an ordinal (三行目) or a bound on a quantity (八文字以上, 一文字ずつ). */
const AFTER_COUNT = new Set(['目', '以上', '以下', '以内', '未満', 'ずつ', '程度', 'ほど', 'くらい', 'ぐらい']);

/**
 * The reading of the token at `i` as a quantity when it is one word to IPADIC made of a numeral and
 * a counter (八頭 ヤツガシラ "a taro", 四足 ヨツアシ "four-legged", 一行 イッコー "the party",
 * 八文字 ハチモンジ "the figure 八") directly before a verb — a noun without a particle before a
 * verb is a floating quantifier (馬を八頭飼う ハットー, 靴を四足買った ヨンソク) — or before an
 * ordinal's 目 or a bound (一行目 イチギョーメ, 八文字以上 ハチモジ, 一文字ずつ ヒトモジ);
 * elsewhere the word keeps its reading (百足が出た ムカデ, 四足歩行, 一行が到着した). IPADIC's
 * 十分, 二分, 九分, 何分 are left to {@link isMinutes}.
 */
function quantityWord(tokens: readonly Token[], i: number, at: Surroundings): string | undefined {
  const token = tokens[i]!;
  const m = NUMERAL_COUNTER_WORD.exec(token.surface_form);
  const next = tokens[i + 1];
  // A サ変 noun before a verb is that verb (二分する "halve").
  if (m === null || token.pos_detail_1 === '数' || token.pos_detail_1 === 'サ変接続' || token.surface_form in MINUTE_WORDS) return undefined;
  if (next?.pos !== '動詞' && !AFTER_COUNT.has(next?.surface_form ?? '')) return undefined;
  const value = numeralValue(m[1]!);
  return value === undefined ? undefined : readCount(quantity(value), m[2]!, at);
}

/** A number found among the tokens: its quantity (undefined when the run is not one number: 二三日) and the index of the token after it. */
interface Found {
  q: Quantity | undefined;
  end: number;
  /** True when the number alone reads as kuromoji reads it (one numeral kanji: 一, 十, 第一). */
  plain: boolean;
}

/**
 * The number that starts at token `i`, if one does: a run of numeral tokens with at least one kanji
 * numeral and a well-formed value (1,000万: commas between digits), not next to a decimal point
 * (1.5億 is read by {@link readNumbers}); or an indeterminate one, 何/数 before 十百千万億 (何百,
 * 数千), 十数, or 何 before a counter (何本, 何月).
 */
function numberAt(tokens: readonly Token[], starts: readonly number[], text: string, i: number): Found | undefined {
  const token = tokens[i]!;
  const next = tokens[i + 1];
  const units = INDETERMINATE_UNITS[token.surface_form];
  if (units !== undefined && (token.pos_detail_1 === '数' || token.pos_detail_1 === '代名詞')) {
    const unit = next === undefined ? undefined : units[next.surface_form];
    if (unit !== undefined) return { q: { parts: [token.surface_form === '何' ? 'ナン' : 'スー', unit], value: undefined }, end: i + 2, plain: false };
    // 何 before a counter; as a pronoun (何|月) only before one of ours.
    if (token.surface_form === '何' && (token.pos_detail_1 === '数' ? isCounter(next) : COUNTER_NAMES.includes(next?.surface_form ?? ''))) return { q: { parts: ['ナン'], value: undefined }, end: i + 1, plain: false };
    return undefined;
  }
  if (token.surface_form === '十' && next?.surface_form === '数') return { q: { parts: ['ジュー', 'スー'], value: undefined }, end: i + 2, plain: false };
  if (!isNumeral(token)) return undefined;
  let end = i + 1;
  while (end < tokens.length && (isNumeral(tokens[end]!) || (tokens[end]!.surface_form === ',' && /\d$/u.test(tokens[end - 1]!.surface_form) && /^\d{3}/u.test(tokens[end + 1]?.surface_form ?? '')))) end++;
  const run = tokens.slice(i, end).map((t) => t.surface_form).join('');
  const value = numeralValue(run);
  const decimalPoint = /\d\.$/u.test(text.slice(0, starts[i])) || /^\.\d/u.test(text.slice(starts[end - 1]! + tokens[end - 1]!.surface_form.length));
  if (!KANJI_NUMERAL.test(run) || value === undefined || decimalPoint) return { q: undefined, end, plain: true };
  return { q: quantity(value), end, plain: [...run].length === 1 };
}

/** A stretch of text the number reader reads: UTF-16 offsets `start`–`end` (end exclusive) and its katakana `reading`. */
interface NumberReading {
  start: number;
  end: number;
  reading: string;
}

/**
 * Replaces the numbers written in kanji numerals in `text` (NFKC-normalized) by their katakana
 * reading, with the counter after them, as the module comment says: runs of kuromoji tokens tagged
 * 名詞,数 with at least one kanji numeral (二十五, 三万八千, 3万8千), positional strings with 〇
 * (二〇二四), indeterminate numbers (何本, 何百人, 数千円), and IPADIC's words 十分 and 何分 (in a
 * context of time) and 何時; everything else is kept, so kuromoji reads it afterwards as before. A
 * lone numeral kanji without a counter (第一, 一から) is kept too: kuromoji reads it the same.
 * Numbers in digits alone are left to {@link readNumbers}.
 */
export function readKanjiNumerals(text: string, tokenizer: JapaneseTokenizer): string {
  return kanjiNumeralPass(MappedText.of(text), tokenizer).text;
}

/**
 * {@link readKanjiNumerals} on text that may have been rewritten before: each positional string
 * of kanji digits becomes digits one for one (二〇二四 → 2024, each digit mapped to its kanji), each
 * number read becomes its reading.
 */
function kanjiNumeralPass(text: MappedText, tokenizer: JapaneseTokenizer): MappedText {
  const { positional, readings } = analysed(text.text, tokenizer);
  const edits: { start: number; end: number; text: string }[] = [];
  let at = 0;
  const digitsBefore = (end: number): void => {
    for (let i = at; i < end; i++) if (positional[i] !== text.text[i]) edits.push({ start: i, end: i + 1, text: positional[i]! });
  };
  for (const { start, end, reading } of readings) {
    digitsBefore(start);
    edits.push({ start, end, text: reading });
    at = end;
  }
  digitsBefore(positional.length);
  return text.edit(edits);
}

/**
 * `text` with its positional strings of kanji digits in digits (二〇二四 → 2024, left to
 * {@link readNumbers} when no reading below covers them), and the stretches read as numbers.
 */
function analysed(text: string, tokenizer: JapaneseTokenizer): { positional: string; readings: NumberReading[] } {
  if (!/[〇零一二三四五六七八九十百千万億兆何]/u.test(text)) return { positional: text, readings: [] };
  // Positional digit strings become digits first: IPADIC cuts some of them into names (一二|〇).
  // Each kanji digit is one UTF-16 unit and becomes one digit, so offsets stay those of `text`.
  const positional = text.replace(POSITIONAL, (run) => (run.includes('〇') && /[一二三四五六七八九]/u.test(run) ? numeralValue(run)! : run));
  const tokens = tokenizer.tokenize(positional);
  const starts: number[] = [];
  let at = 0;
  for (const t of tokens) {
    const found = positional.indexOf(t.surface_form, at);
    starts.push(found < 0 ? at : found);
    at = (found < 0 ? at : found) + t.surface_form.length;
  }
  const out: NumberReading[] = [];
  const replace = (from: number, to: number, reading: string): void => {
    out.push({ start: starts[from]!, end: starts[to - 1]! + tokens[to - 1]!.surface_form.length, reading });
  };
  const surroundings = (from: number, to: number): Surroundings => ({
    before: positional.slice(0, starts[from]),
    after: to < tokens.length ? positional.slice(starts[to]) : '',
  });
  for (let i = 0; i < tokens.length; i++) {
    const surface = tokens[i]!.surface_form;
    const following = tokens[i + 1]?.surface_form ?? '';
    const minutes = MINUTE_WORDS[surface];
    if (minutes !== undefined && tokens[i]!.pos_detail_2 !== '助数詞' && isMinutes(tokens, i)) {
      replace(i, i + 1, readCount(minutes, '分', surroundings(i, i + 1))!);
      continue;
    }
    const asQuantity = quantityWord(tokens, i, surroundings(i, i + 1));
    if (asQuantity !== undefined) {
      replace(i, i + 1, asQuantity);
      continue;
    }
    if (surface === '何時' && !WHEN.has(following)) {
      replace(i, i + 1, 'ナンジ');
      continue;
    }
    const found = numberAt(tokens, starts, positional, i);
    if (found === undefined) continue;
    const counter = counterAt(tokens, found.end);
    // A run that is no number (a range, 二三日; digits, which readNumbers reads) is left whole.
    if (found.q === undefined) i = found.end - 1;
    else if (isCounter(counter?.token)) {
      replace(i, counter.end, counted(found.q, counter.token, surroundings(i, counter.end)));
      i = counter.end - 1;
    } else {
      if (!found.plain) replace(i, found.end, found.q.parts.join(''));
      i = found.end - 1;
    }
  }
  return { positional, readings: out };
}
