/**
 * `tts serve` under load, on loopback with the real engine (docs/cli.md §5): synthesis runs in the
 * worker pool, so a long text never stalls another stream's deltas or the accept loop; and 50
 * concurrent SSE streams all complete with the same correct audio while the server's memory
 * comes back near its baseline. No timed bounds: the order of events is checked, and the
 * timings are the benchmark's figures (bench/server-load.ts).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { defaultWorkers } from '../../src/cli/serve.js';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { allEvents, audioOf, postSse, startService, type SseEvent, type TestService } from '../helpers/serve-http.js';
import { startChildService, type ChildMemory, type ChildService } from '../helpers/serve-child.js';

const KEY = 'load-key-0123456789';
const LONG = 'This is one sentence of a long text, spoken slowly so that it keeps a worker busy. '.repeat(55);
const SHORT = 'The quick brown fox jumps over the lazy dog.';

/** Milliseconds until a plain request (404 for an unknown path) is answered. */
function pingMs(base: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${base}/v1/ping`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('tts serve: a long text does not stall other work (worker pool)', () => {
  let engine: EspeakEngine;
  let svc: TestService;
  before(async () => {
    engine = createEngine({ workers: defaultWorkers() });
    await engine.warmUp();
    svc = await startService({ apiKeys: [KEY], engine, maxChars: 5000 });
  });
  after(async () => {
    await svc.close();
    await engine.close();
  });

  it('sizes the pool to the cores, at least two', () => {
    assert.ok(defaultWorkers() >= 2);
  });

  it('answers a short request and the accept loop while a long text streams, and the long stream keeps flowing', async (t) => {
    const long = await postSse(svc.base, { input: LONG, voice: 'en-man-1' }, KEY);
    assert.equal(long.status, 200);
    const longEvents: SseEvent[] = [];
    const iterator = long.events[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.value?.event, 'delta');
    longEvents.push(first.value!);
    const rest = (async () => {
      for (let r = await iterator.next(); r.done !== true; r = await iterator.next()) longEvents.push(r.value);
    })();

    // Orders, not times (the timings are bench/server-load.ts's): each ping and each short
    // request is answered while the long text is still being made, and the long stream gets
    // new deltas meanwhile.
    const pings: number[] = [];
    const shortFirstDelta: number[] = [];
    const longBefore = longEvents.length;
    for (let i = 0; i < 3; i++) {
      pings.push(await pingMs(svc.base));
      const t0 = performance.now();
      const short = await postSse(svc.base, { input: SHORT, voice: 'en-woman-1' }, KEY);
      const events = await allEvents(short);
      assert.equal(events.at(-1)?.event, 'done');
      shortFirstDelta.push(events[0]!.at - t0);
      assert.notEqual(longEvents.at(-1)?.event, 'done', `short request ${i + 1} waited for the long text to end`);
    }
    const stillRunning = engine.stats().busy > 0;
    const longDuring = longEvents.length - longBefore;
    long.destroy();
    await rest;
    t.diagnostic(`accept loop answered after ${pings.map((p) => p.toFixed(0)).join(', ')} ms; short first delta after ${shortFirstDelta.map((p) => p.toFixed(0)).join(', ')} ms`);
    assert.ok(stillRunning, 'the long text was still being synthesized while the short ones ran');
    assert.ok(longDuring > 0, 'the long stream got no delta while the short ones ran');
  });
});

describe('tts serve: 50 concurrent SSE streams (server in a child process)', () => {
  let svc: ChildService;
  before(async () => {
    svc = await startChildService({ apiKeys: [KEY], workers: defaultWorkers(), maxConcurrent: 100 });
  });
  after(async () => {
    await svc.close();
  });

  /** Runs `n` streams of SHORT at once; returns each one's audio. */
  async function round(n: number): Promise<Buffer[]> {
    return Promise.all(
      Array.from({ length: n }, async () => {
        const res = await postSse(svc.base, { input: SHORT, voice: 'en-man-1' }, KEY);
        assert.equal(res.status, 200, res.status === 200 ? '' : await res.text());
        const events = await allEvents(res);
        assert.equal(events.at(-1)?.event, 'done');
        assert.ok(events.slice(0, -1).every((e) => e.event === 'delta'));
        return audioOf(events);
      }),
    );
  }

  const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;

  it('all complete with the same non-empty pcm16 audio, and the server memory returns near its baseline', async (t) => {
    const reference = (await round(1))[0]!;
    assert.ok(reference.length > 24000, `${reference.length} bytes`);
    assert.equal(reference.length % 2, 0);
    // Warm-up rounds: every worker, buffer pool and code path the load uses exists before the
    // baseline, and V8 has tiered up Flite's WebAssembly (~100 sentences per worker, ~10 MB once).
    for (let r = 0; r < 2; r++) for (const audio of await round(50)) assert.deepEqual(audio, reference);
    const baseline: ChildMemory = await svc.memory();

    const t0 = performance.now();
    const rounds = 3;
    for (let r = 0; r < rounds; r++) {
      const audios = await round(50);
      assert.equal(audios.length, 50);
      for (const audio of audios) assert.ok(audio.equals(reference), 'the same text gives the same bytes');
    }
    const seconds = (performance.now() - t0) / 1000;
    // The last streams' engine work is over before the memory is read.
    let afterLoad = await svc.memory();
    for (let i = 0; i < 50 && afterLoad.engine.busy + afterLoad.engine.queued > 0; i++) afterLoad = await svc.memory();
    t.diagnostic(`${rounds} × 50 streams in ${seconds.toFixed(1)} s on ${defaultWorkers()} workers`);
    t.diagnostic(`rss ${mb(baseline.rss)} → ${mb(afterLoad.rss)}; heapUsed ${mb(baseline.heapUsed)} → ${mb(afterLoad.heapUsed)}; external ${mb(baseline.external)} → ${mb(afterLoad.external)}`);
    assert.equal(afterLoad.engine.completed - baseline.engine.completed, rounds * 50);
    assert.equal(afterLoad.engine.busy, 0);
    assert.equal(afterLoad.engine.queued, 0);
    assert.equal(afterLoad.engine.failed, 0);
    // 150 streams of ~3 s of audio passed through (~40 MB of base64); none of it may stay.
    assert.ok(afterLoad.heapUsed - baseline.heapUsed < 4 * 2 ** 20, `heapUsed grew by ${mb(afterLoad.heapUsed - baseline.heapUsed)}`);
    assert.ok(afterLoad.external - baseline.external < 4 * 2 ** 20, `external grew by ${mb(afterLoad.external - baseline.external)}`);
    assert.ok(afterLoad.rss - baseline.rss < 48 * 2 ** 20, `rss grew by ${mb(afterLoad.rss - baseline.rss)}`);
  });
});
