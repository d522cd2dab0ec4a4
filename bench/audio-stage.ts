/**
 * The client's audio stage (issue 11: rate/channel conversion, --speed, --volume, --pause,
 * --subtitles) must keep streaming: it may add at most {@link STAGE_ADDED_TTFA_MS_MAX} ms to the
 * time from the server's first delta to the first byte on stdout, and its peak memory must not
 * grow with the length of the text.
 *
 * Time to first audio: as client-ttfa.ts (one clock; the server writes one 100 ms delta and holds
 * the stream until the child's first stdout byte), `tts stream` plain against the same with
 * `-r 48000 -c 2` and with `-r 48000 -c 2 --speed 1.25 --volume 0.8 --subtitles`, interleaved.
 * Memory: peak RSS of a long text through every stage at once against the plain run of the same
 * text (same run), and against a text four times shorter through the same stages (flatness).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv } from '../test/helpers/cli.js';
import { BENCH_KEY, startFirstDeltaServer, startLoopbackServer } from './fake-servers.js';
import { deltaEvent, doneEvent, patternBytes, startEventStream } from '../test/helpers/servers.js';
import { book, type BenchOptions, type Figure } from './figures.js';
import { measurePeakRss, timedSpawn, ttsArgs } from './process.js';
import { mb, median } from './stats.js';

/** Target: the stage adds at most this many ms to the first delta's path (issue 11). */
export const STAGE_ADDED_TTFA_MS_MAX = 10;
/** Target: four times the text through the stage adds at most this many MB to its peak. */
export const STAGE_GROWTH_MB_MAX = 20;


/** TTFA with and without the stage, and peak RSS of a long text through it. */
export async function benchAudioStage(options: BenchOptions): Promise<Figure[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-stage-'));
  try {
    return [...(await ttfa(options, dir)), ...(await memory(options, dir))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ttfa(options: BenchOptions, dir: string): Promise<Figure[]> {
  const rounds = options.quick ? 8 : 30;
  const server = await startFirstDeltaServer();
  const env = cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: BENCH_KEY, TTS_NO_CACHE: '1' });
  const subjects = [
    { name: 'plain pcm16', args: ttsArgs('stream', '-q', 'hello'), latency: [] as number[] },
    { name: '-r 48000 -c 2', args: ttsArgs('stream', '-q', '-r', '48000', '-c', '2', 'hello'), latency: [] as number[] },
    {
      name: '-r 48000 -c 2 --speed 1.25 --volume 0.8 --subtitles',
      args: ttsArgs('stream', '-q', '-r', '48000', '-c', '2', '--speed', '1.25', '--volume', '0.8', '--subtitles', path.join(dir, 'ttfa.srt'), 'hello'),
      latency: [] as number[],
    },
  ];
  try {
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 === 0 ? subjects : [...subjects].reverse();
      for (const s of order) {
        const { latencyMs } = await server.latency((onFirstByte) => timedSpawn(process.execPath, s.args, { env, onFirstByte }));
        if (latencyMs === undefined) throw new Error(`${s.name}: no request or no audio on stdout`);
        if (round >= 0) s.latency.push(latencyMs);
      }
    }
  } finally {
    await server.close();
  }
  options.log(`audio-stage: ${rounds} interleaved rounds of time to first audio`);
  const [plain, ...staged] = subjects as [(typeof subjects)[0], ...typeof subjects];
  return staged.map((s) => ({
    bench: 'audio-stage',
    name: `stage: server write → stdout, ${s.name}`,
    value: median(s.latency),
    unit: 'ms' as const,
    baseline: { name: 'plain pcm16', value: median(plain.latency) },
    targets: [{ kind: 'added-max' as const, limit: STAGE_ADDED_TTFA_MS_MAX }],
    note: `median of ${rounds}`,
  }));
}

async function memory(options: BenchOptions, dir: string): Promise<Figure[]> {
  // 100 ms of audio per piece, so the stage has real work on every piece.
  const audio = patternBytes(4800);
  const server = await startLoopbackServer((_req, res) => {
    startEventStream(res);
    res.end(deltaEvent(audio) + doneEvent());
  });
  const env = cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: BENCH_KEY, TTS_NO_CACHE: '1' });
  // The shorter text is a quarter of the longer, not less: a run of a second or two ends before
  // the heap has grown to its steady size, and would make a flat profile look like growth.
  const long = options.quick ? 200_000 : 800_000;
  const short = long / 4;
  const peak = async (bytes: number, staged: boolean): Promise<{ mb: number; seconds: number }> => {
    const text = path.join(dir, `book-${bytes}.txt`);
    writeFileSync(text, book(bytes));
    const stage = staged ? ['-r', '48000', '-c', '2', '--speed', '1.25', '--volume', '0.8', '--pause', '100', '--subtitles', path.join(dir, 'book.srt')] : [];
    const run = await measurePeakRss(process.execPath, ttsArgs('stream', '-q', '--concurrency', '4', ...stage, '-f', text, '-o', path.join(dir, 'book.wav')), { env, timeoutMs: 900_000 });
    return { mb: mb(run.bytes), seconds: run.run.exitMs / 1000 };
  };
  try {
    const plain = await peak(long, false);
    const staged = await peak(long, true);
    const shorter = await peak(short, true);
    options.log(`audio-stage: ${long / 1000} kB text in ${plain.seconds.toFixed(1)} s plain, ${staged.seconds.toFixed(1)} s through the stage`);
    return [
      {
        bench: 'audio-stage',
        name: `stage: ${long / 1000} kB text → WAV, peak RSS`,
        value: staged.mb,
        unit: 'MB',
        baseline: { name: 'the same text, plain', value: plain.mb },
        // Informational: what the stage costs (libsamplerate converters, ~0.25 MiB each in one
        // WebAssembly instance; Sonic; ten times as many requests, one per sentence). The target is flatness, below.
        targets: [],
        note: `${staged.seconds.toFixed(1)} s; -r 48000 -c 2 --speed --volume --pause --subtitles`,
      },
      {
        bench: 'audio-stage',
        name: `stage: ${long / 1000} kB vs ${short / 1000} kB text, peak RSS`,
        value: staged.mb,
        unit: 'MB',
        baseline: { name: `${short / 1000} kB text, same stage`, value: shorter.mb },
        targets: [{ kind: 'added-max', limit: STAGE_GROWTH_MB_MAX }],
        note: 'must not grow with the text',
      },
    ];
  } finally {
    await server.close();
  }
}
