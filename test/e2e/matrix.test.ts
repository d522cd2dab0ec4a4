/**
 * The metamorphic matrix (issue 18, docs/cli.md §8; issue 24's OpenAI dialect): flag combinations
 * run in-process through the CLI's `main()` against one in-process built-in service, with a piece
 * cache filled by the other combinations in an order fast-check picks. Relations that must hold:
 * - every combination writes, with the cache, byte for byte what it writes with `--no-cache`
 *   (subtitles included);
 * - `tts batch` writes, per job, the bytes of the single `tts stream` run with the same flags;
 * - `--api openai` (the built-in service's `POST /v1/audio/speech`) writes the bytes of the
 *   native dialect (pcm16 and all derived from it), one engine speaking both; and the two dialects (and two models) never
 *   replay each other's pieces (`requests`/`cache_hits` of `--json`);
 * - `-r`/`-c` keep the duration within 1 %;
 * - `--speed s` divides it by s within 3 %;
 * - `--pause p` adds p × (sentences − 1), against the same run without the pause.
 * The whole file must finish in under 2 minutes on the 2-core machine (issue 18).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startEmbeddedService, type EmbeddedService } from '../../src/server/embedded.js';
import { parseWavHeader } from '../helpers/wav-reader.js';
import { batchCombo, EN_SENTENCES, fileCombo, JA, stdoutCombo, type BatchJobSpec, type Combo, type RunContext, type Written } from './matrix-harness.js';

const OPENAI = ['--api', 'openai'];

/** Batch jobs standing for stream combinations of {@link COMBOS} (the line's keys are their flags). */
const BATCH_JOBS: BatchJobSpec[] = [
  { combo: 'plain', ext: 'wav', keys: {} },
  { combo: 'r48000-c2', ext: 'wav', keys: { 'sample-rate': 48000, channels: 2 } },
  { combo: 'r8000-mulaw', ext: 'wav', keys: { 'sample-rate': 8000, format: 'mulaw' } },
  { combo: 'raw', ext: 'raw', keys: {} },
  { combo: 'mp3', ext: 'mp3', keys: { bitrate: 64 } },
  { combo: 'speed0.8-r16000', ext: 'wav', keys: { speed: 0.8, 'sample-rate': 16000 } },
  { combo: 'volume0.5', ext: 'wav', keys: { volume: 0.5 } },
  { combo: 'pause400', ext: 'wav', keys: { pause: 400 }, subtitles: true },
  { combo: 'max-chars30-pause', ext: 'wav', keys: { 'max-chars': 30, pause: 250 }, subtitles: true },
  { combo: 'ja-r16000-speed', ext: 'mp3', keys: { voice: 'ja-woman-1', 'sample-rate': 16000, speed: 1.25 }, text: JA },
];

/** OpenAI-dialect batch jobs, standing for the native stream combinations of the same flags. */
const OPENAI_BATCH_JOBS: BatchJobSpec[] = BATCH_JOBS.filter((j) => ['plain', 'r48000-c2', 'pause400', 'ja-r16000-speed'].includes(j.combo));

/**
 * `--api openai` combinations, each with the native combination it must equal byte for byte, or
 * none: the OpenAI dialect always receives pcm16 (docs/cli.md §1), so its float32 is pcm16's
 * samples widened, where the native dialect's is the engine's own float32.
 */
const OPENAI_TWINS: [Combo, string | undefined][] = [
  [fileCombo('openai-plain', 'wav', OPENAI), 'plain'],
  [fileCombo('openai-model', 'wav', [...OPENAI, '--model', 'gpt-4o-mini-tts']), 'plain'],
  [fileCombo('openai-r48000-c2', 'wav', [...OPENAI, '-r', '48000', '-c', '2']), 'r48000-c2'],
  [fileCombo('openai-float32', 'wav', [...OPENAI, '--format', 'float32']), undefined],
  [fileCombo('openai-mp3', 'mp3', [...OPENAI, '--bitrate', '64']), 'mp3'],
  [fileCombo('openai-speed1.5', 'wav', [...OPENAI, '--speed', '1.5']), 'speed1.5'],
  [fileCombo('openai-pause400', 'wav', [...OPENAI, '--pause', '400'], { subtitles: true }), 'pause400'],
  [fileCombo('openai-max-chars30', 'wav', [...OPENAI, '--max-chars', '30']), 'max-chars30'],
  [fileCombo('openai-ja', 'wav', [...OPENAI, '--voice', 'ja-man-1'], { text: JA }), 'ja'],
  [fileCombo('openai-lines-pause', 'wav', [...OPENAI, '--pause', '300'], { lines: true, subtitles: true }), 'lines-pause'],
];

/** The matrix: rates, channels, the three encodings, every container, speed, volume, pause, --max-chars, voices, --subtitles, --lines, realtime and stream, batch, both dialects. */
export const COMBOS: Combo[] = [
  fileCombo('plain', 'wav', []),
  fileCombo('r16000', 'wav', ['-r', '16000']),
  fileCombo('r48000-c2', 'wav', ['-r', '48000', '-c', '2']),
  fileCombo('c2', 'wav', ['-c', '2']),
  fileCombo('r8000-mulaw', 'wav', ['-r', '8000', '--format', 'mulaw']),
  fileCombo('float32', 'wav', ['--format', 'float32']),
  fileCombo('mulaw', 'wav', ['--format', 'mulaw']),
  fileCombo('raw', 'raw', []),
  fileCombo('flac', 'flac', ['-r', '44100']),
  fileCombo('mp3', 'mp3', ['--bitrate', '64']),
  fileCombo('opus', 'opus', ['-c', '2']),
  stdoutCombo('stdout-raw', ['-r', '22050']),
  fileCombo('speed1.5', 'wav', ['--speed', '1.5']),
  fileCombo('speed0.8-r16000', 'wav', ['--speed', '0.8', '-r', '16000']),
  fileCombo('volume0.5', 'wav', ['--volume', '0.5']),
  fileCombo('subtitles', 'wav', [], { subtitles: true }),
  fileCombo('pause400', 'wav', ['--pause', '400'], { subtitles: true }),
  fileCombo('max-chars30', 'wav', ['--max-chars', '30']),
  fileCombo('max-chars30-pause', 'wav', ['--max-chars', '30', '--pause', '250'], { subtitles: true }),
  fileCombo('en-woman', 'wav', ['--voice', 'en-woman-1']),
  fileCombo('ja', 'wav', ['--voice', 'ja-man-1'], { text: JA }),
  fileCombo('ja-r16000-speed', 'mp3', ['--voice', 'ja-woman-1', '-r', '16000', '--speed', '1.25'], { text: JA }),
  fileCombo('lines-pause', 'wav', ['--pause', '300'], { lines: true, subtitles: true }),
  fileCombo('realtime', 'wav', [], { command: 'realtime' }),
  fileCombo('realtime-r16000-c2', 'wav', ['-r', '16000', '-c', '2'], { command: 'realtime' }),
  fileCombo('realtime-speed', 'flac', ['--speed', '1.5'], { command: 'realtime' }),
  batchCombo('batch', BATCH_JOBS),
  ...OPENAI_TWINS.map(([combo]) => combo),
  batchCombo('batch-openai', OPENAI_BATCH_JOBS, OPENAI),
];

/** Seconds of audio in a WAV file. */
function wavSeconds(wav: Buffer): number {
  const info = parseWavHeader(wav);
  return info.dataBytes / info.blockAlign / info.sampleRate;
}

describe('the metamorphic matrix: cached runs equal --no-cache runs, and the audio relations hold', () => {
  let dir: string;
  let service: EmbeddedService;
  let ctx: RunContext;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-matrix-'));
    service = await startEmbeddedService({ japanese: true });
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: dir, XDG_CACHE_HOME: join(dir, 'cache'), XDG_CONFIG_HOME: join(dir, 'config'), TTS_BASE_URL: service.baseUrl, TTS_API_KEY: service.apiKey };
    ctx = { dir, env };
  });
  after(async () => {
    await service?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(`${COMBOS.length} combinations, in an order fast-check picks, each against a cache the others filled`, async () => {
    // One order per run of the suite (the seed is printed on failure), all combinations in it.
    const [order] = fc.sample(fc.shuffledSubarray(COMBOS, { minLength: COMBOS.length, maxLength: COMBOS.length }), { numRuns: 1 });
    const cached = new Map<string, Written>();
    for (const combo of order!) cached.set(combo.name, await combo.run(ctx, true));
    for (const combo of COMBOS) {
      const fresh = await combo.run(ctx, false);
      for (const [what, bytes] of fresh.files) {
        const got = cached.get(combo.name)!.files.get(what)!;
        assert.ok(got.equals(bytes), `${combo.name} ${what}: the cached run wrote other bytes than --no-cache (${got.length} vs ${bytes.length}); order: ${order!.map((c) => c.name).join(' ')}`);
      }
    }

    // Batch behaves like stream: each job wrote what the single run of its flags wrote.
    const same = (got: Buffer | undefined, want: Buffer | undefined, what: string): void => {
      assert.ok(got !== undefined && want !== undefined, `${what}: missing`);
      assert.ok(got.equals(want), `${what}: ${got.length} bytes vs ${want.length}; order: ${order!.map((c) => c.name).join(' ')}`);
    };
    for (const [batch, jobs] of [['batch', BATCH_JOBS], ['batch-openai', OPENAI_BATCH_JOBS]] as const) {
      for (const job of jobs) {
        const single = cached.get(job.combo)!.files;
        for (const what of ['audio', 'subtitles']) {
          if (single.has(what) || cached.get(batch)!.files.has(`${job.combo}/${what}`)) same(cached.get(batch)!.files.get(`${job.combo}/${what}`), single.get(what), `${batch} job ${job.combo} ${what} vs tts stream`);
        }
      }
    }
    // One engine speaks both dialects: --api openai writes the native dialect's bytes.
    for (const [combo, twin] of OPENAI_TWINS) {
      if (twin !== undefined) for (const [what, bytes] of cached.get(twin)!.files) same(cached.get(combo.name)!.files.get(what), bytes, `${combo.name} ${what} vs ${twin}`);
    }

    const seconds = (name: string): number => wavSeconds(cached.get(name)!.files.get('audio')!);
    const plain = seconds('plain');
    for (const name of ['r16000', 'r48000-c2', 'c2', 'r8000-mulaw', 'float32', 'mulaw', 'openai-float32']) {
      assert.ok(Math.abs(seconds(name) / plain - 1) < 0.01, `${name}: ${seconds(name).toFixed(3)} s vs ${plain.toFixed(3)} s`);
    }
    assert.ok(Math.abs(seconds('realtime-r16000-c2') / seconds('realtime') - 1) < 0.01, 'realtime -r/-c changed the duration');
    for (const [name, s] of [['speed1.5', 1.5], ['speed0.8-r16000', 0.8]] as const) {
      assert.ok(Math.abs((seconds(name) * s) / plain - 1) < 0.03, `${name}: ${seconds(name).toFixed(3)} s, expected ${(plain / s).toFixed(3)} s`);
    }
    const pauseAdded = seconds('pause400') - seconds('subtitles');
    assert.ok(Math.abs(pauseAdded - 0.4 * (EN_SENTENCES - 1)) < 0.01, `--pause 400 added ${pauseAdded.toFixed(3)} s for ${EN_SENTENCES} sentences`);
  });

  it('the native and OpenAI dialects, and two OpenAI models, never replay each other\'s pieces', async () => {
    const own: RunContext = { dir, env: { ...ctx.env, XDG_CACHE_HOME: join(dir, 'cache-dialects') } };
    // Three sentences with --pause: three pieces, so three requests or three hits.
    const step = async (name: string, flags: string[]): Promise<Written> => fileCombo(name, 'wav', ['--pause', '200', ...flags], { json: true }).run(own, true);
    const stats = (w: Written): string => `requests ${String(w.summary?.['requests'])}, cache_hits ${String(w.summary?.['cache_hits'])}`;
    const native = await step('d-native', []);
    assert.equal(stats(native), `requests ${EN_SENTENCES}, cache_hits 0`, 'the first native run');
    const openai = await step('d-openai', OPENAI);
    assert.equal(stats(openai), `requests ${EN_SENTENCES}, cache_hits 0`, 'the OpenAI dialect replayed the native dialect\'s pieces');
    assert.ok(openai.files.get('audio')!.equals(native.files.get('audio')!), 'one engine, other bytes');
    assert.equal(stats(await step('d-openai-again', OPENAI)), `requests 0, cache_hits ${EN_SENTENCES}`, 'the OpenAI dialect did not replay its own pieces');
    assert.equal(stats(await step('d-openai-model', [...OPENAI, '--model', 'gpt-4o-mini-tts'])), `requests ${EN_SENTENCES}, cache_hits 0`, 'another model replayed tts-1\'s pieces');
    assert.equal(stats(await step('d-native-again', [])), `requests 0, cache_hits ${EN_SENTENCES}`, 'the native dialect did not replay its own pieces');
  });
});
