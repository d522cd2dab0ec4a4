/**
 * eSpeak NG's restore point (src/engine/espeak.ts, issue 20): the snapshot keeps memory only up
 * to its last non-zero byte, and reset() zeroes the rest, so each job still starts from the same
 * state (the determinism tests check the audio; this checks the prefix itself).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nonZeroPrefix } from '../../src/engine/espeak.js';

describe('nonZeroPrefix', () => {
  it('keeps everything up to the last non-zero byte, whatever its position in a 32-bit word', () => {
    for (const last of [0, 1, 2, 3, 4, 5, 4093, 4094, 4095]) {
      const memory = new Uint8Array(4096);
      memory[0] = 9;
      memory[last] = 7;
      const prefix = nonZeroPrefix(memory);
      assert.equal(prefix.length, last + 1, `last non-zero byte at ${last}`);
      assert.deepEqual(prefix, memory.subarray(0, last + 1));
    }
  });

  it('an all-zero memory needs nothing; an unaligned or odd-sized view is read byte by byte', () => {
    assert.equal(nonZeroPrefix(new Uint8Array(65536)).length, 0);
    const backing = new Uint8Array(103);
    backing[50] = 1;
    const view = backing.subarray(1, 102);
    assert.equal(nonZeroPrefix(view).length, 50);
    const odd = new Uint8Array(7);
    odd[6] = 1;
    assert.equal(nonZeroPrefix(odd).length, 7);
  });

  it('the copy is independent of the memory it came from', () => {
    const memory = new Uint8Array(16);
    memory[3] = 5;
    const prefix = nonZeroPrefix(memory);
    memory[3] = 0;
    assert.equal(prefix[3], 5);
  });
});
