/**
 * `tts realtime` end to end on the built-in service's WebSocket route (docs/protocol.md §4.2;
 * docs/cli.md §1): the requested rate and channels reach the WAV header, and the audio lasts as
 * long as the same speech over SSE.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseWavHeader, wavFileInfo } from '../helpers/wav-reader.js';
import { runTts } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';

describe('tts realtime on the built-in engine', () => {
  let dir: string;
  let sseSeconds: number;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-realtime-'));
    const r = await runTtsInProcess(['stream', '--voice', 'en-man-1', 'Good morning']);
    assert.equal(r.code, 0, r.stderr);
    sseSeconds = r.stdout.length / 2 / 24000;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [format, rate, channels, tag, bytes] of [
    ['pcm16', 16000, 2, 1, 2],
    ['pcm16', 8000, 1, 1, 2],
    ['float32', 48000, 2, 3, 4],
    ['mulaw', 48000, 1, 7, 1],
    ['mulaw', 8000, 2, 7, 1],
  ] as const) {
    it(`writes ${format} at ${rate} Hz, ${channels} channel(s), as long as the speech`, async () => {
      const out = join(dir, `rt-${format}-${rate}-${channels}.wav`);
      const r = await runTtsInProcess(['realtime', '--voice', 'en-man-1', '--format', format, '--sample-rate', String(rate), '--channels', String(channels), '-o', out, 'Good morning']);
      assert.equal(r.code, 0, r.stderr);
      const file = await readFile(out);
      const h = parseWavHeader(file);
      assert.equal(h.formatTag, tag);
      assert.equal(h.sampleRate, rate);
      assert.equal(h.channels, channels);
      assert.equal(h.dataBytes % (bytes * channels), 0, 'whole frames');
      const frames = h.dataBytes / (bytes * channels);
      // Same speech as over SSE at 24 kHz, resampled: durations agree to a few ms.
      assert.ok(Math.abs(frames / rate - sseSeconds) < 0.01, `${frames / rate} s vs ${sseSeconds} s over SSE`);
      const read = wavFileInfo(out); // in-process: sox judges each encoding in test/audio/wav.test.ts
      assert.equal(read.rate, rate);
      assert.equal(read.channels, channels);
      assert.equal(read.samples, frames);
    });
  }

  it('interleaves identical channels for stereo', async () => {
    const r = await runTtsInProcess(['realtime', '--voice', 'en-woman-1', '-r', '24000', '-c', '2', '-o', '-', 'Hi there']);
    assert.equal(r.code, 0, r.stderr);
    const frames = r.stdout.length / 4;
    assert.ok(frames > 2400);
    let nonzero = 0;
    for (let i = 0; i < frames; i++) {
      const l = r.stdout.readInt16LE(i * 4);
      assert.equal(r.stdout.readInt16LE(i * 4 + 2), l);
      if (l !== 0) nonzero++;
    }
    assert.ok(nonzero > frames / 4);
  });

  it('rejects an unsupported sample rate (exit 4, invalid_parameters) and an unknown voice (exit 4)', async () => {
    const rate = await runTtsInProcess(['realtime', '-r', '12345', '-o', '-', 'Hi']);
    assert.equal(rate.code, 4, rate.stderr);
    assert.match(rate.stderr, /invalid_parameters/);
    const voice = await runTtsInProcess(['realtime', '--voice', 'xx-robot-9', '-o', '-', 'Hi']);
    assert.equal(voice.code, 4, voice.stderr);
    assert.match(voice.stderr, /voice_not_found/);
  });

  it('plays Japanese on the sound card (ALSA file plugin)', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tts-rt-home-'));
    const played = join(home, 'played.raw');
    await writeFile(join(home, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${played}"; format "raw" }\n`);
    try {
      const r = await runTts(['realtime', 'こんにちは'], { env: { HOME: home } });
      assert.equal(r.code, 0, r.stderr);
      const bytes = await readFile(played);
      assert.ok(bytes.length > 24000, `${bytes.length} bytes played`);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
