/**
 * The encoders' input side: the spec's PCM bytes (pcm16, float32 or µ-law, interleaved;
 * docs/cli.md §2) cut into whole sample frames and turned into the sample forms the encoder
 * libraries take — Float32 channel planes (LAME), Float32 interleaved (libopus) or Int32
 * interleaved at 16 or 24 bits (libFLAC). Decoding follows src/dsp/encoding.ts.
 */
import { clip, decodeToFloat, toPcm16Bytes } from '../../dsp/encoding.js';
import { bytesPerFrame, type AudioSpec } from '../../dsp/spec.js';

/**
 * Cuts a stream of byte chunks into whole sample frames: the bytes of a frame split across two
 * chunks are kept (at most one frame less one byte) until the next chunk completes them.
 */
export class FrameAligner {
  readonly frameBytes: number;
  private rest: Buffer = Buffer.alloc(0);

  /** @param spec the encoding and channels that set the frame size (bytesPerFrame). */
  constructor(spec: AudioSpec) {
    this.frameBytes = bytesPerFrame(spec);
  }

  /**
   * @returns the whole frames now available (the kept bytes of the last call first), as a Buffer
   *   whose length is a multiple of `frameBytes`, possibly empty. The input is not modified.
   */
  take(chunk: Buffer): Buffer {
    const all = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    const whole = all.length - (all.length % this.frameBytes);
    this.rest = Buffer.from(all.subarray(whole));
    return all.subarray(0, whole);
  }

  /** Bytes of an incomplete frame held back (dropped at the end: not a sample frame). */
  get pending(): number {
    return this.rest.length;
  }
}

/**
 * Whole samples of `format` as Float32 in [-1, 1], interleaved as they come.
 * pcm16 is scaled by 1/32768, µ-law is decoded to 16-bit first, float32 is read as is (clipped).
 * @param bytes a whole number of samples, little-endian.
 */
export function toFloat32(bytes: Buffer, format: AudioSpec['format']): Float32Array {
  const out = decodeToFloat(bytes, format);
  if (format === 'float32') for (let i = 0; i < out.length; i++) out[i] = clip(out[i]!);
  return out;
}

/** Splits interleaved samples into one Float32Array per channel (frames = samples / channels). */
export function deinterleave(samples: Float32Array, channels: number): Float32Array[] {
  if (channels === 1) return [samples];
  const frames = Math.floor(samples.length / channels);
  const planes = Array.from({ length: channels }, () => new Float32Array(frames));
  for (let i = 0; i < frames; i++) {
    for (let c = 0; c < channels; c++) planes[c]![i] = samples[i * channels + c]!;
  }
  return planes;
}

/**
 * Bits per sample a lossless encoder keeps for `format`: 16 for pcm16 and µ-law (which decodes
 * to 16-bit), 24 for float32 (FLAC holds integers only; 24 bits keep what a float of speech holds).
 */
export function integerBits(format: AudioSpec['format']): 16 | 24 {
  return format === 'float32' ? 24 : 16;
}

/**
 * Whole samples of `format` as signed integers of {@link integerBits} bits, interleaved, one per
 * Int32 (libFLAC's input form). float32 is clipped to [-1, 1] and scaled by 2²³ − 1, rounded.
 */
export function toInt32(bytes: Buffer, format: AudioSpec['format']): Int32Array {
  if (format === 'float32') {
    const n = bytes.length >> 2;
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const x = bytes.readFloatLE(i * 4);
      out[i] = Math.round((x > 1 ? 1 : x < -1 ? -1 : Number.isNaN(x) ? 0 : x) * 8388607);
    }
    return out;
  }
  const pcm = toPcm16Bytes(bytes, format);
  const n = pcm.length >> 1;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = pcm.readInt16LE(i * 2);
  return out;
}

/**
 * 200 ms of a quiet 440 Hz tone, interleaved over `channels`: what an encoder is given once at
 * start-up, while the request is on its way, so that V8 has compiled its WebAssembly functions (lazily, on
 * their first call) before the first real chunk arrives.
 */
export function warmUpTone(sampleRate: number, channels: number, seconds = 0.2): Float32Array {
  const frames = Math.round(sampleRate * seconds);
  const out = new Float32Array(frames * channels);
  for (let i = 0; i < frames; i++) out.fill(0.1 * Math.sin((2 * Math.PI * 440 * i) / sampleRate), i * channels, (i + 1) * channels);
  return out;
}
