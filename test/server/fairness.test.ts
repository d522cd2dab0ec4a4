/**
 * Fairness of the built-in service (docs/cli.md §5; issue 9 §10): while one key runs four long
 * texts on two workers, a short request of another key gets its first delta before any of the
 * long streams is done — it waits for at most one unit per busy worker, not for whole texts.
 * Ordering only, no timing (the figures are in `npm run bench`, server-fairness).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { postSse, startService, type SseEvent, type TestService } from '../helpers/serve-http.js';

const KEY_A = 'fairness-key-A-0123456789';
const KEY_B = 'fairness-key-B-0123456789';
/**
 * Ten units (one sentence each): a scheduler that serves key A's streams before key B's makes B
 * wait for whole streams of them; a fair one, for one unit per worker. More units only cost CPU.
 */
const LONG = 'A long text from one busy key keeps both workers going, one sentence after another. '.repeat(10);

describe('fair scheduling between keys', () => {
  let engine: EspeakEngine;
  let svc: TestService;
  before(async () => {
    engine = createEngine({ workers: 2 });
    await engine.warmUp();
    svc = await startService({ apiKeys: [KEY_A, KEY_B], engine, maxConcurrent: 4 });
  });
  after(async () => {
    await svc.close();
    await engine.close();
  });

  it("a short request of key B gets its first delta before any of key A's four long streams is done", async () => {
    /** Reads a stream, noting when its first delta and its last event came. */
    const timeline = async (input: string, key: string): Promise<{ first: number; last: number; end: string }> => {
      const res = await postSse(svc.base, { input, voice: 'en-man-1' }, key);
      assert.equal(res.status, 200);
      let first = Infinity;
      let last: SseEvent | undefined;
      for await (const e of res.events) {
        if (e.event === 'delta') first = Math.min(first, e.at);
        last = e;
      }
      return { first, last: last?.at ?? Infinity, end: last?.event ?? '-' };
    };
    const longs = Array.from({ length: 4 }, () => timeline(LONG, KEY_A));
    // Both workers are busy with key A's units before the short request comes.
    const deadline = performance.now() + 10_000;
    while (engine.stats().busy < 2 && performance.now() < deadline) await sleep(5);
    assert.equal(engine.stats().busy, 2);
    const short = await timeline('Hello.', KEY_B);
    const done = await Promise.all(longs);
    assert.equal(short.end, 'done');
    for (const d of done) assert.equal(d.end, 'done');
    const firstLongDone = Math.min(...done.map((d) => d.last));
    assert.ok(short.first < firstLongDone, `the short request's first delta came ${(short.first - firstLongDone).toFixed(0)} ms after a long stream was done`);
  });
});
