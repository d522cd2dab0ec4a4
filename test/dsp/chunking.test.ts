/**
 * docs/cli.md §8: a cached rerun writes the same bytes as the run that filled it. The first run
 * gets audio in small deltas, a rerun gets each piece as one chunk, so the effect chain and the
 * encoders must give the same bytes whatever the chunking (property tests over random cuts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { openFlacEncoder } from '../../src/audio/containers/flac.js';
import { openMp3Encoder } from '../../src/audio/containers/mp3.js';
import { openOpusEncoder } from '../../src/audio/containers/opus.js';
import { SpecConverter } from '../../src/dsp/convert.js';
import { EffectChain } from '../../src/dsp/effects.js';
import { encodeFloat } from '../../src/dsp/encoding.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { cutAt } from '../helpers/split.js';

/** A speech-like signal (a gliding tone with harmonics) of `frames` frames at `rate`, as floats. */
function voice(frames: number, rate: number, channels: number): Float32Array {
  const out = new Float32Array(frames * channels);
  let phase = 0;
  for (let i = 0; i < frames; i++) {
    phase += (2 * Math.PI * (110 + 60 * Math.sin((i / rate) * 5))) / rate;
    const noise = ((i * 7919) % 101) / 101 - 0.5; // deterministic breath noise
    const v = 0.3 * Math.sin(phase) + 0.2 * Math.sin(2 * phase) + 0.1 * Math.sin(3 * phase) + 0.05 * noise;
    for (let c = 0; c < channels; c++) out[i * channels + c] = v;
  }
  return out;
}


/** A stream stage under test: bytes in, bytes out, a flush at the end, and its release. */
interface Stage {
  push(bytes: Buffer): Buffer;
  end(): Buffer;
  free(): void;
}

/** Pushes `parts` (copied) through a new stage from `open`, and returns all it wrote. */
async function through(open: () => Promise<Stage>, parts: Buffer[]): Promise<Buffer> {
  const stage = await open();
  try {
    const out = parts.map((p) => stage.push(Buffer.from(p)));
    out.push(stage.end());
    return Buffer.concat(out);
  } finally {
    stage.free();
  }
}

const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 300 });

describe('chunking independence (docs/cli.md §8)', () => {
  it('EffectChain (--speed, --volume) gives the same bytes however a piece is cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0.5, 0.7, 1, 1.5, 3), fc.constantFrom(1, 2.5), fc.constantFrom(1, 2), cuts, async (speed, volume, channels, at) => {
        const spec: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels };
        const piece = encodeFloat(voice(24000, 24000, channels), 'pcm16');
        const run = (parts: Buffer[]): Promise<Buffer> =>
          through(async () => {
            const chain = await EffectChain.create(spec, { speed, volume });
            return { push: (b) => chain.push(b), end: () => chain.endPiece(), free: () => chain.destroy() };
          }, parts);
        assert.ok((await run([piece])).equals(await run(cutAt(piece, at))));
      }),
      { numRuns: 25 },
    );
  });

  it('SpecConverter (-r, -c) gives the same bytes however the audio is cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(16000, 22050, 44100, 48000), fc.constantFrom(1, 2), cuts, async (rate, channels, at) => {
        const from: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };
        const to: AudioSpec = { format: 'pcm16', sampleRate: rate, channels };
        const input = encodeFloat(voice(12000, 24000, 1), 'pcm16');
        const run = (parts: Buffer[]): Promise<Buffer> =>
          through(async () => {
            const conv = await SpecConverter.create(from, to);
            return { push: (b) => conv.push(b), end: () => conv.end(), free: () => conv.destroy() };
          }, parts);
        assert.ok((await run([input])).equals(await run(cutAt(input, at))));
      }),
      { numRuns: 15 },
    );
  });

  it('the Opus encoder writes the same Ogg bytes however the audio is cut, run after run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(24000, 44100, 48000), fc.constantFrom(1, 2), cuts, async (rate, channels, at) => {
        const spec: AudioSpec = { format: 'pcm16', sampleRate: rate, channels };
        const input = encodeFloat(voice(rate, rate, channels), 'pcm16');
        const run = (parts: Buffer[]): Promise<Buffer> =>
          through(async () => {
            const enc = await openOpusEncoder(spec, 32);
            return { push: (b) => enc.encode(b), end: () => enc.finish(), free: () => enc.free() };
          }, parts);
        const whole = await run([input]);
        assert.ok(whole.equals(await run(cutAt(input, at, 2 * channels))));
      }),
      { numRuns: 10 },
    );
  });

  it('the MP3 and FLAC encoders write the same bytes however the audio is cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('mp3', 'flac'), fc.constantFrom(24000, 44100), fc.constantFrom(1, 2), cuts, async (codec, rate, channels, at) => {
        const spec: AudioSpec = { format: 'pcm16', sampleRate: rate, channels };
        const input = encodeFloat(voice(rate, rate, channels), 'pcm16');
        const run = (parts: Buffer[]): Promise<Buffer> =>
          through(async () => {
            const enc = codec === 'mp3' ? await openMp3Encoder(spec, 64) : await openFlacEncoder(spec);
            return { push: (b) => enc.encode(b), end: () => enc.finish(), free: () => enc.free() };
          }, parts);
        assert.ok((await run([input])).equals(await run(cutAt(input, at, 2 * channels))), codec);
      }),
      { numRuns: 10 },
    );
  });
});
