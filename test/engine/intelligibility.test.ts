/**
 * Intelligibility (issue 14): English word error rate per voice, judged by pocketsphinx over ten
 * fixed everyday sentences (test/fixtures/english-sentences.json), so that a regression in what a
 * listener can understand shows as a failing test. Each sentence is synthesized as the service
 * sends it (pcm16, 24000 Hz), resampled to 16 kHz by `sox -R` and transcribed (test/helpers/asr.ts).
 *
 * Measured before Flite (eSpeak NG): en-man-1 0.585, en-woman-1 0.23–0.27. With Flite `rms` /
 * `slt` the English voices must stay at or below 0.15. (The Japanese voices read English with the
 * same Flite voices: test/engine/voices.test.ts checks they make the same bytes.)
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { scoreTranscript, transcribe } from '../helpers/asr.js';
import { collect, job } from '../helpers/engine-audio.js';

const SENTENCES = JSON.parse(readFileSync(new URL('../../../test/fixtures/english-sentences.json', import.meta.url), 'utf8')) as string[];
/** Largest word error rate an English voice may have on the fixed sentences. */
const MAX_WER = 0.15;
const RATE = 24000;

let engine: EspeakEngine;
before(() => {
  engine = createEngine();
});
after(async () => {
  await engine.close();
});

/**
 * Word error rate of `voice` over the fixed sentences: each synthesized on its own, joined with
 * 0.6 s of silence between them (pocketsphinx cuts utterances at silences) and transcribed in one
 * run, since loading the recognizer's model costs more than recognizing a sentence.
 */
async function werOf(voice: string): Promise<{ wer: number; heard: string }> {
  const silence = Buffer.alloc(Math.round(RATE * 0.6) * 2);
  const parts: Buffer[] = [];
  for (const text of SENTENCES) {
    parts.push((await collect(engine, job({ text, voice, language: 'en', sampleRate: RATE }))).audio, silence);
  }
  const heard = await transcribe(Buffer.concat(parts), RATE);
  const { errors, words } = scoreTranscript(SENTENCES.join(' '), heard);
  return { wer: errors / words, heard };
}

for (const voice of ['en-man-1', 'en-woman-1']) {
  test(`${voice}: pocketsphinx understands it, word error rate ≤ ${MAX_WER} over ${SENTENCES.length} everyday sentences`, async (t) => {
    const { wer, heard } = await werOf(voice);
    t.diagnostic(`${voice}: WER ${wer.toFixed(3)}; heard "${heard}"`);
    assert.ok(wer <= MAX_WER, `${voice}: word error rate ${wer.toFixed(3)} > ${MAX_WER}`);
  });
}
