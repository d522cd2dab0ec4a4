/**
 * Readings that depend on the neighbouring words (issue 25 point 2), decided over kuromoji's IPADIC
 * analysis of the sentence: each token's part of speech (`pos`, `pos_detail_1..2`), its conjugated
 * form and basic form, and the tokens around it. IPADIC gives one reading per entry, chosen by its
 * costs without regard to meaning, so where one spelling has several readings it is often wrong:
 * 店が開いている ヒライテ, 食事の後 ノチ, 一日中 イチニチチュー, あちらの方 ホー.
 *
 * {@link contextReadings} returns, for each token of a sentence, the reading a rule decides, or
 * undefined where IPADIC's own pronunciation stands. japanese.ts takes it both for the kana eSpeak NG
 * says (kanjiToKana) and for the readings of the words it times (japanese-words.ts), so a word is
 * timed as it is said.
 *
 * The rules (each function's comment gives its cases):
 * - {@link akuOrHiraku} 開く: アク when it has no object (店が開いている, 九時に開きます), ヒラク
 *   with an object (本を開く), in the passive (会議が開かれる) and for what unfolds (花が開く,
 *   差が開く) or an event held (説明会は…開きます);
 * - {@link suku} 空く: スク for hunger (お腹が空いた) and for a crowd thinning (電車が空いている);
 * - {@link furu} 降り: フリ (降る) when rain or snow falls (雨が降りそうだ), not オリ (降りる);
 * - {@link ato} 後: アト as a noun (食事の後, 食べた後で, 後から), ゴ only as a suffix after a noun
 *   (三日後, 帰宅後);
 * - {@link throughout} 中: ジュー "throughout" after a period (一日中, 一晩中, 今日中) or a whole
 *   place (日本中, 世界中, 部屋中); チュー "in the course of" after anything else (会議中,
 *   午前中, 今週中), as IPADIC has it;
 * - {@link kataOrHou} 方: カタ for a person (あの方, あちらの方が受付を, ご希望の方, 係の方),
 *   ホー for a side, a direction or a comparison (こちらの方がいい, 駅の方へ, 寝た方が);
 * - {@link hitoke} 人気: ヒトケ (presence of people) before の + ない/少ない (人気のない夜道);
 * - {@link wordAfterTimeAdverb} 家/人/店/車/雨 after a time adverb: a word of its own (毎日家に
 *   イエ, 明日店に ミセ), not IPADIC's Sino-Japanese suffix (毎日家 カ, 明日店 テン);
 * - {@link kome} 米 standing alone is コメ (rice); ベイ (America) only in compounds (日米, 米軍);
 * - {@link ke} 家 after a family name is ケ (田中家);
 * - {@link kado} 角 standing alone is カド (a corner), not カク (an angle: 角度, 三角);
 * - {@link aida} 間 after の or a modifier is アイダ (二人の間, 長い間), not マ;
 * - {@link sideOnScreen} 上/下 after 右/左/斜め is ウエ/シタ (右上), not ジョー/カ;
 * - {@link nagaoshi} 長押 before し is ナガオ (長押しする), not ナゲシ (a lintel);
 * - {@link nichiGemination} 日 (Japan) before a country read with k or ch is ニッ (日中 ニッチュー,
 *   日韓 ニッカン).
 * Then {@link EXCEPTIONS}: single words and phrases whose dictionary reading is wrong everywhere,
 * each with why it is an exception rather than a rule.
 *
 * Sources: IPADIC's part-of-speech tags (ipadic 2.7.0 as kuromoji.js ships it,
 * https://github.com/takuyaa/kuromoji.js); for the readings, the senses Japanese dictionaries give
 * each one (中: じゅう "throughout the whole of", ちゅう "during, in the course of"; 開く: あく
 * intransitive, ひらく transitive and "to unfold"; 人気: ひとけ "sign of people about", にんき
 * "popularity"). Each rule is tested on sentences that were not used to write it, including
 * sentences where it must not fire (test/engine/context-readings.test.ts).
 */
import type { IpadicFeatures } from 'kuromoji';

/** A token of kuromoji's IPADIC analysis, with the features the rules read. */
export type AnalyzedToken = Pick<
  IpadicFeatures,
  'surface_form' | 'pos' | 'pos_detail_1' | 'pos_detail_2' | 'conjugated_form' | 'basic_form' | 'reading' | 'pronunciation'
>;

/** The analysis of `surface` said on its own (kuromoji's tokens for it), for a word's own reading. */
export type WordLookup = (surface: string) => readonly AnalyzedToken[];

/** What a rule sees: the sentence's tokens, the readings decided for the tokens before, a lookup. */
interface Context {
  tokens: readonly AnalyzedToken[];
  /** Readings decided so far (left to right); undefined where IPADIC's stands. */
  decided: (string | undefined)[];
  lookup: WordLookup;
}

/** A rule: the reading of token `i`, or undefined when it does not apply. */
type Rule = (c: Context, i: number) => string | undefined;

/** How token `j` is said: the reading decided for it, else IPADIC's pronunciation, reading or surface. */
function spoken(c: Context, j: number): string {
  const t = c.tokens[j];
  if (t === undefined) return '';
  return c.decided[j] ?? t.pronunciation ?? t.reading ?? t.surface_form;
}

const isNoun = (t: AnalyzedToken | undefined): boolean => t?.pos === '名詞';
const isParticle = (t: AnalyzedToken | undefined, ...surfaces: string[]): boolean => t?.pos === '助詞' && (surfaces.length === 0 || surfaces.includes(t.surface_form));

/** The case particles that mark a verb's subject or object, and から (バスから降りる). */
const ARGUMENT_PARTICLES = new Set(['を', 'が', 'は', 'も', 'から']);

/**
 * The argument nearest before the predicate at `i` within its clause: the particle marking it
 * (を, が, は, も, から; の only right before the predicate: 雨の降りそうな) and the noun before
 * that particle. Adjuncts (に, で, まで, へ, と), nouns, adverbs and adverbial adjectives
 * (激しく) are passed over; punctuation, a conjunctive particle (て, ので), another verb or an
 * auxiliary end the clause, and then there is none.
 */
export function argumentBefore(tokens: readonly AnalyzedToken[], i: number): { particle: string; noun: AnalyzedToken | undefined } | undefined {
  for (let j = i - 1; j >= 0; j--) {
    const t = tokens[j]!;
    if (t.pos === '記号' || t.pos === '動詞' || t.pos === '助動詞') return undefined;
    if (t.pos === '形容詞' && !t.conjugated_form.startsWith('連用')) return undefined;
    if (t.pos !== '助詞') continue;
    if (t.pos_detail_1 === '接続助詞') return undefined;
    const before = tokens[j - 1];
    if (ARGUMENT_PARTICLES.has(t.surface_form) || (t.surface_form === 'の' && j === i - 1)) {
      return { particle: t.surface_form, noun: isNoun(before) ? before : undefined };
    }
  }
  return undefined;
}

/** The pronunciation of verb `t` with its stem `from` (katakana) replaced by `to`, or undefined. */
function restem(t: AnalyzedToken, from: string, to: string): string | undefined {
  const reading = t.pronunciation ?? t.reading;
  return reading?.startsWith(from) === true ? to + reading.slice(from.length) : undefined;
}

/** What unfolds (intransitive ひらく): flowers, a gap, an umbrella. */
const UNFOLDING = new Set(['花', '花びら', 'つぼみ', '蕾', '桜', '差', '点差', '格差', '距離', '間隔', '傘', '扇', '扇子', 'パラシュート']);
/** Events one holds (会議を開く), also as the topic (説明会は三時に開きます); 会 covers 説明会, 展示会. */
const EVENTS = new Set(['会', '会議', '大会', '総会', '集会', '会合', '式', '祭り', 'パーティー', 'セミナー', '講座', '講演', '個展', '会見', 'イベント']);

/**
 * 開く (IPADIC: always ヒラク): アク, the intransitive "to open" (店が開いている, ドアが開いた,
 * 郵便局は九時に開きます), unless it has an object (本を開く, 会議を開く), is passive or causative
 * (会議が開かれる), or its subject unfolds (花が開く, 差が開いた) or is an event held
 * (説明会は三時に開きます): then ヒラク stays.
 */
const akuOrHiraku: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.pos !== '動詞' || t.basic_form !== '開く') return undefined;
  const next = c.tokens[i + 1];
  if (next?.pos === '動詞' && next.pos_detail_1 === '接尾') return undefined;
  const arg = argumentBefore(c.tokens, i);
  if (arg?.particle === 'を') return undefined;
  const noun = arg?.noun?.surface_form ?? '';
  if (UNFOLDING.has(noun) || EVENTS.has(noun)) return undefined;
  return restem(t, 'ヒラ', 'ア');
};

/**
 * Subjects of すく: hunger, and places whose crowd thins (電車が空いている すいている: few people;
 * あいている would say it has vacancies).
 */
const SUKU_SUBJECTS = new Set(['腹', 'お腹', '小腹', '電車', 'バス', '道', '道路', '車内', '店内', '車両']);

/**
 * 空く (IPADIC: アク when not causative): スク when the belly is empty or a crowd thins
 * (お腹が空いた, 電車が空いている); アク otherwise (席が空いている, 手が空いたら).
 */
const suku: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.pos !== '動詞' || t.basic_form !== '空く') return undefined;
  const noun = argumentBefore(c.tokens, i)?.noun?.surface_form;
  return noun !== undefined && SUKU_SUBJECTS.has(noun) ? restem(t, 'ア', 'ス') : undefined;
};

/** What falls from the sky (降る), not 霜 (霜が降りる is おりる). */
const PRECIPITATION = new Set(['雨', '雪', '雹', '霰', 'みぞれ', 'ひょう', 'あられ', '大雨', '小雨', '大雪', '初雪', '灰', '火山灰']);

/**
 * 降り: IPADIC takes it for 降りる (オリ: 電車を降りる) even when rain or snow is its subject,
 * where it is 降る (雨が降りそうだ フリソー, 雪の降りそうな空).
 */
const furu: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.pos !== '動詞' || t.basic_form !== '降りる' || t.surface_form !== '降り') return undefined;
  const arg = argumentBefore(c.tokens, i);
  if (arg === undefined || arg.particle === 'を' || arg.particle === 'から') return undefined;
  return PRECIPITATION.has(arg.noun?.surface_form ?? '') ? 'フリ' : undefined;
};

/**
 * 後 (IPADIC: ノチ as a dependent noun, ゴ as a suffix): アト as a noun — after の or a verb
 * (食事の後に, 食べた後で, この後) and standing alone (後から, 後は); ゴ only as a suffix right
 * after a noun (三日後, 一週間後, 帰宅後). ノチ stays in its fixed words (後ほど, 後の世).
 */
const ato: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.surface_form !== '後' || t.pos !== '名詞') return undefined;
  if (t.pos_detail_1 === '非自立') return 'アト';
  if (t.pos_detail_1 === '接尾' && !isNoun(c.tokens[i - 1])) return 'アト';
  return undefined;
};

/** Places and bodies 中 goes all through (日本中, 部屋中, 体中); place names count too. */
const WHOLES = new Set(['世界', '国', '家', '部屋', '体', '身体', '学校', '町', '村', '島', '会社', '店', '顔', '頭', '地球', '県', '市']);
/** Periods 中 lasts through: today, this year, tonight (今日中 キョージュー, 今年中 コトシジュー). */
const WHOLE_PERIODS = new Set(['今日', '明日', '今年', '今夜', '今晩']);
/** Counters of a period (一日, 一年, 一晩); in katakana, as the number step reads them (イチニチ). */
const PERIOD_COUNTERS = new Set(['日', '年', '晩', '夜']);
const PERIOD_IN_KANA = /^[\p{Script=Katakana}ー]*(ニチ|ネン|バン)$/u;

/** Whether token `j` ends a count of days, years or nights (一日, 一晩, イチニチ). */
function isPeriodCount(c: Context, j: number): boolean {
  const t = c.tokens[j];
  if (t === undefined) return false;
  if (PERIOD_COUNTERS.has(t.surface_form) && t.pos_detail_2 === '助数詞') return true;
  return PERIOD_IN_KANA.test(t.surface_form);
}

/**
 * 中 as a suffix (IPADIC: チュー): ジュー "throughout" after a period (一晩中, 一年中, 今日中) or a
 * whole place (日本中, 世界中, 部屋中); チュー "in the course of" otherwise (会議中, 営業中, 午前中,
 * 今週中, 夏休み中), as IPADIC has it. After a count of days or years IPADIC may glue 中 to the next
 * word (一日|中本|を, 一年|中海|で, 一日|中外|に): that is ジュー and the word said alone.
 */
const throughout: Rule = (c, i) => {
  const t = c.tokens[i]!;
  const prev = c.tokens[i - 1];
  if (prev === undefined || t.pos !== '名詞' || !t.surface_form.startsWith('中')) return undefined;
  const period = isPeriodCount(c, i - 1);
  if (t.surface_form === '中') {
    if (t.pos_detail_1 !== '接尾' && !period) return undefined;
    const place = prev.pos_detail_1 === '固有名詞' && prev.pos_detail_2 === '地域';
    return period || place || WHOLES.has(prev.surface_form) || WHOLE_PERIODS.has(prev.surface_form) ? 'ジュー' : undefined;
  }
  if (!period) return undefined;
  const rest = readingAlone(c, t.surface_form.slice(1));
  return rest === undefined ? undefined : `ジュー${rest}`;
};

/** The reading of `surface` said as one word of its own (a common noun), or undefined. */
function readingAlone(c: Context, surface: string): string | undefined {
  const alone = c.lookup(surface);
  if (alone.length !== 1 || alone[0]!.pos !== '名詞' || alone[0]!.pos_detail_1 !== '一般') return undefined;
  return alone[0]!.pronunciation ?? alone[0]!.reading;
}

/** Demonstrative pronouns before の + 方 (こちらの方): a person, or a side when a direction follows. */
const DEMONSTRATIVES = new Set(['こちら', 'そちら', 'あちら', 'どちら']);
/** Nouns naming the people 方 then stands for (係の方, 初めての方, 十八歳以上の方). */
const PERSONS = new Set(['係', '担当', '受付', '家族', '学生', '年配', '近所', '初めて', '以上', '以下', '未満']);
/** Endings of a noun naming people (利用者, 係員, 乗客, 田中様). */
const PERSON_SUFFIXES = ['者', '員', '客', '様', 'さん'];

/** Whether 方 at `i` is compared (この方がいい, こちらの方が便利だ): が/は/も then an adjective. */
function compared(c: Context, i: number): boolean {
  const particle = c.tokens[i + 1];
  const after = c.tokens[i + 2];
  if (!isParticle(particle, 'が', 'は', 'も') || after === undefined) return false;
  return after.pos === '形容詞' || after.pos_detail_1 === '形容動詞語幹' || after.pos === '副詞';
}

/**
 * 方 as a dependent noun (IPADIC: ホー): カタ, a person, after この/その/あの/どの (あの方は; not
 * before へ: その方へ), after こちら/あちら… + の unless へ or に follows (あちらの方が受付を;
 * こちらの方へ ホー), after a person + の (係の方, 利用者の方へ, 初めての方), after an honorific お/ご + word + の
 * (ご希望の方, お持ちの方), and after a verb as the topic (参加したい方は, 興味のある方は) — but
 * never when compared (この方がいい, 学生の方が多い, 早く寝た方がいい: ホー).
 */
const kataOrHou: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.surface_form !== '方' || t.pos_detail_1 !== '非自立' || compared(c, i)) return undefined;
  const prev = c.tokens[i - 1];
  const next = c.tokens[i + 1];
  const toward = isParticle(next, 'へ', 'に');
  if (prev?.pos === '連体詞' && /^[こそあど]の$/u.test(prev.surface_form)) return isParticle(next, 'へ') ? undefined : 'カタ';
  // Who does something, as the topic: 参加したい方は, 興味のある方は, お持ちでない方は.
  if ((prev?.pos === '動詞' || prev?.pos === '助動詞') && isParticle(next, 'は')) return 'カタ';
  if (!isParticle(prev, 'の')) return undefined;
  const owner = c.tokens[i - 2];
  if (owner === undefined) return undefined;
  if (DEMONSTRATIVES.has(owner.surface_form)) return toward ? undefined : 'カタ';
  if (PERSONS.has(owner.surface_form) || (isNoun(owner) && PERSON_SUFFIXES.some((x) => owner.surface_form.endsWith(x)))) return 'カタ';
  const prefix = c.tokens[i - 3];
  return prefix?.pos === '接頭詞' && (prefix.surface_form === 'お' || prefix.surface_form === 'ご' || prefix.surface_form === '御') ? 'カタ' : undefined;
};

/** Words saying there are few or no people: ない, 無い, 少ない, 絶える. */
const SCARCE = new Set(['ない', '無い', '少ない', '絶える']);

/** 人気 (IPADIC: ニンキ, popularity) is ヒトケ, people about, before の + ない/少ない (人気のない夜道). */
const hitoke: Rule = (c, i) => {
  if (c.tokens[i]!.surface_form !== '人気' || !isParticle(c.tokens[i + 1], 'の')) return undefined;
  return SCARCE.has(c.tokens[i + 2]?.basic_form ?? '') ? 'ヒトケ' : undefined;
};

/**
 * The shape of a Sino-Japanese reading of one kanji (on'yomi): one mora, perhaps palatalized, and
 * at most a second one from ン, イ, ウ (ー once long), キ, ク, チ, ツ, ッ (学 ガク, 券 ケン, 道 ドー).
 * A one-kanji suffix is Sino-Japanese; a native reading (イエ, ヒト, クルマ) is a word of its own.
 */
const SINO_JAPANESE = /^[\p{Script=Katakana}][ャュョァィゥェォ]?[ンイウーキクチツッ]?$/u;

/**
 * Whether token `j` is a time adverb: IPADIC's 名詞,副詞可能 (今日, 日曜日, 最近), 毎日 (which
 * IPADIC often takes for the newspaper), or a 中 read ジュー (一日中).
 */
function isTimeAdverb(c: Context, j: number): boolean {
  const t = c.tokens[j];
  if (t === undefined || t.pos !== '名詞') return false;
  if (t.pos_detail_1 === '副詞可能') return true;
  if (t.surface_form.endsWith('中') && spoken(c, j).endsWith('ジュー')) return true;
  // IPADIC takes 毎日 before a glued suffix, and alone, for the newspaper (固有名詞,組織).
  return t.surface_form === '毎日';
}

/**
 * A one-kanji suffix after a time adverb (IPADIC: 毎日|家 カ, 日曜日|店 テン, 今日|車 シャ,
 * 一日中|雨 ウ) is a noun of its own when its reading said alone is native, not Sino-Japanese
 * (家 イエ, 店 ミセ, 車 クルマ, 雨 アメ): a suffix is Sino-Japanese. Compounds keep theirs
 * (午後便 ビン, 当日券 ケン, 前日比 ヒ: said alone they read the same, or Sino-Japanese).
 */
const wordAfterTimeAdverb: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.pos_detail_1 !== '接尾' || t.pos_detail_2 !== '一般' || [...t.surface_form].length !== 1 || !isTimeAdverb(c, i - 1)) return undefined;
  const alone = readingAlone(c, t.surface_form);
  return alone === undefined || SINO_JAPANESE.test(alone) ? undefined : alone;
};

/**
 * 米 standing alone — not after a noun (日米) nor before one (米大統領, 米軍) — is コメ, rice
 * (お米, 米を研ぐ, 今年の米の収穫); IPADIC often takes it for ベイ (America) or the suffix マイ.
 */
const kome: Rule = (c, i) => {
  if (c.tokens[i]!.surface_form !== '米') return undefined;
  const prev = c.tokens[i - 1];
  const next = c.tokens[i + 1];
  const afterNoun = isNoun(prev) && !isTimeAdverb(c, i - 1);
  return afterNoun || isNoun(next) ? undefined : 'コメ';
};

/** 家 after a family name (IPADIC: 田中|家 カ) is ケ, the family (田中家, 鈴木家). */
const ke: Rule = (c, i) => {
  const t = c.tokens[i]!;
  const prev = c.tokens[i - 1];
  return t.surface_form === '家' && t.pos_detail_1 === '接尾' && prev?.pos_detail_2 === '人名' ? 'ケ' : undefined;
};

/** 角 standing alone (IPADIC: カク) is カド, a corner (角を曲がる, 机の角), not after a number. */
const kado: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.surface_form !== '角' || t.pos !== '名詞' || t.pos_detail_1 !== '一般') return undefined;
  return c.tokens[i - 1]?.pos_detail_1 === '数' ? undefined : 'カド';
};

/** 間 (IPADIC: マ) after の, a pre-noun word or an adjective is アイダ (二人の間, 長い間, あの間). */
const aida: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.surface_form !== '間' || t.pos_detail_1 !== '一般' || (t.pronunciation ?? t.reading) !== 'マ') return undefined;
  const prev = c.tokens[i - 1];
  const modified = isParticle(prev, 'の') || prev?.pos === '連体詞' || (prev?.pos === '形容詞' && prev.conjugated_form === '基本形');
  return modified ? 'アイダ' : undefined;
};

/** Sides a position is named from (右上, 左下, 斜め上). */
const SIDES = new Set(['右', '左', '斜め']);

/** 上/下 as a suffix (IPADIC: ジョー, カ) after 右/左/斜め are ウエ/シタ (画面の右上, 右下のボタン). */
const sideOnScreen: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.pos_detail_1 !== '接尾' || !SIDES.has(c.tokens[i - 1]?.surface_form ?? '')) return undefined;
  return t.surface_form === '上' ? 'ウエ' : t.surface_form === '下' ? 'シタ' : undefined;
};

/** 長押 (ナゲシ, a lintel) before し is 長押し ナガオシ, a long press (長押しする). */
const nagaoshi: Rule = (c, i) => (c.tokens[i]!.surface_form === '長押' && c.tokens[i + 1]?.surface_form.startsWith('し') === true ? 'ナガオ' : undefined);

/** 日 for Japan before a country read with k or ch geminates: 日中 ニッチュー, 日韓 ニッカン (日米 ニチベイ). */
const nichiGemination: Rule = (c, i) => {
  const t = c.tokens[i]!;
  const next = c.tokens[i + 1];
  if (t.surface_form !== '日' || t.pos_detail_2 !== '地域' || next?.pos_detail_2 !== '地域') return undefined;
  return /^[カキクケコチ]/u.test(next.pronunciation ?? next.reading ?? '') ? 'ニッ' : undefined;
};

/** The rules, tried in order on each token; the first that gives a reading wins. */
const RULES: readonly Rule[] = [akuOrHiraku, suku, furu, ato, throughout, kataOrHou, hitoke, kome, ke, wordAfterTimeAdverb, kado, aida, sideOnScreen, nagaoshi, nichiGemination];

/**
 * True exceptions: words (one surface) or phrases (several tokens) whose IPADIC reading is wrong
 * wherever they stand, so no context decides them. `readings` has one entry per token of the
 * phrase, undefined where IPADIC's reading stands.
 */
export const EXCEPTIONS: readonly { surfaces: readonly string[]; readings: readonly (string | undefined)[]; why: string }[] = [
  { surfaces: ['辺'], readings: ['ヘン'], why: 'IPADIC reads 辺 as アタリ, the word written 辺り; without り it is ヘン (この辺, その辺)' },
  { surfaces: ['夜中'], readings: ['ヨナカ'], why: 'IPADIC prefers ヤチュウ, a reading nobody uses for 夜中 (night-time)' },
  { surfaces: ['明後日'], readings: ['アサッテ'], why: 'IPADIC prefers ミョウゴニチ, a formal reading; speech says あさって' },
  { surfaces: ['明朝'], readings: ['ミョーチョー'], why: 'IPADIC prefers ミンチョウ, the Ming typeface; "tomorrow morning" is みょうちょう' },
  { surfaces: ['この間'], readings: ['コノアイダ'], why: 'IPADIC prefers コノカン (during this time); この間 is nearly always このあいだ, the other day' },
  { surfaces: ['家中'], readings: ['イエジュー'], why: 'IPADIC prefers カチュウ, a feudal lord\'s retainers; everyday 家中 is いえじゅう (all over the house)' },
  { surfaces: ['北の方'], readings: ['キタノホー'], why: 'IPADIC has 北の方 (きたのかた, a noble\'s wife, archaic) as a word, and it wins over 北|の|方 everywhere' },
  { surfaces: ['街', '中'], readings: ['マチ', 'ナカ'], why: 'IPADIC lacks 街中 (まちなか, downtown), which it has as 町中; 街|中 read as a suffix gives まちちゅう' },
  { surfaces: ['杜', 'の', '都'], readings: [undefined, undefined, 'ミヤコ'], why: '杜の都 is Sendai\'s name, もりのみやこ; IPADIC reads 都 alone as ト (Tokyo Metropolis)' },
];

/**
 * The context readings of a sentence's `tokens` (kuromoji IPADIC tokens, in order): for each
 * token, the katakana a rule or an exception decides, or undefined where IPADIC's pronunciation
 * stands. `lookup` analyses a word said alone (a rule reads a word IPADIC glued to its neighbour
 * by its own reading). Rules run left to right, so a rule may read the readings decided before.
 */
export function contextReadings(tokens: readonly AnalyzedToken[], lookup: WordLookup): (string | undefined)[] {
  const c: Context = { tokens, decided: new Array<string | undefined>(tokens.length).fill(undefined), lookup };
  for (let i = 0; i < tokens.length; i++) {
    if (c.decided[i] !== undefined) continue;
    const exception = EXCEPTIONS.find((e) => e.surfaces.every((s, k) => tokens[i + k]?.surface_form === s));
    if (exception !== undefined) {
      exception.readings.forEach((r, k) => (c.decided[i + k] = r));
      continue;
    }
    for (const rule of RULES) {
      const reading = rule(c, i);
      if (reading !== undefined) {
        c.decided[i] = reading;
        break;
      }
    }
  }
  return c.decided;
}
