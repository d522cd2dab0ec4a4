/**
 * Opening outputs (src/speak/open-outputs.ts) gives back what it loaded when an output cannot be
 * opened. Found by review (issue 20, fifth round): an Opus file at a rate libopus lacks loads a
 * libsamplerate converter with its encoder, before the file opens; a batch of 1,500 lines whose
 * files could not be opened left 1,500 converters in the thread's WebAssembly memory (peak 613
 * against 305 MB), which no garbage collection gives back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { liveConverterCount } from '../../src/dsp/libsamplerate.js';
import { openOutputs } from '../../src/speak/open-outputs.js';
import { openOpusEncoder } from '../../src/audio/containers/opus.js';
import { TtsError } from '../../src/errors.js';

test('an Opus file that cannot be opened leaves no libsamplerate converter behind, and nothing on disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-open-'));
  try {
    const before = liveConverterCount();
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        openOutputs({ file: { path: join(dir, 'missing', `x${i}.opus`), container: 'opus' }, stdout: undefined, play: false }, { format: 'pcm16', sampleRate: 44100, channels: 2 }, process.stdout, new AbortController().signal),
        (err: unknown) => err instanceof TtsError && err.exitCode === 7,
      );
    }
    // One that opens, written to and aborted: its first write waits for its encoder, which loads
    // after those the failed ones started (the same module loads, queued first), so a converter
    // they left behind shows in the count (which only destroy() lowers).
    const out = await openOutputs({ file: { path: join(dir, 'y.opus'), container: 'opus' }, stdout: undefined, play: false }, { format: 'pcm16', sampleRate: 44100, channels: 2 }, process.stdout, new AbortController().signal);
    try {
      await out.sink.write(Buffer.alloc(4410 * 4));
    } finally {
      await out.sink.abort();
    }
    assert.equal(liveConverterCount(), before);
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an Opus file that opens holds its converter until the sink is done with it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-open-'));
  try {
    const before = liveConverterCount();
    const out = await openOutputs({ file: { path: join(dir, 'x.opus'), container: 'opus' }, stdout: undefined, play: false }, { format: 'pcm16', sampleRate: 44100, channels: 2 }, process.stdout, new AbortController().signal);
    try {
      await out.sink.write(Buffer.alloc(4410 * 4));
      assert.equal(liveConverterCount(), before + 1);
    } finally {
      await out.sink.abort();
    }
    assert.equal(liveConverterCount(), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an Opus encoder that fails to start frees the converter it made, and its error is libopus\'s', async () => {
  const before = liveConverterCount();
  // 44.1 kHz: libopus lacks it, so a libsamplerate converter is made beside the encoder; a bit
  // rate libopus refuses makes the encoder fail.
  await assert.rejects(openOpusEncoder({ format: 'pcm16', sampleRate: 44100, channels: 2 }, -5), (err: unknown) => err instanceof Error && !/libsamplerate/.test(err.message));
  await assert.rejects(openOpusEncoder({ format: 'pcm16', sampleRate: 44100, channels: 2 }, 1e9));
  assert.equal(liveConverterCount(), before);
});
