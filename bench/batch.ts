/**
 * Long jobs (docs/cli.md §8, §9), with the built-in engine as a user without a service has it:
 * - `tts batch` of 100 short lines (10 with --quick) in one process, `--jobs 2`, against the
 *   same lines as 100 separate `tts stream -o` processes, two at a time — the baseline;
 * - a cached rerun of a long book (about an hour of audio; 3 minutes with --quick) against its
 *   first run, which filled the cache — the baseline.
 * Each process gets a fresh, empty piece cache; the batch and the separate processes speak
 * distinct lines, so neither is helped by the cache.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv } from '../test/helpers/cli.js';
import type { BenchOptions, Figure } from './figures.js';
import { timedSpawn, ttsArgs } from './process.js';

/** Target: a batch takes at most this share of the time of separate processes. */
export const BATCH_RATIO_MAX = 0.5;
/** Target: a cached rerun takes at most this share of the first run's time. */
export const CACHED_RERUN_RATIO_MAX = 0.2;

/** About `chars` characters of English prose, no two sentences alike. */
function book(chars: number): string {
  const parts: string[] = [];
  for (let i = 1, n = 0; n < chars; i++) {
    const s = `Chapter sentence ${i} tells of the river, the town and the long road home on day ${i}. `;
    parts.push(s);
    n += s.length;
  }
  return parts.join('');
}

/** Batch against separate processes, and a cached rerun against the first run. */
export async function benchBatch(options: BenchOptions): Promise<Figure[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-batch-'));
  try {
    const count = options.quick ? 10 : 100;
    const lines = Array.from({ length: count }, (_, i) => `Announcement ${i + 1}: the train to platform ${(i % 9) + 1} is delayed by ${i + 2} minutes.`);
    // Separate processes, two at a time (as --jobs 2 runs two at a time).
    const t0 = performance.now();
    let next = 0;
    const one = async (): Promise<void> => {
      for (let i = next++; i < count; i = next++) {
        await timedSpawn(process.execPath, ttsArgs('stream', '-q', '-v', 'en-woman-1', '-o', path.join(dir, `p${i}.wav`), lines[i]!), { env: cleanEnv(), timeoutMs: 120_000 });
      }
    };
    await Promise.all([one(), one()]);
    const separate = (performance.now() - t0) / 1000;
    options.log(`batch: ${count} processes in ${separate.toFixed(1)} s`);

    const jobs = path.join(dir, 'jobs.jsonl');
    writeFileSync(jobs, lines.map((text, i) => JSON.stringify({ text, output: `b${i}.wav`, voice: 'en-woman-1' })).join('\n'));
    const batch = await timedSpawn(process.execPath, ttsArgs('batch', '-q', '--jobs', '2', '--output-dir', dir, jobs), { env: cleanEnv(), timeoutMs: 300_000 });
    options.log(`batch: one batch of ${count} in ${(batch.exitMs / 1000).toFixed(1)} s`);

    // A long book: about 14.5 characters per second of speech.
    const chars = options.quick ? 3_000 : 52_000;
    const text = path.join(dir, 'book.txt');
    writeFileSync(text, book(chars));
    const env = cleanEnv();
    const out = path.join(dir, 'book.wav');
    const first = await timedSpawn(process.execPath, ttsArgs('stream', '-q', '--json', '-v', 'en-man-1', '-f', text, '-o', out), { env, timeoutMs: 900_000 });
    const audio = (JSON.parse(first.stderr.trim().split('\n').at(-1)!) as { audio_seconds: number }).audio_seconds;
    const bytes = readFileSync(out);
    options.log(`batch: book of ${(audio / 60).toFixed(1)} min, first run ${(first.exitMs / 1000).toFixed(1)} s`);
    const rerun = await timedSpawn(process.execPath, ttsArgs('stream', '-q', '--json', '-v', 'en-man-1', '-f', text, '-o', out), { env, timeoutMs: 900_000 });
    const summary = JSON.parse(rerun.stderr.trim().split('\n').at(-1)!) as { requests: number; cache_hits: number };
    const same = readFileSync(out).equals(bytes);
    return [
      {
        bench: 'batch',
        name: `batch: ${count} short lines in one process (--jobs 2)`,
        value: batch.exitMs / 1000,
        unit: 's',
        baseline: { name: `${count} separate processes, 2 at a time`, value: separate },
        targets: [{ kind: 'ratio-max', limit: BATCH_RATIO_MAX }],
        note: 'built-in engine, fresh cache',
      },
      {
        bench: 'batch',
        name: `cached rerun of a ${Math.round(audio / 60)}-minute book`,
        value: rerun.exitMs / 1000,
        unit: 's',
        baseline: { name: 'its first run', value: first.exitMs / 1000 },
        targets: [{ kind: 'ratio-max', limit: CACHED_RERUN_RATIO_MAX }],
        note: `${summary.requests} requests, ${summary.cache_hits} from cache; ${same ? 'identical bytes' : 'BYTES DIFFER'}`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
