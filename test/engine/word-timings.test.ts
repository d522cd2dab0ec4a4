/**
 * Word timings from the built-in engine (src/engine/word-timings.ts, flite.ts, espeak.ts,
 * worker.ts; issue 23 point 1): one timing per spoken word of the text, in order, inside the
 * audio, with boundaries where the signal is quiet compared with the words themselves.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createEngine, type EspeakEngine, type JobReport } from '../../src/engine/index.js';
import { EspeakSynth } from '../../src/engine/espeak.js';
import { japaneseTokens, moraWeight, stretches } from '../../src/engine/japanese-words.js';
import { readAllNumbers } from '../../src/engine/japanese-numbers.js';
import { containsKanji, loadTokenizer } from '../../src/engine/japanese.js';
import { EnergyEnvelope, espeakWords, type TextToken, fliteWords, labelPhones, nfkcRanges, parseSegmentTimes, phoneGroups, speakableTokens, type EspeakWordEvent } from '../../src/engine/word-timings.js';
import type { WordTiming } from '../../src/protocol/words.js';
import { parseWordTimings } from '../../src/protocol/words.js';
import { job, pcm16ToFloat } from '../helpers/engine-audio.js';

let engine: EspeakEngine;
before(() => {
  engine = createEngine();
});
after(async () => {
  await engine.close();
});

/** Synthesizes `text` and returns the samples and the stream report's words. */
async function timed(text: string, voice: string, sampleRate = 24000, language: 'en' | 'ja' = 'en'): Promise<{ x: Float32Array; words: WordTiming[]; report: JobReport }> {
  let report: JobReport | undefined;
  const chunks: Buffer[] = [];
  for await (const c of engine.synthesize(job({ text, voice, sampleRate, language }), undefined, { wordTimings: true, onReport: (r) => (report = r) })) chunks.push(c);
  assert.ok(report?.words !== undefined, 'the report has words');
  return { x: pcm16ToFloat(Buffer.concat(chunks)), words: report.words, report };
}

/** RMS of x[from, to). */
function rms(x: Float32Array, from: number, to: number): number {
  let sum = 0;
  const a = Math.max(0, from);
  const b = Math.min(x.length, to);
  for (let i = a; i < b; i++) sum += x[i]! * x[i]!;
  return b > a ? Math.sqrt(sum / (b - a)) : 0;
}

/** Loudest 20 ms window (hop 10 ms) of x[from, to), RMS. */
function loudest(x: Float32Array, from: number, to: number, win: number): number {
  let best = 0;
  for (let at = from; at + win <= to; at += Math.floor(win / 2)) best = Math.max(best, rms(x, at, at + win));
  return best;
}

/** The checks every text's words must pass. */
function checkWords(text: string, x: Float32Array, words: WordTiming[], rate: number, tokens: readonly TextToken[] = speakableTokens(text)): void {
  assert.equal(words.length, tokens.length, `${words.map((w) => w.text).join('|')}`);
  words.forEach((w, i) => {
    assert.equal(w.charStart, tokens[i]!.start);
    assert.equal(w.charEnd, tokens[i]!.end);
    assert.equal(w.text, text.slice(w.charStart, w.charEnd));
    assert.ok(w.start < w.end, `${w.text}: ${w.start} < ${w.end}`);
    if (i > 0) assert.ok(words[i - 1]!.end <= w.start, `${w.text} starts after the previous word ends`);
  });
  assert.ok(words.at(-1)!.end <= x.length, `last end ${words.at(-1)!.end} ≤ ${x.length} frames`);
  // Edges are quiet compared with the words: the mean RMS of 20 ms windows around the edges is
  // well under the mean of each word's loudest 20 ms (connected speech runs some words together,
  // so not every edge is silent; edges placed inside words would be about as loud as the words).
  const win = Math.round(rate * 0.02);
  const half = Math.floor(win / 2);
  let edgeSum = 0;
  let wordSum = 0;
  for (const w of words) {
    wordSum += loudest(x, w.start, w.end, win);
    for (const edge of [w.start, w.end]) edgeSum += rms(x, edge - half, edge + half) / 2;
  }
  assert.ok(edgeSum < 0.5 * wordSum, `edges ${(edgeSum / words.length).toFixed(4)} vs word peaks ${(wordSum / words.length).toFixed(4)} (mean RMS)`);
  // Every pause (≥ 150 ms below −40 dBFS) lies between words, never inside one.
  const frame = Math.round(rate * 0.01);
  let quietFrom = -1;
  for (let at = 0; at + frame <= x.length; at += frame) {
    if (rms(x, at, at + frame) < 0.01) {
      if (quietFrom < 0) quietFrom = at;
      continue;
    }
    if (quietFrom >= 0 && at - quietFrom >= 15 * frame) {
      const pause = [quietFrom, at];
      const inside = words.find((w) => w.start < pause[0]! && w.end > pause[1]!);
      assert.equal(inside, undefined, `a pause ${pause.join('–')} inside ${inside?.text}`);
    }
    quietFrom = -1;
  }
}

const ENGLISH = [
  'The quick brown fox jumps over the lazy dog.',
  'Hello world, this is a test of 1995. Dr. Smith lives on Baker Street!',
  "It's a small step; don't worry about the U.S.A. or ten percent.",
];

for (const voice of ['en-man-1', 'en-woman-1']) {
  test(`Flite (${voice}): a timing per word, in order, inside the audio, edges in quiet`, async () => {
    for (const text of ENGLISH) {
      const { x, words, report } = await timed(text, voice);
      assert.ok(report.segments.every((s) => s.engine === 'flite'));
      checkWords(text, x, words, 24000);
    }
  });
}

test('Flite: spelled letters (SSML say-as characters, a lexicon\'s "S Q L") and a word Flite cannot say leave every other word timed', async () => {
  // Joined by commas, `U S A` gave one phone group for three words, and `мир` none: every word of
  // the sentence went untimed.
  // Letters said in one breath have no quiet between them: the order and the ranges are checked, not the edges' level.
  for (const text of ['I saw U S A today.', 'We use S Q L daily.']) {
    const { x, words } = await timed(text, 'en-woman-1');
    assert.deepEqual(
      words.map((w) => [w.text, w.charStart, w.charEnd]),
      speakableTokens(text).map((t) => [text.slice(t.start, t.end), t.start, t.end]),
    );
    words.forEach((w, i) => assert.ok(w.start < w.end && (i === 0 || words[i - 1]!.end <= w.start), `${w.text}: ${w.start}–${w.end}`));
    assert.ok(words.at(-1)!.end <= x.length);
  }
  const text = 'Hello мир world.';
  const { words } = await timed(text, 'en-man-1');
  assert.deepEqual(
    words.map((w) => w.text),
    ['Hello', 'world.'],
  );
});

test('word timings only when asked: without them the same bytes, and no words in the report', async () => {
  // English on Flite, Japanese with kanji on eSpeak NG with a Latin word on Flite.
  for (const [text, voice, language] of [
    [ENGLISH[0]!, 'en-woman-1', 'en'],
    ['明日は東京でPythonの会議です。', 'ja-man-1', 'ja'],
  ] as const) {
    const asked = await timed(text, voice, 24000, language);
    let report: JobReport | undefined;
    const chunks: Buffer[] = [];
    for await (const c of engine.synthesize(job({ text, voice, sampleRate: 24000, language }), undefined, { onReport: (r) => (report = r) })) chunks.push(c);
    const plain = pcm16ToFloat(Buffer.concat(chunks));
    assert.ok(plain.length > 0 && Buffer.from(plain.buffer).equals(Buffer.from(asked.x.buffer)), `${voice}: the same samples (${plain.length} vs ${asked.x.length})`);
    assert.ok(report !== undefined && report.words === undefined, `${voice}: no words unless asked`);
    assert.ok(asked.words.length > 0);
  }
});

test('the timings are of the stream across units, and scale with the sample rate', async () => {
  // Longer than one unit (units.ts: 150 characters): the second unit's words come after the first's.
  const text = `${ENGLISH[0]} ${ENGLISH[1]} ${ENGLISH[2]} ${ENGLISH[0]}`;
  const a = await timed(text, 'en-man-1', 24000);
  checkWords(text, a.x, a.words, 24000);
  const b = await timed(text, 'en-man-1', 16000);
  assert.equal(b.words.length, a.words.length);
  a.words.forEach((w, i) => {
    // Same instants: within a frame of 16 kHz plus rounding (≤ 2 frames at 24 kHz).
    assert.ok(Math.abs(b.words[i]!.start * 1.5 - w.start) <= 2, `${w.text}: ${b.words[i]!.start} vs ${w.start}`);
  });
});

test('Japanese (eSpeak NG, Latin runs on Flite): a timing per word of the text as written, in order, inside the audio', async () => {
  // A unit after a number (5km, 30℃) is read in katakana, not as a Latin run.
  const texts = ['今日は良い天気です。明日は雨が降りそうなので、傘を持ってRubyの本を読みます。', 'こんにちは、世界。Hello world です。', '駅まで5kmあります。', 'きょうは、いいてんきです。'];
  for (const voice of ['ja-man-1', 'ja-woman-1']) {
    for (const text of texts) {
      const { x, words } = await timed(text, voice, 24000, 'ja');
      // The words: kuromoji tokens of the text as written (ICU segments for kana-only text),
      // Latin runs' words; these texts are NFKC already, so offsets are the text's.
      const tokenizer = containsKanji(text) ? await loadTokenizer() : undefined;
      const numbers = readAllNumbers(text, tokenizer).rewritten();
      const tokens = stretches(text, numbers).flatMap((s) =>
        s.language === 'ja' ? japaneseTokens(text, s.start, s.end, tokenizer, numbers) : speakableTokens(text.slice(s.start, s.end)).map((t) => ({ start: s.start + t.start, end: s.start + t.end })),
      );
      checkWords(text, x, words, 24000, tokens);
    }
  }
  assert.equal(moraWeight('きょう'), 2);
  assert.equal(moraWeight('天気'), 4);
});

test('eSpeak NG words: from its word events, ends trimmed to the sound', async () => {
  const es = await EspeakSynth.create();
  const text = 'Hello world, this is a test of 1995.';
  const events: EspeakWordEvent[] = [];
  const envelope = new EnergyEnvelope();
  const samples: number[] = [];
  es.reset();
  es.synthesize('en-us', text, (block) => {
    envelope.push(block);
    for (const v of block) samples.push(v / 32768);
    return false;
  }, (e) => events.push(e));
  envelope.finish();
  const tokens = speakableTokens(text);
  const words = espeakWords(events, tokens, samples.length, envelope);
  assert.deepEqual(
    words.map((w) => w.token),
    tokens.map((_, i) => i),
  );
  const x = Float32Array.from(samples);
  checkWords(
    text,
    x,
    words.map((w) => ({ text: text.slice(tokens[w.token]!.start, tokens[w.token]!.end), start: w.start, end: w.end, charStart: tokens[w.token]!.start, charEnd: tokens[w.token]!.end })),
    22050,
  );
});

test('the pieces: Flite output parsed, phones labelled by word through an edit-distance alignment', () => {
  assert.deepEqual(parseSegmentTimes('pau:0.119 hh:0.212 ax:0.261\n'), [
    { name: 'pau', end: 0.119 },
    { name: 'hh', end: 0.212 },
    { name: 'ax', end: 0.261 },
  ]);
  assert.throws(() => parseSegmentTimes('hh:x'), /unreadable/);
  assert.deepEqual(phoneGroups('pau d r ay v pau s m ih th pau \n'), [
    ['d', 'r', 'ay', 'v'],
    ['s', 'm', 'ih', 'th'],
  ]);
  // "Dr." read "drive" alone but "doctor" in context: the phones still go to the right words.
  const labels = labelPhones(['d', 'aa', 'k', 't', 'er', 's', 'm', 'ih', 'th'], [
    ['d', 'r', 'ay', 'v'],
    ['s', 'm', 'ih', 'th'],
  ]);
  assert.deepEqual(labels, [0, 0, 0, 0, 0, 1, 1, 1, 1]);
  const segs = parseSegmentTimes('pau:0.1 hh:0.2 ay:0.3 pau:0.5 y:0.6 uw:0.7 pau:0.8');
  assert.deepEqual(fliteWords(segs, [['hh', 'ay'], ['y', 'uw']], 2, 1000), [
    { token: 0, start: 100, end: 300 },
    { token: 1, start: 500, end: 700 },
  ]);
  // A group count that does not match the words: no words rather than wrong ones.
  assert.deepEqual(fliteWords(segs, [['hh', 'ay', 'y', 'uw']], 2, 1000), []);
});

test('char ranges go back to the text as written through NFKC; the wire check refuses disorder', () => {
  const text = 'ﬁne Ｈｅｌｌｏ';
  const range = nfkcRanges(text)!;
  const normalized = text.normalize('NFKC');
  const hello = normalized.indexOf('Hello');
  assert.deepEqual(range(hello, hello + 5), [4, 9]);
  assert.deepEqual(range(0, 4), [0, 3]);
  assert.deepEqual(parseWordTimings([{ text: 'a', start: 0, end: 5, charStart: 0, charEnd: 1 }]), [{ text: 'a', start: 0, end: 5, charStart: 0, charEnd: 1 }]);
  assert.equal(parseWordTimings([{ text: 'a', start: 5, end: 5, charStart: 0, charEnd: 1 }]), undefined);
  assert.equal(
    parseWordTimings([
      { text: 'b', start: 9, end: 12, charStart: 2, charEnd: 3 },
      { text: 'a', start: 0, end: 5, charStart: 0, charEnd: 1 },
    ]),
    undefined,
  );
  assert.equal(parseWordTimings('x'), undefined);
});

test('nfkcRanges maps decomposed text (NFD, as macOS writes it): "Cafe\u0301" is a range, not none', () => {
  const text = 'Cafe\u0301 au lait, re\u0301sume\u0301.';
  const range = nfkcRanges(text);
  assert.ok(range !== undefined, 'a mapping for NFD text');
  const normalized = text.normalize('NFKC');
  // "Café" is normalized 0..4, "résumé." is 14..21: each maps back to the word as written.
  assert.deepEqual(range(0, 4), [0, 5]);
  const at = normalized.indexOf('résumé');
  assert.equal(text.slice(...range(at, at + 'résumé'.length)), 're\u0301sume\u0301');
});
