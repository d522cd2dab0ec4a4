/**
 * The metamorphic matrix (issue 18, docs/cli.md §8): flag combinations run in-process through the
 * CLI's `main()` against one in-process built-in service, with a piece cache filled by the other
 * combinations in an order fast-check picks. Relations that must hold:
 * - every combination writes, with the cache, byte for byte what it writes with `--no-cache`
 *   (subtitles included);
 * - `-r`/`-c` keep the duration within 1 %;
 * - `--speed s` divides it by s within 3 %;
 * - `--pause p` adds p × (sentences − 1), against the same run without the pause.
 *
 * Hook for batch (to be added after the merge): a {@link Combo} whose `run` calls `main(['batch',
 * …])` and returns the files it wrote, pushed onto {@link COMBOS}; the byte-for-byte relation then
 * covers it with no other change.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { main } from '../../src/cli/main.js';
import { startEmbeddedService, type EmbeddedService } from '../../src/server/embedded.js';
import { parseWavHeader } from '../helpers/wav-reader.js';

const EN = 'The morning was cold and bright. She walked to the station with a book. Trains came and went.';
const EN_SENTENCES = 3;
const JA = '今日は良い天気です。東京タワーに行きました。';

/** What one combination wrote. */
interface Written {
  /** Output files by name (audio, subtitles), or `stdout`. */
  files: Map<string, Buffer>;
}

/** One flag combination of the matrix. */
export interface Combo {
  name: string;
  /** Runs it; `cache` false adds `--no-cache`. Returns what it wrote. */
  run(ctx: RunContext, cache: boolean): Promise<Written>;
}

/** Where a combination runs. */
interface RunContext {
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** Runs `tts …args` in-process; `input` goes to stdin. Returns the exit code, stdout and stderr. */
async function tts(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  let err = '';
  stdout.on('data', (d: Buffer) => out.push(d));
  stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const stdin = Readable.from(input === '' ? [] : [Buffer.from(input)]);
  const code = await main(args, { stdin, stdout, stderr, env });
  return { code, stdout: Buffer.concat(out), stderr: err };
}

/** A combination writing `-o NAME.EXT` (and, with `subtitles`, NAME.srt) of `text`. */
function fileCombo(name: string, ext: string, flags: string[], options: { text?: string; command?: string; subtitles?: boolean; lines?: boolean } = {}): Combo {
  return {
    name,
    async run(ctx, cache) {
      const tag = cache ? 'cached' : 'fresh';
      const out = join(ctx.dir, `${name}.${tag}.${ext}`);
      const subs = join(ctx.dir, `${name}.${tag}.srt`);
      const text = options.text ?? EN;
      const args = [options.command ?? 'stream', '-q', ...flags, ...(options.subtitles === true ? ['--subtitles', subs] : []), ...(cache ? [] : ['--no-cache']), '-o', out];
      const r = options.lines === true ? await tts([...args, '--lines'], ctx.env, text.replace(/(?<=[.。]) ?/g, '\n')) : await tts([...args, text], ctx.env);
      assert.equal(r.code, 0, `${name} (${tag}): ${r.stderr}`);
      const files = new Map<string, Buffer>([['audio', await readFile(out)]]);
      if (options.subtitles === true) files.set('subtitles', await readFile(subs));
      return { files };
    },
  };
}

/** A combination writing raw audio to stdout. */
function stdoutCombo(name: string, flags: string[]): Combo {
  return {
    name,
    async run(ctx, cache) {
      const r = await tts(['stream', '-q', ...flags, ...(cache ? [] : ['--no-cache']), '-o', '-', EN], ctx.env);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      return { files: new Map([['stdout', r.stdout]]) };
    },
  };
}

/** The matrix: rates, channels, the three encodings, every container, speed, volume, pause, --max-chars, voices, --subtitles, --lines, realtime and stream. */
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

    const seconds = (name: string): number => wavSeconds(cached.get(name)!.files.get('audio')!);
    const plain = seconds('plain');
    for (const name of ['r16000', 'r48000-c2', 'c2', 'r8000-mulaw', 'float32', 'mulaw']) {
      assert.ok(Math.abs(seconds(name) / plain - 1) < 0.01, `${name}: ${seconds(name).toFixed(3)} s vs ${plain.toFixed(3)} s`);
    }
    assert.ok(Math.abs(seconds('realtime-r16000-c2') / seconds('realtime') - 1) < 0.01, 'realtime -r/-c changed the duration');
    for (const [name, s] of [['speed1.5', 1.5], ['speed0.8-r16000', 0.8]] as const) {
      assert.ok(Math.abs((seconds(name) * s) / plain - 1) < 0.03, `${name}: ${seconds(name).toFixed(3)} s, expected ${(plain / s).toFixed(3)} s`);
    }
    const pauseAdded = seconds('pause400') - seconds('subtitles');
    assert.ok(Math.abs(pauseAdded - 0.4 * (EN_SENTENCES - 1)) < 0.01, `--pause 400 added ${pauseAdded.toFixed(3)} s for ${EN_SENTENCES} sentences`);
  });
});
