/**
 * Unit tests of the output stage (src/engine/output.ts): exact lengths, chunk limits, channels,
 * encodings, and that resampling keeps frequencies where they belong.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesPerSample } from '../../src/dsp/encoding.js';
import { AudioOutput, ESPEAK_SAMPLE_RATE } from '../../src/engine/output.js';
import type { AudioFormat } from '../../src/protocol/types.js';

/** A 22050 Hz sine of `hz` as eSpeak-style Int16 samples. */
function sine(hz: number, samples: number, amplitude = 0.5): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = Math.round(Math.sin((2 * Math.PI * hz * i) / ESPEAK_SAMPLE_RATE) * amplitude * 32767);
  return out;
}

/** Feeds `input` in blocks of irregular sizes (as eSpeak's callback does) and returns every chunk. */
async function runThrough(input: Int16Array, format: AudioFormat, sampleRate: number, channels: number): Promise<{ chunks: Buffer[]; perPush: number[] }> {
  const output = await AudioOutput.create({ format, sampleRate, channels });
  const chunks: Buffer[] = [];
  const perPush: number[] = [];
  let at = 0;
  for (let i = 0; at < input.length; i++) {
    const size = [1, 17, 300, 2205, 4410, 999, 7000][i % 7]!;
    const got = output.push(input.subarray(at, at + size));
    perPush.push(got.length);
    chunks.push(...got);
    at += size;
  }
  chunks.push(...output.finish());
  output.destroy();
  return { chunks, perPush };
}

for (const sampleRate of [8000, 16000, 22050, 24000, 44100, 48000]) {
  for (const channels of [1, 2]) {
    test(`exact length, whole frames, ≤ 100 ms chunks at ${sampleRate} Hz × ${channels} ch`, async () => {
      for (const inputSamples of [1, 1000, 22050, 54321]) {
        const { chunks } = await runThrough(sine(440, inputSamples), 'pcm16', sampleRate, channels);
        const frameBytes = 2 * channels;
        const frames = chunks.reduce((n, c) => n + c.length, 0) / frameBytes;
        assert.equal(frames, Math.round((inputSamples * sampleRate) / ESPEAK_SAMPLE_RATE), `total for ${inputSamples} input samples`);
        for (const c of chunks) {
          assert.equal(c.length % frameBytes, 0, 'whole frames');
          assert.ok(c.length > 0, 'no empty chunks');
          assert.ok(c.length / frameBytes <= Math.floor(sampleRate * 0.1), `chunk of ${c.length / frameBytes} frames exceeds 100 ms`);
        }
      }
    });
  }
}

test('bytes per frame follow the format: pcm16 2, float32 4, mulaw 1 (× channels)', async () => {
  for (const format of ['pcm16', 'float32', 'mulaw'] as const) {
    const { chunks } = await runThrough(sine(300, 22050), format, 16000, 2);
    const bytes = chunks.reduce((n, c) => n + c.length, 0);
    assert.equal(bytes, 16000 * 2 * bytesPerSample(format), format);
  }
});

test('chunks are handed out at each push, not held back to fill 100 ms', async () => {
  const output = await AudioOutput.create({ format: 'pcm16', sampleRate: 24000, channels: 1 });
  // 20 ms blocks: each push must already return audio (after the resampler's short delay).
  const block = sine(200, 441);
  const counts: number[] = [];
  for (let i = 0; i < 10; i++) counts.push(output.push(block).reduce((n, c) => n + c.length / 2, 0));
  output.destroy();
  assert.ok(counts.slice(1).every((n) => n > 0), `frames per push: ${counts.join(' ')}`);
  assert.ok(Math.max(...counts) < 2400, 'no push returned 100 ms from a 20 ms block');
});

test('stereo duplicates the mono signal into both channels', async () => {
  const { chunks } = await runThrough(sine(500, 5000), 'float32', 24000, 2);
  const all = Buffer.concat(chunks);
  for (let i = 0; i < all.length; i += 8) assert.equal(all.readFloatLE(i), all.readFloatLE(i + 4));
});

/** Frequency of a float signal by counting rising zero crossings. */
function zeroCrossingHz(x: Float32Array, sampleRate: number): number {
  let crossings = 0;
  for (let i = 1; i < x.length; i++) if (x[i - 1]! < 0 && x[i]! >= 0) crossings++;
  return (crossings * sampleRate) / x.length;
}

test('resampling keeps pitch: a 1000 Hz tone is still 1000 Hz at every rate', async () => {
  for (const sampleRate of [8000, 16000, 24000, 48000]) {
    const { chunks } = await runThrough(sine(1000, 22050), 'float32', sampleRate, 1);
    const all = Buffer.concat(chunks);
    const x = new Float32Array(all.length / 4);
    for (let i = 0; i < x.length; i++) x[i] = all.readFloatLE(i * 4);
    // Skip the filter's start-up and the zero-padded tail.
    const middle = x.subarray(Math.round(sampleRate * 0.1), Math.round(sampleRate * 0.9));
    const hz = zeroCrossingHz(middle, sampleRate);
    assert.ok(Math.abs(hz - 1000) < 10, `${sampleRate} Hz: measured ${hz.toFixed(1)} Hz`);
    let peak = 0;
    for (const v of middle) peak = Math.max(peak, Math.abs(v));
    assert.ok(peak > 0.45 && peak < 0.55, `${sampleRate} Hz: amplitude ${peak}`);
  }
});

test('a reused converter starts clean: the same input gives the same bytes twice', async () => {
  const input = sine(700, 9000);
  const first = Buffer.concat((await runThrough(input, 'pcm16', 24000, 1)).chunks);
  // Dirty a converter of the same rate with other audio, then return it to the idle list.
  const other = await AudioOutput.create({ format: 'pcm16', sampleRate: 24000, channels: 1 });
  other.push(sine(3000, 5000, 0.9));
  other.destroy();
  const second = Buffer.concat((await runThrough(input, 'pcm16', 24000, 1)).chunks);
  assert.ok(first.equals(second));
});

test('a rate prepared but not switched to changes nothing; prepared then switched is setInputRate', async () => {
  const a = sine(700, 9000);
  const b = sine(440, 7000);
  const flite = new Int16Array(sine(300, 5000));
  /** eSpeak-rate audio `a`, then what `between` does, then `b` at eSpeak's rate again; every byte. */
  const job = async (between: (out: AudioOutput) => Promise<Buffer[]>): Promise<Buffer> => {
    const out = await AudioOutput.create({ format: 'pcm16', sampleRate: 24000, channels: 1 });
    const chunks = [...out.push(a), ...(await between(out))];
    chunks.push(...(await out.setInputRate(ESPEAK_SAMPLE_RATE)), ...out.push(b), ...out.finish());
    out.destroy();
    return Buffer.concat(chunks);
  };
  // A Flite run that fails before its first samples (worker.ts speakFlite): as if never tried.
  const untouched = await job(async () => []);
  const prepared = await job(async (out) => {
    await out.prepareInputRate(16000);
    return [];
  });
  assert.ok(prepared.equals(untouched));
  // A switch to another rate ends the run: the bytes differ (what the prepared path avoids).
  assert.ok(!(await job(async (out) => out.setInputRate(16000))).equals(untouched));
  // A Flite run with samples: prepare, then switch at the first block, is setInputRate.
  const viaSet = await job(async (out) => [...(await out.setInputRate(16000)), ...out.push(flite)]);
  const viaSwitch = await job(async (out) => {
    await out.prepareInputRate(16000);
    return [...out.switchInputRate(16000), ...out.push(flite)];
  });
  assert.ok(viaSwitch.equals(viaSet));
  // Switching to a rate nobody prepared is a programming error, not a silent await.
  const out = await AudioOutput.create({ format: 'pcm16', sampleRate: 24000, channels: 1 });
  assert.throws(() => out.switchInputRate(16000), /without prepareInputRate/);
  assert.deepEqual(out.switchInputRate(ESPEAK_SAMPLE_RATE), []);
  out.destroy();
});

test('rejects a sample rate or channel count that is not a positive integer', async () => {
  await assert.rejects(AudioOutput.create({ format: 'pcm16', sampleRate: 0, channels: 1 }), RangeError);
  await assert.rejects(AudioOutput.create({ format: 'pcm16', sampleRate: 16000.5, channels: 1 }), RangeError);
  await assert.rejects(AudioOutput.create({ format: 'pcm16', sampleRate: 16000, channels: 0 }), RangeError);
});
