/**
 * The aligner's accuracy and cost (issue 23 point 3): the built-in engine serves each sentence
 * with en-man-1 (ja-man-1), the aligner times it with en-woman-1's (ja-woman-1's) reference, and
 * every word start and end is compared with the serving voice's exact one. Baseline: the bare way,
 * the reference's boundaries scaled by the ratio of the two durations. A third set has the English
 * served by eSpeak NG (the engine's fallback when Flite cannot start): another synthesizer than
 * the reference's Flite, as another service would be; its truth is eSpeak's word events, less
 * exact than Flite's segment times. Also the aligner's CPU
 * share: process CPU seconds spent aligning per second of audio aligned.
 */
import { WordTimer } from '../src/align/word-timer.js';
import { decodeToFloat } from '../src/dsp/encoding.js';
import { createEngine, type SpeechEngine } from '../src/engine/index.js';
import type { Language } from '../src/protocol/types.js';
import { engineTimesWords, ENGLISH_SENTENCES, JAPANESE_SENTENCES, measureAlignment } from '../test/helpers/alignment-accuracy.js';
import type { BenchOptions, Figure } from './figures.js';
import { mean, median, percentile } from './stats.js';

/** Target: mean absolute boundary error, ms (issue 23 point 3). */
export const ALIGN_MEAN_ERROR_MS_MAX = 50;
/** Target: 95th percentile of the absolute boundary error, ms (issue 23 point 3). */
export const ALIGN_P95_ERROR_MS_MAX = 120;
/** Target: aligner CPU seconds per second of audio ("a bounded share of one core", issue 23 point 2). */
export const ALIGN_CPU_SHARE_MAX = 0.1;

/** Measures both languages over ten sentences each (four with `--quick`). */
export async function benchAlignment(options: BenchOptions): Promise<Figure[]> {
  const engine = createEngine();
  // Another synthesizer than the reference's Flite, as a service would be: eSpeak NG speaks English
  // when Flite cannot start (the engine's fallback), its word events the truth.
  const espeak = createEngine({ workerUrl: new URL('../test/helpers/engine-no-flite-worker.js', import.meta.url) });
  const figures: Figure[] = [];
  let cpu = 0;
  let audio = 0;
  try {
    const sets: { language: Language; label: string; voice: string; sentences: readonly string[]; served?: SpeechEngine; by?: string }[] = [
      { language: 'en', label: 'English', voice: 'en-man-1', sentences: ENGLISH_SENTENCES },
      { language: 'ja', label: 'Japanese', voice: 'ja-man-1', sentences: JAPANESE_SENTENCES },
      { language: 'en', label: 'English, eSpeak NG served', voice: 'en-man-1', sentences: ENGLISH_SENTENCES, served: espeak, by: 'eSpeak NG en-us+adam' },
    ];
    for (const set of sets) {
      const sentences = options.quick ? set.sentences.slice(0, 4) : set.sentences;
      if (!(await engineTimesWords(set.served ?? engine, sentences[0]!, set.voice, set.language))) {
        options.log(`alignment: ${set.label} not measured: the built-in engine gives no ${set.label} word timings to compare with`);
        continue;
      }
      const r = await measureAlignment(engine, sentences, set.language, set.voice, set.served);
      cpu += r.cpuSeconds;
      audio += r.audioSeconds;
      const note = `${r.errorsMs.length} boundaries, ${sentences.length} sentences, ${set.by ?? set.voice} vs ${set.language}-woman-1${r.unmatched > 0 ? `, ${r.unmatched} words unmatched` : ''}`;
      const baseline = (value: number): Figure['baseline'] => ({ name: 'durations scaled', value });
      figures.push({
        bench: 'alignment',
        name: `alignment: mean boundary error, ${set.label}`,
        value: mean(r.errorsMs),
        unit: 'ms',
        baseline: baseline(mean(r.proportionalErrorsMs)),
        targets: [{ kind: 'max', limit: ALIGN_MEAN_ERROR_MS_MAX }],
        note,
      });
      figures.push({
        bench: 'alignment',
        name: `alignment: p95 boundary error, ${set.label}`,
        value: percentile(r.errorsMs, 95),
        unit: 'ms',
        baseline: baseline(percentile(r.proportionalErrorsMs, 95)),
        targets: [{ kind: 'max', limit: ALIGN_P95_ERROR_MS_MAX }],
        note,
      });
      options.log(`alignment: ${set.label} measured`);
    }
  } finally {
    await engine.close();
    await espeak.close();
  }
  figures.push(await pieceEndDelay(options));
  figures.push({
    bench: 'alignment',
    name: 'alignment: CPU share (aligner CPU s / audio s)',
    value: (cpu / audio) * 100,
    unit: '%',
    targets: [{ kind: 'max', limit: ALIGN_CPU_SHARE_MAX * 100 }],
    note: `${audio.toFixed(1)} s of audio, resampling + MFCC + DTW`,
  });
  return figures;
}

/**
 * How long a piece's word timings come after the end of its audio, as a run uses the aligner
 * (speak/word-source.ts): the reference is prepared as the request opens, so what is left at the
 * end is resampling, MFCCs and DTW in the aligner's thread. The run's outputs wait for it at the
 * piece's end when word timings are asked for. Median over the English sentences after one warm-up.
 */
async function pieceEndDelay(options: BenchOptions): Promise<Figure> {
  const service = createEngine();
  const timer = new WordTimer();
  const delays: number[] = [];
  let audio = 0;
  try {
    const sentences = options.quick ? ENGLISH_SENTENCES.slice(0, 4) : ENGLISH_SENTENCES;
    for (const [i, text] of [sentences[0]!, ...sentences].entries()) {
      timer.prepare(text, 'en');
      const chunks: Buffer[] = [];
      for await (const c of service.synthesize({ text, voice: 'en-man-1', language: 'en', format: 'pcm16', sampleRate: 24000, channels: 1 })) chunks.push(c);
      const samples = decodeToFloat(Buffer.concat(chunks), 'pcm16');
      const started = performance.now();
      await timer.time({ text, language: 'en', audio: { samples, sampleRate: 24000 } });
      if (i === 0) continue;
      delays.push(performance.now() - started);
      audio += samples.length / 24000;
    }
  } finally {
    await timer.close();
    await service.close();
  }
  return {
    bench: 'alignment',
    name: 'alignment: word timings after the end of a piece (prepared reference)',
    value: median(delays),
    unit: 'ms',
    targets: [],
    note: `median of ${delays.length} pieces of ${(audio / delays.length).toFixed(1)} s on average; max ${Math.max(...delays).toFixed(0)} ms`,
  };
}
