/**
 * freeNow (src/engine/free-now.ts, issue 20): a large buffer nobody reads any more is given back at
 * once where the runtime has ArrayBuffer.prototype.transfer (Node 21 and later), and never one
 * that other data may share. On Node 20 it does nothing: both cases are asserted, by runtime.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freeNow } from '../../src/engine/free-now.js';

const canTransfer = typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === 'function';

test('a whole buffer of 64 KiB or more is detached (its memory released) where transfer exists', () => {
  const bytes = new Uint8Array(1 << 20).fill(7);
  const ints = new Int32Array(1 << 16);
  const other = new Uint8Array(bytes.buffer, 10, 10);
  assert.equal(freeNow(bytes, ints), canTransfer ? 2 : 0);
  if (canTransfer) {
    assert.equal(bytes.buffer.byteLength, 0);
    assert.equal(bytes.length, 0);
    assert.equal(ints.length, 0);
    assert.equal(other.length, 0, 'every view of a freed buffer is empty');
  } else {
    assert.equal(bytes.length, 1 << 20);
    assert.equal(bytes[5], 7);
  }
});

test('a part of a buffer, a small or pooled Buffer, a SharedArrayBuffer and a freed buffer are left alone', () => {
  const big = new Uint8Array(1 << 20).fill(1);
  const part = big.subarray(0, 1 << 19);
  const small = new Uint8Array(1024).fill(2);
  const pooled = Buffer.from('pooled bytes');
  const shared = new Uint8Array(new SharedArrayBuffer(1 << 20));
  assert.equal(freeNow(part, small, pooled, shared), 0);
  assert.equal(big.length, 1 << 20);
  assert.equal(part[0], 1);
  assert.equal(small[0], 2);
  assert.equal(pooled.toString(), 'pooled bytes');
  assert.equal(shared.length, 1 << 20);
  const whole = new Uint8Array(1 << 17);
  freeNow(whole);
  assert.equal(freeNow(whole), 0, 'freed once only (on Node 20: never)');
});
