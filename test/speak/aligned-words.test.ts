/**
 * Word timings from a service that sends none (issue 23 point 2, docs/cli.md §12.1): the run
 * starts the aligner, which times each piece against the built-in engine's reference. The
 * "remote service" here is a loopback server speaking with the built-in engine's en-man-1 and
 * sending no `words`; its exact words are the truth. A cached rerun (no request) gives the
 * same file byte for byte. The client asks for word timings (`word_timings`, docs/protocol.md
 * §2.1) only when it needs them, and a service that refuses the unknown field is asked again
 * without it, its pieces aligned all the same.
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
  /** Refuse a request that carries a field it does not know, as a strict service may (docs/protocol.md is silent). */
  let strict = false;
  let refusals = 0;
  /** The served voice's exact words (frames at 24 kHz), by request text. */
  const truth = new Map<string, WordTiming[]>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-aligned-'));
    server = await startServer(async (_req, res, body) => {
      const request = JSON.parse(body) as { input: string };
      const unknown = Object.keys(request).filter((k) => !['input', 'voice', 'response_format', 'language'].includes(k));
      if (strict && unknown.length > 0) {
        refusals++;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'invalid_parameters', message: `unknown field ${unknown[0]}` } }));
        return;
      }
      requests++;
      const input = request.input;
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
    // It asked for word timings, as a run that needs them does.
    assert.equal((JSON.parse(server.requests[0]!.body) as { word_timings?: unknown }).word_timings, true);
  });

  it('a service that refuses the unknown field: asked once with word_timings, then without; the same aligned words', async () => {
    strict = true;
    try {
      const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, TTS_NO_CACHE: '1' };
      const file = join(dir, 'strict.jsonl');
      const texts = `${TEXT} ${TEXT}`;
      const r = await runTtsInProcess(['stream', '--verbose', '--concurrency', '1', '--max-chars', '60', '-v', 'en-man-1', '--word-timings', file, '-o', join(dir, 'strict.wav'), texts], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(refusals, 1, 'refused once; the second piece was asked without the field');
      assert.match(r.stderr, /refused a request with word_timings \(invalid_parameters\); asking without it/);
      const first = await readFile(join(dir, 'first.jsonl'), 'utf8');
      const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { piece: number });
      assert.deepEqual(
        lines.filter((l) => l.piece === 0).map((l) => JSON.stringify(l)),
        first.trim().split('\n').map((l) => JSON.stringify(JSON.parse(l) as object)),
        'the first piece: the same words as from the lenient service',
      );
      assert.equal(lines.filter((l) => l.piece === 1).length, TEXT.split(' ').length);
      // A run that needs no words never sends the field: nothing refused.
      const plain = await runTtsInProcess(['stream', '-q', '-v', 'en-man-1', '-o', join(dir, 'plain.wav'), TEXT], { env });
      assert.equal(plain.code, 0, plain.stderr);
      assert.equal(refusals, 1);
      assert.equal((JSON.parse(server.requests.at(-1)!.body) as { word_timings?: unknown }).word_timings, undefined);
    } finally {
      strict = false;
    }
  });

  it('times the jobs of a batch (one aligner shared by the batch) with the same words as a single run', async () => {
    const jobs = join(dir, 'jobs.jsonl');
    const lines = ['a', 'b'].map((name) => JSON.stringify({ text: TEXT, voice: 'en-man-1', output: `${name}.wav`, 'word-timings': join(dir, `${name}.jsonl`) }));
    await writeFile(jobs, `${lines.join('\n')}\n`);
    const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, TTS_NO_CACHE: '1' };
    const before = server.requests.length;
    const r = await runTtsInProcess(['batch', '-q', '--output-dir', dir, jobs], { env });
    assert.equal(r.code, 0, r.stderr);
    // Each job that needs word timings asks for them.
    assert.deepEqual(server.requests.slice(before).map((q) => (JSON.parse(q.body) as { word_timings?: unknown }).word_timings), [true, true]);
    const single = await readFile(join(dir, 'first.jsonl'), 'utf8');
    assert.equal(await readFile(join(dir, 'a.jsonl'), 'utf8'), single);
    assert.equal(await readFile(join(dir, 'b.jsonl'), 'utf8'), single);
  });

  it('a batch learns once that its service refuses word_timings: later jobs ask without it (found by review: one extra request per job)', async () => {
    strict = true;
    try {
      const jobs = join(dir, 'strict-jobs.jsonl');
      const names = ['s1', 's2', 's3'];
      const lines = names.map((name) => JSON.stringify({ text: TEXT, voice: 'en-man-1', output: `${name}.wav`, 'word-timings': join(dir, `${name}.jsonl`) }));
      await writeFile(jobs, `${lines.join('\n')}\n`);
      const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, TTS_NO_CACHE: '1' };
      const refusedBefore = refusals;
      const r = await runTtsInProcess(['batch', '-q', '--jobs', '1', '--output-dir', dir, jobs], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(refusals - refusedBefore, 1, 'one refusal for the whole batch');
      const single = await readFile(join(dir, 'first.jsonl'), 'utf8');
      for (const name of names) assert.equal(await readFile(join(dir, `${name}.jsonl`), 'utf8'), single, `${name}: the aligned words of a single run`);
    } finally {
      strict = false;
    }
  });
});
