/**
 * The number reader (src/engine/japanese-numbers.ts, issue 25 point 1): numbers in kanji numerals
 * and in digits read by one reader, with the counters' sound changes, dates, people, hours, ages,
 * codes and addresses; words that merely contain numeral kanji keep their readings. Each class is
 * checked on sentences written for these tests (not taken from the reading fixtures), at the
 * number stage (`numbers`: what speechSegments does before kuromoji reads the other kanji), and a
 * few end to end.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadTokenizer, speechSegments, type JapaneseTokenizer } from '../../src/engine/japanese.js';
import { numeralValue, readAllNumbers, readKanjiNumerals, readNumbers } from '../../src/engine/japanese-numbers.js';
import { fliteRun, loadFlite } from '../../src/engine/flite.js';
import { phoneGroups } from '../../src/engine/word-timings.js';

let tokenizer: JapaneseTokenizer;
before(async () => {
  tokenizer = await loadTokenizer();
});

/** The text after the number stage: kanji numerals found by kuromoji's analysis, then digits. */
function numbers(text: string): string {
  return readNumbers(readKanjiNumerals(text, tokenizer));
}

/** Every number of `text` joined as eSpeak NG gets it. */
async function spoken(text: string): Promise<string> {
  return (await speechSegments(text, 'ja')).map((s) => s.text).join('');
}

test('kanji numerals: the value of positional, grouped and mixed forms; ranges and malformed runs are no number', () => {
  for (const [numeral, value] of [
    ['二十五', '25'],
    ['三百三十三', '333'],
    ['三万八千', '38000'],
    ['3万8千', '38000'],
    ['1,000万', '10000000'],
    ['一千万', '10000000'],
    ['十億', '1000000000'],
    ['二兆五千億', '2500000000000'],
    ['二〇二四', '2024'],
    ['一九八九', '1989'],
    ['〇三', '03'],
    ['零', '0'],
  ] as const) {
    assert.equal(numeralValue(numeral), value, numeral);
  }
  for (const numeral of ['二三', '四五', '七五三', '十百', '二三十', '万', '億万']) assert.equal(numeralValue(numeral), undefined, numeral);
});

test('kanji numerals and digits go through one reader: the same reading with every counter', async () => {
  const kanji: Record<string, string> = { 1: '一', 2: '二', 3: '三', 4: '四', 6: '六', 7: '七', 8: '八', 9: '九', 10: '十', 20: '二十', 100: '百', 300: '三百', 800: '八百', 1000: '千', 3000: '三千', 10000: '一万' };
  // 分 is left out: 二分 (ニブン "halve") and 十分 ("enough") alone are words (the hours test).
  const counters = ['本', '匹', '杯', '泊', '羽', '個', '回', '階', '軒', '冊', '歳', '足', '着', '丁目', '点', '頭', '枚', '台', '日', '人', '時', '年', '円', '週間', 'か月', '棟', '隻', '部屋'];
  const words: string[] = [];
  for (const counter of counters) {
    for (const [digits, numeral] of Object.entries(kanji)) {
      // A few are words of their own to IPADIC (千歳 チトセ, a city), which keep their reading.
      const asWord = tokenizer.tokenize(numeral + counter);
      if (asWord.length === 1 && asWord[0]!.pos_detail_1 !== '数') {
        words.push(numeral + counter);
        continue;
      }
      assert.equal(await spoken(`箱に${numeral}${counter}。`), await spoken(`箱に${digits}${counter}。`), `${numeral}${counter}`);
    }
  }
  assert.ok(words.length <= 10, words.join(' '));
});

test('counters: gemination and voicing by class, for numbers in kanji', () => {
  // h: 1 6 8 10 100 geminate with p; b after 3, 千, 何.
  assert.equal(numbers('傘が一本、三本、六本、八本、十本、百本、三千本、何本'), '傘がイッポン、サンボン、ロッポン、ハッポン、ジュッポン、ヒャッポン、サンゼンボン、ナンボン');
  assert.equal(numbers('猫を三匹、湯を一杯、三杯'), '猫をサンビキ、湯をイッパイ、サンバイ');
  // 分 and 泊: p after 3 and 4 too.
  assert.equal(numbers('一分、三分、四分、六分、八分、二十分待つ'), 'イップン、サンプン、ヨンプン、ロップン、ハップン、ニジュップン待つ');
  assert.equal(numbers('旅館に一泊、三泊した'), '旅館にイッパク、サンパクした');
  // k: 1 6 8 10 100 geminate; 階 and 軒 voiced after 3 and 何.
  assert.equal(numbers('卵が一個、六個、八個、十個、百個'), '卵がイッコ、ロッコ、ハッコ、ジュッコ、ヒャッコ');
  assert.equal(numbers('ビルの三階と何階、家が三軒、一回、六回'), 'ビルのサンガイとナンガイ、家がサンゲン、イッカイ、ロッカイ');
  // s/t: 1 8 10 geminate; 足 voiced after 3.
  assert.equal(numbers('本を一冊、八冊、十冊'), '本をイッサツ、ハッサツ、ジュッサツ');
  assert.equal(numbers('靴下を三足、背広を一着、八着'), '靴下をサンゾク、背広をイッチャク、ハッチャク');
  assert.equal(numbers('一頭の馬と十点の作品'), 'イットーの馬とジュッテンの作品');
  // 羽: ワ, b after 3 and 千, p after the 6, 10, 100 geminates.
  assert.equal(numbers('鶴が一羽、三羽、六羽、十羽、千羽'), '鶴がイチワ、サンバ、ロッパ、ジュッパ、センバ');
  // No change: 枚, 台; before a p loanword only 10 geminates.
  assert.equal(numbers('切手を八枚、車を六台、十パーセント'), '切手をハチマイ、車をロクダイ、ジュッパーセント');
  // Counters read with native numbers for 1 and 2.
  assert.equal(numbers('一晩泊めて、二口食べた'), 'ヒトバン泊めて、フタクチ食べた');
  // A word of numeral and counter to IPADIC is a quantity right before a verb only.
  assert.equal(numbers('羊を八頭飼う'), '羊をハットー飼う');
  assert.equal(numbers('百足が這う'), '百足が這う');
});

test('counters of issue 25\'s second pass: 棟 脚 隻 艘 章 勝 周 食 滴 戸 基 校 課 貫 品 by class, 行 ギョー, native 文字 部屋 駅 束', async () => {
  // s/t: 1 8 10 geminate.
  assert.equal(numbers('火事で一棟、三棟、十棟が焼けた'), '火事でイットー、サントー、ジュットーが焼けた');
  assert.equal(numbers('港に漁船が八隻と小舟が一艘'), '港に漁船がハッセキと小舟がイッソー');
  assert.equal(await spoken('第八章と第十章を読む。'), 'ダイハッショートダイジュッショーヲヨム。');
  assert.equal(numbers('今季は八勝した'), '今季はハッショーした');
  assert.equal(numbers('校庭を八周走った'), '校庭をハッシュー走った');
  assert.equal(numbers('目薬を八滴さす'), '目薬をハッテキさす');
  // k: 1 6 8 10 100 geminate.
  assert.equal(numbers('椅子を一脚と六脚'), '椅子をイッキャクとロッキャク');
  assert.equal(numbers('住宅が一戸と六戸'), '住宅がイッコとロッコ');
  assert.equal(numbers('風車が六基ある'), '風車がロッキある');
  assert.equal(numbers('参加校は八校'), '参加校はハッコー');
  assert.equal(numbers('寿司を十貫食べた'), '寿司をジュッカン食べた');
  // h with p after 3: 品.
  assert.equal(numbers('前菜を三品と六品'), '前菜をサンピンとロッピン');
  // No change: 行 (lines, ギョー — IPADIC's counter reads コー), 膳, 錠, 畳.
  assert.equal(numbers('三行目から五行まで'), 'サンギョー目からゴギョーまで');
  assert.equal(numbers('箸を二膳、薬を三錠、六畳の和室'), '箸をニゼン、薬をサンジョー、ロクジョーの和室');
  // Native for 1 and 2.
  assert.equal(numbers('二部屋と三部屋、一駅、花を一束'), 'フタヘヤとサンヘヤ、ヒトエキ、花をヒトタバ');
  // A counter IPADIC cuts in two: 人|掛け, seats for so many (rendaku ガケ).
  assert.equal(numbers('四人掛けと二人掛け、6人掛け'), 'ヨニンガケとフタリガケ、ロクニンガケ');
  assert.equal(numbers('四人で掛けた'), 'ヨニンで掛けた');
  // Digits: a counter's kanji that starts another word is no counter.
  assert.equal(numbers('第2校舎の3行事'), '第ニ校舎のサン行事');
});

test('counters 斤 (k: イッキン) and 週 (s/t like 週間: ジュッシュー); 週 before 間 stays 週間', () => {
  assert.equal(numbers('食パンを一斤と六斤'), '食パンをイッキンとロッキン');
  assert.equal(numbers('三斤のパン'), 'サンキンのパン');
  assert.equal(numbers('売上は八週続けて伸びた'), '売上はハッシュー続けて伸びた');
  assert.equal(numbers('一週目と十週目'), 'イッシュー目とジュッシュー目');
  assert.equal(numbers('3週連続'), 'サンシュー連続');
  assert.equal(numbers('二週間と十週'), 'ニシューカンとジュッシュー');
});

test('a word of numeral and counter to IPADIC is a count before a verb, an ordinal 目 or a bound; elsewhere a word', () => {
  assert.equal(numbers('一行目を消す'), 'イチギョー目を消す');
  assert.equal(numbers('名前は十文字以内、一文字ずつ'), '名前はジューモジ以内、ヒトモジずつ');
  assert.equal(numbers('八文字以上にする'), 'ハチモジ以上にする');
  // The same words elsewhere: 一行 "the party", 一品料理, 一文字 (a straight line) keep IPADIC's reading.
  assert.equal(numbers('視察団の一行が到着した'), '視察団の一行が到着した');
  assert.equal(numbers('一品料理の店'), '一品料理の店');
  assert.equal(numbers('眉を一文字に結ぶ'), '眉を一文字に結ぶ');
});

test('十分 before a verb: minutes before one that takes a span (かかる, 遅れる), else "enough"', async () => {
  assert.equal(numbers('駅まで十分かかる'), '駅までジュップンかかる');
  assert.equal(numbers('電車が十分遅れた'), '電車がジュップン遅れた');
  assert.equal(numbers('時間は十分ある'), '時間は十分ある');
  assert.equal(numbers('もう十分休んだ'), 'もう十分休んだ');
  assert.equal(await spoken('食料は十分ある。'), 'ショクリョーワジューブンアル。');
});

test('numbers: grouped readings with their sound changes (三百 サンビャク, 八百, 三千, 三万八千)', () => {
  assert.equal(numbers('定員は三百人'), '定員はサンビャクニン');
  assert.equal(numbers('六百と八百と三千と八千'), 'ロッピャクとハッピャクとサンゼンとハッセン');
  assert.equal(numbers('家賃は三万八千円'), '家賃はサンマンハッセンエン');
  assert.equal(numbers('予算は3万8千円'), '予算はサンマンハッセンエン');
  assert.equal(numbers('人口は百二十万'), '人口はヒャクニジューマン');
  assert.equal(numbers('西暦二〇二四年'), '西暦ニセンニジューヨネン');
  assert.equal(numbers('事件は一一〇番へ'), '事件はヒャクトーバンへ');
  assert.equal(numbers('何百人も数千人も'), 'ナンビャクニンもスーセンニンも');
});

test('dates: ツイタチ only as a date; イツカ, ヨーカ, トーカ, ジューヨッカ, ハツカ, ニジューヨッカ', () => {
  assert.equal(numbers('六月一日に開店'), '六月ツイタチに開店');
  assert.equal(numbers('翌月の一日から'), '翌月のツイタチから');
  assert.equal(numbers('毎月一日は特売'), '毎月ツイタチは特売');
  assert.equal(numbers('一日付で着任'), 'ツイタチ付で着任');
  assert.equal(numbers('一日に二回'), 'イチニチにニカイ');
  assert.equal(numbers('一日だけ'), 'イチニチだけ');
  assert.equal(numbers('五日、六日、七日、八日、九日、十日'), 'イツカ、ムイカ、ナノカ、ヨーカ、ココノカ、トーカ');
  assert.equal(numbers('十四日と二十日と二十四日と十七日'), 'ジューヨッカとハツカとニジューヨッカとジューシチニチ');
  assert.equal(numbers('三日後と十日間'), 'ミッカ後とトーカカン');
  assert.equal(numbers('8月1日と来月の1日'), 'ハチガツツイタチと来月のツイタチ');
});

test('people: ヒトリ, フタリ, then ニン (ヨニン); 一人前 is イチニンマエ', () => {
  assert.equal(numbers('一人、二人、三人、四人、十人'), 'ヒトリ、フタリ、サンニン、ヨニン、ジューニン');
  assert.equal(numbers('二人組と一人前'), 'フタリグミとイチニンマエ');
  assert.equal(numbers('何人来る'), 'ナンニン来る');
});

test('hours: ヨジ, シチジ, クジ, レイジ; 十分 is ten minutes after an hour or before a span, else "enough"', () => {
  assert.equal(numbers('四時、七時、九時、零時'), 'ヨジ、シチジ、クジ、レイジ');
  assert.equal(numbers('四時半と九時間'), 'ヨジハンとクジカン');
  assert.equal(numbers('八時十分に'), 'ハチジジュップンに');
  assert.equal(numbers('十分後に、約十分で、十分ほど'), 'ジュップン後に、約ジュップンで、ジュップンほど');
  assert.equal(numbers('時間は十分にある'), '時間は十分にある');
  assert.equal(numbers('二分後と九時九分'), 'ニフン後とクジキューフン');
  assert.equal(numbers('線で二分する'), '線で二分する');
  assert.equal(numbers('これで十分だ'), 'これで十分だ');
  assert.equal(numbers('何時に何分かかる'), 'ナンジにナンプンかかる');
});

test('ages: 二十歳 and 20歳 are ハタチ; イッサイ, ハッサイ, ジュッサイ', () => {
  assert.equal(numbers('兄は二十歳、弟は八歳'), '兄はハタチ、弟はハッサイ');
  assert.equal(numbers('20歳と1歳と10歳と九十一歳'), 'ハタチとイッサイとジュッサイとキュージューイッサイ');
});

test('words that merely contain numeral kanji keep their word reading', () => {
  for (const text of [
    '一緒に行く',
    '一番好きだ',
    '一生懸命に走る',
    '万一のために',
    '十分な量',
    '一部の地域',
    '一般の人',
    '三日月の夜',
    '七夕の日',
    '八百屋の店先',
    '一石二鳥の策',
    '四季の移ろい',
    '九州の南',
    '二人三脚の日々',
    '三味線の音',
    '千葉の港',
    '十字路の角',
    '五月雨の季節',
    '一時停止する',
    '第一の理由',
    '一から始める',
    '一二を争う',
    '七五三のお祝い',
    '二三日休む',
    '一人暮らしの部屋',
    '三日坊主の日記',
    '十人十色の意見',
    '何がいい',
  ]) {
    assert.equal(readKanjiNumerals(text, tokenizer), text, text);
  }
});

test('addresses and codes: postal codes and phone numbers digit by digit with ノ; 丁目, 番地, 号', () => {
  assert.equal(numbers('〒105-0011'), 'ユービンバンゴーイチゼロゴーノゼロゼロイチイチ');
  assert.equal(numbers('郵便番号は812-0012です'), '郵便番号はハチイチニーノゼロゼロイチニーです');
  assert.equal(numbers('電話は06-6543-2109へ'), '電話はゼロロクノロクゴーヨンサンノニーイチゼロキューへ');
  assert.equal(numbers('090-1111-2222'), 'ゼロキューゼロノイチイチイチイチノニーニーニーニー');
  assert.equal(numbers('本町2-14-7'), '本町ニノジューヨンノナナ');
  assert.equal(numbers('港町3-8の角'), '港町サンノハチの角');
  assert.equal(numbers('一丁目と八丁目と十丁目'), 'イッチョーメとハッチョーメとジュッチョーメ');
  assert.equal(numbers('四丁目十一番地の三'), 'ヨンチョーメジューイチバンチの三');
  assert.equal(numbers('二番五号'), 'ニバンゴゴー');
});

test('a date in digits with - / or . is a date, not an address (2024-12-31 is not 丁目-番-号)', () => {
  assert.equal(numbers('2024-12-31'), 'ニセンニジューヨネンジューニガツサンジューイチニチ');
  assert.equal(numbers('2024/1/1に'), 'ニセンニジューヨネンイチガツツイタチに');
  assert.equal(numbers('締切は2025.04.20です'), '締切はニセンニジューゴネンシガツハツカです');
  // Not a date: a month or day out of range, a year of other than four digits, a longer run.
  assert.equal(numbers('2024-13-1'), 'ニセンニジューヨンノジューサンノイチ');
  assert.equal(numbers('本町12-3-4'), '本町ジューニノサンノヨン');
  assert.equal(numbers('2024-12-31-5'), 'ニセンニジューヨン-ジューニ-サンジューイチ-ゴ');
  // Inside a Latin word (a version, v2024.1.2) it is left to the English voice, as MP3 is.
  assert.equal(numbers('v2024.1.2'), 'v2024.1.2');
});

test('a hyphen range with a counter is a range (カラ), not two parts of an address; an address keeps ノ (found by review: 期間3-5日 was サンノゴ日)', () => {
  assert.equal(readNumbers('期間3-5日です'), '期間サンカライツカです');
  assert.equal(readNumbers('参加者10-20人'), '参加者ジューカラニジューニン');
  assert.equal(readNumbers('第2-3章'), '第ニカラサンショー');
  assert.equal(readNumbers('午後2-3時'), '午後ニカラサンジ');
  assert.equal(readNumbers('3-4ページ'), 'サンカラヨンページ');
  // Addresses: no counter after the pair; three parts, phone numbers and postal codes as before.
  assert.equal(readNumbers('千代田1-1'), '千代田イチノイチ');
  assert.equal(readNumbers('住所は中央1-2です'), '住所は中央イチノニです');
  assert.equal(readNumbers('1-2-3号'), 'イチノニノサン号');
  assert.equal(readNumbers('03-1234-5678です'), 'ゼロサンノイチニーサンヨンノゴーロクナナハチです');
});

test('end to end: kanji numbers in sentences are said with their counters', async () => {
  assert.equal(await spoken('妹は二十歳で、犬を三匹飼っている。'), 'イモートワハタチデ、イヌヲサンビキカッテイル。');
  assert.equal(await spoken('五月五日の九時に二人で会う。'), 'ゴガツイツカノクジニフタリデアウ。');
  assert.equal(await spoken('一緒に八百屋へ行った。'), 'イッショニヤオヤエイッタ。');
});

test('every number read is told in the offsets of the text: ranges, codes, dates, times, kanji numerals (the word timings give each word its part)', () => {
  const read = (text: string): string[] => readAllNumbers(text, tokenizer).rewritten().map((r) => `${text.slice(r.start, r.end)}:${r.text}`);
  // Before, a text with a range or a code had no digit readings at all: 1月5日's 5 went untimed.
  assert.deepEqual(read('3-5日と1月5日に行きます。'), ['3-:サンカラ', '5日:イツカ', '1月:イチガツ', '5日:イツカ']);
  assert.deepEqual(read('3〜5人'), ['3〜:サンカラ', '5人:ゴニン']);
  assert.deepEqual(read('電話は03-1234-5678です'), ['03-:ゼロサンノ', '1234-:イチニーサンヨンノ', '5678:ゴーロクナナハチ']);
  assert.deepEqual(read('〒150-0002と郵便番号1500002'), ['〒150-:ユービンバンゴーイチゴーゼロノ', '0002:ゼロゼロゼロニー', '150:イチゴーゼロノ', '0002:ゼロゼロゼロニー']);
  assert.deepEqual(read('2024-01-05の14:30に'), ['2024-:ニセンニジューヨネン', '01-:イチガツ', '05:イツカ', '14:30:ジューヨジサンジュップン']);
  assert.deepEqual(read('住所は1-2-3、版は3.5.1'), ['1-:イチノ', '2-:ニノ', '3:サン', '3.:サンテン', '5.:ゴテン', '1:イチ']);
  assert.deepEqual(read('二〇二四年に三本と5km'), ['二〇二四年:ニセンニジューヨネン', '三本:サンボン', '5km:ゴキロメートル']);
  // The text read is readNumbers' after readKanjiNumerals', as before.
  for (const text of ['3-5日と1月5日に行きます。', '〒150-0002', '二〇二四年に三本', '3〜5人']) assert.equal(readAllNumbers(text, tokenizer).text, numbers(text.replace(/(\d)\s*[~〜]\s*(?=\d)/g, '$1カラ')));
});

test('an English ordinal in digits is left to the English voice whole (20th "twentieth", not ニジュー and "th"); 第20回 stays Japanese', async () => {
  assert.equal(readNumbers('今日は20th anniversaryです。'), '今日は20th anniversaryです。');
  assert.equal(readNumbers('1st、2nd、3rd、1,000th'), '1st、2nd、3rd、1,000th');
  // A number before other letters is glued to them as well (the test below), a counter is Japanese.
  assert.equal(readNumbers('5thly'), '5thly');
  assert.deepEqual(await speechSegments('今日は20th anniversaryです。', 'ja'), [
    { language: 'ja', text: 'キョーワ' },
    { language: 'en', text: '20th anniversary' },
    { language: 'ja', text: 'デス。' },
  ]);
  assert.equal(await spoken('第20回'), 'ダイニジュッカイ');
  assert.equal(await spoken('20回目'), 'ニジュッカイメ');
});

/** The segments of Japanese text `text` as `language:text` (en for the English voice). */
async function segmentsOf(text: string): Promise<string[]> {
  return (await speechSegments(text, 'ja')).map((s) => `${s.language}:${s.text}`);
}

/** The phones Flite's `rms` voice (en-man-1, and Latin words in ja-man-1's text) says for `text` (`flite -ps`), pauses left out. */
async function fliteSays(text: string): Promise<string> {
  const printed = fliteRun(await loadFlite(), ['flite', '-voice', 'rms', '-ps', '-t', text, '-o', 'none'], (host) => host.stdout());
  return phoneGroups(printed).flat().join(' ');
}

test('a number glued to Latin letters is one token for the English voice (5G "five G", 3D, 4K), not ゴ and "G"; a unit the reader knows stays Japanese (5km)', async () => {
  // Before: ゴ + "G", サン + "D", ヨン + "K" — the number in Japanese, the letters by the English voice.
  assert.deepEqual(await segmentsOf('5G対応のスマホで3Dプリンターと4Kテレビを使う。'), ['en:5G', 'ja:タイオーノスマホデ', 'en:3D', 'ja:プリンタート', 'en:4K', 'ja:テレビヲツカウ。']);
  assert.equal(readNumbers('5Gと3Dと4K、3LDKと2B、MP3'), '5Gと3Dと4K、3LDKと2B、MP3');
  // What the listener hears: the English voice says each token as the words Japanese use for it
  // (ファイブジー, スリーディー), the same phones as the words written out.
  assert.equal(await fliteSays('5G'), await fliteSays('five G'));
  assert.equal(await fliteSays('3D'), await fliteSays('three D'));
  assert.equal(await fliteSays('4K'), await fliteSays('four K'));
  // Units the reader knows are Japanese after a number, as before; a decimal stays a decimal.
  assert.equal(readNumbers('5kmと3cmと2Lと100g'), 'ゴキロメートルとサンセンチメートルとニリットルとヒャクグラム');
  assert.equal(readNumbers('1.5G'), 'イチテンゴG');
  assert.equal(await spoken('第3回'), 'ダイサンカイ');
});

test('units of information, frequency, bit rate and power after digits are the number reader\'s, said in Japanese (2GB ニギガバイト), not the English voice\'s ("two G B")', async () => {
  // Before: each token below went whole to the English voice ("two G B", "three point five G H z").
  // Readings as UniDic 3.1.1 gives the symbols (GB ギガバイト, Mbps メガビーピーエス, Kbps
  // ケービーピーエス, W ワット, fps エフピーエス), or the units' names (TB テラバイト, V ボルト,
  // mAh ミリアンペアアワー, GiB ギビバイト); the キロ ones change the number as km does (k class:
  // イッキロ, ロッキロ, ハッキロ, ジュッキロ, ヒャッキロ), テラ like パーセント (only 10: ジュッテラ).
  for (const [text, reading] of [
    ['2GB', 'ニギガバイト'],
    ['500MB', 'ゴヒャクメガバイト'],
    ['16KB', 'ジューロッキロバイト'],
    ['16kB', 'ジューロッキロバイト'],
    ['1KB', 'イッキロバイト'],
    ['100KB', 'ヒャッキロバイト'],
    ['1TB', 'イチテラバイト'],
    ['10TB', 'ジュッテラバイト'],
    ['8GiB', 'ハチギビバイト'],
    ['512MiB', 'ゴヒャクジューニメビバイト'],
    ['4KiB', 'ヨンキビバイト'],
    ['2TiB', 'ニテビバイト'],
    ['60Hz', 'ロクジューヘルツ'],
    ['10Hz', 'ジューヘルツ'],
    ['6kHz', 'ロッキロヘルツ'],
    ['6KHz', 'ロッキロヘルツ'],
    ['800MHz', 'ハッピャクメガヘルツ'],
    ['2GHz', 'ニギガヘルツ'],
    ['8bit', 'ハチビット'],
    ['64bit', 'ロクジューヨンビット'],
    ['9600bps', 'キューセンロッピャクビーピーエス'],
    ['128kbps', 'ヒャクニジューハッキロビーピーエス'],
    ['128Kbps', 'ヒャクニジューハチケービーピーエス'],
    ['100Mbps', 'ヒャクメガビーピーエス'],
    ['10Gbps', 'ジューギガビーピーエス'],
    ['600W', 'ロッピャクワット'],
    ['1kW', 'イッキロワット'],
    ['300kWh', 'サンビャッキロワットアワー'],
    ['100Wh', 'ヒャクワットアワー'],
    ['100V', 'ヒャクボルト'],
    ['12V', 'ジューニボルト'],
    ['500mA', 'ゴヒャクミリアンペア'],
    ['5000mAh', 'ゴセンミリアンペアアワー'],
    ['60fps', 'ロクジューエフピーエス'],
    // Decimals, commas, a space and a range, as the other units.
    ['3.5GHz', 'サンテンゴギガヘルツ'],
    ['44.1kHz', 'ヨンジューヨンテンイチキロヘルツ'],
    ['1.5TB', 'イチテンゴテラバイト'],
    ['1,024MB', 'センニジューヨンメガバイト'],
    ['16 GB', 'ジューロクギガバイト'],
    ['2-4GB', 'ニカラヨンギガバイト'],
  ] as const) {
    assert.equal(readNumbers(text), reading, text);
  }
  assert.deepEqual(await segmentsOf('メモリは2〜4GBで、CPUは3.5GHz、回線は100Mbpsです。'), ['ja:メモリワニカラヨンギガバイトデ、', 'en:CPU', 'ja:ワサンテンゴギガヘルツ、カイセンワヒャクメガビーピーエスデス。']);
  assert.deepEqual(await segmentsOf('16GB RAMと1TBのSSD'), ['ja:ジューロクギガバイト ', 'en:RAM', 'ja:とイチテラバイトの', 'en:SSD']);
  // Written in katakana the unit was Japanese before too, and stays so.
  assert.equal(readNumbers('16ビットと2ギガと3.5ギガヘルツ'), 'ジューロクビットとニギガとサンテンゴギガヘルツ');
  // Not units: what Japanese say in English (5G, 3D, 4K, 8K, 3LDK, a pencil's 2B), a symbol
  // whose case or meaning is in doubt (2Gb, 16gb, 10PB ピービー to UniDic, 60dB ディービー to it
  // beside デシベル), W before a digit or 杯 (5W1H, W杯), V before a digit (1V1), a unit glued to
  // more letters (2GBytes), and a unit after kanji numerals (三GB, as 三km).
  for (const text of ['5G', '3D', '4K', '8K', '3LDK', '2B', '2Gb', '16gb', '10PB', '60dB', '5W1H', '2022W杯', '1V1', '2GBytes', 'MP3', 'USB3', '100ms']) {
    assert.equal(readNumbers(text), text, text);
  }
  assert.deepEqual(await segmentsOf('三GB'), ['ja:サン', 'en:GB']);
  // W杯 stays the English voice's 2022W, though its 杯 is kana (ハイ) when the Latin runs are cut.
  assert.deepEqual(await segmentsOf('2022W杯を見た'), ['en:2022W', 'ja:ハイヲミタ']);
});

test('an integer after a Latin word and a space is its model number, read with it by the English voice (iPhone 15 "iPhone fifteen"); a count, a decimal or a time stays Japanese', async () => {
  // Before: "iPhone" by the English voice, then ジューゴ.
  assert.deepEqual(await segmentsOf('iPhone 15を買った'), ['en:iPhone 15', 'ja:ヲカッタ']);
  assert.equal(await fliteSays('iPhone 15'), await fliteSays('iPhone fifteen'));
  assert.deepEqual(await segmentsOf('Windows 11とWi-Fi 6に対応'), ['en:Windows 11', 'ja:ト', 'en:Wi-Fi 6', 'ja:ニタイオー']);
  assert.deepEqual(await segmentsOf('iPhone 15 Proを予約した。'), ['en:iPhone 15 Pro', 'ja:ヲヨヤクシタ。']);
  // A counter makes it a count (ジューゴダイ, シチジ), a decimal point a decimal (サンテンゼロ).
  assert.deepEqual(await segmentsOf('iPhone 15台とNHK 7時、USB 3.0'), ['en:iPhone', 'ja: ジューゴダイト', 'en:NHK', 'ja: シチジ、', 'en:USB', 'ja: サンテンゼロ']);
  assert.equal(readNumbers('Meeting 14:30、ABC 1,000'), 'Meeting ジューヨジサンジュップン、ABC セン');
  // A unit is no Latin word to end a run at: the number after it is read, not left as digits.
  assert.equal(readNumbers('5 km 3と5km 3'), 'ゴキロメートル サンとゴキロメートル サン');
});

test('a version or section number (3.5.1) is read number by number with テン, with no pause before its last number', async () => {
  assert.equal(await spoken('バージョン3.5.1です'), 'バージョンサンテンゴテンイチです');
  for (const [text, reading] of [
    // Before: サンテンゴ, then "." (a pause) and 1.
    ['版は3.5.1です', '版はサンテンゴテンイチです'],
    ['1.10.2と192.168.0.1', 'イチテンジューテンニとヒャクキュージューニテンヒャクロクジューハチテンゼロテンイチ'],
    ['3.5.1.', 'サンテンゴテンイチ.'],
    // Two numbers are a decimal, a date is a date, and inside a Latin word it is the English voice's.
    ['3.14と3.5', 'サンテンイチヨンとサンテンゴ'],
    ['2024.12.31', 'ニセンニジューヨネンジューニガツサンジューイチニチ'],
    ['v3.5.1', 'v3.5.1'],
  ] as const) {
    assert.equal(readNumbers(text), reading, text);
  }
});
