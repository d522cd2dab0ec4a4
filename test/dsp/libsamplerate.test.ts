/**
 * tts's WebAssembly build of libsamplerate 0.2.2 (src/dsp/libsamplerate.ts, built by
 * scripts/build-libsamplerate.sh) against the npm registry's build of the same library
 * (`@alexanderolsen/libsamplerate-js`, emscripten + wasm2js, which tts used before issue 20's fifth
 * round): the same samples, bit for bit, whatever the rates, channels and chunking, so no audio
 * tts made changes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import reference from '@alexanderolsen/libsamplerate-js';
import { MAX_RATIO, SampleRateConverter } from '../../src/dsp/libsamplerate.js';

/** Deterministic noise shaped by a slow sine, in -0.8 … 0.8: exercises the whole filter. */
function signal(samples: number, seed: number): Float32Array {
  const out = new Float32Array(samples);
  let s = seed;
  for (let i = 0; i < samples; i++) {
    s = (s * 16807) % 2147483647;
    out[i] = (s / 2147483647 - 0.5) * 1.6 * Math.sin(i / 50);
  }
  return out;
}

function concat(blocks: Float32Array[]): Float32Array {
  const out = new Float32Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

function sameBits(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
}

/** Converts `input` in pieces of `frames` frames (the last one shorter) with `convert`. */
function inPieces(input: Float32Array, channels: number, frames: number, convert: (x: Float32Array) => Float32Array): Float32Array {
  const blocks: Float32Array[] = [];
  for (let i = 0; i < input.length; i += frames * channels) blocks.push(convert(input.subarray(i, i + frames * channels)));
  return concat(blocks);
}

/** [channels, input Hz, output Hz]: the engine's (Flite, eSpeak NG → 24 kHz), the client's -r, extreme ratios. */
const SHAPES: [number, number, number][] = [
  [1, 16000, 24000],
  [1, 22050, 24000],
  [1, 24000, 44100],
  [1, 24000, 8000],
  [2, 48000, 8000],
  [2, 24000, 192000],
  [1, 8000, 48000],
  [3, 11025, 48000],
];

test('the samples are those of the npm build of libsamplerate, bit for bit, for every shape and chunking', async () => {
  for (const [channels, from, to] of SHAPES) {
    const input = signal(Math.round(from * 0.7) * channels, from + channels);
    const ref = await reference.create(channels, from, to, { converterType: reference.ConverterType.SRC_SINC_MEDIUM_QUALITY });
    // 100 ms pieces, as the engine and the client feed it.
    const piece = Math.round(from / 10);
    const expected = inPieces(input, channels, piece, (x) => ref.full(x));
    ref.destroy();
    assert.ok(expected.length > 0.6 * 0.7 * to * channels, `${from}→${to}: ${expected.length} samples`);
    // Pieces smaller and larger than the converter's 4096-frame blocks, and odd ones.
    for (const frames of [piece, 1, 37, 4095, 4097, 9000, input.length / channels]) {
      const mine = await SampleRateConverter.create(channels, from, to);
      const got = inPieces(input, channels, frames, (x) => mine.process(x));
      mine.destroy();
      assert.ok(sameBits(got, expected), `${channels} ch ${from}→${to} in pieces of ${frames} frames: ${got.length} samples against ${expected.length}, first difference at ${got.findIndex((v, i) => v !== expected[i])}`);
    }
  }
});

test('an empty input gives what libsamplerate holds for it, as the npm build does', async () => {
  const ref = await reference.create(1, 16000, 24000, { converterType: reference.ConverterType.SRC_SINC_MEDIUM_QUALITY });
  const mine = await SampleRateConverter.create(1, 16000, 24000);
  const input = signal(1600, 7);
  const expected = concat([ref.full(input), ref.full(new Float32Array(0)), ref.full(new Float32Array(0))]);
  const got = concat([mine.process(input), mine.process(new Float32Array(0)), mine.process(new Float32Array(0))]);
  ref.destroy();
  mine.destroy();
  assert.ok(sameBits(got, expected), `${got.length} against ${expected.length}`);
});

test('reset starts afresh: after it a converter gives what a new one gives', async () => {
  const used = await SampleRateConverter.create(2, 22050, 24000);
  used.process(signal(2205 * 2, 3));
  used.reset();
  const fresh = await SampleRateConverter.create(2, 22050, 24000);
  const input = signal(4410 * 2, 5);
  const a = used.process(input);
  const b = fresh.process(input);
  assert.ok(a.length > 0);
  assert.ok(sameBits(a, b));
  used.destroy();
  fresh.destroy();
});

test('converters of one thread share the WebAssembly instance but not their state', async () => {
  const inputs = [signal(16000, 11), signal(22050, 12)];
  const alone = [];
  for (const [i, from] of [16000, 22050].entries()) {
    const c = await SampleRateConverter.create(1, from, 24000);
    alone.push(inPieces(inputs[i]!, 1, 1000, (x) => c.process(x)));
    c.destroy();
  }
  const a = await SampleRateConverter.create(1, 16000, 24000);
  const b = await SampleRateConverter.create(1, 22050, 24000);
  const outA: Float32Array[] = [];
  const outB: Float32Array[] = [];
  for (let i = 0; i < 16; i++) {
    outA.push(a.process(inputs[0]!.subarray(i * 1000, (i + 1) * 1000)));
    outB.push(b.process(inputs[1]!.subarray(i * 1000, (i + 1) * 1000)));
  }
  outB.push(b.process(inputs[1]!.subarray(16000)));
  assert.ok(sameBits(concat(outA), alone[0]!));
  assert.ok(sameBits(concat(outB), alone[1]!));
  a.destroy();
  b.destroy();
});

test('equal rates give the input back as a copy', async () => {
  const c = await SampleRateConverter.create(1, 24000, 24000);
  const input = signal(100, 1);
  const out = c.process(input);
  assert.ok(sameBits(out, input));
  assert.notEqual(out.buffer, input.buffer);
  c.destroy();
});

test('bad shapes, partial frames and use after destroy are refused with clear errors', async () => {
  await assert.rejects(SampleRateConverter.create(1, 100, 100 * (MAX_RATIO + 1)), (err: Error) => err instanceof RangeError && /1\/256 … 256/.test(err.message));
  await assert.rejects(SampleRateConverter.create(0, 16000, 24000), RangeError);
  await assert.rejects(SampleRateConverter.create(129, 16000, 24000), RangeError);
  await assert.rejects(SampleRateConverter.create(1, 16000.5, 24000), RangeError);
  const c = await SampleRateConverter.create(2, 16000, 24000);
  assert.throws(() => c.process(new Float32Array(3)), /whole frames of 2 channels/);
  c.destroy();
  assert.equal(c.isDestroyed, true);
  c.destroy();
  assert.throws(() => c.process(new Float32Array(2)), /after destroy/);
  assert.throws(() => c.reset(), /after destroy/);
});

test('a thousand converters made and destroyed reuse the memory of the first', async () => {
  const first = await SampleRateConverter.create(2, 22050, 48000);
  first.process(signal(4410, 1));
  first.destroy();
  // The instance's memory counts as `external` but not `arrayBuffers`; the inputs and outputs of
  // the loop are JavaScript ArrayBuffers (counted in both) that the collector frees when it likes:
  // counted in, they made the figure 25–32 MiB in a run where the instance did not grow at all.
  const instanceMemory = (): number => {
    const usage = process.memoryUsage();
    return usage.external - usage.arrayBuffers;
  };
  const before = instanceMemory();
  for (let i = 0; i < 1000; i++) {
    const c = await SampleRateConverter.create(2, 22050, 48000);
    c.process(signal(4410, i));
    c.destroy();
  }
  // Each converter holds ~0.3 MiB of libsamplerate state and buffers (stereo): a leak would grow the
  // instance's memory by hundreds of MiB.
  const grown = instanceMemory() - before;
  assert.ok(grown < 16 * 2 ** 20, `external memory grew by ${(grown / 2 ** 20).toFixed(1)} MiB`);
});
