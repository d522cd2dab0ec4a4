/**
 * The voices (issue 14):
 * - first audio byte for an English sentence with Flite (en-man-1 = Flite rms), cold (`tts stream`
 *   spawned with no service configured) and warm (an engine in this process, after a warm-up
 *   job), each beside eSpeak NG speaking the same sentence in the same run — eSpeak being what
 *   en-man-1 was before, and what it falls back to when Flite cannot start;
 * - the mora error rate of the Japanese readings on the hand-checked sentences
 *   (test/fixtures/japanese-readings*.json: the test set and the held-out set of issue 25,
 *   test/helpers/mora.ts READING_SETS), each as a whole (target ≤ 1 %) and by class; a set with
 *   no files (the held-out set until the next one is written) is only logged.
 */
import { fileURLToPath } from 'node:url';
import { createEngine } from '../src/engine/index.js';
import { cleanEnv } from '../test/helpers/cli.js';
import { loadReadingCases, READING_SETS, readingErrorRate } from '../test/helpers/mora.js';
import type { BenchOptions, Figure } from './figures.js';
import { timedSpawn, ttsArgs } from './process.js';
import { median } from './stats.js';

const SENTENCE = 'Please turn off the lights before you leave the room.';
/** Target for the reading error rate, in percent. */
export const READING_ERROR_MAX_PERCENT = 1;
const NO_FLITE_HOOK = fileURLToPath(new URL('./no-flite-hook.js', import.meta.url));
const NO_FLITE_WORKER = new URL('../test/helpers/engine-no-flite-worker.js', import.meta.url);

/** Measures the figures above (cold: median of 3 runs with `--quick`, 7 otherwise; warm: 5 / 15). */
export async function benchVoices(options: BenchOptions): Promise<Figure[]> {
  // The engine is what is measured: no run may be answered from the piece cache (docs/cli.md §8).
  const env = cleanEnv({ TTS_NO_CACHE: '1' });
  const coldRuns = options.quick ? 3 : 7;
  const warmRuns = options.quick ? 5 : 15;
  const flite: number[] = [];
  const espeak: number[] = [];
  for (let r = 0; r < coldRuns; r++) {
    const a = await timedSpawn(process.execPath, ttsArgs('stream', '-q', '-v', 'en-man-1', SENTENCE), { env });
    const b = await timedSpawn(process.execPath, ['--import', NO_FLITE_HOOK, ...ttsArgs('stream', '-q', '-v', 'en-man-1', SENTENCE)], { env });
    if (a.firstByteMs === undefined || b.firstByteMs === undefined) throw new Error(`no audio: ${a.stderr}${b.stderr}`);
    // The two engines make audio of other lengths: the same length means the hook did not stop
    // Flite, and the baseline would be Flite measured against itself (issue 20's eighth round
    // found it so, once the engine opened Flite's file another way).
    if (a.stdoutBytes === b.stdoutBytes) throw new Error(`${NO_FLITE_HOOK} did not make Flite fail: both runs wrote ${a.stdoutBytes} bytes`);
    flite.push(a.firstByteMs);
    espeak.push(b.firstByteMs);
  }
  const figures: Figure[] = [
    {
      bench: 'voices',
      name: 'voices: cold first byte, English sentence, Flite',
      value: median(flite),
      unit: 'ms',
      baseline: { name: 'eSpeak NG (the old en-man-1)', value: median(espeak) },
      targets: [{ kind: 'ratio-max', limit: 1 }],
      note: `median of ${coldRuns}, spawn → first stdout byte; target: within eSpeak's figure`,
    },
  ];
  options.log(`voices: cold first byte, ${coldRuns} runs each`);

  const warm = async (engine: ReturnType<typeof createEngine>): Promise<number> => {
    const job = { text: SENTENCE, voice: 'en-man-1', language: 'en' as const, format: 'pcm16' as const, sampleRate: 24000, channels: 1 };
    for await (const _ of engine.synthesize(job)) {
      // warm-up: load, compile, JIT
    }
    const times: number[] = [];
    for (let r = 0; r < warmRuns; r++) {
      const started = performance.now();
      let first: number | undefined;
      for await (const _ of engine.synthesize(job)) first ??= performance.now() - started;
      times.push(first!);
    }
    return median(times);
  };
  const withFlite = createEngine();
  const withoutFlite = createEngine({ workerUrl: NO_FLITE_WORKER });
  try {
    figures.push({
      bench: 'voices',
      name: 'voices: warm first chunk, English sentence, Flite',
      value: await warm(withFlite),
      unit: 'ms',
      baseline: { name: 'eSpeak NG (the old en-man-1)', value: await warm(withoutFlite) },
      targets: [],
      note: `median of ${warmRuns}; both stream as they synthesize (Flite in blocks of 2048 samples from its vocoder, since issue 20's seventh round), but Flite first analyses the whole sentence`,
    });
  } finally {
    await Promise.all([withFlite.close(), withoutFlite.close()]);
  }
  options.log(`voices: warm first chunk, ${warmRuns} runs each`);

  // Issue 25: the test set (every sentence the rules were written or checked against) and the
  // held-out set (written after the fixes), each as a whole and by class.
  for (const [label, files] of [
    ['test set', READING_SETS.test],
    ['held-out set', READING_SETS.heldout],
  ] as const) {
    const cases = files.flatMap((file) => loadReadingCases(file));
    const r = await readingErrorRate(cases);
    figures.push({
      bench: 'voices',
      name: `voices: Japanese reading mora error, ${label}`,
      value: r.rate * 100,
      unit: '%',
      targets: [{ kind: 'max', limit: READING_ERROR_MAX_PERCENT }],
      note: `${cases.length} sentences, ${r.errors} of ${r.morae} morae, ${r.failures.length} sentences misread; ${files.join(', ')}`,
    });
    for (const [name, rate] of Object.entries(r.byClass)) {
      const inClass = cases.filter((c) => c.class === name).length;
      figures.push({
        bench: 'voices',
        name: `voices: Japanese reading mora error, ${label}, class ${name}`,
        value: rate * 100,
        unit: '%',
        targets: [],
        note: `${inClass} sentences`,
      });
    }
  }
  return figures;
}
