/**
 * The speech controls that run on the client, so they work with any service (docs/cli.md §1
 * `--speed`, `--volume`): bytes of the output spec in, bytes of the same spec out, chunk by
 * chunk, in pieces (a piece = one request's audio; its end flushes the tempo changer).
 */
import { decodeToFloat, encodeFloat } from './encoding.js';
import { bytesPerFrame, type AudioSpec } from './spec.js';
import { Tempo } from './tempo.js';

/** Above this magnitude the limiter bends peaks down smoothly toward full scale. */
const LIMIT_KNEE = 0.9;

/**
 * Multiplies by `gain` and limits peaks in place: magnitudes up to {@link LIMIT_KNEE} pass
 * unchanged; above it they approach full scale (1) along a tanh curve, continuous and with slope
 * 1 at the knee, so a loud peak is rounded off — never wrapped around, and never a hard corner.
 * @param samples floats, modified in place.
 */
export function applyGain(samples: Float32Array, gain: number): void {
  const room = 1 - LIMIT_KNEE;
  for (let i = 0; i < samples.length; i++) {
    const x = samples[i]! * gain;
    const m = Math.abs(x);
    if (m <= LIMIT_KNEE) samples[i] = x;
    else samples[i] = Math.sign(x) * (LIMIT_KNEE + room * Math.tanh((m - LIMIT_KNEE) / room));
  }
}

/** What to do to the audio; the defaults change nothing. */
export interface EffectSettings {
  /** Tempo factor, pitch kept: 0.5 … 3, 1 = unchanged. */
  speed: number;
  /** Linear gain: above 0 … 4, 1 = unchanged. */
  volume: number;
}

/** True when the settings change nothing (the audio can pass untouched). */
export function isNeutral(settings: EffectSettings): boolean {
  return settings.speed === 1 && settings.volume === 1;
}

/**
 * Applies {@link EffectSettings} to a stream of encoded audio of one spec. Call {@link push} per
 * chunk, {@link endPiece} after each piece's last chunk, {@link reset} to drop a piece being
 * redone, and {@link destroy} at the end. Returned Buffers are whole frames of `spec`.
 */
export class EffectChain {
  /** Bytes of an incomplete frame, kept for the next chunk. */
  #rest: Buffer = Buffer.alloc(0);

  private constructor(
    readonly spec: AudioSpec,
    readonly settings: EffectSettings,
    private readonly tempo: Tempo | undefined,
  ) {}

  /**
   * An effect chain for audio of `spec`; Sonic is loaded now when the speed changes.
   * @param speedRange slowest and fastest speed allowed (default: the CLI's, tempo.ts).
   * @throws RangeError for a speed outside it (tempo.ts).
   */
  static async create(spec: AudioSpec, settings: EffectSettings, speedRange?: readonly [number, number]): Promise<EffectChain> {
    const tempo = settings.speed === 1 ? undefined : await Tempo.create(spec.sampleRate, spec.channels, settings.speed, speedRange);
    return new EffectChain(spec, settings, tempo);
  }

  /** Takes a chunk of `spec` bytes (an incomplete frame waits); returns bytes ready now. */
  push(chunk: Buffer): Buffer {
    const frame = bytesPerFrame(this.spec);
    const all = this.#rest.length === 0 ? chunk : Buffer.concat([this.#rest, chunk]);
    const whole = all.length - (all.length % frame);
    this.#rest = Buffer.from(all.subarray(whole));
    if (whole === 0) return Buffer.alloc(0);
    const samples = decodeToFloat(all.subarray(0, whole), this.spec.format);
    return this.#finish(this.tempo === undefined ? samples : this.tempo.push(samples));
  }

  /** Ends a piece: what the tempo changer still holds. */
  endPiece(): Buffer {
    this.#rest = Buffer.alloc(0);
    return this.tempo === undefined ? Buffer.alloc(0) : this.#finish(this.tempo.end());
  }

  /** Drops everything of the current piece (it is being requested again). */
  reset(): void {
    this.#rest = Buffer.alloc(0);
    this.tempo?.reset();
  }

  /** Frees the tempo changer. */
  destroy(): void {
    this.tempo?.destroy();
  }

  #finish(samples: Float32Array): Buffer {
    if (samples.length === 0) return Buffer.alloc(0);
    if (this.settings.volume !== 1) applyGain(samples, this.settings.volume);
    return encodeFloat(samples, this.spec.format);
  }
}
