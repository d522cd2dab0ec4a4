/**
 * The long e of Sino-Japanese words (issue 25 point 3, "pronunciation"). IPADIC's pronunciation
 * keeps エイ where Tokyo speech says a long e: 映画 エイガ, 先生 センセイ, 経営 ケイエイ, 丁寧
 * テイネイ (said エーガ, センセー, ケーエー, テーネー; NHK日本語発音アクセント新辞典, and UniDic's
 * and Open JTalk's pronunciations write them so). eSpeak NG's `ja` voice reads what it is given:
 * エイ as two vowels [ei], エー as one long [e:]. But an e-row kana before イ across a boundary of
 * native words stays two vowels: 毛糸 ケイト (毛 + 糸), 目医者 メイシャ, 手入れ テイレ.
 *
 * {@link lengthenSinoJapaneseE} writes ー for the イ of an e-row syllable + イ
 * - where that syllable is the on'yomi of one kanji of the word: the word's surface is aligned with
 *   its reading (each kanji takes one or more kana, each kana of the surface its own), and the
 *   syllable must be the whole reading of a kanji listed for it in {@link E_ROW_I_ONYOMI};
 * - anywhere in a word written with one kanji, which is one morpheme whatever its origin (姪 メー,
 *   鰈 カレー, 背 セー), except {@link TWO_MORPHEMES}.
 * Words in katakana or hiragana (ケイト, ええ, 蹴り) are never changed: nothing tells which of them
 * are Sino-Japanese.
 *
 * The kanji list is data, not judgement: `node scripts/dictionary-candidates.mjs long-vowel-kanji`
 * derives it from UniDic 3.1.1 (Debian's unidic-mecab; its 語種 field marks Sino-Japanese words,
 * 漢, and proper names, 固): a kanji is listed with a syllable when UniDic reads it so in a
 * Sino-Japanese word of kanji only whose reading cuts in one way only into one on'yomi-shaped piece
 * per kanji (センセイ → セン + セイ), or alone as a Sino-Japanese word or a name (玲 レイ); a kanji
 * seen so once only is left out when UniDic also reads it alone as a word ending in that kana (芽
 * メ: 赤芽芋 アカメイモ is 芽 + 芋 イモ). `long-vowels` checks the rule on IPADIC's whole lexicon
 * against UniDic's pronunciations: of the 7,359 IPADIC words in kanji with an e-row + イ that
 * UniDic has with the same reading, the rule and UniDic agree on 7,306; the rule lengthens 6 that
 * UniDic does not (names: 令輝, 閉伊川) and misses 47 (jukujikun and ateji: 所為 セー, 海象
 * セーウチ, 貝独楽 ベーゴマ).
 */
import { toKatakana } from './kana.js';

/**
 * Kanji whose on'yomi is an e-row syllable + イ, by that syllable without voicing: 芸 ゲイ is under
 * ケイ, 税 ゼイ under セイ, 泥 デイ under テイ, 米 ベイ and 兵 ペイ (新兵 シンペイ) under ヘイ.
 * Derived from UniDic 3.1.1 as the module's comment says (`long-vowel-kanji`); 364 kanji (営 has
 * メイ too: UniDic reads one word 経営 ケイメイ).
 */
export const E_ROW_I_ONYOMI: Readonly<Record<string, string>> = {
  エイ: '英営影衛栄詠映永泳鋭曳榮叡嬰營穎翳裔頴瀛纓贏楹癭盈郢塋暎泄洩瘞睿嬴瑛衞',
  ケイ: '形経軽景刑計芸系型警敬鶏径傾兄継啓慶茎恵頸渓桂迎京掲繋鯨藝閨契珪經係繫勁輕卿慧痙谿頚圭携溪稽鷄硅競荊霓憩炯繼蹊瓊畦罫脛蛍逕雞馨剄境奎惠挂猊禊蜺螢詣頃鮭倪囈屐徑憬挈揭檠烱熒睨硎磬絅綮罄罣蕙規觿謦髻佳嵆憇羿邢',
  セイ: '生正性政成精声聖製制勢清青税西世星整盛静征井姓請斉棲聲誓誠晴省贅逝凄醒栖婿情済筮靜悽擠睛噬牲臍説靖旌歳甥穽脆蒸齊儕城掣撕犀砌芮蛻齋',
  テイ: '定低底帝泥庭弟丁程提停艇堤廷邸蹄呈梯貞逓亭訂鼎抵体綴偵啼挺締諦釘悌態汀涕牴鄭剃叮幀碇遞隄彽柢棣楨氐渧胝蒂薙蝃袋觝躰逞酊酲霆騁骶體',
  ネイ: '佞寧侫嚀濘',
  ヘイ: '兵平米閉併弊幣柄並瓶蔽餅丙屏塀聘屛斃秉陛坪并炳箆袂閇餠嬖幤敝病睥篦迸',
  メイ: '名明命銘鳴迷盟冥溟瞑螟暝営猽謎酩',
  レイ: '霊冷例礼令麗齢隷励鈴嶺禮零靈戻黎伶儷厲癘鴒〇勵唳囹巓怜灑犂玲礪糲羚翎苓茘藜蛉蛎蠡醴隸領齡',
};

/** Kanji → its e-row + イ on'yomi without voicing (英 → エイ, 芸 → ケイ; a kanji may have several). */
const ONYOMI = new Map<string, Set<string>>();
for (const [syllable, kanji] of Object.entries(E_ROW_I_ONYOMI)) for (const k of kanji) ONYOMI.set(k, (ONYOMI.get(k) ?? new Set()).add(syllable));

/** An e-row kana (any voicing) followed by イ: the syllables this module lengthens. */
const E_ROW_I = /^[エケゲセゼテデネヘベペメレ]イ$/u;

/** Each e-row kana + イ of a reading (global: replace only). */
const E_ROW_I_ANYWHERE = /([エケゲセゼテデネヘベペメレ])イ/gu;

/**
 * True exceptions to "one kanji, one morpheme", where UniDic keeps エイ: 筧 カケイ is 懸け樋
 * (kake + hi, a water pipe), two native words written with one kanji.
 */
const TWO_MORPHEMES = new Set(['筧']);

/** Voiced and half-voiced e-row kana → their unvoiced kana (rendaku: 新兵 シンペイ, 大勢 オーゼイ). */
const UNVOICED: Readonly<Record<string, string>> = { ゲ: 'ケ', ゼ: 'セ', デ: 'テ', ベ: 'ヘ', ペ: 'ヘ' };

/** Kana that no reading of a kanji starts with: small kana, ー, ン, ッ. */
const NOT_FIRST = /^[ャュョァィゥェォヮッンー]/u;

/** The most kana one kanji's reading takes in IPADIC's compounds (志 ココロザシ 5, 承 ウケタマワ 5). */
const MAX_KANA_PER_KANJI = 6;

/** Han characters, and the small ヶ ヵ written for the counter 個/箇 (三ヶ月 サンカゲツ). */
const KANJI = /^[\p{Script=Han}ヶヵ]$/u;

/** What a kana of the surface may be said as: itself, ー for a vowel (思う → オモー), ワ/エ/オ for は/へ/を. */
function kanaMatches(surface: string, spoken: string): boolean {
  const k = toKatakana(surface);
  if (k === spoken) return true;
  if (spoken === 'ー') return /^[アイウエオー]$/u.test(k);
  return (k === 'ハ' && spoken === 'ワ') || (k === 'ヘ' && spoken === 'エ') || (k === 'ヲ' && spoken === 'オ');
}

/**
 * The pronunciation `reading` (katakana, as IPADIC's `pronunciation` or a context rule gives it)
 * of the word written `surface` (a kuromoji token's surface form), with ー for the イ of each
 * e-row syllable + イ that is the on'yomi of one kanji of the word: 映画 エイガ → エーガ, 先生
 * センセイ → センセー, 時計 トケイ → トケー, 新兵 シンペイ → シンペー; and with ー for the イ of every
 * e-row syllable + イ when the surface is one kanji (姪 メイ → メー), but 筧 カケイ. Unchanged when
 * the surface has no such kanji, has characters other than kanji and kana, or cannot be aligned
 * with the reading (each kanji taking 1–6 kana, each kana of the surface its own kana): 毛糸
 * ケイト, ケイト, ええ. 々 is the kanji before it (平々 ヘイヘイ → ヘーヘー). Never throws.
 */
export function lengthenSinoJapaneseE(surface: string, reading: string): string {
  const units = [...surface];
  if (!reading.includes('イ')) return reading;
  // A word of one kanji is one morpheme, whatever its origin: 姪 メー, 鰈 カレー, 背 セー.
  if (units.length === 1 && KANJI.test(surface) && !TWO_MORPHEMES.has(surface)) return reading.replace(E_ROW_I_ANYWHERE, '$1ー');
  if (!units.some((u) => ONYOMI.has(u))) return reading;
  const kana = [...reading];
  const n = units.length;
  const m = kana.length;
  // The kanji each unit stands for (々 repeats the one before), or undefined for a kana.
  const kanji = units.map((u, i) => (u === '々' ? units[i - 1] : KANJI.test(u) ? u : undefined));
  if (units.some((u, i) => kanji[i] === undefined && !/^[\p{Script=Hiragana}\p{Script=Katakana}ー]$/u.test(u))) return reading;
  // The spans unit i may take: from kana a, `ends(i, a)` lists where its reading ends.
  const ends = (i: number, a: number): number[] => {
    if (a >= m) return [];
    if (kanji[i] === undefined) return kanaMatches(units[i]!, kana[a]!) ? [a + 1] : [];
    if (NOT_FIRST.test(kana[a]!)) return [];
    const out: number[] = [];
    for (let b = a + 1; b <= Math.min(m, a + MAX_KANA_PER_KANJI); b++) out.push(b);
    return out;
  };
  // before[i][a]: units 0..i-1 can be said as kana 0..a-1; after[i][a]: units i..n-1 as kana a..m-1.
  const before = Array.from({ length: n + 1 }, () => new Array<boolean>(m + 1).fill(false));
  const after = Array.from({ length: n + 1 }, () => new Array<boolean>(m + 1).fill(false));
  before[0]![0] = true;
  for (let i = 0; i < n; i++) for (let a = 0; a <= m; a++) if (before[i]![a]) for (const b of ends(i, a)) before[i + 1]![b] = true;
  after[n]![m] = true;
  for (let i = n - 1; i >= 0; i--) for (let a = 0; a <= m; a++) after[i]![a] = ends(i, a).some((b) => after[i + 1]![b]);
  const out = [...kana];
  for (let i = 0; i < n; i++) {
    const onyomi = ONYOMI.get(kanji[i] ?? '');
    if (onyomi === undefined) continue;
    for (let a = 0; a + 2 <= m; a++) {
      const syllable = kana[a]! + kana[a + 1]!;
      if (!E_ROW_I.test(syllable) || !onyomi.has((UNVOICED[kana[a]!] ?? kana[a]!) + 'イ')) continue;
      if (before[i]![a] && after[i + 1]![a + 2]) out[a + 1] = 'ー';
    }
  }
  return out.join('');
}
