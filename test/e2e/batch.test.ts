/**
 * `tts batch` (docs/cli.md §9) against a real `tts serve`: a failing line stops no other and sets
 * the exit code, lines set their own flags, the plain-text form numbers its files, the cache is
 * shared (a rerun makes no request), and the input is bounded.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';
import { waitFor } from '../helpers/serve-http.js';
import { parseWavHeader, wavFileInfo } from '../helpers/wav-reader.js';

const KEY = 'batch-test-key-0123456789';

interface Result {
  line: number;
  ok: boolean;
  output: string;
  requests: number;
  cache_hits: number;
  exit_code: number;
  error?: string;
}

const results = (stderr: string): Result[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Result);

describe('tts batch against tts serve', () => {
  let dir: string;
  let srv: InProcessServe;
  const served = (): number => srv.stderr().split('\n').filter((l) => / POST \/v1\/tts\/sse \d+ /.test(l)).length;
  let env: (cacheHome?: string) => Record<string, string>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-batch-e2e-'));
    srv = await startServeInProcess(['--port', '0', '--rate-limit', '100000/min', '--max-concurrent', '8', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY });
    env = (cacheHome) => ({ TTS_BASE_URL: srv.base, TTS_API_KEY: KEY, ...(cacheHome === undefined ? {} : { XDG_CACHE_HOME: cacheHome }) });
  });
  after(async () => {
    await srv.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a batch of 12 lines with one bad voice writes 11 files and exits 4; a rerun asks for nothing', async () => {
    const out = join(dir, 'twelve');
    const lines = Array.from({ length: 12 }, (_, i) =>
      JSON.stringify({ text: `Announcement number ${i + 1}: the train is late.`, output: `a${i + 1}.wav`, voice: i === 6 ? 'en-nobody-9' : i % 2 === 0 ? 'en-man-1' : 'en-woman-1' }),
    );
    // One line with its own rate and encoding, written as the command line would take them.
    lines[3] = JSON.stringify({ text: 'Announcement number 4, in mu-law.', output: 'a4.wav', format: 'mulaw', 'sample-rate': '24000' });
    const jobs = join(dir, 'twelve.jsonl');
    await writeFile(jobs, `${lines.join('\n')}\n`);
    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const before = served();
    const r = await runTtsInProcess(['batch', jobs, '--output-dir', out, '--jobs', '3', '--json'], { env: env(cacheHome), timeoutMs: 120_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /line 7: error: .*voice_not_found/);
    const rs = results(r.stderr);
    assert.deepEqual(rs.map((x) => x.line).sort((a, b) => a - b), Array.from({ length: 12 }, (_, i) => i + 1));
    assert.deepEqual(rs.filter((x) => !x.ok).map((x) => [x.line, x.error, x.exit_code]), [[7, 'voice_not_found', 4]]);
    const files = (await readdir(out)).sort();
    assert.equal(files.length, 11, files.join(' '));
    assert.ok(!files.includes('a7.wav'));
    assert.equal(parseWavHeader(await readFile(join(out, 'a4.wav'))).formatTag, 7);
    for (const f of files) assert.ok(wavFileInfo(join(out, f)).duration > 0.5, f);
    await waitFor(() => served() - before >= 12, 3000);
    assert.equal(served() - before, 12);

    // The same batch again: every good line from the cache, only the bad one asks again.
    const again = await runTtsInProcess(['batch', jobs, '--output-dir', join(dir, 'twelve-again'), '--json'], { env: env(cacheHome), timeoutMs: 120_000 });
    assert.equal(again.code, 4, again.stderr);
    const ra = results(again.stderr);
    assert.equal(ra.reduce((n, x) => n + x.requests, 0), 1);
    assert.equal(ra.reduce((n, x) => n + x.cache_hits, 0), 11);
    for (const f of files) assert.ok((await readFile(join(dir, 'twelve-again', f))).equals(await readFile(join(out, f))), f);
  });

  it('exits 0 when every line succeeded; --lines writes 0001.wav … for the non-empty lines, from stdin too', async () => {
    const out = join(dir, 'plain');
    const r = await runTtsInProcess(['batch', '--lines', '-', '--output-dir', out, '--voice', 'en-woman-1'], { env: env(), input: 'First line.\n\n   \nSecond line.\r\nThird line' });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await readdir(out)).sort(), ['0001.wav', '0002.wav', '0003.wav']);
    for (const f of ['0001.wav', '0002.wav', '0003.wav']) assert.ok(wavFileInfo(join(out, f)).duration > 0.3, f);
  });

  it('reports bad lines by number with exit 2 and still runs the others; a file job reads its file', async () => {
    const text = join(dir, 'story.txt');
    await writeFile(text, 'A short story, read from a file.');
    const jobs = [
      JSON.stringify({ file: text, output: 'story.wav', voice: 'en-man-1' }),
      'not json',
      JSON.stringify({ text: 'x', output: 'y.wav', 'base-url': 'http://example.com' }),
      JSON.stringify({ text: 'x', file: text, output: 'z.wav' }),
      JSON.stringify({ text: 'Fine.', output: 'fine.wav', voice: 'en-man-1', channels: 9 }),
    ].join('\n');
    const out = join(dir, 'bad');
    const r = await runTtsInProcess(['batch', '-', '--output-dir', out], { env: env(), input: jobs });
    assert.equal(r.code, 2, r.stderr);
    for (const n of [2, 3, 4, 5]) assert.match(r.stderr, new RegExp(`line ${n}: error`));
    assert.deepEqual(await readdir(out), ['story.wav']);
  });

  it('refuses input past its bounds before any job runs', async () => {
    const long = join(dir, 'long.jsonl');
    await writeFile(long, `${JSON.stringify({ text: 'ok', output: 'ok.wav' })}\n${JSON.stringify({ text: 'a'.repeat(1024 * 1024 + 10), output: 'x.wav' })}\n`);
    const before = served();
    const r = await runTtsInProcess(['batch', long, '--output-dir', join(dir, 'long')], { env: env() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /line 2 of .* is longer than/);
    assert.equal(existsSync(join(dir, 'long', 'ok.wav')), false);
    assert.equal(served(), before);
    const nul = await runTtsInProcess(['batch', '-', '--output-dir', join(dir, 'nul')], { env: env(), input: Buffer.from('{"text":"a","output":"a.wav"}\n\0\n') });
    assert.equal(nul.code, 2, nul.stderr);
    const flags = await runTtsInProcess(['batch', '-', '-o', 'x.wav'], { env: env(), input: '{}' });
    assert.equal(flags.code, 2);
    assert.match(flags.stderr, /not a batch flag/);
  });

  it("a line's speed, subtitles and container are honoured like the same flags of tts stream", async () => {
    const out = join(dir, 'effects');
    const text = 'The first sentence of the notice. The second sentence of the notice.';
    const jobs = join(dir, 'effects.jsonl');
    await writeFile(
      jobs,
      [
        JSON.stringify({ text, output: 'plain.wav' }),
        JSON.stringify({ text, output: 'fast.wav', speed: 1.5 }),
        JSON.stringify({ text, output: 'cued.wav', subtitles: join(out, 'cued.srt') }),
        JSON.stringify({ text, output: 'notice.flac' }),
        JSON.stringify({ text, output: 'bad.mp3', bitrate: 7 }),
      ].join('\n') + '\n',
    );
    const r = await runTtsInProcess(['batch', jobs, '--output-dir', out, '--json'], { env: env(), timeoutMs: 120_000 });
    assert.equal(r.code, 2, r.stderr);
    assert.deepEqual(results(r.stderr).filter((x) => !x.ok).map((x) => x.line), [5]);
    const plain = wavFileInfo(join(out, 'plain.wav')).duration;
    const fast = wavFileInfo(join(out, 'fast.wav')).duration;
    assert.ok(Math.abs(fast - plain / 1.5) < 0.08 * (plain / 1.5), `plain ${plain} s, --speed 1.5 ${fast} s`);
    const srt = await readFile(join(out, 'cued.srt'), 'utf8');
    assert.equal(srt.match(/-->/g)?.length, 2, srt);
    const flac = await readFile(join(out, 'notice.flac'));
    assert.equal(flac.subarray(0, 4).toString('latin1'), 'fLaC');
    assert.ok(!existsSync(join(out, 'bad.mp3')));
  });
});
