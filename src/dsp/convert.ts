/**
 * What the service sends → what the user asked for (docs/cli.md §2 `-r`, `-c`, `--format`):
 * bytes of one {@link AudioSpec} in, bytes of another out, chunk by chunk. Channels are mixed
 * where it costs least (down before resampling, up after it), the rate is converted by
 * libsamplerate (resample.ts), and the result is encoded once.
 */
import { TtsError } from '../errors.js';
import { bytesPerSample, decodeToFloat, encodeFloat } from './encoding.js';
import { StreamResampler } from './resample.js';
import { mixChannels } from './mix.js';
import { bytesPerFrame, type AudioSpec } from './spec.js';

/** True when two specs describe the same bytes (nothing to convert). */
export function sameSpec(a: AudioSpec, b: AudioSpec): boolean {
  return a.format === b.format && a.sampleRate === b.sampleRate && a.channels === b.channels;
}

/**
 * Converts one stream of audio (one request's audio) from `from` to `to`.
 * Call {@link push} with each chunk as it arrives, {@link end} once at the stream's end, then
 * {@link destroy}. Every Buffer returned is a whole number of `to` frames.
 */
export class SpecConverter {
  /** Bytes of an incomplete `from` frame, kept for the next chunk. */
  #rest: Buffer = Buffer.alloc(0);
  /** Input bytes taken so far (for the whole-frames check at the end). */
  #inBytes = 0;
  readonly #work: number;

  private constructor(
    readonly from: AudioSpec,
    readonly to: AudioSpec,
    private readonly resampler: StreamResampler | undefined,
  ) {
    this.#work = Math.min(from.channels, to.channels);
  }

  /**
   * A converter from `from` to `to`; the rate converter is made (or reused) now, so the first
   * chunk does not wait for it.
   * @throws RangeError for rates or channels libsamplerate cannot take, rates more than 256 times
   *   apart among them (resample.ts); what StreamResampler.create throws (a libsamplerate that
   *   cannot load).
   */
  static async create(from: AudioSpec, to: AudioSpec): Promise<SpecConverter> {
    const work = Math.min(from.channels, to.channels);
    const resampler = from.sampleRate === to.sampleRate ? undefined : await StreamResampler.create(work, from.sampleRate, to.sampleRate);
    return new SpecConverter(from, to, resampler);
  }

  /**
   * Takes a chunk of `from` bytes (any length: an incomplete frame waits for the next chunk).
   * @returns `to` bytes ready now (possibly empty).
   */
  push(chunk: Buffer): Buffer {
    this.#inBytes += chunk.length;
    const frame = bytesPerFrame(this.from);
    const all = this.#rest.length === 0 ? chunk : Buffer.concat([this.#rest, chunk]);
    const whole = all.length - (all.length % frame);
    this.#rest = Buffer.from(all.subarray(whole));
    if (whole === 0) return Buffer.alloc(0);
    return this.#convert(decodeToFloat(all.subarray(0, whole), this.from.format));
  }

  /**
   * Ends the stream: the rate converter's last frames, so the whole is exactly
   * round(frames × to.rate / from.rate) frames.
   * @throws TtsError `protocol_error` (exit 6) when the stream did not end on a whole sample of
   *   `from` — never a misaligned file (docs/cli.md §2).
   */
  end(): Buffer {
    if (this.#rest.length > 0) {
      const unit = this.from.channels === 1 ? bytesPerSample(this.from.format) : bytesPerFrame(this.from);
      throw new TtsError('protocol_error', `the service sent ${this.#inBytes} bytes of audio for a piece, not a whole number of ${unit}-byte samples`, {
        hint: 'the service broke the protocol; try again or report it',
      });
    }
    if (this.resampler === undefined) return Buffer.alloc(0);
    return this.#encode(this.resampler.end());
  }

  /** Releases the rate converter. Safe to call twice. */
  destroy(): void {
    this.resampler?.destroy();
  }

  #convert(samples: Float32Array): Buffer {
    const mixed = mixChannels(samples, this.from.channels, this.#work);
    return this.#encode(this.resampler === undefined ? mixed : this.resampler.push(mixed));
  }

  #encode(samples: Float32Array): Buffer {
    if (samples.length === 0) return Buffer.alloc(0);
    return encodeFloat(mixChannels(samples, this.#work, this.to.channels), this.to.format);
  }
}
