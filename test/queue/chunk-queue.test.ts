/**
 * The byte-bounded queue every producer/consumer pair uses (src/queue/chunk-queue.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkQueue } from '../../src/queue/chunk-queue.js';

const queue = (high = 10, low = 2): ChunkQueue<Buffer> => new ChunkQueue<Buffer>({ highWaterBytes: high, lowWaterBytes: low, sizeOf: (b) => b.length });

describe('ChunkQueue', () => {
  it('tells the producer to wait at the high-water mark and wakes it at the low one', async () => {
    const q = queue();
    assert.equal(q.push(Buffer.alloc(6)), true);
    assert.equal(q.push(Buffer.alloc(6)), false, '12 bytes ≥ 10');
    let room = false;
    void q.room().then(() => (room = true));
    await q.take();
    await Promise.resolve();
    assert.equal(room, false, '6 bytes left is above the low-water mark of 2');
    await q.take();
    await Promise.resolve();
    assert.equal(room, true);
    assert.equal(q.bytes, 0);
  });

  it('hands items over in order and ends after the last', async () => {
    const q = queue(100);
    const got: number[] = [];
    const consumer = (async () => {
      for await (const b of q) got.push(b[0]!);
    })();
    for (let i = 0; i < 5; i++) q.push(Buffer.from([i]));
    q.end();
    await consumer;
    assert.deepEqual(got, [0, 1, 2, 3, 4]);
  });

  it('throws a failure after the items queued before it, or at once when urgent', async () => {
    const q = queue(100);
    q.push(Buffer.from([1]));
    q.fail(new Error('late'));
    assert.deepEqual(await q.take(), Buffer.from([1]));
    await assert.rejects(q.take(), /late/);

    const u = queue(100);
    u.push(Buffer.from([1]));
    u.fail(new Error('now'), { urgent: true });
    await assert.rejects(u.take(), /now/);
  });

  it('wakes a waiting consumer on push, end and failure', async () => {
    const q = queue(100);
    const taken = q.take();
    q.push(Buffer.from([7]));
    assert.deepEqual(await taken, Buffer.from([7]));
    const ended = q.take();
    q.end();
    assert.equal(await ended, undefined);
  });

  it('drops everything and releases the producer when the consumer closes it', async () => {
    const q = queue();
    q.push(Buffer.alloc(20));
    const room = q.room();
    q.close();
    await room;
    assert.equal(q.bytes, 0);
    assert.equal(q.push(Buffer.alloc(1)), false, 'a closed queue takes nothing');
    assert.equal(q.bytes, 0);
    assert.equal(await q.take(), undefined);
  });

  it('refuses water marks that make no sense', () => {
    assert.throws(() => queue(10, 10), RangeError);
    assert.throws(() => queue(0, 0), RangeError);
  });
});
