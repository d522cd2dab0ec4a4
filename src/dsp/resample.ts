/**
 * Streaming sample-rate conversion (docs/cli.md §2 `-r`) with libsamplerate — Secret Rabbit Code,
 * in WebAssembly (src/dsp/libsamplerate.ts).
 *
 * Its "full" API (`src_process`) keeps the filter state between calls, so a stream converted
 * chunk by chunk sounds as one converted at once; its "simple" API (`src_simple`) starts afresh
 * on every call and would click at every chunk boundary, so it is not used. The full API is used
 * without its end-of-input flag and holds back the sinc filter's delay, so {@link StreamResampler.end} feeds
 * silence (50 ms at a time) and trims: a segment of n input frames gives exactly
 * round(n × to / from) output frames, the length a one-shot conversion has.
 */
import { SampleRateConverter } from './libsamplerate.js';

/** One libsamplerate converter (src/dsp/libsamplerate.ts). */
export type Converter = SampleRateConverter;

/**
 * A new streaming converter of interleaved float samples from `fromRate` to `toRate` Hz (sinc,
 * medium quality: libsamplerate's 90 % bandwidth, 121 dB SNR); the one maker of converters
 * (the client's conversion, the engine's output, the Opus encoder). The thread's first call
 * loads the WebAssembly (~2 ms).
 * @throws RangeError for channels, rates or a ratio beyond 1/256 … 256 that
 *   {@link SampleRateConverter.create} refuses; TtsError `internal` when libsamplerate's
 *   WebAssembly cannot be loaded; Error when libsamplerate refuses or runs out of memory.
 */
export function newConverter(channels: number, fromRate: number, toRate: number): Promise<Converter> {
  return SampleRateConverter.create(channels, fromRate, toRate);
}

/** Highest sample rate tts converts to or from, in Hz. */
export const MAX_RESAMPLE_RATE = 192_000;

/**
 * Idle converters by `channels:from:to`, the shape parked last at the end: making one costs well
 * under a millisecond once the thread's WebAssembly is loaded, but its first conversions are slow.
 */
const idle = new Map<string, Converter[]>();
/** Warm-ups under way, by the same key. */
const warming = new Map<string, Promise<void>>();
const MAX_IDLE_PER_KEY = 4;
/**
 * Idle converters kept in all (~0.25 MiB of WebAssembly memory each): a batch that asks for many
 * rates (found by review: 120 rates left 120 parked, 20 MiB) keeps those of the shapes used last.
 */
const MAX_IDLE = 8;

/** Silence fed per round to drain the filter at the end of a segment, in seconds of input. */
const FLUSH_SECONDS = 0.05;

/**
 * Prepares a converter of this shape ahead of the audio: loads libsamplerate (~2 ms) and runs its
 * first conversions, which are several times slower than later ones (until V8 has optimized the
 * code), on silence — so the first real chunk does not wait for any of it. The converter is
 * then left idle for {@link StreamResampler.create}, which waits for a warm-up under way rather
 * than making a second converter. Idempotent per shape; never rejects.
 */
export function warmUpResampler(channels: number, fromRate: number, toRate: number): Promise<void> {
  const k = key(channels, fromRate, toRate);
  let warm = warming.get(k);
  if (warm === undefined) {
    warm = (async () => {
      try {
        const converter = await newConverter(channels, fromRate, toRate);
        const silence = new Float32Array(Math.round(fromRate / 10) * channels);
        for (let i = 0; i < WARM_UP_CALLS; i++) converter.process(silence);
        park(k, converter);
      } catch {
        // The real conversion reports the problem.
      }
    })();
    warming.set(k, warm);
  }
  return warm;
}

/** Conversions of 100 ms of silence that bring libsamplerate's code up to speed. */
const WARM_UP_CALLS = 3;

/**
 * Converts interleaved float frames from one rate to another as they come, in segments: each
 * {@link end} completes a segment (a piece of speech) with its exact length and makes the
 * converter ready for the next, with no filter memory carried over.
 */
export class StreamResampler {
  /** Input frames of the current segment. */
  #inFrames = 0;
  /** Output frames handed out in the current segment. */
  #outFrames = 0;
  readonly #held: Float32Array[] = [];
  #heldFrames = 0;
  #converter: Converter | undefined;

  private constructor(
    readonly channels: number,
    readonly fromRate: number,
    readonly toRate: number,
    converter: Converter,
  ) {
    this.#converter = converter;
  }

  /**
   * A resampler for `channels` interleaved channels (sinc, medium quality), reusing an idle
   * converter of the same shape when there is one.
   * @throws RangeError for a rate outside 1 … {@link MAX_RESAMPLE_RATE} Hz, channels outside 1 … 128,
   *   or rates more than 256 times apart; what {@link newConverter} throws.
   */
  static async create(channels: number, fromRate: number, toRate: number): Promise<StreamResampler> {
    for (const rate of [fromRate, toRate]) {
      if (!Number.isInteger(rate) || rate < 1 || rate > MAX_RESAMPLE_RATE) throw new RangeError(`sample rate must be 1 … ${MAX_RESAMPLE_RATE} Hz, got ${rate}`);
    }
    if (!Number.isInteger(channels) || channels < 1 || channels > 128) throw new RangeError(`channels must be 1 … 128, got ${channels}`);
    await warming.get(key(channels, fromRate, toRate));
    const k = key(channels, fromRate, toRate);
    const parked = idle.get(k);
    const reused = parked?.pop();
    if (parked?.length === 0) idle.delete(k);
    if (reused !== undefined) {
      // Parked converters are reset already (park): no filter memory of earlier audio.
      return new StreamResampler(channels, fromRate, toRate, reused);
    }
    return new StreamResampler(channels, fromRate, toRate, await newConverter(channels, fromRate, toRate));
  }

  /** Output frames the segment's input so far is worth: round(inFrames × to / from). */
  #target(): number {
    return Math.round((this.#inFrames * this.toRate) / this.fromRate);
  }

  /**
   * Takes interleaved input frames; returns the output frames ready now (possibly none: the
   * filter lags its input by a few dozen frames), never more than the segment's exact total.
   * @param samples interleaved, a whole number of frames.
   */
  push(samples: Float32Array): Float32Array {
    const converter = this.#live();
    const frames = Math.floor(samples.length / this.channels);
    if (frames === 0) return new Float32Array(0);
    this.#inFrames += frames;
    this.#hold(converter.process(samples.length === frames * this.channels ? samples : samples.subarray(0, frames * this.channels)));
    return this.#take(Math.min(this.#heldFrames, this.#target() - this.#outFrames));
  }

  /**
   * Ends the segment: drains the filter with silence and returns the rest, so the segment's
   * output is exactly round(inFrames × to / from) frames. The resampler then starts afresh.
   */
  end(): Float32Array {
    const converter = this.#live();
    const target = this.#target();
    const zeros = new Float32Array(Math.max(1, Math.round(this.fromRate * FLUSH_SECONDS)) * this.channels);
    // The filter's delay is far under 50 ms; the bound only stops a misbehaving converter from looping.
    for (let round = 0; round < 40 && this.#outFrames + this.#heldFrames < target; round++) this.#hold(converter.process(zeros));
    // Only if the converter gave too little: pad with silence, so the length stays exact.
    const short = target - this.#outFrames - this.#heldFrames;
    if (short > 0) this.#hold(new Float32Array(short * this.channels));
    const out = this.#take(target - this.#outFrames);
    this.reset();
    return out;
  }

  /** Drops the current segment (held output, filter memory): the next push starts a new one. */
  reset(): void {
    this.#live().reset();
    this.#held.length = 0;
    this.#heldFrames = 0;
    this.#inFrames = 0;
    this.#outFrames = 0;
  }

  /** Gives the converter back for reuse; the resampler is unusable afterwards. Safe to call twice. */
  destroy(): void {
    const converter = this.#converter;
    this.#converter = undefined;
    if (converter === undefined || converter.isDestroyed) return;
    park(key(this.channels, this.fromRate, this.toRate), converter);
  }

  #live(): Converter {
    if (this.#converter === undefined) throw new Error('StreamResampler used after destroy()');
    return this.#converter;
  }

  #hold(block: Float32Array): void {
    if (block.length === 0) return;
    this.#held.push(block);
    this.#heldFrames += block.length / this.channels;
  }

  /** Removes and returns the first `frames` held frames (0 or more). */
  #take(frames: number): Float32Array {
    const n = Math.max(0, frames) * this.channels;
    const out = new Float32Array(n);
    let filled = 0;
    while (filled < n) {
      const head = this.#held[0]!;
      const need = n - filled;
      if (head.length <= need) {
        out.set(head, filled);
        filled += head.length;
        this.#held.shift();
      } else {
        out.set(head.subarray(0, need), filled);
        this.#held[0] = head.subarray(need);
        filled = n;
      }
    }
    this.#heldFrames -= Math.max(0, frames);
    this.#outFrames += Math.max(0, frames);
    return out;
  }
}

/**
 * Leaves a converter idle for reuse, its state reset, or destroys it when its shape has enough idle;
 * past {@link MAX_IDLE} in all, destroys those of the shapes parked longest ago.
 */
function park(k: string, converter: Converter): void {
  const list = idle.get(k) ?? [];
  if (list.length >= MAX_IDLE_PER_KEY) {
    converter.destroy();
    return;
  }
  converter.reset();
  list.push(converter);
  // Last in the map's order: the shape parked most recently.
  idle.delete(k);
  idle.set(k, list);
  let over = [...idle.values()].reduce((n, parked) => n + parked.length, 0) - MAX_IDLE;
  for (const [oldest, converters] of idle) {
    if (over <= 0) break;
    while (converters.length > 0 && over > 0) {
      converters.shift()!.destroy();
      over--;
    }
    if (converters.length === 0) idle.delete(oldest);
  }
}

function key(channels: number, fromRate: number, toRate: number): string {
  return `${channels}:${fromRate}:${toRate}`;
}
