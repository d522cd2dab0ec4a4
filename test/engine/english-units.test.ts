/**
 * Units per second in English (src/engine/english-units.ts; README "Units per second in
 * English"): `500 MB/s` is said "500 megabytes per second", not "M B slash S" as Flite's own text
 * normalization spells it; the words said for the unit are timed as the unit as written; every
 * text without such a unit reaches Flite as before.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { englishRanges, readEnglishRates } from '../../src/engine/english-units.js';
import { fliteRun, loadFlite } from '../../src/engine/flite.js';
import { speechSegments } from '../../src/engine/japanese.js';
import { phoneGroups } from '../../src/engine/word-timings.js';
import type { WordTiming } from '../../src/protocol/words.js';
import { job } from '../helpers/engine-audio.js';

let engine: EspeakEngine;
before(() => {
  engine = createEngine();
});
after(async () => {
  await engine.close();
});

/** The phones Flite's `rms` voice (en-man-1) says for `text` (`flite -ps`), pauses left out. */
async function fliteSays(text: string): Promise<string> {
  const printed = fliteRun(await loadFlite(), ['flite', '-voice', 'rms', '-ps', '-t', text, '-o', 'none'], (host) => host.stdout());
  return phoneGroups(printed).flat().join(' ');
}

/** What the English voices are given for `text`. */
async function englishOf(text: string): Promise<string> {
  return (await speechSegments(text, 'en')).map((s) => s.text).join('|');
}

/** The audio and words the engine makes of `text` in `voice`. */
async function synthesize(text: string, voice: string): Promise<{ audio: Buffer; words: WordTiming[] }> {
  let words: WordTiming[] = [];
  const chunks: Buffer[] = [];
  for await (const c of engine.synthesize(job({ text, voice, language: 'en' }), undefined, { wordTimings: true, onReport: (r) => (words = r.words ?? []) })) chunks.push(c);
  return { audio: Buffer.concat(chunks), words };
}

test('a unit per second or per hour after a number is said in words, the number as written', async () => {
  assert.equal(await englishOf('The disk reads 500 MB/s'), 'The disk reads 500 megabytes per second');
  assert.equal(await englishOf('1 MB/s, 10kB/s, 64 KB/s and 2.5 GB/s'), '1 megabyte per second, 10 kilobytes per second, 64 kilobytes per second and 2.5 gigabytes per second');
  assert.equal(await englishOf('100 Mbit/s, 100 Mbps, 1 Gbps and 1,000 KiB/s.'), '100 megabits per second, 100 megabits per second, 1 gigabit per second and 1,000 kibibytes per second.');
  assert.equal(await englishOf('90 km/h, 3 m/s'), '90 kilometers per hour, 3 meters per second');
  // Full-width, as typed on a Japanese keyboard: NFKC first.
  assert.equal(await englishOf('５００ＭＢ/ｓ'), '500 megabytes per second');
  // What the listener hears: the words written out, not "M B slash S".
  const before = await fliteSays('The disk reads 500 MB/s');
  assert.match(before, /s l ae sh/u, 'Flite itself says "slash"');
  assert.equal(await fliteSays(await englishOf('The disk reads 500 MB/s')), await fliteSays('The disk reads 500 megabytes per second'));
  assert.doesNotMatch(await fliteSays(await englishOf('90 km/h')), /s l ae sh/u);
});

test('text without a unit per second reaches Flite as it was: no number before it, another unit, a longer word', async () => {
  for (const text of [
    'See you at the station tomorrow. Bring an umbrella.',
    'Something else entirely, 12345.',
    '5 MB and 3 km',
    'MB/s alone, a/s, and/or',
    'v2MB/s',
    '500 MB/sec',
    '500 MB/s/core',
    '3 ms/s',
  ]) {
    const read = readEnglishRates(text);
    assert.equal(read.text, text);
    assert.ok(!read.changed, text);
    assert.equal(await englishOf(text), text);
  }
  // The Japanese voices read their own units (japanese-numbers.ts): untouched.
  assert.doesNotMatch((await speechSegments('転送は500MB/sです。', 'ja')).map((s) => s.text).join('|'), /megabytes/u);
});

test('the engine says the unit in words, and times the words said for it as the unit as written', async () => {
  for (const voice of ['en-woman-1', 'en-man-1']) {
    const unit = await synthesize('The disk reads 500 MB/s.', voice);
    const words = await synthesize('The disk reads 500 megabytes per second.', voice);
    assert.ok(unit.audio.equals(words.audio), `${voice}: the same audio as the words written out`);
    assert.deepEqual(
      unit.words.map((w) => [w.text, w.charStart, w.charEnd]),
      [['The', 0, 3], ['disk', 4, 8], ['reads', 9, 14], ['500', 15, 18], ['MB/s.', 19, 24]],
    );
    // MB/s. from the start of "megabytes" to the end of "second.".
    const said = words.words.slice(4);
    assert.deepEqual(said.map((w) => w.text), ['megabytes', 'per', 'second.']);
    assert.equal(unit.words[4]!.start, said[0]!.start);
    assert.equal(unit.words[4]!.end, said[2]!.end);
  }
  // The ranges back to the text: a spaced unit is a word of its own, after the number's.
  const spaced = englishRanges('at 500 MB/s now')!;
  const spacedRead = readEnglishRates('at 500 MB/s now').text;
  assert.deepEqual(spaced(3, 6), [3, 6]);
  assert.deepEqual(spaced(spacedRead.indexOf('per'), spacedRead.indexOf('per') + 3), [7, 11]);
});

test('a unit glued to its number is one word with it, the written token, as other glued tokens (90kg) are', async () => {
  // The ranges back to the text: every word said for `500MB/s`, the number's too, is that token.
  const range = englishRanges('at 500MB/s now')!;
  const read = readEnglishRates('at 500MB/s now').text;
  assert.equal(read, 'at 500 megabytes per second now');
  assert.deepEqual(range(3, 6), [3, 10]);
  assert.deepEqual(range(read.indexOf('per'), read.indexOf('per') + 3), [3, 10]);
  assert.deepEqual(range(read.indexOf('now'), read.length), [11, 14]);
  for (const voice of ['en-woman-1', 'en-man-1']) {
    const glued = await synthesize('The limit is 90km/h today.', voice);
    const spaced = await synthesize('The limit is 90 km/h today.', voice);
    const glued90kg = await synthesize('He weighs 90kg today.', voice);
    assert.ok(glued.audio.equals(spaced.audio), `${voice}: the same audio as the spaced unit`);
    assert.deepEqual(
      glued.words.map((w) => [w.text, w.charStart, w.charEnd]),
      [['The', 0, 3], ['limit', 4, 9], ['is', 10, 12], ['90km/h', 13, 19], ['today.', 20, 26]],
    );
    assert.deepEqual(
      spaced.words.map((w) => [w.text, w.charStart, w.charEnd]),
      [['The', 0, 3], ['limit', 4, 9], ['is', 10, 12], ['90', 13, 15], ['km/h', 16, 20], ['today.', 21, 27]],
    );
    // One word from the start of "90" to the end of "hour": the spaced form's two words together.
    assert.equal(glued.words[3]!.start, spaced.words[3]!.start);
    assert.equal(glued.words[3]!.end, spaced.words[4]!.end);
    // As Flite's own glued tokens are timed: one word.
    assert.deepEqual(glued90kg.words.map((w) => w.text), ['He', 'weighs', '90kg', 'today.']);
    // Punctuation stays attached, as for the spaced `MB/s.`.
    const atEnd = await synthesize('It copies at 500MB/s.', voice);
    assert.deepEqual(atEnd.words.map((w) => [w.text, w.charStart, w.charEnd]).slice(3), [['500MB/s.', 13, 21]]);
  }
});
