/**
 * Memory: the peak resident set size of `tts stream -o FILE.wav` while a fake loopback server
 * streams 10 and 60 minutes of 24 kHz mono pcm16 (28.8 MB and 172.8 MB of audio, in deltas of
 * 100 ms) as fast as the client takes them. Streaming means the peak must not grow with the
 * length. Baseline: the RSS of `node -e 0`, a Node process holding nothing.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv } from '../test/helpers/cli.js';
import { BENCH_KEY, startLoopbackServer, streamDeltas } from './fake-servers.js';
import type { BenchOptions, Figure } from './figures.js';
import { measurePeakRss, ttsArgs } from './process.js';
import { mb, median } from './stats.js';

/** Target: peak RSS at most this many MB (10⁶ bytes), whatever the length. */
export const MEMORY_PEAK_MB_MAX = 100;
/** Target: the 60-minute peak exceeds the 10-minute peak by at most this many MB. */
export const MEMORY_GROWTH_MB_MAX = 10;

/** 100 ms of 24 kHz mono pcm16, in bytes. */
const DELTA_BYTES = 4800;

/**
 * Measures peak RSS in MB (10⁶ bytes): once per length with `--quick`, the median of 3 otherwise;
 * the baseline is the median of as many `node -e 0` runs. Checks each WAV's size on the way.
 */
export async function benchMemory(options: BenchOptions): Promise<Figure[]> {
  const repeats = options.quick ? 1 : 3;
  const lengths = [
    { minutes: 10, deltas: 6000 },
    { minutes: 60, deltas: 36000 },
  ];
  let deltasNow = 0;
  const server = await startLoopbackServer(async (_req, res) => {
    await streamDeltas(res, { deltas: deltasNow, deltaBytes: DELTA_BYTES }).catch(() => res.destroy());
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-mem-'));
  const wav = path.join(dir, 'x.wav');
  // Every run streams from the server: no piece cache.
  const env = cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: BENCH_KEY, TTS_NO_CACHE: '1' });
  try {
    const base: number[] = [];
    const peaks = lengths.map(() => [] as number[]);
    const seconds = lengths.map(() => [] as number[]);
    let method = '';
    for (let r = 0; r < repeats; r++) {
      base.push(mb((await measurePeakRss(process.execPath, ['-e', '0'])).bytes));
      for (const [i, len] of lengths.entries()) {
        deltasNow = len.deltas;
        const peak = await measurePeakRss(process.execPath, ttsArgs('stream', '-q', '-o', wav, 'hello'), { env, timeoutMs: 120_000 });
        const size = statSync(wav).size;
        if (size !== 44 + len.deltas * DELTA_BYTES) throw new Error(`${len.minutes} min: the WAV has ${size} bytes, expected ${44 + len.deltas * DELTA_BYTES}`);
        rmSync(wav);
        peaks[i]!.push(mb(peak.bytes));
        seconds[i]!.push(peak.run.exitMs / 1000);
        method = peak.method;
      }
    }
    options.log(`memory: ${repeats} run(s) per length, peak RSS by ${method}`);
    const baseline = { name: 'node -e 0', value: median(base) };
    const figures: Figure[] = lengths.map((len, i) => ({
      bench: 'memory',
      name: `memory: ${len.minutes} min pcm16 → wav`,
      value: median(peaks[i]!),
      unit: 'MB',
      baseline,
      targets: [{ kind: 'max', limit: MEMORY_PEAK_MB_MAX }],
      note: `peak RSS (${method}); ${((len.deltas * DELTA_BYTES) / 1e6 / median(seconds[i]!)).toFixed(0)} MB/s of audio`,
    }));
    figures.push({
      bench: 'memory',
      name: 'memory: growth 10 → 60 min',
      value: median(peaks[1]!),
      unit: 'MB',
      baseline: { name: '10 min', value: median(peaks[0]!) },
      targets: [{ kind: 'added-max', limit: MEMORY_GROWTH_MB_MAX }],
      note: 'peak must not grow with length',
    });
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}
