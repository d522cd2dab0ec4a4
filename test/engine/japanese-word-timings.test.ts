/**
 * Japanese word timings from the built-in engine (issue 23 point 1; japanese-timings.ts,
 * japanese-words.ts): the words are kuromoji tokens of the text as written (auxiliaries joined
 * to the token before; ICU word segments for kana-only text), and their boundaries are eSpeak NG's
 * own phoneme events — checked against the events of the same kana spoken by EspeakSynth directly.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { EspeakSynth } from '../../src/engine/espeak.js';
import { speechSegments } from '../../src/engine/japanese.js';
import { phonemeKey, phonemeWords } from '../../src/engine/japanese-timings.js';
import { espeakVoiceName } from '../../src/engine/voices.js';
import type { EspeakPhonemeEvent } from '../../src/engine/word-timings.js';
import type { WordTiming } from '../../src/protocol/words.js';
import { job } from '../helpers/engine-audio.js';

let engine: EspeakEngine;
before(() => {
  engine = createEngine();
});
after(async () => {
  await engine.close();
});

/** Synthesizes `text` in Japanese at 22050 Hz (eSpeak's own rate: output frames are its samples). */
async function timed(text: string, voice: string): Promise<{ audio: Buffer; words: WordTiming[] }> {
  let words: WordTiming[] | undefined;
  const chunks: Buffer[] = [];
  for await (const c of engine.synthesize(job({ text, voice, sampleRate: 22050, language: 'ja' }), undefined, { wordTimings: true, onReport: (r) => (words = r.words) })) chunks.push(c);
  assert.ok(words !== undefined, 'the report has words');
  return { audio: Buffer.concat(chunks), words };
}

test('phonemeWords: a word runs from its first phoneme event to the event after its last', () => {
  // キョーワイイ as the events name it, then the clause's closing pause.
  const names = ['k', 'ʲ', 'ˌo̞', 'w', 'ä', 'ˌi', ''];
  const events: EspeakPhonemeEvent[] = names.map((phoneme, i) => ({ phoneme, sample: 1000 + i * 100 }));
  // The translator's phonemes of キョー, ワ, イイ (IPA, long vowels written out).
  const words = phonemeWords(events, [['kʲ', 'ˈo̞o̞'], ['w', 'ˈä'], ['ˈiː']], 5000);
  assert.deepEqual(words, [
    { token: 0, start: 1000, end: 1300 },
    { token: 1, start: 1300, end: 1500 },
    { token: 2, start: 1500, end: 1600 },
  ]);
  assert.equal(phonemeKey('ˈo̞o̞'), 'o');
  assert.equal(phonemeKey('kʲ'), 'k');
  // Nothing to align with: no words (the caller falls back), never invented ones.
  assert.deepEqual(phonemeWords([], [['k']], 100), []);
  assert.deepEqual(phonemeWords(events, [[], []], 5000), []);
});

/** Texts and the words expected in them: kanji, kana only, numbers with counters, Latin inside. */
const CASES: readonly (readonly [string, readonly string[]])[] = [
  ['今日はいい天気ですね。', ['今日', 'は', 'いい', '天気です', 'ね']],
  ['きょうはいいてんきですね。', ['きょう', 'は', 'いい', 'てんき', 'です', 'ね']],
  ['3月14日に5kmを走った。', ['3', '月', '14', '日', 'に', '5', 'km', 'を', '走った']],
  ['東京でPythonを書きました。', ['東京', 'で', 'Python', 'を', '書きました']],
  // An unknown word (no IPADIC entry: its kanji read one by one) and 々 repeating a kanji.
  ['魑魅魍魎が跋扈する。人々は朝ご飯を食べた。', ['魑魅魍魎', 'が', '跋扈', 'する', '人々', 'は', '朝', 'ご飯', 'を', '食べた']],
];

for (const voice of ['ja-man-1', 'ja-woman-1']) {
  test(`${voice}: one word per token, in order, inside the audio, boundaries at eSpeak NG's phoneme events`, async () => {
    const es = await EspeakSynth.create();
    for (const [text, expected] of CASES) {
      const { audio, words } = await timed(text, voice);
      assert.deepEqual(
        words.map((w) => w.text),
        expected,
      );
      const frames = audio.length / 2;
      words.forEach((w, i) => {
        assert.equal(w.text, text.slice(w.charStart, w.charEnd));
        assert.ok(w.start < w.end && w.end <= frames, `${w.text}: ${w.start}–${w.end} inside ${frames} frames`);
        if (i > 0) assert.ok(words[i - 1]!.end <= w.start, `${w.text} after ${words[i - 1]!.text}`);
      });
      // The engine's events for the Japanese segments, each spoken alone from a fresh state.
      const segments = await speechSegments(text, 'ja');
      // Latin inside makes several segments: its first is checked in the next test.
      if (/[A-Za-z]/.test(text)) continue;
      assert.equal(segments.length, 1, `${text}: one Japanese segment`);
      const events: number[] = [];
      es.reset();
      let total = 0;
      es.synthesize(
        espeakVoiceName(voice, 'ja'),
        segments[0]!.text,
        (block) => {
          total += block.length;
          return false;
        },
        undefined,
        (e) => events.push(e.sample),
      );
      assert.equal(total, frames, 'the job is that segment alone, sample for sample');
      const at = new Set([...events, total]);
      for (const w of words) {
        assert.ok(at.has(w.start), `${w.text} starts at ${w.start}, a phoneme event (${[...at].join(' ')})`);
        assert.ok(at.has(w.end), `${w.text} ends at ${w.end}, a phoneme event`);
      }
    }
  });
}

test('kanji numerals read by the number reader are timed as said: the words around them end where the kana ones do', async () => {
  // 二十歳 is said ハタチ and 二人 フタリ (japanese-numbers.ts), not as IPADIC reads their tokens
  // (ニ|ジュー|サイ, ニ|ニン): the same audio as the kana text, so the words after the numbers have
  // the kana text's boundaries.
  const kanji = await timed('二十歳の二人が来た。', 'ja-man-1');
  const kana = await timed('ハタチのフタリがきた。', 'ja-man-1');
  assert.ok(kanji.audio.equals(kana.audio), 'the same speech');
  const at = (words: readonly WordTiming[], text: string): [number, number] => {
    const w = words.find((x) => x.text === text);
    assert.ok(w !== undefined, text);
    return [w.start, w.end];
  };
  assert.deepEqual(at(kanji.words, 'の'), at(kana.words, 'の'));
  assert.deepEqual(at(kanji.words, 'が'), at(kana.words, 'が'));
  assert.deepEqual(at(kanji.words, '来た'), at(kana.words, 'きた'));
  // Still one word per token, the number's tokens sharing its reading in order.
  assert.deepEqual(kanji.words.map((w) => w.text), ['二', '十', '歳', 'の', '二', '人', 'が', '来た']);
  assert.equal(kanji.words[0]!.start, kana.words[0]!.start);
  assert.equal(kanji.words[2]!.end, kana.words[0]!.end);
});

test('numbers in digits are timed as said too: every token of 1月5日 is a word, with the kana text\'s outer boundaries', async () => {
  // 1月5日 is said イチガツイツカ (japanese-numbers.ts readNumbers), not as IPADIC reads its tokens
  // (1|ツキ|5|ニチ): before, the 5 found no phonemes of its own and was left out. Kana-only text
  // with digits (no kuromoji) takes the same readings.
  const digits = await timed('今日は5日です。1月5日。', 'ja-woman-1');
  const kana = await timed('キョーワイツカデス。イチガツイツカ。', 'ja-woman-1');
  assert.ok(digits.audio.equals(kana.audio), 'the same speech');
  assert.deepEqual(digits.words.map((w) => w.text), ['今日', 'は', '5', '日です', '1', '月', '5', '日']);
  const number = digits.words.slice(4);
  for (let i = 1; i < number.length; i++) assert.ok(number[i]!.start >= number[i - 1]!.end && number[i]!.end > number[i]!.start, JSON.stringify(number));
  assert.equal(number.at(-1)!.end, kana.words.at(-1)!.end, 'the number ends where the kana text does');
  const kanaOnly = await timed('ごがつに5さいになる。', 'ja-woman-1');
  assert.ok(kanaOnly.words.some((w) => w.text === '5'), JSON.stringify(kanaOnly.words.map((w) => w.text)));
  // A number IPADIC cuts at , or . is one word, never a word without its sound.
  const grouped = await timed('価格は1,000,000円と3.14円です。', 'ja-woman-1');
  assert.deepEqual(grouped.words.map((w) => w.text), ['価格', 'は', '1,000,000', '円', 'と', '3.14', '円です']);
  for (const w of grouped.words) assert.ok(w.end > w.start, JSON.stringify(w));
});

test('the first Japanese stretch before a Latin run is timed by phoneme events too', async () => {
  const text = '東京でPythonを書きました。';
  const { words } = await timed(text, 'ja-woman-1');
  const segments = await speechSegments(text, 'ja');
  assert.equal(segments[0]!.language, 'ja');
  const es = await EspeakSynth.create();
  es.reset();
  const events: number[] = [];
  es.synthesize(espeakVoiceName('ja-woman-1', 'ja'), segments[0]!.text, () => false, undefined, (e) => events.push(e.sample));
  assert.deepEqual(
    words.slice(0, 2).map((w) => [w.start, w.end].every((s) => events.includes(s))),
    [true, true],
  );
});

test('timing words changes no sample: the audio is that of eSpeak NG speaking the kana', async () => {
  const text = 'きょうはいいてんきですね。';
  const first = await timed(text, 'ja-man-1');
  const es = await EspeakSynth.create();
  es.reset();
  const blocks: Buffer[] = [];
  es.synthesize(espeakVoiceName('ja-man-1', 'ja'), (await speechSegments(text, 'ja'))[0]!.text, (b) => {
    blocks.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    return false;
  });
  // pcm16 little-endian at 22050 Hz, gain 0: the bytes are eSpeak's samples.
  assert.ok(Buffer.concat(blocks).equals(first.audio), 'identical bytes');
  const again = await timed(text, 'ja-man-1');
  assert.ok(again.audio.equals(first.audio));
  assert.deepEqual(again.words, first.words);
});
