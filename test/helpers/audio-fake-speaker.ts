/**
 * A stand-in for speaker's class, for unit tests of the speaker sink: it takes each piece in
 * real time (like a 0.5 s ALSA buffer that is full), records what it got, and checks the two
 * rules the sink must keep: whole frames only, and never close() while a write is in flight.
 */
import { EventEmitter } from 'node:events';
import type { SpeakerConstructor, SpeakerOptions, SpeakerStream } from '../../src/audio/speaker-sink.js';

/** What a fake speaker saw; shared with the test through {@link fakeSpeaker}. */
export interface FakeLog {
  options?: SpeakerOptions;
  pieces: Buffer[];
  opened: boolean;
  /** close(flush) calls, in order. */
  closes: boolean[];
  ended: boolean;
  /** Violations of the rules (empty when the sink behaves). */
  violations: string[];
}

/** Knobs of the fake. */
export interface FakeBehaviour {
  /** Milliseconds a write takes per second of audio (1000 = real time, 0 = instant). */
  msPerSecond?: number;
  /** _open() throws this. */
  openError?: Error;
  /** The n-th write (0-based) fails like a rejected native write: 'error' and no callback. */
  failWrite?: number;
  /** Milliseconds between end() and 'close' (the drain). */
  drainMs?: number;
}

/** Returns a Speaker class and the log it fills. */
export function fakeSpeaker(behaviour: FakeBehaviour = {}): { Speaker: SpeakerConstructor; log: FakeLog } {
  const log: FakeLog = { pieces: [], opened: false, closes: [], ended: false, violations: [] };
  class FakeSpeaker extends EventEmitter implements SpeakerStream {
    private busy = false;
    private closed = false;
    private writes = 0;

    constructor(options: SpeakerOptions) {
      super();
      log.options = options;
    }

    _open(): void {
      if (behaviour.openError) throw behaviour.openError;
      log.opened = true;
    }

    write(chunk: Buffer, callback: (err?: Error | null) => void): boolean {
      const o = log.options!;
      const frame = o.channels * 2;
      if (this.closed) log.violations.push('write after close');
      if (this.busy) log.violations.push('write while a write is in flight');
      if (chunk.length % frame !== 0) log.violations.push(`piece of ${chunk.length} bytes is not whole frames`);
      if (chunk.length > o.samplesPerFrame * frame) log.violations.push(`piece of ${chunk.length} bytes exceeds samplesPerFrame`);
      log.pieces.push(Buffer.from(chunk));
      const n = this.writes++;
      this.busy = true;
      const ms = ((behaviour.msPerSecond ?? 0) * chunk.length) / frame / o.sampleRate;
      setTimeout(() => {
        this.busy = false;
        if (n === behaviour.failWrite) this.emit('error', new Error('write() failed: -1'));
        else callback();
      }, ms);
      return false;
    }

    end(): void {
      log.ended = true;
      setTimeout(() => this.close(false), behaviour.drainMs ?? 0);
    }

    close(flush: boolean): void {
      if (this.busy) log.violations.push('close while a write is in flight');
      if (this.closed) return;
      this.closed = true;
      log.closes.push(flush);
      this.emit('close');
    }

    destroy(): void {
      this.closed = true;
    }
  }
  return { Speaker: FakeSpeaker, log };
}
