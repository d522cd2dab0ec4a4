import { strict as assert } from 'node:assert';
import { statSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { AudioSink } from '../../src/audio/sink.js';
import { openSpeakerSink, type SpeakerConstructor, type SpeakerStream } from '../../src/audio/speaker-sink.js';
import { openSystemPlayerSink } from '../../src/audio/system-player.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { TtsError } from '../../src/errors.js';
import { Player, type PlayerState } from '../../src/player/player.js';
import { PlayerStopped } from '../../src/player/stopped.js';

/** 8 kHz 16-bit mono: the player's 50 ms slice is 800 bytes. */
const SPEC: AudioSpec = { format: 'pcm16', sampleRate: 8000, channels: 1 };
const SLICE = 800;

/** A sound card that records what it got; with `hold`, each write waits until `release()`. */
class FakeCard implements AudioSink {
  written: Buffer[] = [];
  finished = false;
  aborted = false;
  hold = false;
  #waiting: (() => void)[] = [];
  async write(chunk: Buffer): Promise<void> {
    this.written.push(Buffer.from(chunk));
    if (this.hold) await new Promise<void>((resolve, reject) => {
      this.#waiting.push(resolve);
      this.#failing.push(reject);
    });
  }
  async finish(): Promise<void> {
    this.finished = true;
  }
  async abort(): Promise<void> {
    this.aborted = true;
    if (this.abortRejects) {
      const w = this.#failing;
      this.#failing = [];
      for (const r of w) r(new TtsError('io_error', 'playback was aborted'));
    }
    this.release();
  }
  /** With `hold`: abort() makes the held writes reject, as both real sinks do (speaker-sink.ts, system-player.ts). */
  abortRejects = false;
  #failing: ((error: Error) => void)[] = [];
  /** Lets every held write complete. */
  release(): void {
    const w = this.#waiting;
    this.#waiting = [];
    this.#failing = [];
    for (const r of w) r();
  }
  get pending(): number {
    return this.#waiting.length;
  }
  get bytes(): Buffer {
    return Buffer.concat(this.written);
  }
}

/** A sentence's audio: `n` bytes of a value of its own, so where each byte came from shows. */
const audio = (value: number, n = SLICE): Buffer => Buffer.alloc(n, value);

/** Runs pending callbacks until `cond` holds (at most 1000 turns of the event loop). */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await turns(1);
  assert.ok(cond(), `gave up waiting: ${what}`);
}

/** Lets the event loop turn `n` times (pending callbacks run; nothing waits for time). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A player given one sentence of `slices` slices (four unless told), its card holding the first slice's write. */
async function firstSliceHeld(slices = 4): Promise<{ card: FakeCard; player: Player }> {
  const card = new FakeCard();
  card.hold = true;
  const player = new Player(card, SPEC);
  player.pieceStart('One.', true);
  await player.write(audio(1, SLICE * slices));
  await until(() => card.pending === 1, 'the first slice');
  return { card, player };
}

/** Lets {@link firstSliceHeld}'s card take everything, plays to the end, and checks every byte came once. */
async function playsWhole(card: FakeCard, player: Player): Promise<void> {
  card.hold = false;
  card.release();
  player.window.finish();
  await player.finish();
  assert.deepEqual(card.bytes, audio(1, SLICE * 4));
}

/** `q` as the run takes it (interactive.ts, speak/run.ts): the key, then the run's signal aborts the player. */
async function quitAsTheRunDoes(player: Player): Promise<void> {
  player.act('quit');
  await player.abort();
}

/**
 * Plays a sentence into `card`, presses `q` once `pending()` says a write to it waits, and
 * checks the run ends as `q` asks (docs/cli.md §12.2: exit 0): the producer's write rejects with
 * PlayerStopped, and finish() after it (the pipeline's end) resolves.
 */
async function quitWhilePending(card: AudioSink, pending: () => boolean, options: { sliceSeconds?: number; bytes?: number } = {}): Promise<void> {
  const player = new Player(card, SPEC, { sliceSeconds: options.sliceSeconds });
  player.pieceStart('One.', true);
  await player.write(audio(1, options.bytes ?? SLICE * 4));
  await until(pending, 'a write to the card pending');
  await quitAsTheRunDoes(player);
  await assert.rejects(player.write(audio(1)), PlayerStopped);
  await player.finish();
}

/**
 * A speaker class whose writes are never called back until {@link release} (a card that takes
 * nothing): speaker-sink.ts waits in play() meanwhile.
 */
function stalledSpeaker(): { Speaker: SpeakerConstructor; readonly writes: number; release(): void } {
  const callbacks: (() => void)[] = [];
  let writes = 0;
  class Stalled implements SpeakerStream {
    write(_chunk: Buffer, callback: (err?: Error | null) => void): boolean {
      writes++;
      callbacks.push(() => callback());
      return false;
    }
    end(): void {}
    close(): void {}
    destroy(): void {}
    on(): this {
      return this;
    }
  }
  return {
    Speaker: Stalled,
    get writes() {
      return writes;
    },
    release: () => {
      for (const c of callbacks.splice(0)) c();
    },
  };
}

/**
 * A stand-in for aplay (a CommonJS script run by node): plays s16 audio from stdin in real time,
 * 4096 bytes at a time — a read waits until the bytes before it were played (a player that ran
 * dry starts again when audio comes) — and appends each read to the file argv[2]; argv[3] is
 * the bytes per second.
 */
const PACED_PLAYER = `
const { openSync, readSync, writeSync } = require('node:fs');
const out = openSync(process.argv[2], 'a');
const bytesPerMs = Number(process.argv[3]) / 1000;
const buf = Buffer.alloc(4096);
const sleep = new Int32Array(new SharedArrayBuffer(4));
let playedBy = 0;
for (;;) {
  let n;
  try { n = readSync(0, buf); } catch (e) { if (e.code === 'EAGAIN') { Atomics.wait(sleep, 0, 0, 5); continue; } throw e; }
  if (n === 0) break;
  writeSync(out, buf, 0, n);
  playedBy = Math.max(playedBy, performance.now()) + n / bytesPerMs;
  const wait = playedBy - performance.now();
  if (wait > 0) Atomics.wait(sleep, 0, 0, wait);
}
`;

/** Polls `cond` every 20 ms until it holds (a process outside does the work), for at most 20 s. */
async function poll(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(cond(), `gave up waiting: ${what}`);
}

describe('interactive player (docs/cli.md §12.2)', () => {
  it('plays every sentence in order, in slices of at most 50 ms, then finishes the card', async () => {
    const card = new FakeCard();
    const states: PlayerState[] = [];
    const player = new Player(card, SPEC, { onState: (s) => states.push(s) });
    player.pieceStart('One. ', true);
    await player.write(audio(1, 2000));
    player.pieceStart('Two', true);
    await player.write(audio(2, 100));
    player.pieceStart(' continued.', false);
    await player.write(audio(2, 100));
    await player.finish();
    assert.ok(card.finished);
    assert.deepEqual(card.bytes, Buffer.concat([audio(1, 2000), audio(2, 200)]));
    assert.ok(card.written.every((w) => w.length <= SLICE));
    assert.deepEqual(states[0], { sentence: 0, text: 'One. ', paused: false, speed: 1 });
    assert.equal(states.at(-1)?.sentence, 1);
    assert.equal(player.window.sentence(1)?.text, 'Two continued.', 'a piece continuing a sentence is part of it');
  });

  it('follows the word being spoken from the piece’s word timings (bytes counted back from its end)', async () => {
    const card = new FakeCard();
    card.hold = true;
    const states: PlayerState[] = [];
    const player = new Player(card, SPEC, { onState: (s) => states.push(s) });
    // Two pieces of one sentence: 0.2 s each (3200 bytes), a word in each half of each piece.
    player.pieceStart('Hello there. ', true);
    await player.write(audio(1, 3200));
    player.pieceEnd({ start: 1, end: 1.2, text: 'Hello there. ', words: [
      { text: 'Hello', start: 1, end: 1.1, charStart: 0, charEnd: 5 },
      { text: 'there', start: 1.1, end: 1.2, charStart: 6, charEnd: 11 },
    ] });
    player.pieceStart('Bye now.', false);
    await player.write(audio(2, 3200));
    player.pieceEnd({ start: 1.2, end: 1.4, text: 'Bye now.', words: [{ text: 'now', start: 1.3, end: 1.4, charStart: 4, charEnd: 7 }] });
    player.window.finish();
    const words = (): string[] => states.filter((s) => s.word !== undefined).map((s) => s.text.slice(s.word!.charStart, s.word!.charEnd));
    for (let i = 0; i < 8; i++) {
      await until(() => card.pending === 1, 'a slice');
      card.release();
    }
    card.hold = false;
    await player.finish();
    assert.deepEqual(words(), ['Hello', 'there', 'now']);
    assert.equal(player.window.sentence(0)?.words[2]?.startByte, 4800, 'the second piece’s word, 0.1 s into it, 0.3 s into the sentence');
  });

  it('pause stops writing to the card; space again resumes where it stopped', async () => {
    const { card, player } = await firstSliceHeld();
    player.act('pause');
    card.release();
    // Bytes stop: however long we let the loop run, nothing more is written.
    await turns(50);
    assert.equal(card.written.length, 1);
    assert.equal(player.state.paused, true);
    player.act('pause');
    await until(() => card.pending === 1 && card.written.length === 2, 'resumed');
    await playsWhole(card, player);
  });

  it('hold (Ctrl-Z) resolves once the slice in flight was written, then writes nothing until release; a pause the user made stays', async () => {
    const { card, player } = await firstSliceHeld();
    let rested = false;
    const held = player.hold().then(() => (rested = true));
    await turns(20);
    assert.equal(rested, false, 'not while a slice is being written');
    card.release();
    await held;
    await turns(50);
    assert.equal(card.written.length, 1, 'nothing written while held');
    assert.equal(player.state.paused, false, 'held is not the user’s pause');
    player.act('pause');
    player.release();
    await turns(50);
    assert.equal(card.written.length, 1, 'released, but paused by the user');
    await player.hold();
    player.act('pause');
    await turns(50);
    assert.equal(card.written.length, 1, 'unpaused, but held');
    player.release();
    await until(() => card.pending === 1 && card.written.length === 2, 'released');
    await playsWhole(card, player);
    await player.hold(); // after the end: at once
  });

  it('→ jumps to the next sentence’s first byte, waiting for it when it has not arrived', async () => {
    const card = new FakeCard();
    const player = new Player(card, SPEC);
    player.pieceStart('One.', true);
    await player.write(audio(1));
    await until(() => card.written.length === 1, 'the first slice');
    player.act('next');
    await player.write(audio(1)); // the rest of sentence 1, skipped
    player.pieceStart('Two.', true);
    await player.write(audio(2));
    await player.finish();
    assert.deepEqual(card.bytes, Buffer.concat([audio(1), audio(2)]));
  });

  it('← replays the previous sentence’s very bytes from memory; r repeats the current one', async () => {
    const card = new FakeCard();
    card.hold = true;
    const player = new Player(card, SPEC);
    const one = Buffer.concat([audio(1), audio(11)]);
    const two = Buffer.concat([audio(2), audio(22)]);
    player.pieceStart('One.', true);
    await player.write(one);
    player.pieceStart('Two.', true);
    await player.write(two);
    player.window.finish();
    while (card.written.length < 3) {
      await until(() => card.pending === 1, 'a slice written');
      if (card.written.length < 3) card.release();
    }
    player.act('previous'); // in sentence two: back to one
    card.hold = false;
    card.release();
    await player.finish();
    // one, the first slice of two, then one again whole and two whole.
    assert.deepEqual(card.bytes, Buffer.concat([one, audio(2), one, two]));

    const card2 = new FakeCard();
    card2.hold = true;
    const p2 = new Player(card2, SPEC);
    p2.pieceStart('One.', true);
    await p2.write(one);
    p2.window.finish();
    await until(() => card2.pending === 1, 'the first slice');
    card2.release();
    await until(() => card2.pending === 1 && card2.written.length === 2, 'the second slice');
    p2.act('repeat');
    card2.hold = false;
    card2.release();
    await p2.finish();
    assert.deepEqual(card2.bytes, Buffer.concat([one, one]));
  });

  it('↑ / ↓ change the tempo by 0.1 (Sonic, pitch kept): 1.5 makes a sentence about a third shorter', async () => {
    const card = new FakeCard();
    const player = new Player(card, SPEC);
    for (let i = 0; i < 5; i++) player.act('faster');
    player.act('slower');
    for (let i = 0; i < 2; i++) player.act('faster');
    assert.equal(player.state.speed, 1.6);
    player.act('slower');
    assert.equal(player.state.speed, 1.5);
    // One second of a 200 Hz tone.
    const tone = Buffer.alloc(16000);
    for (let i = 0; i < 8000; i++) tone.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 200 * i) / 8000)), i * 2);
    player.pieceStart('Tone.', true);
    await player.write(tone);
    await player.finish();
    const ratio = card.bytes.length / tone.length;
    assert.ok(Math.abs(ratio - 1 / 1.5) < 0.03, `output/input = ${ratio}`);
    for (let i = 0; i < 40; i++) player.act('slower');
    assert.equal(player.state.speed, 0.5, 'no slower than --speed allows');
  });

  it('q stops: the producer’s next write throws PlayerStopped, finish() stops the card without error', async () => {
    const { card, player } = await firstSliceHeld(3);
    player.act('quit');
    await assert.rejects(player.write(audio(1)), PlayerStopped);
    card.release();
    await player.finish();
    assert.ok(card.aborted && !card.finished);
  });

  it('q while the card’s write is pending, which the card’s abort fails (as speaker and a system player do): still PlayerStopped, never “playback was aborted”', async () => {
    const { card, player } = await firstSliceHeld(3);
    card.abortRejects = true;
    await quitAsTheRunDoes(player);
    // The producer sees how the run ended (exit 0), and the run's catch aborts the player again.
    await assert.rejects(player.write(audio(1)), PlayerStopped);
    await player.finish();
    await player.abort();
    assert.ok(card.aborted && !card.finished);
  });

  it('q while a write to the real speaker sink is pending (the card took nothing yet): PlayerStopped', async () => {
    const speaker = stalledSpeaker();
    const card = await openSpeakerSink(SPEC, { load: async () => speaker.Speaker });
    await quitWhilePending(card, () => speaker.writes > 0);
    speaker.release();
  });

  it('q while a write to a system player is pending (its pipe full: the player reads nothing): PlayerStopped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-player-'));
    try {
      const path = join(dir, 'aplay');
      await writeFile(path, '#!/bin/sh\nexec sleep 1000\n');
      await chmod(path, 0o755);
      const card = await openSystemPlayerSink(SPEC, { name: 'aplay', args: () => [], from: 'a test' }, path);
      // 20 s of 8 kHz audio (320 KB) in slices of 5 s: the first slice (80 KB) fills the pipe
      // (64 KiB) and Node's buffer (16 KiB), so its write stays pending.
      let pending = false;
      const watched: AudioSink = {
        write: async (chunk) => {
          pending = true;
          await card.write(chunk);
          pending = false;
        },
        finish: () => card.finish(),
        abort: () => card.abort(),
      };
      await quitWhilePending(watched, () => pending, { sliceSeconds: 5, bytes: SLICE * 400 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('pause with a system player: at most 0.5 s of audio reaches it after the pause, though its pipe would hold seconds; every byte once, in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-player-'));
    let player: Player | undefined;
    try {
      const heard = join(dir, 'heard.raw');
      const script = join(dir, 'aplay.cjs');
      await writeFile(script, PACED_PLAYER);
      const spec: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };
      const bytesPerSecond = 48000;
      const sink = await openSystemPlayerSink(spec, { name: 'aplay', args: () => [script, heard, String(bytesPerSecond)], from: 'a test' }, process.execPath);
      // What the player was handed: the bytes of the writes that resolved (pcm16 goes as it is).
      let handed = 0;
      const counted: AudioSink = {
        write: async (chunk) => {
          await sink.write(chunk);
          handed += chunk.length;
        },
        finish: () => sink.finish(),
        abort: () => sink.abort(),
        limitLead: (seconds) => sink.limitLead?.(seconds),
      };
      player = new Player(counted, spec);
      // 5 s of audio, every byte telling where it is (mod 251).
      const sound = Buffer.alloc(5 * bytesPerSecond);
      for (let i = 0; i < sound.length; i++) sound[i] = i % 251;
      player.pieceStart('One.', true);
      await player.write(sound);
      const size = (): number => statSync(heard, { throwIfNoEntry: false })?.size ?? 0;
      await poll(() => size() >= bytesPerSecond, 'a second played');
      player.act('pause');
      const atPause = size();
      // The slice in flight was handed to the player; then nothing more is written.
      await player.hold();
      const written = handed;
      await poll(() => size() === written, 'the player to take what it was handed');
      const after = written - atPause;
      assert.ok(after <= 0.5 * bytesPerSecond, `${after} bytes (${(after / bytesPerSecond).toFixed(2)} s) reached the player after the pause`);
      assert.deepEqual(await readFile(heard), sound.subarray(0, written), 'every byte once, in order');
    } finally {
      // Also on a failure: the player process would keep the test alive.
      await player?.abort();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('abort (Ctrl-C, a failure elsewhere) stops the card, and a finish() after it is no success', async () => {
    const card = new FakeCard();
    const player = new Player(card, SPEC);
    player.pieceStart('One.', true);
    player.act('pause');
    await player.write(audio(1));
    await player.abort();
    assert.ok(card.aborted);
    await assert.rejects(player.finish(), /aborted/);
  });

  it('a card that fails fails the producer’s writes and finish() with its error', async () => {
    const card = new FakeCard();
    card.write = async () => {
      throw new Error('device gone');
    };
    const player = new Player(card, SPEC);
    player.pieceStart('One.', true);
    await player.write(audio(1));
    await assert.rejects(player.finish(), /device gone/);
  });
});
