/**
 * Fairness of the built-in service (docs/cli.md §5; issue 9 §10): the time to first delta of a
 * short request from key B while key A runs four long texts on two workers — with the engine's
 * fair scheduling (round-robin between keys, then streams, in units of a sentence or a few)
 * against the same engine in `fifo` order (a plain job queue, as before), in the same run. Both
 * engines are `createEngine({ workers: 2 })` behind `createService` in this process; the clients
 * read everything. Target: under 1.5 s with fair scheduling.
 */
import { createEngine, type SchedulingPolicy } from '../src/engine/index.js';
import { postSse, startService } from '../test/helpers/serve-http.js';
import type { BenchOptions, Figure } from './figures.js';
import { median } from './stats.js';

const KEY_A = 'bench-fair-key-A-0123456789';
const KEY_B = 'bench-fair-key-B-0123456789';
const SHORT = 'Hello there.';
const LONG_CHARS_FULL = 5000;
const LONG_CHARS_QUICK = 2000;
/** Target: the short request's first delta, in ms. */
export const FAIR_FIRST_DELTA_MS_MAX = 1500;

/** Ordinary English of about `chars` characters. */
function longText(chars: number): string {
  const parts: string[] = [];
  for (let i = 0, n = 0; n < chars - 100; i++) {
    const s = `Sentence ${i + 1} of a long request keeps the engine busy for a while, as long texts do. `;
    parts.push(s);
    n += s.length;
  }
  return parts.join('');
}

/**
 * One round: four long requests of key A; once two of them speak (both workers busy), a short
 * request of key B. @returns the short request's time to first delta, in ms.
 */
async function round(policy: SchedulingPolicy, long: string): Promise<number> {
  const engine = createEngine({ workers: 2, scheduling: policy });
  await engine.warmUp();
  const svc = await startService({ apiKeys: [KEY_A, KEY_B], engine, maxChars: 10_000, maxConcurrent: 4 });
  try {
    const longs = await Promise.all(Array.from({ length: 4 }, () => postSse(svc.base, { input: long, voice: 'en-man-1' }, KEY_A)));
    // Read the long streams to their end in the background, noting when each began to speak.
    let speaking = 0;
    let twoSpeak: () => void = () => {};
    const busy = new Promise<void>((resolve) => (twoSpeak = resolve));
    const reading = longs.map(async (res) => {
      let first = true;
      for await (const e of res.events) {
        if (first && e.event === 'delta' && ++speaking === 2) twoSpeak();
        first = false;
      }
    });
    await busy;
    const sent = performance.now();
    const short = await postSse(svc.base, { input: SHORT, voice: 'en-woman-1' }, KEY_B);
    let firstDelta = Number.NaN;
    for await (const e of short.events) {
      if (e.event === 'delta' && Number.isNaN(firstDelta)) firstDelta = e.at - sent;
    }
    for (const res of longs) res.destroy();
    await Promise.allSettled(reading);
    return firstDelta;
  } finally {
    await svc.close();
    await engine.close();
  }
}

/** First delta of a short request behind 4 long ones of another key: fair vs fifo, same run. */
export async function benchServerFairness(options: BenchOptions): Promise<Figure[]> {
  const long = longText(options.quick ? LONG_CHARS_QUICK : LONG_CHARS_FULL);
  const rounds = options.quick ? 1 : 3;
  const fair: number[] = [];
  const fifo: number[] = [];
  for (let r = 0; r < rounds; r++) {
    fair.push(await round('fair', long));
    fifo.push(await round('fifo', long));
  }
  options.log(`server-fairness: fair ${fair.map((v) => v.toFixed(0)).join(', ')} ms; fifo ${fifo.map((v) => v.toFixed(0)).join(', ')} ms`);
  return [
    {
      bench: 'server-fairness',
      name: `server: short request of key B behind 4 × ${long.length} chars of key A, first delta`,
      value: median(fair),
      unit: 'ms',
      baseline: { name: 'same engine in fifo order', value: median(fifo) },
      targets: [{ kind: 'max', limit: FAIR_FIRST_DELTA_MS_MAX }],
      note: `2 workers, in-process; median of ${rounds}`,
    },
  ];
}
