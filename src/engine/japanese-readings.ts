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
 *   (三日後, 帰宅後), ノチ between two weather words (曇り後晴れ), before の + an age (後の世) and as "later" starting a clause
 *   (彼は後に有名になった; not before a verb: 後に続く アト);
 * - {@link throughout} 中: ジュー "throughout" after a period (一日中, 一晩中, 今日中) or a whole
 *   place (日本中, 世界中, 部屋中); チュー "in the course of" after anything else (会議中,
 *   午前中, 今週中), as IPADIC has it;
 * - {@link kataOrHou} 方: カタ for a person (あの方, あちらの方が受付を, ご希望の方, 係の方),
 *   ホー for a side, a direction or a comparison (こちらの方がいい, 駅の方へ, 寝た方が);
 * - {@link hitoke} 人気: ヒトケ (presence of people) before の + ない/少ない (人気のない夜道), and
 *   before が + ない/なくなる when a place or a time has none (夜は人気がなくなる); ニンキ
 *   (popularity) for a person or a thing (この歌手は人気がない);
 * - {@link wordAfterTimeAdverb} 家/人/店/車/雨 after a time adverb: a word of its own (毎日家に
 *   イエ, 明日店に ミセ), not IPADIC's Sino-Japanese suffix (毎日家 カ, 明日店 テン);
 * - {@link kome} 米 standing alone is コメ (rice); ベイ (America) only in compounds (日米, 米軍);
 * - {@link ke} 家 after a family name is ケ (田中家);
 * - {@link kado} 角 standing alone is カド (a corner), not カク (an angle: 角度, 三角);
 * - {@link aida} 間 after の or a modifier is アイダ (二人の間, 長い間), not マ;
 * - {@link sideOnScreen} 上/下 after 右/左/斜め is ウエ/シタ (右上), not ジョー/カ;
 * - {@link nagaoshi} 長押 before し is ナガオ (長押しする), not ナゲシ (a lintel);
 * - {@link nichiGemination} 日 (Japan) before a country read with k or ch is ニッ (日中 ニッチュー,
 *   日韓 ニッカン);
 * - {@link hitome} 一目: ヒトメ, a glance (一目でわかる), but in 一目置く;
 * - {@link konnichi} 今日: コンニチ "nowadays" in 今日では, 今日に至る and 今日まで before a verb of
 *   handing down (今日まで伝わる), else キョー;
 * - {@link meshita} 目下 before の + people is メシタ (目下の者), else モッカ;
 * - {@link shita} 下 after の, read モト by IPADIC, is シタ unless で or に follows (座席の下か);
 * - {@link uwate} 上手 after a count of 枚 is ウワテ (一枚上手), else ジョーズ;
 * - {@link haireru} 入れる: ハイレル, the potential of 入る, with no object nor goal and ending its
 *   clause (やっと入れた, 誰でも入れます); イレル otherwise (お茶を入れた, 箱に入れた);
 * - {@link chou} 町 ending a town's name in an address, before its 丁目 or 番地: チョー
 *   (桜木町一丁目), where IPADIC does not know the name as a place.
 * Then {@link EXCEPTIONS}: single words and phrases whose dictionary reading is wrong everywhere,
 * each with why it is an exception rather than a rule.
 *
 * Sources: IPADIC's part-of-speech tags (ipadic 2.7.0 as kuromoji.js ships it,
 * https://github.com/takuyaa/kuromoji.js); for the readings, the senses Japanese dictionaries give
 * each one (中: じゅう "throughout the whole of", ちゅう "during, in the course of"; 開く: あく
 * intransitive, ひらく transitive and "to unfold"; 人気: ひとけ "sign of people about", にんき
 * "popularity"; 後: のち "later", and in weather forecasts "then" (晴れのち曇り, as the Japan
 * Meteorological Agency writes it); 今日: こんにち "these days"; 上手: うわて "a cut above"); for
 * 町 in addresses, the official readings of town names as Japan Post's postal-code data gives them
 * (桜木町 さくらぎちょう, 山下町 やましたちょう, 三宮町 さんのみやちょう, 人形町 にんぎょうちょう,
 * beside 大手町 おおてまち and 麹町 こうじまち: most, not all, urban town names with 丁目 are ちょう). Each rule is tested on sentences that were not used to write it, including
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

/** Ages 後 (ノチ, "later") qualifies with の: 後の世 (posterity), 後の時代 (later ages). */
const LATER_AGES = new Set(['世', '時代']);

/** Weather in a forecast (晴れ, 曇り, 雨, 雪), as written or as IPADIC's basic form (曇り: 曇る). */
const WEATHER = new Set(['晴れ', '晴', '晴れる', '曇り', '曇', '曇る', '雨', '小雨', '大雨', '雷雨', 'にわか雨', '雪', '大雪', 'みぞれ', '霧', '雷']);

/** Whether token `j` is a weather word of a forecast. */
function isWeather(c: Context, j: number): boolean {
  const t = c.tokens[j];
  return t !== undefined && (WEATHER.has(t.surface_form) || WEATHER.has(t.basic_form));
}

/**
 * Whether 後 at `i` starts a clause as the adverb "later" (彼は後に有名になった, 後に、…): at the
 * start of the text or of a clause, or right after a topic or subject (は, が, も), before に — and
 * not when a verb follows に: 後に続く, 後にする, 後になって, 後に残る are アト, a place behind.
 */
function laterOn(c: Context, i: number): boolean {
  const prev = c.tokens[i - 1];
  const atStart = prev === undefined || prev.pos === '記号' || isParticle(prev, 'は', 'が', 'も');
  return atStart && isParticle(c.tokens[i + 1], 'に') && c.tokens[i + 2]?.pos !== '動詞';
}

/**
 * 後 (IPADIC: ノチ as a dependent noun, ゴ as a suffix): ノチ between two weather words of a
 * forecast (曇り後晴れ クモリノチハレ; IPADIC's word 雨後 ウゴ there is アメノチ) and as the adverb
 * "later" at the start of a clause (彼は後に有名になった ノチニ: {@link laterOn}) and before の +
 * an age (後の世 ノチノヨ, 後の時代: {@link LATER_AGES}); else アト as a
 * noun — after の or a verb (食事の後に, 食べた後で, この後) and standing alone (後から, 後は); ゴ
 * only as a suffix right after a noun (三日後, 一週間後, 帰宅後). ノチ stays in its fixed words
 * (後ほど).
 */
const ato: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.surface_form === '雨後' && isWeather(c, i + 1)) return 'アメノチ';
  if (t.surface_form !== '後' || t.pos !== '名詞') return undefined;
  if (isWeather(c, i - 1) && isWeather(c, i + 1)) return 'ノチ';
  if (laterOn(c, i)) return 'ノチ';
  if (isParticle(c.tokens[i + 1], 'の') && LATER_AGES.has(c.tokens[i + 2]?.surface_form ?? '')) return 'ノチ';
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
 * word (一日|中本|を, 一年|中海|で, 一日|中外|に): that is ジュー and the word said alone; after a
 * count read out in kana it may take 中 for a prefix (ヒト|バン|中|七転八倒): ジュー too. When the
 * rest and the suffix after it make one word (一日|中部|屋: 部屋 ヘヤ, not 中部 and 屋 ヤ), the rest
 * is read as the head of that word and the suffix keeps its own reading.
 */
const throughout: Rule = (c, i) => {
  const t = c.tokens[i]!;
  const prev = c.tokens[i - 1];
  // After a count in kana (ヒトバン中) IPADIC may take 中 for a prefix of the next word (接頭詞).
  if (prev === undefined || (t.pos !== '名詞' && t.pos !== '接頭詞') || !t.surface_form.startsWith('中')) return undefined;
  const period = isPeriodCount(c, i - 1);
  if (t.surface_form === '中') {
    if (t.pos_detail_1 !== '接尾' && !period) return undefined;
    const place = prev.pos_detail_1 === '固有名詞' && prev.pos_detail_2 === '地域';
    return period || place || WHOLES.has(prev.surface_form) || WHOLE_PERIODS.has(prev.surface_form) ? 'ジュー' : undefined;
  }
  if (!period) return undefined;
  const rest = t.surface_form.slice(1);
  // The rest may be the head of a word whose tail IPADIC took for a suffix (一日|中部|屋: 部屋).
  const next = c.tokens[i + 1];
  const tail = next?.pos_detail_1 === '接尾' ? (next.pronunciation ?? next.reading) : undefined;
  const whole = next === undefined || tail === undefined ? undefined : readingAlone(c, rest + next.surface_form);
  if (whole !== undefined && tail !== undefined && whole.endsWith(tail) && whole.length > tail.length) return `ジュー${whole.slice(0, -tail.length)}`;
  const alone = readingAlone(c, rest);
  return alone === undefined ? undefined : `ジュー${alone}`;
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

/** Words saying there are few or no people: ない, 無い, 少ない, 絶える, なくなる. */
const SCARCE = new Set(['ない', '無い', '少ない', '絶える', '途絶える', 'なくなる', '無くなる']);
/** Places people may be about in (for 人気 ヒトケ); place names (固有名詞,地域) count too. */
const PLACES = new Set(['道', '夜道', '通り', '路地', '裏通り', '公園', '駅', 'ホーム', '広場', '街', '町', '村', '森', '山', '海', '浜', '浜辺', '砂浜', 'ビーチ', '海岸', '河原', '川原', '辺り', '周り', '周辺', '建物', '校舎', '廊下', '境内', '店内', '館内', '構内', '車内', '屋敷', '島', '住宅街', '商店街']);

/** Whether token `t` names a place or a time (名詞,副詞可能: 夜, 深夜, 冬) — where people may or may not be about. */
function isPlaceOrTime(t: AnalyzedToken | undefined): boolean {
  return t !== undefined && isNoun(t) && (t.pos_detail_1 === '副詞可能' || t.pos_detail_2 === '地域' || PLACES.has(t.surface_form));
}

/**
 * The topic nearest before token `i` in the sentence: the noun before a は or a も, also through
 * に (公園には) and across a clause (この通りは夜になると…) — none when で comes with it
 * (東京では: "in Tokyo", a scope).
 */
function topicBefore(tokens: readonly AnalyzedToken[], i: number): AnalyzedToken | undefined {
  for (let j = i - 1; j > 0; j--) {
    if (!isParticle(tokens[j], 'は', 'も')) continue;
    let k = j - 1;
    while (k >= 0 && tokens[k]!.pos === '助詞') {
      if (tokens[k]!.surface_form === 'で') return undefined;
      k--;
    }
    return k >= 0 ? tokens[k] : undefined;
  }
  return undefined;
}

/**
 * 人気 (IPADIC: ニンキ, popularity) is ヒトケ, people about, when scarce: before の + ない/少ない
 * (人気のない夜道, 人気の少ない), before が/も + 少ない, and before が/も + ない/なくなる when a
 * place or a time is what has none — as the topic (夜は人気がなくなる, 公園には人気がない,
 * この通りは夜になると人気がなくなる: {@link topicBefore}) or the noun it describes (人気がない
 * 路地). A person or a thing without it lacks popularity (この歌手は人気がない ニンキ); negated,
 * nothing is scarce (人気が絶えない ニンキ).
 */
const hitoke: Rule = (c, i) => {
  if (c.tokens[i]!.surface_form !== '人気') return undefined;
  const particle = c.tokens[i + 1];
  const scarce = c.tokens[i + 2]?.basic_form ?? '';
  const negated = c.tokens[i + 3]?.pos === '助動詞' && ['ない', 'ぬ', 'ん'].includes(c.tokens[i + 3]!.basic_form);
  // Not scarce when negated: 人気が絶えない, 人気が少なくない.
  if (!SCARCE.has(scarce) || negated) return undefined;
  if (isParticle(particle, 'の') || (isParticle(particle, 'が', 'も') && scarce === '少ない')) return 'ヒトケ';
  if (!isParticle(particle, 'が', 'も')) return undefined;
  const described = c.tokens[i + 3];
  return isPlaceOrTime(topicBefore(c.tokens, i)) || (c.tokens[i + 2]!.conjugated_form === '基本形' && isPlaceOrTime(described)) ? 'ヒトケ' : undefined;
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

/**
 * 一目 the noun (IPADIC: イチモク, which it prefers to its adverb ヒトメ) is ヒトメ, a glance (一目で
 * わかる, 一目見ただけで), but in 一目置く (to acknowledge someone's superiority, from go).
 */
const hitome: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.surface_form !== '一目' || (t.pronunciation ?? t.reading) !== 'イチモク') return undefined;
  return c.tokens[i + 1]?.basic_form === '置く' ? undefined : 'ヒトメ';
};

/** Verbs of what is handed down over ages (伝統が今日まで受け継がれる), for 今日まで コンニチ. */
const HANDED_DOWN = new Set(['受け継ぐ', '語り継ぐ', '伝わる', '伝承', '継承']);

/**
 * 今日 (IPADIC: キョー) is コンニチ, "nowadays", in 今日では (今日では誰もが…), 今日に至る and
 * 今日まで before a verb of handing down (今日まで伝わる, 今日まで受け継がれる: {@link HANDED_DOWN})
 * — not in 今日は, 今日の, 今日で (今日で終わり: the day), nor 今日まで before another verb
 * (今日まで待つ, 今日まで続く: "until today" as well as "to this day").
 */
const konnichi: Rule = (c, i) => {
  if (c.tokens[i]!.surface_form !== '今日') return undefined;
  const next = c.tokens[i + 1];
  const after = c.tokens[i + 2];
  if (isParticle(next, 'で') && isParticle(after, 'は')) return 'コンニチ';
  if (isParticle(next, 'まで') && HANDED_DOWN.has(after?.basic_form ?? '')) return 'コンニチ';
  return isParticle(next, 'に') && after?.basic_form === '至る' ? 'コンニチ' : undefined;
};

/** Nouns of people 目下 (メシタ) describes: 目下の者, 目下の人. */
const PEOPLE = new Set(['者', '人', '方', '人間', '相手', '社員', '部下']);

/**
 * 目下 (IPADIC: モッカ, "at present") is メシタ, "one's inferiors", before の + a noun of people
 * (目下の者, 目下の人に); モッカ stays elsewhere (目下のところ, 目下検討中).
 */
const meshita: Rule = (c, i) => {
  if (c.tokens[i]!.surface_form !== '目下' || !isParticle(c.tokens[i + 1], 'の')) return undefined;
  return PEOPLE.has(c.tokens[i + 2]?.surface_form ?? '') ? 'メシタ' : undefined;
};

/**
 * 下 after の read モト by IPADIC (its dependent noun, "under the rule or care of") is モト only in
 * の下で / の下に / の下、 (先生の指導の下で, 法の下に); before any other particle it is the place
 * below, シタ (座席の下か, 机の下から, 椅子の下を).
 */
const shita: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.surface_form !== '下' || (t.pronunciation ?? t.reading) !== 'モト' || !isParticle(c.tokens[i - 1], 'の')) return undefined;
  const next = c.tokens[i + 1];
  return next !== undefined && next.pos !== '記号' && !isParticle(next, 'で', 'に') ? 'シタ' : undefined;
};

/** A count of 枚 as the number step reads it (イチマイ, ニマイ …). */
const MAI_IN_KANA = /^[\p{Script=Katakana}ー]+マイ$/u;

/**
 * 上手 (IPADIC: ジョーズ, skilled) right after a count of 枚 is ウワテ, a rank above (相手が一枚上手
 * だ: "a cut above"); elsewhere ジョーズ.
 */
const uwate: Rule = (c, i) => {
  if (c.tokens[i]!.surface_form !== '上手') return undefined;
  const prev = c.tokens[i - 1];
  return prev !== undefined && (MAI_IN_KANA.test(prev.surface_form) || prev.surface_form === '枚') ? 'ウワテ' : undefined;
};

/**
 * 入れる (IPADIC: イレル, to put in) is ハイレル, the potential of 入る (can get in), when its
 * clause has no object nor goal before it (no を, に, へ, は, も; nor a bare noun right before it)
 * and it ends the clause with only auxiliaries after it (やっと入れた, 誰でも入れます,
 * 会員だけが入れる). With an object or a goal (お茶を入れた, 箱に入れた), in the て-form
 * (入れてもらえる) or before a noun (入れた鍋) it stays イレル; so does 店に入れなかった, where
 * the analysis cannot tell "could not get in" from "did not put in".
 */
const haireru: Rule = (c, i) => {
  const t = c.tokens[i]!;
  if (t.pos !== '動詞' || t.basic_form !== '入れる' || !t.surface_form.startsWith('入')) return undefined;
  for (let j = i - 1; j >= 0; j--) {
    const b = c.tokens[j]!;
    if (b.pos === '記号' || b.pos === '動詞' || b.pos === '助動詞' || b.pos_detail_1 === '接続助詞') break;
    if (isParticle(b, 'を', 'に', 'へ', 'は', 'も') || (j === i - 1 && isNoun(b))) return undefined;
  }
  let k = i + 1;
  while (c.tokens[k]?.pos === '助動詞') k++;
  const end = c.tokens[k];
  const endsClause = end === undefined || end.pos === '記号' || end.pos_detail_1 === '終助詞' || (end.pos_detail_1 === '接続助詞' && !isParticle(end, 'て', 'で'));
  return endsClause ? restem(t, 'イ', 'ハイ') : undefined;
};

/**
 * A number as the number step reads it out (イッチョーメ, ジューバンチ, イチノニノサン): katakana
 * beginning with a digit's reading; IPADIC does not know it as a word.
 */
const NUMBER_IN_KANA = /^(イッ|イチ|ニ|サン|ヨン|ゴ|ロッ|ロク|ナナ|ハッ|ハチ|キュー|ジュッ|ジュー|ヒャッ|ヒャク|セン|マン)[\p{Script=Katakana}ー]*$/u;

/** Whether token `t` is a number: digits, or one the number step read out (an unknown word to IPADIC). */
function isNumberRead(t: AnalyzedToken | undefined): boolean {
  if (t === undefined) return false;
  return /^\d/u.test(t.surface_form) || (NUMBER_IN_KANA.test(t.surface_form) && (t.reading === undefined || t.reading === '*'));
}

/** Whether a ward, city, district or prefecture (名詞,接尾,地域: 区, 市, 郡, 県 …) comes before token `j`: an address. */
function inAddress(c: Context, j: number): boolean {
  return c.tokens.slice(0, j).some((t) => t.pos_detail_1 === '接尾' && t.pos_detail_2 === '地域' && /^[都道府県市区郡]$/u.test(t.surface_form));
}

/**
 * 町 ending a town's name in an address — after a city or ward and before its 丁目 or 番地 — is
 * チョー (三宮町一丁目, 桜木町一丁目, 山下町十番地), where IPADIC, not knowing the name, reads its
 * suffix 町 マチ, or knows the name only as a family name (本町 ホンマチ). Names IPADIC has as places
 * keep its reading (大手町 オーテマチ, 有楽町 ユーラクチョー), and so does 町 outside addresses
 * (町内, 下町, 生まれた町).
 */
const chou: Rule = (c, i) => {
  const t = c.tokens[i]!;
  const suffix = t.surface_form === '町' && t.pos_detail_1 === '接尾' && isNoun(c.tokens[i - 1]);
  const familyName = t.surface_form.endsWith('町') && t.pos_detail_2 === '人名';
  if (!suffix && !familyName) return undefined;
  if (!isNumberRead(c.tokens[i + 1]) || !inAddress(c, i)) return undefined;
  const reading = t.pronunciation ?? t.reading ?? '';
  return reading.endsWith('マチ') ? `${reading.slice(0, -2)}チョー` : undefined;
};

/** The rules, tried in order on each token; the first that gives a reading wins. */
const RULES: readonly Rule[] = [
  akuOrHiraku,
  suku,
  furu,
  ato,
  throughout,
  kataOrHou,
  hitoke,
  kome,
  ke,
  wordAfterTimeAdverb,
  kado,
  aida,
  sideOnScreen,
  nagaoshi,
  nichiGemination,
  hitome,
  konnichi,
  uwate,
  meshita,
  shita,
  haireru,
  chou,
];

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
  { surfaces: ['宝物'], readings: ['タカラモノ'], why: 'IPADIC prefers ホウモツ, the word for the treasures of a temple or a museum; the everyday word (一生の宝物, 子供の宝物) is たからもの' },
  { surfaces: ['腹痛'], readings: ['フクツー'], why: 'IPADIC prefers ハライタ, a colloquial reading; written 腹痛 (news, a medicine\'s label, a doctor) is ふくつう' },
  { surfaces: ['中京', '区'], readings: ['ナカギョー', undefined], why: 'IPADIC reads 中京 チュウキョウ, the Nagoya region (中京地区), and has no entry for Kyoto\'s ward 中京区, なかぎょうく (上京区 かみぎょうく and 下京区 しもぎょうく it has)' },
  { surfaces: ['三宮'], readings: ['サンノミヤ'], why: 'IPADIC has the place 三宮 as さんぐう; the place everyone knows, Kobe\'s centre (三宮駅, 三宮町), is さんのみや' },
  { surfaces: ['予', '熱'], readings: ['ヨ', undefined], why: 'IPADIC lacks 予熱 (preheating) and has no reading for 予 alone, which was dropped; 予熱 is よねつ' },
  { surfaces: ['洗濯', '物'], readings: [undefined, 'モノ'], why: 'a Sino-Japanese noun + 物 is ブツ (廃棄物, 添加物, 印刷物), as IPADIC reads it; 洗濯物 (laundry) is せんたくもの (the native ones, 食べ物 and 買い物, are words of their own in IPADIC)' },
  { surfaces: ['横', '好き'], readings: [undefined, 'ズキ'], why: '横好き (an amateur\'s love, 下手の横好き) takes rendaku, よこずき; IPADIC has the word but splits it as 横|好き スキ after の' },
  { surfaces: ['梅雨', '前線'], readings: ['バイウ', undefined], why: 'the weather term 梅雨前線 is ばいうぜんせん (Japan Meteorological Agency); IPADIC reads 梅雨 つゆ, which stays in everyday compounds (梅雨明け, 梅雨入り)' },
  { surfaces: ['今', '年初'], readings: ['コトシ', 'ハツ'], why: 'IPADIC splits 今年初 (this year\'s first, 今年初の猛暑日) as the prefix 今 コン + 年初 ネンショ (start of a year); 今年 + 初 is ことしはつ' },
  { surfaces: ['大谷'], readings: ['オータニ'], why: 'IPADIC reads the family name 大谷 おおや; おおたに is far more common (大谷翔平, 大谷大学)' },
  { surfaces: ['予', '熱し'], readings: ['ヨ', 'ネツシ'], why: 'as 予|熱, and 予熱して splits as the verb 熱す (ネッシテ); the サ変 verb 予熱する is よねつして' },
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
