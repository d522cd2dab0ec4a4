/**
 * Containers (docs/cli.md §2): what encoding FLAC, MP3 and Ogg Opus on the way costs, against
 * raw PCM measured in the same run.
 *
 * - Time to first byte: a loopback server answers like a service that needs 300 ms before its
 *   first audio (the codec loads during that time, as it would against a real service), writes
 *   one 100 ms delta (24 kHz mono pcm16, a tone) and holds the stream open until the child's
 *   first stdout byte arrives. Figures: server write → first byte of `tts stream --container X`
 *   (what encoding adds as chunks arrive; target at most 10 ms over raw, issue 11 part 5), and
 *   spawn → first byte (everything, loading the codec included; informational), medians of N
 *   interleaved rounds. For FLAC and Opus the first bytes are the stream headers with the first
 *   encoded chunk (Opus: and its first packet); for MP3 the first frames.
 * - Peak RSS: the same server streams a long text's audio (10 and 30 minutes; 2 and 6 with
 *   `--quick`) as fast as the client takes it, into `tts stream -o FILE.<ext>`; the figure is the
 *   peak RSS per container vs raw, and the longer run vs the shorter (it must not grow).
 */
import type { ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cleanEnv } from '../test/helpers/cli.js';
import { deltaEvent, doneEvent, startEventStream } from '../test/helpers/servers.js';
import { BENCH_KEY, startLoopbackServer, writeRespectingBackpressure } from './fake-servers.js';
import type { BenchOptions, Figure } from './figures.js';
import { measurePeakRss, timedSpawn, ttsArgs } from './process.js';
import { mb, median } from './stats.js';

/** Target: at most this many ms added to the first byte by encoding (issue 11 part 5). */
export const CONTAINER_ADDED_MS_MAX = 10;
/** Target: a container's peak RSS at most this many MB above raw's. */
export const CONTAINER_MEMORY_ADDED_MB_MAX = 25;
/** Target: the longer run's peak at most this many MB above the shorter's. */
export const CONTAINER_GROWTH_MB_MAX = 10;

const CONTAINERS = ['raw', 'flac', 'mp3', 'opus'] as const;

/** How long the fake service takes to its first audio, in ms (a real one: network + synthesis). */
const SERVICE_FIRST_AUDIO_MS = 300;

/** 100 ms of a 440 Hz tone at 24 kHz mono pcm16 (a tone, not noise: closer to what codecs get). */
function toneDelta(): Buffer {
  const b = Buffer.alloc(4800);
  for (let i = 0; i < 2400; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2);
  return b;
}

/** Streams `deltas` tone deltas then `done`, respecting backpressure, in blocks of ~256 KiB. */
async function streamTone(res: ServerResponse, deltas: number): Promise<void> {
  const event = Buffer.from(deltaEvent(toneDelta()));
  const perBlock = Math.max(1, Math.floor((256 * 1024) / event.length));
  const block = Buffer.concat(Array.from({ length: perBlock }, () => event));
  startEventStream(res);
  for (let left = deltas; left > 0; left -= perBlock) await writeRespectingBackpressure(res, left >= perBlock ? block : block.subarray(0, left * event.length));
  res.end(doneEvent());
}

/** Time to the first byte per container, in ms (medians of interleaved rounds). */
async function firstByte(options: BenchOptions): Promise<Figure[]> {
  const rounds = options.quick ? 6 : 20;
  const delta = Buffer.from(deltaEvent(toneDelta()));
  let current: { writtenAt?: number; res?: ServerResponse; firstByteAt?: number } = {};
  const finish = (): void => {
    if (current.res !== undefined && current.firstByteAt !== undefined) current.res.end(doneEvent());
  };
  const server = await startLoopbackServer(async (_req, res) => {
    startEventStream(res);
    await new Promise((r) => setTimeout(r, SERVICE_FIRST_AUDIO_MS));
    current.res = res;
    current.writtenAt = performance.now();
    res.write(delta);
    finish();
  });
  try {
    const env = cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: BENCH_KEY, TTS_NO_CACHE: '1' });
    const latency = new Map<string, number[]>(CONTAINERS.map((c) => [c, []]));
    const fromSpawn = new Map<string, number[]>(CONTAINERS.map((c) => [c, []]));
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 === 0 ? CONTAINERS : [...CONTAINERS].reverse();
      for (const container of order) {
        current = {};
        const run = await timedSpawn(process.execPath, ttsArgs('stream', '-q', '--container', container, 'hello'), {
          env,
          onFirstByte: (at) => {
            current.firstByteAt = at;
            finish();
          },
        });
        const { writtenAt, firstByteAt } = current;
        if (writtenAt === undefined || firstByteAt === undefined) throw new Error(`${container}: no request or no bytes on stdout`);
        if (round >= 0) latency.get(container)!.push(firstByteAt - writtenAt);
        if (round >= 0 && run.firstByteMs !== undefined) fromSpawn.get(container)!.push(run.firstByteMs);
      }
    }
    options.log(`containers: first byte, ${rounds} interleaved rounds`);
    const raw = { name: 'raw PCM', value: median(latency.get('raw')!) };
    const rawSpawn = { name: 'raw PCM', value: median(fromSpawn.get('raw')!) };
    return CONTAINERS.filter((c) => c !== 'raw').flatMap((c): Figure[] => [
      {
        bench: 'containers',
        name: `containers: spawn → first ${c} byte`,
        value: median(fromSpawn.get(c)!),
        unit: 'ms',
        baseline: rawSpawn,
        targets: [],
        note: `median of ${rounds}; the service takes ${SERVICE_FIRST_AUDIO_MS} ms to its first audio`,
      },
      {
        bench: 'containers',
        name: `containers: server write → first ${c} byte`,
        value: median(latency.get(c)!),
        unit: 'ms',
        baseline: raw,
        targets: [{ kind: 'added-max', limit: CONTAINER_ADDED_MS_MAX }],
        note: `median of ${rounds}`,
      },
    ]);
  } finally {
    await server.close();
  }
}

/** Peak RSS per container at two lengths, in MB. */
async function memory(options: BenchOptions): Promise<Figure[]> {
  const minutes = options.quick ? [2, 6] : [10, 30];
  let deltasNow = 0;
  const server = await startLoopbackServer(async (_req, res) => {
    await streamTone(res, deltasNow).catch(() => res.destroy());
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'tts-bench-containers-'));
  const env = cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: BENCH_KEY, TTS_NO_CACHE: '1' });
  try {
    const peak = new Map<string, number[]>();
    let method = '';
    for (const m of minutes) {
      deltasNow = m * 600;
      for (const container of CONTAINERS) {
        const file = path.join(dir, `long.${container}`);
        const r = await measurePeakRss(process.execPath, ttsArgs('stream', '-q', '-o', file, 'hello'), { env, timeoutMs: 300_000 });
        if (statSync(file).size === 0) throw new Error(`${container}: empty file`);
        rmSync(file);
        method = r.method;
        peak.set(`${container}@${m}`, [...(peak.get(`${container}@${m}`) ?? []), mb(r.bytes)]);
        options.log(`containers: ${m} min → ${container}: ${mb(r.bytes).toFixed(1)} MB in ${(r.run.exitMs / 1000).toFixed(1)} s`);
      }
    }
    const [short, long] = minutes as [number, number];
    const figures: Figure[] = [];
    for (const c of CONTAINERS.filter((x) => x !== 'raw')) {
      figures.push({
        bench: 'containers',
        name: `containers: ${long} min → ${c}, peak RSS`,
        value: median(peak.get(`${c}@${long}`)!),
        unit: 'MB',
        baseline: { name: `raw, ${long} min`, value: median(peak.get(`raw@${long}`)!) },
        targets: [{ kind: 'added-max', limit: CONTAINER_MEMORY_ADDED_MB_MAX }],
        note: `peak RSS (${method})`,
      });
      figures.push({
        bench: 'containers',
        name: `containers: ${c} growth ${short} → ${long} min`,
        value: median(peak.get(`${c}@${long}`)!),
        unit: 'MB',
        baseline: { name: `${short} min`, value: median(peak.get(`${c}@${short}`)!) },
        targets: [{ kind: 'added-max', limit: CONTAINER_GROWTH_MB_MAX }],
        note: 'peak must not grow with length',
      });
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}

/** The containers benchmark: first-byte latency and peak memory per container, against raw. */
export async function benchContainers(options: BenchOptions): Promise<Figure[]> {
  return [...(await firstByte(options)), ...(await memory(options))];
}
