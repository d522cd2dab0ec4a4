/**
 * The capped body reader (src/wire/capped-read.ts): a peer can never make us hold more than the cap.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { CappedBuffer, readCapped } from '../../src/wire/capped-read.js';

describe('readCapped', () => {
  it('reads a short body whole', async () => {
    const r = await readCapped(Readable.from([Buffer.from('{"error":'), Buffer.from('"x"}')]), 100);
    assert.equal(r.bytes.toString(), '{"error":"x"}');
    assert.equal(r.overflowed, false);
  });

  it('stops at the cap of an endless body, keeping exactly the first cap bytes', async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1000;
        this.push(Buffer.alloc(1000, 0x61));
      },
    });
    const r = await readCapped(endless, 64 * 1024);
    assert.equal(r.overflowed, true);
    assert.equal(r.bytes.length, 64 * 1024);
    assert.ok(produced < 1024 * 1024, `read ${produced} bytes`);
    assert.ok(endless.destroyed, 'the rest is never read');
  });

  it('keeps what arrived before a stream error', async () => {
    const failing = new Readable({ read() {} });
    failing.push(Buffer.from('partial'));
    setImmediate(() => failing.destroy(new Error('reset')));
    const r = await readCapped(failing, 100);
    assert.equal(r.bytes.toString(), 'partial');
    assert.match(String(r.error), /reset/);
  });
});

describe('CappedBuffer', () => {
  it('counts what it does not keep', () => {
    const b = new CappedBuffer(4);
    assert.equal(b.push('abc'), true);
    assert.equal(b.push('def'), false);
    assert.equal(b.text(), 'abcd');
    assert.equal(b.overflowed, true);
  });
});
