/**
 * The engine's scheduling (src/engine/scheduler.ts, engine.ts; docs/cli.md §5): round-robin
 * between keys and then between a key's streams, or arrival order with `fifo`; and backpressure —
 * a stream whose consumer stops taking chunks gets no further unit, so its worker goes idle (or to
 * other streams) instead of synthesizing the whole text into memory.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine } from '../../src/engine/index.js';
import { Scheduler } from '../../src/engine/scheduler.js';
import { speechUnits, UNIT_CHARS } from '../../src/engine/units.js';
import { job } from '../helpers/engine-audio.js';

describe('Scheduler', () => {
  it('fair: round-robin between keys first, then between the streams of a key', () => {
    const s = new Scheduler<string>('fair');
    for (const name of ['a1', 'a2', 'a3']) s.add(name, 'A');
    s.add('b1', 'B');
    s.add('c1', 'C');
    const order = Array.from({ length: 9 }, () => s.pick(() => true));
    assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b1', 'c1', 'a3', 'b1', 'c1']);
  });

  it('fair: skips streams that are not ready, and keeps its place when streams leave', () => {
    const s = new Scheduler<string>('fair');
    for (const name of ['a1', 'a2']) s.add(name, 'A');
    s.add('b1', 'B');
    assert.equal(s.pick((x) => x !== 'a1'), 'a2');
    assert.equal(s.pick(() => true), 'b1');
    s.remove('a1', 'A');
    assert.equal(s.pick(() => true), 'a2');
    s.remove('b1', 'B');
    assert.equal(s.pick(() => true), 'a2');
    assert.equal(s.pick(() => false), undefined);
    s.remove('a2', 'A');
    assert.equal(s.size, 0);
    assert.equal(s.pick(() => true), undefined);
  });

  it('fifo: always the oldest ready stream, whatever its key', () => {
    const s = new Scheduler<string>('fifo');
    for (const name of ['a1', 'a2', 'a3']) s.add(name, 'A');
    s.add('b1', 'B');
    assert.deepEqual([s.pick(() => true), s.pick(() => true)], ['a1', 'a1']);
    assert.equal(s.pick((x) => x !== 'a1'), 'a2');
  });
});

describe('speechUnits', () => {
  it('cuts at sentences, packs up to UNIT_CHARS, leaves out blank units and gives back the text', () => {
    const text = `${'One sentence here. '.repeat(40)}\n\n   \n${'二つ目の文です。'.repeat(60)}`;
    const units = [...speechUnits(text)];
    assert.ok(units.length > 5);
    for (const u of units) assert.ok([...u].length <= UNIT_CHARS, `unit of ${[...u].length} characters`);
    assert.equal(units.join('').replace(/\s+/g, ''), text.replace(/\s+/g, ''));
    assert.ok(units.every((u) => u.trim() !== ''));
  });
});

describe('engine backpressure', () => {
  it('a stream whose consumer stops taking is paused after its buffer and one unit, and goes on when taken again', async () => {
    const engine = createEngine({ workers: 1 });
    try {
      // About 45 s of speech: at 48 kHz stereo float32 (384 000 bytes a second) far more than the
      // stream's buffer and one unit, so a worker that did not pause would be seen working on.
      const text = 'Speech synthesis is the artificial production of human speech, made by a computer. '.repeat(8);
      const iterator = engine.synthesize(job({ text, sampleRate: 48000, format: 'float32', channels: 2 }))[Symbol.asyncIterator]();
      let bytes = (await iterator.next()).value!.length;
      // The consumer now takes nothing for a while: the worker must stop, long before the text is done.
      const deadline = performance.now() + 10_000;
      while (engine.stats().busy > 0 && performance.now() < deadline) await sleep(20);
      assert.equal(engine.stats().busy, 0, 'the worker stopped synthesizing for a consumer that takes nothing');
      // The worker is free for another stream, and when that one is done the paused stream does
      // not take it back (a ready stream would be given the worker as soon as it is free).
      for await (const _ of engine.synthesize(job({ text: 'Hi.' }))) void _;
      const paused = engine.stats();
      assert.equal(paused.busy, 0, 'the paused stream took the worker back');
      assert.equal(paused.completed, 1, 'only the short stream is done');
      // Taking again resumes it, to the end.
      for (let r = await iterator.next(); r.done !== true; r = await iterator.next()) bytes += r.value.length;
      assert.equal(engine.stats().completed, 2);
      // 48 kHz stereo float32: 384 000 bytes a second; the whole text came after the pause.
      assert.ok(bytes / 384_000 > 20, `${(bytes / 384_000).toFixed(0)} s of audio`);
    } finally {
      await engine.close();
    }
  });

  it('fair: a short stream of another key starts after at most one unit per busy worker; fifo makes it wait', async () => {
    // Eight sentences: several units of work each (units are ≤ 150 characters), which is all the
    // order needs; the chunk numbers below do not depend on how long a unit takes.
    const long = 'This long text keeps a worker busy for a good while, sentence after sentence. '.repeat(8);
    // Orders, not times: every chunk any stream gets takes the next number.
    const firstChunkOrder = async (scheduling: 'fair' | 'fifo'): Promise<{ shortFirst: number; longsLast: number[] }> => {
      const engine = createEngine({ workers: 1, scheduling });
      try {
        await engine.warmUp();
        let seq = 0;
        const drain = async (text: string, key: string): Promise<{ first: number; last: number }> => {
          let first = 0;
          let last = 0;
          for await (const _ of engine.synthesize(job({ text }), undefined, { key })) {
            last = ++seq;
            first ||= last;
          }
          return { first, last };
        };
        const longs = [drain(long, 'A'), drain(long, 'A')];
        // The short stream comes once the worker has a long one's unit.
        const deadline = performance.now() + 10_000;
        while (engine.stats().busy === 0 && performance.now() < deadline) await sleep(5);
        const short = await drain('Hi.', 'B');
        return { shortFirst: short.first, longsLast: (await Promise.all(longs)).map((l) => l.last) };
      } finally {
        await engine.close();
      }
    };
    const fair = await firstChunkOrder('fair');
    assert.ok(fair.shortFirst < Math.min(...fair.longsLast), `fair: short first chunk #${fair.shortFirst}, longs' last chunks #${fair.longsLast}`);
    const fifo = await firstChunkOrder('fifo');
    assert.ok(fifo.shortFirst > Math.max(...fifo.longsLast), `fifo: short first chunk #${fifo.shortFirst}, longs' last chunks #${fifo.longsLast}`);
  });
});
