/**
 * The client's conversion and effects (src/dsp): lengths are exact however the audio is cut into
 * chunks, channels mix as docs/cli.md §2 says, decode → encode keeps the bytes, gain never wraps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SpecConverter } from '../../src/dsp/convert.js';
import { applyGain, EffectChain } from '../../src/dsp/effects.js';
import { encodeFloat } from '../../src/dsp/encoding.js';
import { decodeToFloat } from '../../src/dsp/encoding.js';
import { mixChannels } from '../../src/dsp/mix.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import type { AudioFormat } from '../../src/protocol/types.js';
import { cutAt } from '../helpers/split.js';

const RATES = [8000, 16000, 22050, 24000, 44100, 48000];
const FORMATS: AudioFormat[] = ['pcm16', 'float32', 'mulaw'];

/** A 440 Hz tone of `frames` frames at `rate`, as floats. */
function tone(frames: number, rate: number): Float32Array {
  const out = new Float32Array(frames);
  for (let i = 0; i < frames; i++) out[i] = 0.5 * Math.sin((2 * Math.PI * 440 * i) / rate);
  return out;
}


describe('SpecConverter', () => {
  it('gives exactly round(frames × to / from) frames, whatever the chunking (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...RATES),
        fc.constantFrom(...RATES),
        fc.constantFrom(1, 2),
        fc.constantFrom(1, 2),
        fc.constantFrom(...FORMATS),
        fc.integer({ min: 1, max: 6000 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        async (fromRate, toRate, fromChannels, toChannels, format, frames, cuts) => {
          const from: AudioSpec = { format, sampleRate: fromRate, channels: fromChannels };
          const to: AudioSpec = { format, sampleRate: toRate, channels: toChannels };
          const input = encodeFloat(mixChannels(tone(frames, fromRate), 1, fromChannels), format);
          const converter = await SpecConverter.create(from, to);
          try {
            let bytes = 0;
            for (const part of cutAt(input, cuts)) bytes += converter.push(Buffer.from(part)).length;
            bytes += converter.end().length;
            const frameBytes = (format === 'pcm16' ? 2 : format === 'float32' ? 4 : 1) * toChannels;
            assert.equal(bytes % frameBytes, 0);
            assert.equal(bytes / frameBytes, Math.round((frames * toRate) / fromRate));
          } finally {
            converter.destroy();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps the tone: 24 kHz → 48 kHz has the same RMS and a 440 Hz period', async () => {
    const from: AudioSpec = { format: 'float32', sampleRate: 24000, channels: 1 };
    const to: AudioSpec = { format: 'float32', sampleRate: 48000, channels: 2 };
    const converter = await SpecConverter.create(from, to);
    const out = Buffer.concat([converter.push(encodeFloat(tone(24000, 24000), 'float32')), converter.end()]);
    converter.destroy();
    const s = decodeToFloat(out, 'float32');
    let sum = 0;
    for (let i = 1000; i < s.length - 1000; i++) sum += s[i]! ** 2;
    const rms = Math.sqrt(sum / (s.length - 2000));
    assert.ok(Math.abs(rms - 0.5 / Math.SQRT2) < 0.01, `rms ${rms}`);
    // Left and right are the same (mono → stereo duplicates); the 48 kHz tone repeats every 48000/440 frames.
    for (let f = 2000; f < 2100; f++) {
      assert.equal(s[2 * f], s[2 * f + 1]);
      assert.ok(Math.abs(s[2 * f]! - 0.5 * Math.sin((2 * Math.PI * 440 * f) / 48000)) < 0.02);
    }
  });

  it('refuses a stream that does not end on a whole sample (protocol_error)', async () => {
    const converter = await SpecConverter.create({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { format: 'pcm16', sampleRate: 16000, channels: 1 });
    converter.push(Buffer.alloc(101));
    assert.throws(() => converter.end(), (e: Error & { code?: string }) => e.code === 'protocol_error' && /101 bytes/.test(e.message));
    converter.destroy();
  });
});

describe('channels, encodings and gain', () => {
  it('stereo → mono averages, mono → stereo duplicates', () => {
    assert.deepEqual([...mixChannels(new Float32Array([0.5, 0.25, -1, 0]), 2, 1)], [0.375, -0.5]);
    assert.deepEqual([...mixChannels(new Float32Array([0.5, -0.25]), 1, 2)], [0.5, 0.5, -0.25, -0.25]);
  });

  it('decode → encode gives back the same bytes for every encoding', () => {
    for (const format of FORMATS) {
      const bytes = encodeFloat(tone(2400, 24000), format);
      assert.deepEqual(encodeFloat(decodeToFloat(bytes, format), format), bytes, format);
    }
  });

  it('gain limits peaks smoothly: never above full scale, never wrapped, order kept', () => {
    const x = new Float32Array(2001).map((_, i) => (i - 1000) / 1000);
    applyGain(x, 4);
    for (let i = 1; i < x.length; i++) assert.ok(x[i]! >= x[i - 1]!, 'monotonic');
    assert.ok(Math.max(...x) <= 1 && Math.min(...x) >= -1);
    assert.ok(x[2000]! > 0.99);
    const quiet = new Float32Array([0.2, -0.4]);
    applyGain(quiet, 0.5);
    assert.deepEqual([...quiet], [Math.fround(0.1), Math.fround(-0.2)]);
  });

  it('--speed 1.5 and 0.75 change the length by the speed, in a streamed piece', async () => {
    for (const speed of [1.5, 0.75]) {
      const spec: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 2 };
      const chain = await EffectChain.create(spec, { speed, volume: 1 });
      const input = encodeFloat(mixChannels(tone(48000, 24000), 1, 2), 'pcm16');
      let bytes = 0;
      for (const part of cutAt(input, [0.1, 0.33, 0.5, 0.77])) bytes += chain.push(Buffer.from(part)).length;
      bytes += chain.endPiece().length;
      chain.destroy();
      const seconds = bytes / 4 / 24000;
      assert.ok(Math.abs(seconds - 2 / speed) < 0.02 * (2 / speed), `speed ${speed}: ${seconds} s`);
    }
  });
});
