/**
 * Word timings from a service that sends none (issue 23 point 2, docs/cli.md §12.1): the run
 * starts the aligner, which times each piece against the built-in engine's reference. The
 * "remote service" here is a loopback server speaking with the built-in engine's en-man-1 and
 * sending no `words`; its exact words are the truth. A cached rerun (no request) gives the
 * same file byte for byte.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../src/engine/index.js';
import type { WordTiming } from '../../src/protocol/words.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

const KEY = 'sk-test-align';
const TEXT = 'Please turn off the lights before you leave the room.';

describe('word timings from a service that sends none', () => {
  const engine = createEngine();
  let server: TestServer;
  let dir: string;
  let requests = 0;
  /** The served voice's exact words (frames at 24 kHz), by request text. */
  const truth = new Map<string, WordTiming[]>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-aligned-'));
    server = await startServer(async (_req, res, body) => {
      requests++;
      const input = (JSON.parse(body) as { input: string }).input;
      const chunks: Buffer[] = [];
      let words: WordTiming[] = [];
      const job = { text: input, voice: 'en-man-1', language: 'en' as const, format: 'pcm16' as const, sampleRate: 24000, channels: 1 };
      for await (const c of engine.synthesize(job, undefined, { wordTimings: true, onReport: (r) => (words = r.words ?? []) })) chunks.push(c);
      truth.set(input, words);
      startEventStream(res);
      const audio = Buffer.concat(chunks);
      for (let at = 0; at < audio.length; at += 4800) res.write(deltaEvent(audio.subarray(at, at + 4800)));
      res.end(doneEvent()); // no words: a remote service
    });
  });
  after(async () => {
    await server.close();
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('times every word near the truth, and the cached rerun writes the same file', async () => {
    const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, XDG_CACHE_HOME: join(dir, 'cache') };
    const run = async (name: string): Promise<string> => {
      const file = join(dir, `${name}.jsonl`);
      const r = await runTtsInProcess(['stream', '-q', '-v', 'en-man-1', '--word-timings', file, '-o', join(dir, `${name}.wav`), TEXT], { env });
      assert.equal(r.code, 0, r.stderr);
      return readFile(file, 'utf8');
    };
    const first = await run('first');
    assert.equal(requests, 1);
    const words = first.trim().split('\n').map((line) => JSON.parse(line) as { word: string; start: number; end: number });
    assert.deepEqual(words.map((w) => w.word), TEXT.split(' '));
    const exact = truth.get(TEXT)!;
    assert.equal(exact.length, words.length);
    const errors = words.flatMap((w, i) => [Math.abs(w.start - exact[i]!.start / 24000), Math.abs(w.end - exact[i]!.end / 24000)]);
    const meanMs = (errors.reduce((s, e) => s + e, 0) / errors.length) * 1000;
    assert.ok(meanMs < 80, `mean boundary error ${meanMs.toFixed(1)} ms`);
    const again = await run('again');
    assert.equal(requests, 1, 'the rerun came from the cache');
    assert.equal(again, first);
  });

  it('times the jobs of a batch (one aligner shared by the batch) with the same words as a single run', async () => {
    const jobs = join(dir, 'jobs.jsonl');
    const lines = ['a', 'b'].map((name) => JSON.stringify({ text: TEXT, voice: 'en-man-1', output: `${name}.wav`, 'word-timings': join(dir, `${name}.jsonl`) }));
    await writeFile(jobs, `${lines.join('\n')}\n`);
    const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, TTS_NO_CACHE: '1' };
    const r = await runTtsInProcess(['batch', '-q', '--output-dir', dir, jobs], { env });
    assert.equal(r.code, 0, r.stderr);
    const single = await readFile(join(dir, 'first.jsonl'), 'utf8');
    assert.equal(await readFile(join(dir, 'a.jsonl'), 'utf8'), single);
    assert.equal(await readFile(join(dir, 'b.jsonl'), 'utf8'), single);
  });
});
