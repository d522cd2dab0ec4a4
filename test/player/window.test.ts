import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { SentenceWindow } from '../../src/player/window.js';

/** True when `p` settled by the time pending callbacks and I/O ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('player window (docs/cli.md §12.2)', () => {
  it('holds each sentence’s chunks as given and answers where the reader stands', async () => {
    const w = new SentenceWindow(1000);
    assert.deepEqual(w.chunkAt(0, 0), { kind: 'wait' });
    w.startSentence('One. ');
    const a = Buffer.from('aaaa');
    await w.add(a);
    assert.equal(w.chunkAt(0, 0).kind === 'audio' && (w.chunkAt(0, 0) as { chunk: Buffer }).chunk, a);
    assert.deepEqual(w.chunkAt(0, 1), { kind: 'wait' }, 'the sentence may still grow');
    w.startSentence('Two. ');
    assert.deepEqual(w.chunkAt(0, 1), { kind: 'sentence-end' });
    w.appendText('and more');
    assert.equal(w.sentence(1)?.text, 'Two. and more');
    w.finish();
    assert.deepEqual(w.chunkAt(1, 0), { kind: 'sentence-end' });
    assert.deepEqual(w.chunkAt(2, 0), { kind: 'gone' }, 'nothing after the end of a finished run');
  });

  it('drops the oldest sentences behind the reader when full, never the one playing or ahead', async () => {
    const w = new SentenceWindow(10);
    for (let i = 0; i < 3; i++) {
      w.startSentence(`s${i}`);
      if (i === 2) w.setCursor(2);
      await w.add(Buffer.alloc(4));
    }
    // 12 bytes would not fit: sentence 0 was dropped to make room for sentence 2.
    assert.equal(w.first, 1);
    assert.equal(w.bytes, 8);
    assert.deepEqual(w.chunkAt(0, 0), { kind: 'gone' });
  });

  it('makes the producer wait while the window is full of audio ahead of the reader (backpressure)', async () => {
    const w = new SentenceWindow(8);
    w.startSentence('s0');
    await w.add(Buffer.alloc(4));
    w.startSentence('s1');
    await w.add(Buffer.alloc(4));
    w.startSentence('s2');
    const blocked = w.add(Buffer.alloc(4));
    assert.equal(await settled(blocked), false, 'the reader is still at sentence 0');
    assert.equal(w.bytes, 8);
    w.setCursor(1);
    assert.equal(await settled(blocked), true, 'the reader moved on: sentence 0 may go');
    assert.equal(w.first, 1);
    assert.equal(w.bytes, 8);
  });

  it('takes the playing sentence whole even when it alone is larger than the window', async () => {
    const w = new SentenceWindow(4);
    w.startSentence('long');
    await w.add(Buffer.alloc(4));
    assert.equal(await settled(w.add(Buffer.alloc(4))), true);
    assert.equal(w.bytes, 8);
  });

  it('holds a sentence continued piece after piece in parts of an eighth of the window, so a reader that stays makes the producer wait', async () => {
    // A text without sentence ends (or a long --lines line) is one sentence of many pieces; held
    // whole, its audio grew without bound while the player was paused.
    const w = new SentenceWindow(64);
    w.startSentence('word ');
    let blocked: Promise<void> | undefined;
    for (let piece = 0; blocked === undefined; piece++) {
      assert.ok(piece < 100, 'the producer never had to wait');
      const add = w.add(Buffer.alloc(4));
      if (!(await settled(add))) blocked = add;
      else w.appendText('word ');
    }
    assert.equal(w.sentence(0)?.bytes, 8, 'the first part took two pieces of 4 bytes');
    assert.ok(w.count > 2);
    assert.equal(w.bytes, 64);
    w.setCursor(1);
    assert.equal(await settled(blocked), true, 'the reader moved on: the first part may go');
  });

  it('close() wakes a waiting producer with the reason', async () => {
    const w = new SentenceWindow(4);
    w.startSentence('s0');
    await w.add(Buffer.alloc(4));
    w.startSentence('s1');
    const blocked = w.add(Buffer.alloc(4));
    w.close(new Error('stopped'));
    await assert.rejects(blocked, /stopped/);
  });
});
