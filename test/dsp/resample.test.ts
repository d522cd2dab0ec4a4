/**
 * The idle converters StreamResampler keeps for reuse (src/dsp/resample.ts) are bounded in all,
 * not only per shape: found by review (issue 20, fifth round), a batch asking for 120 rates left
 * 120 converters parked for the life of the process, 20 MiB of WebAssembly memory.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { liveConverterCount } from '../../src/dsp/libsamplerate.js';
import { StreamResampler } from '../../src/dsp/resample.js';

test('resamplers of 20 shapes, each used and destroyed, leave at most 8 converters idle; the shape used last is reused', async () => {
  const before = liveConverterCount();
  const rates = Array.from({ length: 20 }, (_, i) => 8000 + 1000 * i);
  for (const rate of rates) {
    const r = await StreamResampler.create(1, 24000, rate);
    r.push(new Float32Array(2400));
    r.end();
    r.destroy();
  }
  assert.ok(liveConverterCount() - before <= 8, `${liveConverterCount() - before} converters left`);
  const again = liveConverterCount();
  const last = await StreamResampler.create(1, 24000, rates.at(-1)!);
  assert.equal(liveConverterCount(), again, 'reused, not made');
  last.destroy();
  assert.equal(liveConverterCount(), again);
});
