/**
 * What the engine says (src/engine): every voice speaks, genders differ in pitch, kanji are read
 * (not "Chinese letter"), Latin words inside Japanese are spoken in English, and English digits
 * are recognisable by a speech recognizer.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import type { Language } from '../../src/protocol/types.js';
import { collect, espeakAloneSeconds, job, medianF0, pcm16Seconds, pcm16ToFloat, recognizeDigits, wordErrors } from '../helpers/engine-audio.js';

let engine: EspeakEngine;

before(() => {
  engine = createEngine();
});

after(async () => {
  await engine.close();
});

const RATE = 16000;

/** Speaks `text` and returns the pcm16 mono audio at 16000 Hz. */
async function speak(text: string, voice: string, language: Language): Promise<Buffer> {
  return (await collect(engine, job({ text, voice, language, sampleRate: RATE }))).audio;
}

const SAMPLE: Record<Language, string> = {
  ja: 'きょうは いい てんきですね。あした また あいましょう。',
  en: 'The weather is nice today. See you again tomorrow.',
};

test('every preset voice speaks its language; women are clearly higher than men', async (t) => {
  const f0: Record<string, number> = {};
  for (const voice of ['ja-man-1', 'ja-woman-1', 'en-man-1', 'en-woman-1']) {
    const language: Language = voice.startsWith('en') ? 'en' : 'ja';
    const audio = await speak(SAMPLE[language], voice, language);
    const seconds = pcm16Seconds(audio, RATE);
    assert.ok(seconds > 1.5 && seconds < 8, `${voice}: ${seconds.toFixed(2)} s`);
    f0[voice] = medianF0(pcm16ToFloat(audio), RATE);
    t.diagnostic(`${voice}: ${seconds.toFixed(2)} s, median F0 ${f0[voice]!.toFixed(0)} Hz`);
  }
  for (const [man, woman] of [
    ['ja-man-1', 'ja-woman-1'],
    ['en-man-1', 'en-woman-1'],
  ] as const) {
    assert.ok(f0[man]! > 70 && f0[man]! < 150, `${man} F0 ${f0[man]} Hz is not a man's`);
    assert.ok(f0[woman]! > 160 && f0[woman]! < 300, `${woman} F0 ${f0[woman]} Hz is not a woman's`);
    assert.ok(f0[woman]! > 1.5 * f0[man]!, `${woman} (${f0[woman]} Hz) vs ${man} (${f0[man]} Hz)`);
  }
});

test('the voice keeps its gender in the other language: ja-woman-1 reading English is a woman', async (t) => {
  const woman = medianF0(pcm16ToFloat(await speak(SAMPLE.en, 'ja-woman-1', 'en')), RATE);
  const man = medianF0(pcm16ToFloat(await speak(SAMPLE.ja, 'en-man-1', 'ja')), RATE);
  t.diagnostic(`ja-woman-1 in English: ${woman.toFixed(0)} Hz; en-man-1 in Japanese: ${man.toFixed(0)} Hz`);
  assert.ok(woman > 160, `ja-woman-1 reading English: ${woman} Hz`);
  assert.ok(man < 150, `en-man-1 reading Japanese: ${man} Hz`);
});

test('a kanji sentence lasts about as long as the same sentence written in kana', async (t) => {
  const kanji = await speak('今日は良い天気です。東京タワーに行きました。', 'ja-man-1', 'ja');
  const kana = await speak('きょうはいいてんきです。とうきょうたわーにいきました。', 'ja-man-1', 'ja');
  const ratio = pcm16Seconds(kanji, RATE) / pcm16Seconds(kana, RATE);
  t.diagnostic(`kanji ${pcm16Seconds(kanji, RATE).toFixed(2)} s, kana ${pcm16Seconds(kana, RATE).toFixed(2)} s, ratio ${ratio.toFixed(2)}`);
  // Read as "Chinese letter" ×13 the kanji sentence would last about three times as long.
  assert.ok(ratio > 0.75 && ratio < 1.25, `duration ratio kanji/kana ${ratio.toFixed(2)}`);
  const segments = engine.stats().lastReport!.segments;
  assert.equal(segments.length, 1);
  assert.doesNotMatch(segments[0]!.text, /\p{Script=Han}/u);
});

test('a Latin word inside Japanese is spoken in English, not spelled letter by letter', async (t) => {
  const text = 'Microsoftで働く';
  const english = await speak(text, 'ja-woman-1', 'ja');
  assert.deepEqual(engine.stats().lastReport!.segments, [
    { language: 'en', text: 'Microsoft', engine: 'flite' },
    { language: 'ja', text: 'デハタラク', engine: 'espeak' },
  ]);
  // eSpeak's ja voice on its own names the letters (M, I, C, …) and says "Japanese letter" for 働.
  const spelled = await espeakAloneSeconds('ja+f2', text);
  const seconds = pcm16Seconds(english, RATE);
  t.diagnostic(`engine: ${seconds.toFixed(2)} s; eSpeak ja alone spelling it: ${spelled.toFixed(2)} s`);
  assert.ok(seconds < 0.6 * spelled, `engine ${seconds.toFixed(2)} s vs spelled ${spelled.toFixed(2)} s`);
  // The English part keeps the woman's voice.
  assert.ok(medianF0(pcm16ToFloat(english), RATE) > 160);
});

const ONE_TO_NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9];

for (const text of ['one two three four five six seven eight nine', '1 2 3 4 5 6 7 8 9']) {
  test(`en-man-1 saying "${text}" is recognised by pocketsphinx (≥ 8 of 9 digits, at most one error)`, async (t) => {
    const heard = await recognizeDigits(await speak(text, 'en-man-1', 'en'));
    const errors = wordErrors(ONE_TO_NINE, heard);
    t.diagnostic(`heard: ${heard.join(' ')} (${errors} word errors)`);
    assert.ok(errors <= 1, `pocketsphinx heard "${heard.join(' ')}": ${errors} errors`);
  });
}

test('en-woman-1 digits are recognisable too (at most two errors: the recognizer favours low voices)', async (t) => {
  const heard = await recognizeDigits(await speak('nine eight seven six five four three two one', 'en-woman-1', 'en'));
  const errors = wordErrors([...ONE_TO_NINE].reverse(), heard);
  t.diagnostic(`heard: ${heard.join(' ')} (${errors} word errors)`);
  assert.ok(errors <= 2, `pocketsphinx heard "${heard.join(' ')}": ${errors} errors`);
});
