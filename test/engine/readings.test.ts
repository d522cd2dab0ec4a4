/**
 * Japanese readings (issues 14 and 25): the kana the engine hands to eSpeak NG for hand-checked
 * sentences must be within 1 % of the expected readings in morae (test/helpers/mora.ts). The test
 * set (READING_SETS.test, 630 sentences: numbers, counters, dates and times, units, verbs with
 * okurigana, place names, kanji numerals, days, people, hours, ages, readings in context,
 * addresses, news, conversation and instructions) must stay within 1 % in each file; the
 * held-out set of issue 25 (written blind, measured once after its last fixes) may not get worse.
 *
 * Before the fixes: 22.2 % on the first set, 17.1 % on the second (digits and counters left to
 * eSpeak — 3本 "san hon", 3月 "san tsuki" — and kuromoji's 降りそう オリソー, 開いている
 * ヒライテ, 角 カク, 雨 ウ).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { integerParts, readNumbers } from '../../src/engine/japanese-numbers.js';
import { caseErrors, loadReadingCases, moraErrors, morae, normalizeReading, READING_SETS, readingErrorRate } from '../helpers/mora.js';

const MAX_RATE = 0.01;

/**
 * The held-out set (READING_SETS.heldout: japanese-readings-after-fixes-3.json, 120 sentences
 * written blind while the third pass of rules was made, by a writer who saw no code and no output)
 * measured 0.79 % (21 of 2668 morae, 9 of 120 sentences) the one time it was run, after that pass:
 * senses the grammar does not show (寒気 サムケ for カンキ, 市場 シジョー for イチバ, 大家 オーヤ for
 * タイカ, 色紙 イロガミ for シキシ, 辛い ツライ before カレー) and two rendaku (一万歩, 人手不足). It is
 * not tuned to — a fix made from it would make it a test set — so that count is its bound: a change
 * may not read it worse. (Each earlier held-out set, after-fixes 1.17 % and after-fixes-2 1.05 %
 * when first run, was seen by the next pass and is in the test set now.)
 */
const HELDOUT_MAX_ERRORS = 21;

const SIZES: Readonly<Record<string, number>> = {
  'japanese-readings.json': 100,
  'japanese-readings-heldout.json': 25,
  'japanese-readings-unseen.json': 128,
  'japanese-readings-more.json': 120,
  'japanese-readings-after-fixes.json': 120,
  'japanese-readings-after-fixes-2.json': 130,
};

for (const name of READING_SETS.test) {
  const size = SIZES[name]!;
  test(`readings of ${name}: mora error rate ≤ ${MAX_RATE * 100} %`, async (t) => {
    const cases = loadReadingCases(name);
    assert.ok(cases.length >= size, `${cases.length} sentences`);
    const r = await readingErrorRate(cases);
    t.diagnostic(`${name}: ${(r.rate * 100).toFixed(2)} % (${r.errors} of ${r.morae} morae); by class ${JSON.stringify(r.byClass)}`);
    for (const f of r.failures) t.diagnostic(f);
    assert.ok(r.rate <= MAX_RATE, `mora error rate ${(r.rate * 100).toFixed(2)} %:\n${r.failures.join('\n')}`);
  });
}

test('the test set has at least 300 hand-checked sentences (issue 25)', () => {
  assert.ok(READING_SETS.test.flatMap((f) => loadReadingCases(f)).length >= 300);
});

test('the held-out set has at least 100 hand-checked sentences (issue 25)', () => {
  assert.ok(READING_SETS.heldout.flatMap((f) => loadReadingCases(f)).length >= 100);
});

test(`readings of the held-out set: no more than the ${HELDOUT_MAX_ERRORS} mora errors it had when first measured`, async (t) => {
  const cases = READING_SETS.heldout.flatMap((f) => loadReadingCases(f));
  const r = await readingErrorRate(cases);
  t.diagnostic(`held-out: ${(r.rate * 100).toFixed(2)} % (${r.errors} of ${r.morae} morae); by class ${JSON.stringify(r.byClass)}`);
  for (const f of r.failures) t.diagnostic(f);
  assert.ok(r.errors <= HELDOUT_MAX_ERRORS, `${r.errors} mora errors (${(r.rate * 100).toFixed(2)} %):\n${r.failures.join('\n')}`);
});

test('the mora metric: spellings of one pronunciation are equal; a wrong mora counts once', () => {
  assert.equal(normalizeReading('とうきょう'), 'トーキョー');
  assert.equal(normalizeReading('センセイ、オオサカ'), 'センセーオーサカ');
  assert.deepEqual(morae('キャッシュー'), ['キャ', 'ッ', 'シュ', 'ー']);
  assert.deepEqual(moraErrors('アメガフリソー', 'アメガオリソー'), { errors: 1, morae: 7 });
  assert.deepEqual(moraErrors('サンボン', '3ホン'), { errors: 3, morae: 4 });
  // One sound, two spellings: ヅ/ズ, ヂ/ジ, and long vowels written with a vowel letter.
  assert.equal(normalizeReading('ミカヅキ'), normalizeReading('ミカズキ'));
  assert.equal(normalizeReading('ハナヂ'), normalizeReading('ハナジ'));
  assert.equal(normalizeReading('カワイイ'), 'カワイー');
  assert.equal(normalizeReading('ネエサン'), 'ネーサン');
  assert.equal(normalizeReading('オカアサン'), 'オカーサン');
  // A vowel letter after a long vowel lengthens it again, however the first was written.
  assert.equal(normalizeReading('デエーガ'), normalizeReading('デエエガ'));
  assert.equal(normalizeReading('タノンデイー'), normalizeReading('タノンデイイ'));
  assert.notEqual(normalizeReading('デエガ'), normalizeReading('デエーガ'));
  // An accepted alternative reading counts as right; otherwise the nearer reading is scored.
  const sevenPeople = { class: 'people', text: '七人', reading: 'ナナニン', alternatives: ['シチニン'] };
  assert.deepEqual(caseErrors(sevenPeople, 'シチニン'), { errors: 0, morae: 4 });
  assert.deepEqual(caseErrors(sevenPeople, 'ナナニン'), { errors: 0, morae: 4 });
  assert.deepEqual(caseErrors(sevenPeople, 'シチジン'), { errors: 1, morae: 4 });
});

test('numbers: groups, sound changes and counters', () => {
  assert.equal(integerParts('0').join(''), 'ゼロ');
  assert.equal(integerParts('1000000000000').join(''), 'イッチョー');
  assert.equal(integerParts('36800').join(''), 'サンマンロクセンハッピャク');
  assert.equal(readNumbers('1本 3本 6本 10本 100本 1000本'), 'イッポン サンボン ロッポン ジュッポン ヒャッポン センボン');
  assert.equal(readNumbers('1分 3分 4分 8分 20分 45分'), 'イップン サンプン ヨンプン ハップン ニジュップン ヨンジューゴフン');
  assert.equal(readNumbers('1日 2日 20日 24日 19日'), 'イチニチ フツカ ハツカ ニジューヨッカ ジュークニチ');
  assert.equal(readNumbers('4月1日'), 'シガツツイタチ');
  assert.equal(readNumbers('17時 4時間 9時間'), 'ジューシチジ ヨジカン クジカン');
  assert.equal(readNumbers('1人 2人 4人 7人'), 'ヒトリ フタリ ヨニン ナナニン');
  assert.equal(readNumbers('3.14'), 'サンテンイチヨン');
  assert.equal(readNumbers('1% 10% 100%'), 'イチパーセント ジュッパーセント ヒャクパーセント');
  assert.equal(readNumbers('1,234,567円'), 'ヒャクニジューサンマンヨンセンゴヒャクロクジューナナエン');
  // Numbers glued to Latin letters are the English voice's, whichever comes first (japanese-numbers.test.ts).
  assert.equal(readNumbers('MP3と5G'), 'MP3と5G');
  assert.equal(readNumbers('20:05'), 'ニジュージゴフン');
});
