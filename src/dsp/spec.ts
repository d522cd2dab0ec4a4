/**
 * The shape of a stream of audio bytes: encoding, rate and channel count (docs/cli.md §2).
 * Every sink and the WAV header take one of these.
 */
import type { AudioFormat } from '../protocol/types.js';
import { bytesPerSample } from './encoding.js';

/** What the bytes of an audio stream mean. */
export interface AudioSpec {
  /** Sample encoding: pcm16 (s16le), float32 (f32le) or mulaw (G.711 µ-law, 8 bits). */
  format: AudioFormat;
  /** Sample frames per second, in Hz (e.g. 24000). */
  sampleRate: number;
  /** Interleaved channels, ≥ 1 (1 = mono, 2 = stereo). */
  channels: number;
}

/** Bytes of one sample frame (one sample of every channel): bytesPerSample × channels. */
export function bytesPerFrame(spec: AudioSpec): number {
  return bytesPerSample(spec.format) * spec.channels;
}

/**
 * Checks that a spec can be described by a WAV header and played: an integer sample rate of
 * 1 Hz … 4 294 967 295 Hz whose byte rate fits in 32 bits, and 1 … 65535 channels (the sizes of
 * the WAVEFORMATEX fields `nSamplesPerSec`, `nAvgBytesPerSec` and `nChannels`).
 * @throws RangeError naming the bad field; a caller that takes these values from the user
 *   validates them first and reports a usage error.
 */
export function assertAudioSpec(spec: AudioSpec): void {
  if (!Number.isInteger(spec.sampleRate) || spec.sampleRate < 1 || spec.sampleRate > 0xffffffff) {
    throw new RangeError(`sample rate must be a positive whole number of Hz, got ${spec.sampleRate}`);
  }
  if (!Number.isInteger(spec.channels) || spec.channels < 1 || spec.channels > 0xffff) {
    throw new RangeError(`channels must be a whole number from 1 to 65535, got ${spec.channels}`);
  }
  if (spec.sampleRate * bytesPerFrame(spec) > 0xffffffff) {
    throw new RangeError(`byte rate of ${spec.sampleRate} Hz × ${spec.channels} channels does not fit a WAV header`);
  }
}
