/**
 * Unit tests of the text preparation for eSpeak NG (src/engine/japanese.ts) and the voice mapping.
 * Tests run in order: the first ones check that kana and English never load kuromoji.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  containsKanji,
  dictionarySource,
  fixKanaForEspeak,
  isTokenizerLoaded,
  kanjiToKana,
  loadTokenizer,
  speechSegments,
  splitLatinRuns,
  tokenizerLoadTime,
} from '../../src/engine/japanese.js';
import { espeakVoiceName } from '../../src/engine/voices.js';
import { EspeakSynth } from '../../src/engine/espeak.js';

const HAN = /\p{Script=Han}/u;

test('containsKanji: kanji, 々 and CJK extension B count; kana, Latin and digits do not', () => {
  assert.equal(containsKanji('東京'), true);
  assert.equal(containsKanji('々'), true);
  assert.equal(containsKanji('𠮷'), true);
  assert.equal(containsKanji('ひらがなとカタカナ、ABC 123。'), false);
});

test('kana-only and English text are prepared without loading kuromoji', async () => {
  assert.deepEqual(await speechSegments('きょうは いい てんきですね。', 'ja'), [{ language: 'ja', text: 'きょうは いい てんきですね。' }]);
  assert.deepEqual(await speechSegments('Hello, world! 42', 'en'), [{ language: 'en', text: 'Hello, world! 42' }]);
  assert.deepEqual(await speechSegments('カタカナでPythonをかく', 'ja'), [
    { language: 'ja', text: 'カタカナで' },
    { language: 'en', text: 'Python' },
    { language: 'ja', text: 'をかく' },
  ]);
  assert.equal(isTokenizerLoaded(), false);
  assert.equal(tokenizerLoadTime(), undefined);
});

test('English text is only NFKC-normalized, kanji and all', async () => {
  assert.deepEqual(await speechSegments('Ｈｅｌｌｏ　ｗｏｒｌｄ', 'en'), [{ language: 'en', text: 'Hello world' }]);
  assert.deepEqual(await speechSegments('see 東京', 'en'), [{ language: 'en', text: 'see 東京' }]);
  assert.deepEqual(await speechSegments('。、！', 'en'), []);
  assert.equal(isTokenizerLoaded(), false);
});

test('splitLatinRuns keeps order, joins multi-word runs and drops punctuation-only pieces', () => {
  assert.deepEqual(splitLatinRuns('東京でPythonを書く'), [
    { language: 'ja', text: '東京で' },
    { language: 'en', text: 'Python' },
    { language: 'ja', text: 'を書く' },
  ]);
  assert.deepEqual(splitLatinRuns('Googleで働く'), [
    { language: 'en', text: 'Google' },
    { language: 'ja', text: 'で働く' },
  ]);
  assert.deepEqual(splitLatinRuns('これはHello World, Node.js!です'), [
    { language: 'ja', text: 'これは' },
    { language: 'en', text: 'Hello World, Node.js' },
    { language: 'ja', text: '!です' },
  ]);
  assert.deepEqual(splitLatinRuns('「AT&T」。'), [{ language: 'en', text: 'AT&T' }]);
  // Digits the number reader left after a word are its model number (japanese-numbers.test.ts).
  assert.deepEqual(splitLatinRuns('iPhone 15を買った'), [
    { language: 'en', text: 'iPhone 15' },
    { language: 'ja', text: 'を買った' },
  ]);
});

test('fixKanaForEspeak rewrites what the ja voice misreads', () => {
  assert.equal(fixKanaForEspeak('ヶゕヵゎ'), 'ケカカわ');
  assert.equal(fixKanaForEspeak('いすゞ'), 'いすず');
  assert.equal(fixKanaForEspeak('コーヒー・ミルク'), 'コーヒー ミルク');
  assert.equal(fixKanaForEspeak('1,000えん'), '1000えん');
  assert.equal(fixKanaForEspeak('3.14'), '3テン1 4');
  assert.equal(fixKanaForEspeak('10~20'), '10カラ20');
  assert.equal(fixKanaForEspeak('50%'), '50パーセント');
  assert.equal(fixKanaForEspeak('ー あー'), ' あー');
});

test('no prolonged sound mark reaches eSpeak NG where its ja voice says "Japanese letter" for it', async () => {
  // Casual writing doubles ー (すごーーい); a ー after ン or ッ, or after a vowel already written
  // twice (ねえー, なぁー), or one typed for a hyphen after a number read out (3ー5) is spelled
  // too. eSpeak's translator marks a spelled letter by switching to English ("(en)").
  const es = await EspeakSynth.create();
  const texts = ['すごーーい！', 'やったーーー', 'ちょっとーー待って', 'うーんー', 'あっー', 'なぁー', 'ねえー', 'カァー', 'ミイー', '3ー5', '〒150ー0002', '一人で映画を見た', '彼は生まれも育ちも大阪だ'];
  for (const text of texts) {
    const spoken = (await speechSegments(text, 'ja')).map((s) => s.text);
    const phonemes = es.phonemes('ja', spoken);
    assert.ok(phonemes.every((p) => !p.includes('(en)')), `${text} → ${spoken.join('|')} → ${phonemes.map((p) => p.join('')).join('|')}`);
  }
  // One ー after a kana is still the long vowel, as before.
  assert.equal(fixKanaForEspeak('すごーい、ラーメン、ねー'), 'すごーい、ラーメン、ねー');
  assert.equal(fixKanaForEspeak('すごーーい'), 'すごーい');
  // A ー after a vowel letter that repeats the kana before it becomes that vowel's letter: the
  // mora stays, also where the two are different words (デ|エーガ, モ|オーサカ).
  assert.equal(fixKanaForEspeak('ねえー なぁー'), 'ねええ なぁあ');
  assert.equal(fixKanaForEspeak('ヒトリデエーガ ソダチモオーサカ'), 'ヒトリデエエガ ソダチモオオサカ');
});

test('kanjiToKana gives pronunciations: particle は → ワ, 東京 → トーキョー, no kanji left', async () => {
  const tokenizer = await loadTokenizer();
  assert.equal(isTokenizerLoaded(), true);
  // `npm install` unpacked the dictionary (scripts/unpack-dictionary.js): the fast path is used,
  // and these readings are checked against it.
  assert.equal(dictionarySource(), 'unpacked');
  const kana = kanjiToKana('今日は良い天気です。東京タワーに行きました。', tokenizer);
  assert.equal(kana, 'キョーワヨイテンキデス。トーキョータワーニイキマシタ。');
  assert.doesNotMatch(kana, HAN);
  // Particles へ and は are spoken エ and ワ; digits, Latin and punctuation stay as written.
  assert.equal(kanjiToKana('東京へ2回行くのはGoogleです！', tokenizer), 'トーキョーエ2カイイクノワGoogleデス！');
});

test('kanjiToKana: unknown kanji words fall back per character, 々 repeats, unreadable ones are dropped', async () => {
  const tokenizer = await loadTokenizer();
  // 彁 is a "ghost character" with no reading anywhere: dropped rather than "Chinese letter".
  const out = kanjiToKana('彁と佐々木さんと時々', tokenizer);
  assert.doesNotMatch(out, HAN);
  assert.match(out, /ササキ/);
  assert.match(out, /トキドキ/);
  assert.equal(out.startsWith('ト'), true);
  assert.doesNotMatch(kanjiToKana('二〇二四年', tokenizer), HAN);
});

test('speechSegments for Japanese with kanji: readings, Latin runs in English, numbers read with their counters, no kanji anywhere', async () => {
  const segments = await speechSegments('東京でPythonを書く。今日は２０２４年です。', 'ja');
  assert.deepEqual(segments, [
    { language: 'ja', text: 'トーキョーデ' },
    { language: 'en', text: 'Python' },
    { language: 'ja', text: 'ヲカク。キョーワニセンニジューヨネンデス。' },
  ]);
  const mixed = await speechSegments('憂鬱な月曜日、𠮷野家でGoogle Mapsを見た。', 'ja');
  for (const s of mixed) assert.doesNotMatch(s.text, HAN, JSON.stringify(s));
  assert.deepEqual(
    mixed.filter((s) => s.language === 'en').map((s) => s.text),
    ['Google Maps'],
  );
});

test('espeakVoiceName: the language picks eSpeak\'s language, the voice its gender variant', () => {
  assert.equal(espeakVoiceName('ja-man-1', 'ja'), 'ja');
  assert.equal(espeakVoiceName('ja-woman-1', 'ja'), 'ja+f2');
  assert.equal(espeakVoiceName('en-man-1', 'en'), 'en-us+adam');
  assert.equal(espeakVoiceName('en-woman-1', 'en'), 'en-us+f5');
  assert.equal(espeakVoiceName('ja-woman-1', 'en'), 'en-us+f2');
  assert.equal(espeakVoiceName('ja-man-1', 'en'), 'en-us');
  assert.equal(espeakVoiceName('en-woman-1', 'ja'), 'ja+f5');
  assert.throws(() => espeakVoiceName('xx-robot-9', 'en'), RangeError);
});

test('splitLatinRuns keeps a space where a symbol-only piece between two Latin runs was dropped ("Tom & Jerry" is not "TomJerry")', async () => {
  assert.deepEqual(splitLatinRuns('Tom & Jerry said hi.'), [{ language: 'en', text: 'Tom Jerry said hi' }]);
  assert.deepEqual(splitLatinRuns('A — B'), [{ language: 'en', text: 'A B' }]);
  // Between runs of different languages nothing is added: each is its own segment.
  assert.deepEqual(splitLatinRuns('東京 & Osaka'), [
    { language: 'ja', text: '東京 & ' },
    { language: 'en', text: 'Osaka' },
  ]);
  // The Japanese voice's word timings pair the run's words as written with those spoken.
  assert.deepEqual(await speechSegments('Tom & Jerry said hi.', 'ja'), [{ language: 'en', text: 'Tom Jerry said hi' }]);
});
