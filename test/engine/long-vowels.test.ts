/**
 * The long e of Sino-Japanese words (src/engine/japanese-long-vowels.ts, issue 25 point 3): the kana
 * the engine hands eSpeak NG writes ー where a kanji's on'yomi ends in エイ (映画 エーガ), and keeps
 * エイ across native words (毛糸 ケイト) and in kana words (ケイト, ええ). The mora metric counts
 * エイ and エー as one, so these tests look at the kana themselves.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { E_ROW_I_ONYOMI, lengthenSinoJapaneseE } from '../../src/engine/japanese-long-vowels.js';
import { japaneseTokens } from '../../src/engine/japanese-words.js';
import { loadTokenizer, speechSegments } from '../../src/engine/japanese.js';

/** Asserts that each sentence is said as the kana given with it. */
async function saidAs(cases: readonly (readonly [string, string])[]): Promise<void> {
  for (const [text, kana] of cases) assert.equal((await speechSegments(text, 'ja')).map((s) => s.text).join(''), kana, text);
}

test('Sino-Japanese words are said with a long e', async () => {
  await saidAs([
    ['映画を見た。', 'エーガヲミタ。'],
    ['先生に聞いた。', 'センセーニキイタ。'],
    ['経営が難しい。', 'ケーエーガムズカシイ。'],
    ['丁寧な説明でした。', 'テーネーナセツメーデシタ。'],
    ['時計が止まった。', 'トケーガトマッタ。'],
    ['平成の英語教育。', 'ヘーセーノエーゴキョーイク。'],
    ['綺麗な庭園だ。', 'キレーナテーエンダ。'],
    ['来週の予定を決めた。', 'ライシューノヨテーヲキメタ。'],
  ]);
});

test('エイ across native words, in kana words and in verbs stays two vowels', async () => {
  await saidAs([
    ['毛糸の手袋を編んだ。', 'ケイトノテブクロヲアンダ。'],
    ['目医者に行った。', 'メイシャニイッタ。'],
    ['庭の手入れをした。', 'ニワノテイレヲシタ。'],
    ['言い方に気をつけて。', 'イーカタニキヲツケテ。'],
    // ええ is IPADIC's エー (a kana word: the rule leaves its pronunciation as it is).
    ['ええ、先生です。', 'エー、センセーデス。'],
    ['ケイトとレイが来た。', 'ケイトトレイガキタ。'],
    ['ボールを蹴り返した。', 'ボールヲケリカエシタ。'],
    ['溜池の音色を聞いた。', 'タメイケノネイロヲキイタ。'],
  ]);
});

test('the rule aligns the surface with the reading, kanji by kanji', () => {
  // On'yomi with rendaku or a half-voiced mark, repeated by 々, beside a kana of the surface.
  assert.equal(lengthenSinoJapaneseE('新兵', 'シンペイ'), 'シンペー');
  assert.equal(lengthenSinoJapaneseE('大勢', 'オーゼイ'), 'オーゼー');
  assert.equal(lengthenSinoJapaneseE('平々凡々', 'ヘイヘイボンボン'), 'ヘーヘーボンボン');
  assert.equal(lengthenSinoJapaneseE('お礼', 'オレイ'), 'オレー');
  // A listed kanji whose reading here is not its on'yomi: 生 ナマ, and 立石 タテイシ (立 タテ + 石 イシ).
  assert.equal(lengthenSinoJapaneseE('生糸', 'キイト'), 'キイト');
  assert.equal(lengthenSinoJapaneseE('立石', 'タテイシ'), 'タテイシ');
  assert.equal(lengthenSinoJapaneseE('手一杯', 'テイッパイ'), 'テイッパイ');
  // 芽 is read メ as a word of its own, so 赤芽芋 アカメイモ (芽 + 芋 イモ) keeps its エイ.
  assert.equal(lengthenSinoJapaneseE('赤芽芋', 'アカメイモ'), 'アカメイモ');
  // A word of one kanji is one morpheme (姪 メー), except 筧 (懸け + 樋).
  assert.equal(lengthenSinoJapaneseE('姪', 'メイ'), 'メー');
  assert.equal(lengthenSinoJapaneseE('筧', 'カケイ'), 'カケイ');
  // Nothing to align: kana only, Latin letters, or a reading too short for its kanji.
  assert.equal(lengthenSinoJapaneseE('けいと', 'ケイト'), 'ケイト');
  assert.equal(lengthenSinoJapaneseE('ええ', 'エエ'), 'エエ');
  assert.equal(lengthenSinoJapaneseE('蹴り', 'ケリ'), 'ケリ');
  assert.equal(lengthenSinoJapaneseE('CD英語', 'シーディーエイゴ'), 'シーディーエイゴ');
  assert.equal(lengthenSinoJapaneseE('経営者', 'ケイ'), 'ケイ');
});

test('every kanji of the table is a Han character under an e-row syllable + イ', () => {
  for (const [syllable, kanji] of Object.entries(E_ROW_I_ONYOMI)) {
    assert.match(syllable, /^[エケセテネヘメレ]イ$/u);
    for (const k of kanji) assert.match(k, /^\p{Script=Han}$/u, `${k} under ${syllable}`);
    assert.equal(new Set(kanji).size, [...kanji].length, `a kanji twice under ${syllable}`);
  }
});

test('the word timings take the long e too', async () => {
  const tokenizer = await loadTokenizer();
  const text = '先生と映画の話をした';
  const readings = japaneseTokens(text, 0, text.length, tokenizer).map((t) => `${text.slice(t.start, t.end)}:${t.reading}`);
  for (const word of ['先生:センセー', '映画:エーガ']) assert.ok(readings.includes(word), `${word} in ${readings.join(' ')}`);
});
