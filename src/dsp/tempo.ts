/**
 * Speech tempo with the pitch kept (docs/cli.md §1 `--speed`), streamed: Sonic (Bill Cox's
 * pitch-synchronous time-stretcher, made for speech; Apache-2.0), compiled to WebAssembly by
 * `@echogarden/sonic-wasm`. Rubber Band would also do, but its npm builds are GPL-2.0-only,
 * which GPL-3.0-or-later cannot take in.
 *
 * Sonic holds back a few tens of milliseconds (it needs two pitch periods ahead);
 * {@link Tempo.end} flushes it at the end of each piece of speech, so nothing is lost and the
 * next piece starts clean. A segment of n frames comes out as about n / speed frames (Sonic's own
 * rounding, within a few milliseconds).
 */
import type { SonicModule } from '@echogarden/sonic-wasm';

/** Slowest and fastest tempo offered (docs/cli.md §1 `--speed`). */
export const SPEED_MIN = 0.5;
export const SPEED_MAX = 3;

let loading: Promise<SonicModule> | undefined;

/** The one Sonic module of the process (compiled on first use, ~10 ms); streams share it. */
export function loadSonic(): Promise<SonicModule> {
  loading ??= import('@echogarden/sonic-wasm').then((m) => m.default());
  return loading;
}

/** Frames moved through the WebAssembly heap per call. */
const BLOCK_FRAMES = 4096;

/**
 * Sonic is always fed exactly this many frames per write (the rest of a piece at its end).
 * Sonic's output depends on how its input is split into writes (it processes whatever is
 * buffered at each write), so feeding it as the chunks arrive made the bytes depend on the
 * delta sizes, and a cached rerun (one chunk per piece) differed from the first run
 * (docs/cli.md §8). Fixed blocks make the output a function of the piece's samples alone.
 * 1024 frames: 43 ms at 24 kHz, 21 ms at 48 kHz of added latency at most.
 */
export const FEED_FRAMES = 1024;

/** A tempo changer for interleaved float frames of one rate and channel count. */
export class Tempo {
  #stream: number;
  /** Heap buffer of {@link BLOCK_FRAMES} frames, for input and output alike. */
  readonly #buffer: number;
  /** Frames waiting for a whole {@link FEED_FRAMES} block (interleaved floats). */
  readonly #pending: Float32Array;
  /** Floats used in {@link #pending}. */
  #pendingLength = 0;

  private constructor(
    private readonly sonic: SonicModule,
    readonly sampleRate: number,
    readonly channels: number,
    readonly speed: number,
  ) {
    this.#stream = this.#open();
    this.#buffer = sonic._malloc(BLOCK_FRAMES * channels * 4);
    if (this.#buffer === 0) throw new RangeError('Sonic: out of memory');
    this.#pending = new Float32Array(FEED_FRAMES * channels);
  }

  /**
   * A tempo changer (`speed` 2 = twice as fast).
   * @param range slowest and fastest speed allowed: the CLI's {@link SPEED_MIN} … {@link SPEED_MAX}
   *   unless given (the service's OpenAI route allows OpenAI's 0.25 … 4, docs/protocol.md §10.1).
   * @throws RangeError for a speed outside `range`, or when Sonic cannot allocate its stream.
   */
  static async create(sampleRate: number, channels: number, speed: number, range: readonly [number, number] = [SPEED_MIN, SPEED_MAX]): Promise<Tempo> {
    const [min, max] = range;
    if (!(speed >= min && speed <= max)) throw new RangeError(`speed must be ${min} … ${max}, got ${speed}`);
    return new Tempo(await loadSonic(), sampleRate, channels, speed);
  }

  #open(): number {
    const stream = this.sonic._sonicCreateStream(this.sampleRate, this.channels);
    if (stream === 0) throw new RangeError('Sonic: out of memory');
    this.sonic._sonicSetSpeed(stream, this.speed);
    return stream;
  }

  /**
   * Takes interleaved frames; returns the frames ready now (possibly none). The output depends
   * only on the piece's samples, not on how they are split into calls ({@link FEED_FRAMES}).
   * @param samples interleaved floats, a whole number of frames.
   * @throws RangeError when Sonic runs out of memory.
   */
  push(samples: Float32Array): Float32Array {
    const out: Float32Array[] = [];
    const block = this.#pending.length;
    for (let at = 0; at < samples.length; ) {
      const n = Math.min(block - this.#pendingLength, samples.length - at);
      this.#pending.set(samples.subarray(at, at + n), this.#pendingLength);
      this.#pendingLength += n;
      at += n;
      if (this.#pendingLength === block) this.#write(out);
    }
    return join(out, this.channels);
  }

  /** Writes the pending frames to Sonic and drains what it gives back into `out`. */
  #write(out: Float32Array[]): void {
    if (this.#pendingLength === 0) return;
    this.sonic.HEAPF32.set(this.#pending.subarray(0, this.#pendingLength), this.#buffer >> 2);
    const frames = this.#pendingLength / this.channels;
    this.#pendingLength = 0;
    if (this.sonic._sonicWriteFloatToStream(this.#stream, this.#buffer, frames) === 0) throw new RangeError('Sonic: out of memory');
    this.#drain(out);
  }

  /** Ends a piece of speech: everything Sonic still holds, then a clean start for the next. */
  end(): Float32Array {
    const out: Float32Array[] = [];
    this.#write(out);
    if (this.sonic._sonicFlushStream(this.#stream) === 0) throw new RangeError('Sonic: out of memory');
    this.#drain(out);
    this.reset();
    return join(out, this.channels);
  }

  /** Drops what Sonic holds (for a piece that is requested again). */
  reset(): void {
    this.#pendingLength = 0;
    this.sonic._sonicDestroyStream(this.#stream);
    this.#stream = this.#open();
  }

  /** Frees the WebAssembly memory; the tempo changer is unusable afterwards. */
  destroy(): void {
    if (this.#stream === 0) return;
    this.sonic._sonicDestroyStream(this.#stream);
    this.sonic._free(this.#buffer);
    this.#stream = 0;
  }

  #drain(out: Float32Array[]): void {
    // Bounded: every read takes frames out of Sonic, which holds a finite number.
    for (;;) {
      const frames = this.sonic._sonicReadFloatFromStream(this.#stream, this.#buffer, BLOCK_FRAMES);
      if (frames <= 0) return;
      const at = this.#buffer >> 2;
      out.push(this.sonic.HEAPF32.slice(at, at + frames * this.channels));
    }
  }
}

function join(blocks: Float32Array[], channels: number): Float32Array {
  if (blocks.length === 1) return blocks[0]!;
  const total = blocks.reduce((n, b) => n + b.length, 0);
  const out = new Float32Array(total - (total % channels));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}
