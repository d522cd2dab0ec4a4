/**
 * SSML end to end through the built-in service (docs/cli.md §11.1): durations on real speech —
 * `prosody rate` within 3 % of the plain span's length over the rate, a `break` within 10 ms —
 * a prosody span answered from the plain piece's cache entry (rate is applied after the cache),
 * and one spawned `bin/tts` run of an SSML file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';
import { wavFileInfo } from '../helpers/wav-reader.js';

const KEY = 'sk-test-ssml-e2e';
const SENTENCE = 'Please mind the gap between the train and the platform.';

describe('SSML through the built-in service', () => {
  let dir: string;
  let srv: InProcessServe;
  let env: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-ssml-e2e-'));
    srv = await startServeInProcess(['--port', '0', '--rate-limit', '100000/min'], { TTS_SERVER_API_KEYS: KEY });
    // One cache for every run: the plain sentence is synthesized once, the prosody runs replay it.
    env = { TTS_BASE_URL: srv.base, TTS_API_KEY: KEY, XDG_CACHE_HOME: join(dir, 'cache') };
  });
  after(async () => {
    await srv?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Frames (24000 Hz mono pcm16) of `ssml` spoken, and the run's `--json` summary. */
  const frames = async (name: string, ssml: string): Promise<{ frames: number; summary: { cache_hits: number; requests: number } }> => {
    const out = join(dir, `${name}.raw`);
    const r = await runTtsInProcess(['stream', '-q', '--json', '--voice', 'en-woman-1', '-o', out, ssml], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    return { frames: (await readFile(out)).length / 2, summary: JSON.parse(r.stderr.trim().split('\n').at(-1)!) };
  };

  it('prosody rate: 50 % lasts twice the plain span, x-fast two thirds, within 3 %; both replay the plain piece from the cache', async () => {
    const plain = await frames('plain', `<speak>${SENTENCE}</speak>`);
    const slow = await frames('slow', `<speak><prosody rate="50%">${SENTENCE}</prosody></speak>`);
    const fast = await frames('fast', `<speak><prosody rate="x-fast">${SENTENCE}</prosody></speak>`);
    assert.ok(Math.abs(slow.frames / plain.frames / 2 - 1) < 0.03, `50%: ${slow.frames} frames vs ${plain.frames} plain`);
    assert.ok(Math.abs((fast.frames / plain.frames) * 1.5 - 1) < 0.03, `x-fast: ${fast.frames} frames vs ${plain.frames} plain`);
    assert.deepEqual([slow.summary.cache_hits, slow.summary.requests, fast.summary.cache_hits, fast.summary.requests], [1, 0, 1, 0]);
  });

  it('break: 750 ms more audio than a 0 ms break, within 10 ms', async () => {
    const none = await frames('break0', '<speak>Doors closing.<break time="0ms"/>Stand clear.</speak>');
    const long = await frames('break750', '<speak>Doors closing.<break time="750ms"/>Stand clear.</speak>');
    const ms = ((long.frames - none.frames) / 24000) * 1000;
    assert.ok(Math.abs(ms - 750) <= 10, `break of ${ms.toFixed(1)} ms`);
  });

  it('bin/tts reads a .ssml file: two voices into one WAV, the mark in --json', async () => {
    const doc = join(dir, 'lesson.ssml');
    await writeFile(doc, '<speak><s>Repeat after me.</s><break time="400ms"/><mark name="ja"/><voice name="ja-woman-1">ありがとう。</voice></speak>\n');
    const wav = join(dir, 'lesson.wav');
    const r = await runTts(['say', '-q', '--json', '-o', wav, '-f', doc], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { requests: number; marks: { name: string; time: number }[]; audio_seconds: number };
    assert.equal(summary.requests + (JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { cache_hits: number }).cache_hits, 2);
    assert.equal(summary.marks.length, 1);
    assert.equal(summary.marks[0]!.name, 'ja');
    assert.ok(summary.marks[0]!.time > 0.4 && summary.marks[0]!.time < summary.audio_seconds, JSON.stringify(summary));
    assert.ok(Math.abs(wavFileInfo(wav).duration - summary.audio_seconds) < 0.001);
  });
});
