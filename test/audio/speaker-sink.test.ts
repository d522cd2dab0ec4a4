import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import alawmulaw from 'alawmulaw';
import { loadSpeaker, openSpeakerSink } from '../../src/audio/speaker-sink.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { alsaHeadersInstalled } from '../../src/audio/playback-diagnosis.js';
import { TtsError } from '../../src/errors.js';
import { fakeSpeaker } from '../helpers/audio-fake-speaker.js';
import { splitBySizes } from '../helpers/split.js';

/** Deterministic noise, so every byte value shows up. */
/** Resolves after the pending promise callbacks and I/O ran (setImmediate is not mocked). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function noise(len: number, seed: number): Buffer {
  const b = Buffer.alloc(len);
  let x = seed;
  for (let i = 0; i < len; i++) {
    x = (x * 1664525 + 1013904223) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/**
 * float32 samples in [-1.25, 1.25] (some clip) and their s16 values, computed here with the
 * sample codec's convention (src/dsp/encoding.ts): × 32768, rounded, 1.0 clipped to 32767.
 */
function floatAudio(frames: number, channels: number): { f32: Buffer; s16: Buffer } {
  const n = frames * channels;
  const f32 = Buffer.alloc(n * 4);
  const s16 = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    const x = Math.sin(i / 7) * 1.25;
    f32.writeFloatLE(x, i * 4);
    const clipped = Math.max(-1, Math.min(1, Math.fround(x)));
    s16.writeInt16LE(Math.min(32767, Math.round(clipped * 32768)), i * 2);
  }
  return { f32, s16 };
}

/** Splits at uneven sizes, odd ones included, so frames and samples straddle writes. */
function split(data: Buffer, sizes = [1, 3, 1000, 4097, 77, 2]): Buffer[] {
  return splitBySizes(data, sizes);
}

const isNoDevice = (e: unknown): boolean => {
  assert.ok(e instanceof TtsError, String(e));
  assert.equal(e.code, 'no_playback_device');
  assert.equal(e.exitCode, 7);
  assert.ok(e.hint);
  return true;
};

describe('openSpeakerSink with a fake speaker', () => {
  it('pcm16 stereo: whole frames only, in pieces ≤ 50 ms, bytes unchanged; partial end frame dropped', async () => {
    const { Speaker, log } = fakeSpeaker();
    const spec: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 2 };
    const sink = await openSpeakerSink(spec, { load: async () => Speaker });
    assert.deepEqual(log.options, { channels: 2, bitDepth: 16, signed: true, sampleRate: 24000, samplesPerFrame: 1024 });
    assert.equal(log.opened, true, 'device opened up front');
    assert.equal(log.pieces.length, 0, 'nothing played before the first write');
    const data = noise(40_003, 1);
    for (const c of split(data)) await sink.write(c);
    await sink.finish();
    assert.deepEqual(log.violations, []);
    assert.ok(Buffer.concat(log.pieces).equals(data.subarray(0, 40_000)));
    assert.deepEqual(log.closes, [false], 'closed by end(), not dropped');
  });

  it('piece size follows the rate: 50 ms at 8000 Hz = 400 frames', async () => {
    const { Speaker, log } = fakeSpeaker();
    const sink = await openSpeakerSink({ format: 'pcm16', sampleRate: 8000, channels: 1 }, { load: async () => Speaker });
    await sink.write(noise(8000, 2));
    await sink.finish();
    assert.equal(log.options?.samplesPerFrame, 400);
    assert.deepEqual(
      log.pieces.map((p) => p.length),
      [800, 800, 800, 800, 800, 800, 800, 800, 800, 800],
    );
  });

  it('mulaw is decoded to s16 (alawmulaw), across writes of any size', async () => {
    const { Speaker, log } = fakeSpeaker();
    const sink = await openSpeakerSink({ format: 'mulaw', sampleRate: 8000, channels: 1 }, { load: async () => Speaker });
    const data = noise(5001, 3);
    for (const c of split(data)) await sink.write(c);
    await sink.finish();
    const pcm = alawmulaw.mulaw.decode(data);
    assert.ok(Buffer.concat(log.pieces).equals(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)));
    assert.deepEqual(log.violations, []);
  });

  it('float32 stereo arrives as s16, samples split across writes put back together', async () => {
    const { Speaker, log } = fakeSpeaker();
    const sink = await openSpeakerSink({ format: 'float32', sampleRate: 16000, channels: 2 }, { load: async () => Speaker });
    const { f32, s16 } = floatAudio(3000, 2);
    for (const c of split(f32)) await sink.write(c);
    await sink.finish();
    assert.ok(Buffer.concat(log.pieces).equals(s16));
    assert.deepEqual(log.violations, []);
  });

  it('write paces the producer at playback speed (backpressure)', async () => {
    const { Speaker } = fakeSpeaker({ msPerSecond: 1000 });
    const sink = await openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load: async () => Speaker });
    const t = performance.now();
    await sink.write(noise(24000 * 2 * 0.3, 4)); // 300 ms of audio
    assert.ok(performance.now() - t >= 250, 'resolved only once the card took it');
    await sink.abort();
  });

  it('finish resolves after the drain ends in close', async (t) => {
    // The fake's time is mocked: orders are checked, not durations.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { Speaker, log } = fakeSpeaker({ drainMs: 80 });
    const sink = await openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load: async () => Speaker });
    const writing = sink.write(noise(480, 5));
    await settle();
    t.mock.timers.tick(1);
    await writing;
    let finished = false;
    const finishing = sink.finish().then(() => {
      finished = true;
    });
    await settle();
    assert.equal(log.ended, true);
    t.mock.timers.tick(79);
    await settle();
    assert.equal(finished, false, 'finish resolved before the drain ended');
    assert.deepEqual(log.closes, []);
    t.mock.timers.tick(1);
    await finishing;
    assert.deepEqual(log.closes, [false]);
    await sink.abort(); // no-op after a successful finish
    assert.deepEqual(log.closes, [false]);
  });

  it('abort during a long write waits for the one piece in flight only, drops queued audio, never closes mid-write', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { Speaker, log } = fakeSpeaker({ msPerSecond: 1000 });
    const sink = await openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load: async () => Speaker });
    // Settled into a value at once, so its rejection during abort() is not "unhandled".
    const writing = sink.write(noise(24000 * 2 * 3, 6)).then(
      () => 'resolved',
      (e: unknown) => e,
    ); // 3 s of audio, played in real (mocked) time
    const pieceMs = (log.options!.samplesPerFrame / 24000) * 1000;
    for (let i = 0; i < 3; i++) {
      await settle();
      t.mock.timers.tick(pieceMs);
    }
    await settle();
    assert.equal(log.pieces.length, 4, 'three pieces played, the fourth in flight');
    let aborted = false;
    const aborting = sink.abort().then(() => {
      aborted = true;
    });
    assert.ok((await writing) instanceof TtsError, 'the interrupted write rejects at once');
    await settle();
    assert.equal(aborted, false, 'abort must not close while the piece is being written');
    assert.deepEqual(log.closes, []);
    t.mock.timers.tick(pieceMs);
    await aborting;
    assert.deepEqual(log.closes, [true], 'close(flush=true): queued audio dropped');
    // Much later, nothing more was written.
    t.mock.timers.tick(5000);
    await settle();
    assert.equal(log.pieces.length, 4);
    assert.deepEqual(log.violations, []);
    await sink.abort();
    await assert.rejects(sink.write(noise(2, 0)), TtsError);
  });

  it('abort with nothing written, and after finish failed, is safe', async () => {
    const { Speaker, log } = fakeSpeaker({ failWrite: 0 });
    const sink = await openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load: async () => Speaker });
    await sink.abort();
    assert.deepEqual(log.closes, [true]);
    const b = fakeSpeaker({ failWrite: 0 });
    const sink2 = await openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load: async () => b.Speaker });
    await assert.rejects(sink2.write(noise(100, 1)), TtsError);
    await assert.rejects(sink2.finish(), TtsError);
    await sink2.abort();
    await sink2.abort();
  });

  it('a native write failure (error event, no callback) rejects the write instead of hanging', async () => {
    const { Speaker } = fakeSpeaker({ failWrite: 1 });
    const sink = await openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load: async () => Speaker });
    await assert.rejects(sink.write(noise(48000, 1)), (e) => {
      assert.ok(e instanceof TtsError);
      assert.equal(e.code, 'io_error', 'the device was open: a playback failure');
      assert.equal(e.exitCode, 7);
      assert.match(e.message, /playback failed/);
      return true;
    });
  });

  it('device cannot be opened → no_playback_device, exit 7', async () => {
    const { Speaker } = fakeSpeaker({ openError: new Error('Failed to open output device') });
    await assert.rejects(
      openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load: async () => Speaker }),
      (e) => isNoDevice(e) && /Failed to open output device/.test((e as Error).message),
    );
  });

  it('speaker package missing → no_playback_device, exit 7, hint says how to install it', async () => {
    await assert.rejects(loadSpeaker('tts-test-no-such-speaker-package'), (e) => {
      isNoDevice(e);
      assert.match((e as TtsError).message, /not installed/);
      assert.match((e as TtsError).hint!, /npm install --include=optional --foreground-scripts/);
      // The ALSA headers are named only where they are missing (issue 19 §9).
      if (alsaHeadersInstalled() === false) assert.match((e as TtsError).hint!, /libasound2-dev/);
      else assert.doesNotMatch((e as TtsError).hint!, /libasound2-dev/);
      return true;
    });
    const load = (): ReturnType<typeof loadSpeaker> => loadSpeaker('tts-test-no-such-speaker-package');
    await assert.rejects(openSpeakerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, { load }), isNoDevice);
  });
});

// ---------------------------------------------------------------------------------------------
// Real playback through speaker and ALSA. alsa-lib's `file` plugin writes every frame it is
// given to a file; its slave `null` discards them. A child process (test/helpers/audio-play)
// does the playing because alsa-lib reads $HOME/.asoundrc once per process.

const player = fileURLToPath(new URL('../helpers/audio-play.js', import.meta.url));
let haveSpeaker = true;
try {
  createRequire(import.meta.url).resolve('speaker');
} catch {
  haveSpeaker = false;
}
const home = mkdtempSync(join(tmpdir(), 'tts-alsa-'));
after(() => rmSync(home, { recursive: true, force: true }));

interface PlayResult {
  ok: boolean;
  code?: string;
  exitCode?: number;
  message?: string;
  hint?: string;
  written?: number;
  finishMs?: number;
  abortMs?: number;
}

/** Plays `data` in a child whose default ALSA device is `asoundrc`; returns its report and status. */
function play(
  spec: AudioSpec,
  data: Buffer,
  asoundrc: string,
  extra: { abortAfter?: number } = {},
): { result: PlayResult; status: number | null; signal: string | null; stderr: string } {
  writeFileSync(join(home, '.asoundrc'), asoundrc);
  const input = join(home, 'input.bin');
  writeFileSync(input, data);
  const job = { ...spec, input, chunks: [1, 3, 1000, 4097, 77, 2], ...extra };
  const r = spawnSync(process.execPath, [player, JSON.stringify(job)], {
    env: { ...process.env, HOME: home },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  let result: PlayResult = { ok: false, message: `no report; stdout ${r.stdout} stderr ${r.stderr}` };
  try {
    result = JSON.parse(line) as PlayResult;
  } catch {
    // keep the "no report" result
  }
  return { result, status: r.status, signal: r.signal, stderr: r.stderr };
}

const fileDevice = (out: string): string =>
  `pcm.!default { type file; slave.pcm "null"; file "${out}"; format "raw" }\n`;

/** `played` must be `expected`, then nothing but zero bytes (ALSA may pad the last period with silence). */
function assertPlayed(played: Buffer, expected: Buffer): void {
  assert.ok(played.length >= expected.length, `played ${played.length} bytes, expected ≥ ${expected.length}`);
  const prefix = played.subarray(0, expected.length);
  if (!prefix.equals(expected)) {
    const i = prefix.findIndex((b, k) => b !== expected[k]);
    assert.fail(`played audio differs from the input at byte ${i}`);
  }
  assert.ok(
    played.subarray(expected.length).every((b) => b === 0),
    'only silence after the input',
  );
}

// CI builds speaker (.ci/run installs libasound2-dev first): there it must not be skipped.
if (!haveSpeaker && process.env['CI'] !== undefined) throw new Error('speaker is not installed, and CI must test playback');
describe('openSpeakerSink playing through ALSA (file plugin)', { skip: haveSpeaker ? false : 'speaker is not installed' }, () => {
  const out = join(home, 'played.raw');

  it('pcm16 mono 24000 Hz: every byte played exactly', () => {
    rmSync(out, { force: true });
    const data = noise(48_000, 11);
    const r = play({ format: 'pcm16', sampleRate: 24000, channels: 1 }, data, fileDevice(out));
    assert.equal(r.status, 0, JSON.stringify(r));
    assert.equal(r.result.ok, true);
    assertPlayed(readFileSync(out), data);
  });

  it('pcm16 stereo 44100 Hz: every byte played exactly', () => {
    rmSync(out, { force: true });
    const data = noise(44100 * 4 * 0.5, 12);
    const r = play({ format: 'pcm16', sampleRate: 44100, channels: 2 }, data, fileDevice(out));
    assert.equal(r.status, 0, JSON.stringify(r));
    assertPlayed(readFileSync(out), data);
  });

  it('mulaw 8000 Hz arrives decoded to 16-bit (alawmulaw decode)', () => {
    rmSync(out, { force: true });
    const data = noise(8001, 13);
    const r = play({ format: 'mulaw', sampleRate: 8000, channels: 1 }, data, fileDevice(out));
    assert.equal(r.status, 0, JSON.stringify(r));
    const pcm = alawmulaw.mulaw.decode(data);
    assertPlayed(readFileSync(out), Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  });

  it('float32 stereo 16000 Hz arrives as s16', () => {
    rmSync(out, { force: true });
    const { f32, s16 } = floatAudio(8000, 2);
    const r = play({ format: 'float32', sampleRate: 16000, channels: 2 }, f32, fileDevice(out));
    assert.equal(r.status, 0, JSON.stringify(r));
    assertPlayed(readFileSync(out), s16);
  });

  it('abort stops promptly; what was played is a prefix of the input', () => {
    rmSync(out, { force: true });
    const data = noise(24000 * 2 * 2, 14);
    const r = play({ format: 'pcm16', sampleRate: 24000, channels: 1 }, data, fileDevice(out), { abortAfter: 20_000 });
    assert.equal(r.status, 0, JSON.stringify(r));
    // Promptness in bytes, not milliseconds: at most 20 000 bytes and the device's buffer got out.
    const played = readFileSync(out, { flag: 'r' });
    assert.ok(played.length <= 20_000 + 4096 * 2, `played ${played.length} bytes`);
    const nonSilent = played.subarray(0, Math.min(played.length, r.result.written!));
    assert.ok(nonSilent.equals(data.subarray(0, nonSilent.length)), 'a prefix of the input');
  });

  it('no usable device → no_playback_device exit 7, no crash, no ALSA noise on stderr', () => {
    const r = play({ format: 'pcm16', sampleRate: 24000, channels: 1 }, noise(100, 1), 'pcm.!default { type hw; card "tts_no_such_card" }\n');
    assert.equal(r.signal, null, 'the process was not aborted');
    assert.equal(r.status, 7, JSON.stringify(r));
    assert.equal(r.result.code, 'no_playback_device');
    assert.match(r.result.message!, /cannot open the default sound device \(ALSA: .*tts_no_such_card/);
    assert.match(r.result.hint!, /-o /);
    assert.equal(r.stderr, '');
  });
});
