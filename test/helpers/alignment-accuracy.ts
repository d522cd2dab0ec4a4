/**
 * Measures the aligner's accuracy (issue 23 point 3), for the bench and the looser test: the
 * built-in engine serves a sentence with one voice (its exact word boundaries are the truth) and
 * the aligner times that audio with another voice's reference. Every word's start and end is a
 * boundary; the error is |aligned − true|.
 */
import { readFileSync } from 'node:fs';
import { alignWords, renderReference } from '../../src/align/reference.js';
import { decodeToFloat } from '../../src/dsp/encoding.js';
import type { SpeechEngine } from '../../src/engine/index.js';
import type { Language } from '../../src/protocol/types.js';
import type { WordTiming } from '../../src/protocol/words.js';

/** Ten everyday English sentences (test/fixtures/english-sentences.json). */
export const ENGLISH_SENTENCES: readonly string[] = JSON.parse(readFileSync(new URL('../../../test/fixtures/english-sentences.json', import.meta.url), 'utf8')) as string[];

/** Ten everyday Japanese sentences, kanji and kana. */
export const JAPANESE_SENTENCES: readonly string[] = [
  '今日は良い天気です。',
  '明日は雨が降るかもしれません。',
  '駅までどのくらいかかりますか。',
  '私は毎朝コーヒーを飲みます。',
  '東京から大阪まで新幹線で行きました。',
  'この本はとても面白かったです。',
  '週末に友達と映画を見に行きます。',
  '窓を開けてもいいですか。',
  '子供たちは公園で遊んでいます。',
  '電話番号を教えてください。',
];

/** Rate the serving voice streams at (the SSE channel's 24 kHz, protocol.md). */
const SERVING_RATE = 24000;

/** What {@link measureAlignment} found, over all sentences. */
export interface AccuracyResult {
  /** |aligned − true| of every word start and end, ms. */
  errorsMs: number[];
  /** The same for the bare way: reference boundaries scaled by the ratio of the two durations. */
  proportionalErrorsMs: number[];
  /** Words of the serving voice the reference has no word for (matched by character offset). */
  unmatched: number;
  /** Process CPU seconds spent aligning (the engine idle meanwhile). */
  cpuSeconds: number;
  /** Seconds of served audio aligned. */
  audioSeconds: number;
}

/** `text` spoken by `voice` at `rate` Hz, mono, with its words (frames at that rate). */
async function speak(engine: SpeechEngine, text: string, voice: string, language: Language, rate: number): Promise<{ samples: Float32Array; words: WordTiming[] }> {
  const chunks: Buffer[] = [];
  let words: WordTiming[] = [];
  const job = { text, voice, language, format: 'pcm16' as const, sampleRate: rate, channels: 1 };
  for await (const chunk of engine.synthesize(job, undefined, { wordTimings: true, onReport: (r) => (words = r.words ?? []) })) chunks.push(chunk);
  return { samples: decodeToFloat(Buffer.concat(chunks), 'pcm16'), words };
}

/**
 * Whether the engine gives word timings for `voice` speaking `text` (the truth the measure needs).
 * The built-in engine may not for every language yet (Japanese, before kuromoji tokens are timed).
 */
export async function engineTimesWords(engine: SpeechEngine, text: string, voice: string, language: Language): Promise<boolean> {
  return (await speak(engine, text, voice, language, SERVING_RATE)).words.length > 0;
}

/**
 * Serves each sentence with `servingVoice` (by `servingEngine`, default `engine`), aligns it with
 * the language's reference voice rendered by `engine` (reference.ts) and compares with the serving
 * voice's exact boundaries.
 * @throws Error when the engine gives no words for the serving voice (nothing to measure against).
 */
export async function measureAlignment(engine: SpeechEngine, sentences: readonly string[], language: Language, servingVoice: string, servingEngine = engine): Promise<AccuracyResult> {
  const result: AccuracyResult = { errorsMs: [], proportionalErrorsMs: [], unmatched: 0, cpuSeconds: 0, audioSeconds: 0 };
  for (const text of sentences) {
    const served = await speak(servingEngine, text, servingVoice, language, SERVING_RATE);
    if (served.words.length === 0) throw new Error(`the engine gave no word timings for ${servingVoice}: ${text}`);
    const reference = await renderReference(engine, text, language);
    const before = process.cpuUsage();
    const aligned = await alignWords(reference, { samples: served.samples, sampleRate: SERVING_RATE });
    const used = process.cpuUsage(before);
    if (aligned === undefined) throw new Error('the aligner turned the job away');
    result.cpuSeconds += (used.user + used.system) / 1e6;
    result.audioSeconds += served.samples.length / SERVING_RATE;
    const scale = served.samples.length / SERVING_RATE / (reference.audio.samples.length / reference.audio.sampleRate);
    for (const truth of served.words) {
      const got = aligned.find((w) => w.charStart === truth.charStart);
      const ref = reference.words.find((w) => w.charStart === truth.charStart);
      if (got === undefined || ref === undefined) {
        result.unmatched++;
        continue;
      }
      for (const edge of ['start', 'end'] as const) {
        result.errorsMs.push((Math.abs(got[edge] - truth[edge]) / SERVING_RATE) * 1000);
        result.proportionalErrorsMs.push(Math.abs((ref[edge] / reference.audio.sampleRate) * scale - truth[edge] / SERVING_RATE) * 1000);
      }
    }
  }
  return result;
}
