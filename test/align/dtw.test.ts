/**
 * The aligner's core (src/align): MFCC frames at 16 kHz, the banded DTW (path shape, band bound,
 * memory linear in the length) and the warping of times along the path.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALIGN_RATE, COEFFICIENTS, type FeatureFrames, HOP_SECONDS, mfccFrames, toAlignRate } from '../../src/align/features.js';
import { bandHalfWidth, DEFAULT_BAND, warpPath } from '../../src/align/dtw.js';
import { warpTime } from '../../src/align/warp.js';

/** Seeded pseudo-random numbers in 0 … 1 (mulberry32), so failures reproduce. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * Feature frames that change slowly, like speech: a random walk in 13 dimensions, one step per
 * frame, so neighbouring frames are close and distant ones are not.
 */
function walk(frames: number, seed: number): FeatureFrames {
  const next = random(seed);
  const data = new Float32Array(frames * COEFFICIENTS);
  for (let f = 0; f < frames; f++) {
    for (let c = 0; c < COEFFICIENTS; c++) {
      const prev = f === 0 ? 0 : data[(f - 1) * COEFFICIENTS + c]!;
      data[f * COEFFICIENTS + c] = prev + (next() - 0.5) * 2;
    }
  }
  return { frames, data };
}

/** `frames` frames of `features` with `pause` copies of a constant "silence" frame inserted before frame `at`. */
function withPause(features: FeatureFrames, at: number, pause: number): FeatureFrames {
  const silence = new Float32Array(COEFFICIENTS).fill(-40);
  const frames = features.frames + pause;
  const data = new Float32Array(frames * COEFFICIENTS);
  data.set(features.data.subarray(0, at * COEFFICIENTS), 0);
  for (let p = 0; p < pause; p++) data.set(silence, (at + p) * COEFFICIENTS);
  data.set(features.data.subarray(at * COEFFICIENTS), (at + pause) * COEFFICIENTS);
  return { frames, data };
}

/** Time of the boundary before frame i (frames 32 ms long, 10 ms apart: between two centres). */
function before(i: number): number {
  return 0.011 + i * HOP_SECONDS;
}

describe('mfccFrames', () => {
  it('gives one 13-coefficient frame per 10 ms, mean-normalised, the same twice', () => {
    const samples = new Float32Array(ALIGN_RATE); // 1 s
    const next = random(1);
    for (let i = 0; i < samples.length; i++) samples[i] = 0.3 * Math.sin((2 * Math.PI * (200 + 600 * (i / samples.length)) * i) / ALIGN_RATE) + 0.01 * (next() - 0.5);
    const a = mfccFrames(samples);
    assert.equal(a.frames, 100);
    assert.equal(a.data.length, 100 * COEFFICIENTS);
    for (let c = 0; c < COEFFICIENTS; c++) {
      let sum = 0;
      for (let f = 0; f < a.frames; f++) sum += a.data[f * COEFFICIENTS + c]!;
      assert.ok(Math.abs(sum / a.frames) < 1e-3, `coefficient ${c} has mean ${sum / a.frames}`);
    }
    assert.ok(a.data.some((x) => Math.abs(x) > 0.1), 'a rising tone gives features that change');
    assert.deepEqual(mfccFrames(samples).data, a.data);
  });

  it('resamples to 16 kHz through the one resampler, with the exact length', async () => {
    const samples = new Float32Array(24000 * 0.5);
    assert.equal((await toAlignRate(samples, 24000)).length, 8000);
    assert.equal((await toAlignRate(samples, 22050)).length, Math.round((12000 * 16000) / 22050));
    assert.equal(await toAlignRate(samples, ALIGN_RATE), samples);
  });
});

describe('warpPath', () => {
  it('matches a sequence with itself along the diagonal', () => {
    const a = walk(300, 2);
    const path = warpPath(a, a);
    for (let i = 0; i < a.frames; i++) {
      assert.equal(path.first[i], i);
      assert.equal(path.last[i], i);
    }
    assert.equal(path.meanCost, 0);
    assert.equal(warpTime(path, 0), 0, 'the start of the audio stays its start');
    assert.equal(warpTime(path, 0.005), 0.005);
  });

  it('finds a pause the target has and the reference has not, and warps times after it by its length', () => {
    const reference = walk(400, 3);
    const target = withPause(reference, 150, 60);
    const path = warpPath(reference, target);
    assert.equal(path.first[0], 0);
    assert.equal(path.last[399], 459);
    for (const i of [10, 100, 140]) assert.equal(warpTime(path, before(i)).toFixed(4), before(i).toFixed(4));
    for (const i of [151, 200, 390]) assert.equal(warpTime(path, before(i)).toFixed(4), before(i + 60).toFixed(4));
  });

  it('follows a target spoken 20 % slower (every fifth frame doubled)', () => {
    const reference = walk(500, 4);
    const frames: number[] = [];
    for (let i = 0; i < reference.frames; i++) {
      frames.push(i);
      if (i % 5 === 4) frames.push(i);
    }
    const data = new Float32Array(frames.length * COEFFICIENTS);
    frames.forEach((src, k) => data.set(reference.data.subarray(src * COEFFICIENTS, (src + 1) * COEFFICIENTS), k * COEFFICIENTS));
    const path = warpPath(reference, { frames: frames.length, data });
    for (const i of [50, 123, 321, 480]) {
      const expected = before(frames.indexOf(i));
      assert.ok(Math.abs(warpTime(path, before(i)) - expected) <= HOP_SECONDS, `frame ${i}`);
    }
  });

  it('keeps to the band: half-width a fraction of the length, at least the minimum, at most the maximum', () => {
    assert.equal(bandHalfWidth(100, 100), DEFAULT_BAND.minFrames);
    assert.equal(bandHalfWidth(2000, 1800), 200);
    assert.equal(bandHalfWidth(1_000_000, 1_000_000), DEFAULT_BAND.maxFrames);
    // Lengths too unlike for the band: it widens to the slope, so a path still exists.
    assert.equal(bandHalfWidth(10, 1000, { minFrames: 5, maxFrames: 20 }), 101);
    assert.doesNotThrow(() => warpPath(walk(10, 5), walk(1000, 6), { minFrames: 5, maxFrames: 20 }));
  });

  it('aligns 60 s with 66 s in memory linear in the length (backpointers ≤ 5 MB, heap growth ≤ 20 MB)', () => {
    const reference = walk(6000, 7);
    const target = walk(6600, 8);
    const heapBefore = process.memoryUsage().heapUsed;
    const path = warpPath(reference, target);
    const grown = process.memoryUsage().heapUsed - heapBefore;
    assert.equal(path.halfWidth, DEFAULT_BAND.maxFrames);
    assert.equal(path.backpointerBytes, 6000 * (2 * DEFAULT_BAND.maxFrames + 1));
    assert.ok(path.backpointerBytes <= 5e6, `${path.backpointerBytes} bytes of backpointers`);
    // The backpointers are a typed array (outside the heap): the heap holds two band rows and the summary.
    assert.ok(grown <= 20e6, `heap grew by ${grown} bytes`);
    const buffers = process.memoryUsage().arrayBuffers;
    assert.ok(buffers < 64e6, `array buffers ${buffers} bytes`);
    // A full matrix would be 6000 × 6600 cells: 39.6 MB of bytes alone.
    assert.ok(path.backpointerBytes < (6000 * 6600) / 8);
  });
});
