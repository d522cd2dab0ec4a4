/**
 * Long text: the peak resident set size of `tts stream -f book.txt -o book.raw` for a 1 MB and
 * (full run) a 10 MB text, through a fast fake service that answers every piece at once. The
 * text is read as a stream and split in windows, so memory follows the pieces in flight, not
 * the length of the text. Baseline: the same command with a 1 KB text, in the same run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv } from '../test/helpers/cli.js';
import { deltaEvent, doneEvent, startEventStream } from '../test/helpers/servers.js';
import { BENCH_KEY, startLoopbackServer } from './fake-servers.js';
import { book, type BenchOptions, type Figure } from './figures.js';
import { measurePeakRss, ttsArgs } from './process.js';
import { mb } from './stats.js';

/** Target: a 1 MB text peaks under this many MB (10⁶ bytes). */
export const LONG_TEXT_PEAK_MB_MAX = 300;
/** Target: ten times the text adds at most this many MB to the peak. */
export const LONG_TEXT_GROWTH_MB_MAX = 30;


/** Peak RSS in MB for 1 KB (baseline), 1 MB and, unless --quick, 10 MB of text. */
export async function benchLongText(options: BenchOptions): Promise<Figure[]> {
  // 10 ms of audio per piece: the service is not what is measured.
  const audio = Buffer.alloc(480);
  const server = await startLoopbackServer((_req, res) => {
    startEventStream(res);
    res.end(deltaEvent(audio) + doneEvent());
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-long-'));
  // The client's memory is what is measured, not the piece cache's writes.
  const env = cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: BENCH_KEY, TTS_NO_CACHE: '1' });
  const peak = async (bytes: number): Promise<{ mb: number; seconds: number }> => {
    const text = path.join(dir, `book-${bytes}.txt`);
    writeFileSync(text, book(bytes));
    const run = await measurePeakRss(process.execPath, ttsArgs('stream', '-q', '--concurrency', '4', '-f', text, '-o', path.join(dir, 'out.raw')), { env, timeoutMs: 600_000 });
    return { mb: mb(run.bytes), seconds: run.run.exitMs / 1000 };
  };
  try {
    const small = await peak(1_000);
    const oneMb = await peak(1_000_000);
    options.log(`long-text: 1 MB in ${oneMb.seconds.toFixed(1)} s`);
    const baseline = { name: '1 KB text', value: small.mb };
    const figures: Figure[] = [
      {
        bench: 'long-text',
        name: 'memory: 1 MB text → raw, peak RSS',
        value: oneMb.mb,
        unit: 'MB',
        baseline,
        targets: [{ kind: 'max', limit: LONG_TEXT_PEAK_MB_MAX }],
        note: `${oneMb.seconds.toFixed(1)} s through a fast fake service`,
      },
    ];
    if (!options.quick) {
      const tenMb = await peak(10_000_000);
      options.log(`long-text: 10 MB in ${tenMb.seconds.toFixed(1)} s`);
      figures.push({
        bench: 'long-text',
        name: 'memory: 10 MB text → raw, peak RSS',
        value: tenMb.mb,
        unit: 'MB',
        baseline: { name: '1 MB text', value: oneMb.mb },
        targets: [{ kind: 'added-max', limit: LONG_TEXT_GROWTH_MB_MAX }],
        note: `${tenMb.seconds.toFixed(1)} s; must not grow with the text`,
      });
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}
