/**
 * The sample codec (src/dsp/encoding.ts) pins the 16-bit scale: ÷ 32768 when decoding
 * (−32768 ↦ −1.0, the usual convention), × 32768 when encoding (1.0 clipped to 32767), so every
 * 16-bit value survives decode → encode unchanged, on every path that decodes 16-bit samples.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeToFloat, encodeFloat, floatToPcm16, int16ToFloat, toPcm16Bytes } from '../../src/dsp/encoding.js';
import { toFloat32 } from '../../src/audio/containers/pcm.js';

function pcm16(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeInt16LE(v, i * 2));
  return b;
}

describe('sample codec: 16-bit scale', () => {
  it('decodes −32768 to −1.0, 16384 to 0.5 and 32767 to 32767/32768, on each decoding path', () => {
    const expected = [-1, 0.5, 32767 / 32768, 0];
    const bytes = pcm16(-32768, 16384, 32767, 0);
    assert.deepEqual([...decodeToFloat(bytes, 'pcm16')], expected);
    assert.deepEqual([...toFloat32(bytes, 'pcm16')], expected);
    assert.deepEqual([...int16ToFloat(new Int16Array([-32768, 16384, 32767, 0]))], expected);
  });

  it('encodes −1.0 to −32768, 0.5 to 16384, −0.5 to −16384 and clips 1.0 and beyond to 32767', () => {
    assert.deepEqual([...floatToPcm16(new Float32Array([-1, 0.5, -0.5, 1, 2, -2, Number.NaN]))], [-32768, 16384, -16384, 32767, 32767, -32768, 0]);
    assert.deepEqual([...toPcm16Bytes(Buffer.from(new Float32Array([-1, 1]).buffer), 'float32')], [...pcm16(-32768, 32767)]);
  });

  it('every 16-bit value comes back unchanged from decode → encode', () => {
    const all = new Int16Array(65536);
    for (let i = 0; i < all.length; i++) all[i] = i - 32768;
    const bytes = Buffer.from(all.buffer);
    assert.ok(encodeFloat(decodeToFloat(bytes, 'pcm16'), 'pcm16').equals(bytes));
  });

  it('µ-law decodes through 16-bit with the same scale', () => {
    // G.711 µ-law 0x00 is −32124, 0x80 is 32124.
    assert.deepEqual([...decodeToFloat(new Uint8Array([0x00, 0x80]), 'mulaw')], [-32124 / 32768, 32124 / 32768]);
  });
});
