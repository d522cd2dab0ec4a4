/**
 * The sample codec: the encodings of docs/cli.md §2 — pcm16 (signed 16-bit little-endian),
 * float32 (IEEE-754 32-bit little-endian) and mulaw (8-bit G.711 µ-law, via the `alawmulaw`
 * package) — to and from float samples in [-1, 1]. Interleaved when channels > 1. All functions
 * here are pure and allocate their result.
 *
 * 16-bit samples scale by 32768 both ways, the usual convention (−32768 ↦ −1.0; 1.0 is clipped
 * to 32767): decoding is exact, and decode → encode without other change gives the same bytes.
 */
import alawmulaw from 'alawmulaw';
import type { AudioFormat } from '../protocol/types.js';

/** Bytes per sample of one channel for an encoding: 2, 4 or 1. */
export function bytesPerSample(format: AudioFormat): number {
  switch (format) {
    case 'pcm16':
      return 2;
    case 'float32':
      return 4;
    case 'mulaw':
      return 1;
  }
}

/**
 * Seconds of audio in `bytes` bytes of `format` at `sampleRate` Hz with `channels` channels.
 * A trailing partial frame counts for its fraction.
 */
export function audioSeconds(bytes: number, format: AudioFormat, sampleRate: number, channels: number): number {
  return bytes / (bytesPerSample(format) * channels * sampleRate);
}

/** The scale between a signed 16-bit sample and a float: 2¹⁵. */
const INT16_SCALE = 32768;

/**
 * Decodes whole samples of `format` into floats (pcm16 ÷ 32768, so −32768 ↦ −1.0 and 32767 ↦ 0.99997; µ-law through G.711's table;
 * float32 as it is, NaN read as 0).
 * @param bytes a whole number of samples (`bytes.length` a multiple of bytesPerSample(format)).
 * @returns one float per sample (per channel of each frame), a new array.
 */
export function decodeToFloat(bytes: Uint8Array, format: AudioFormat): Float32Array {
  switch (format) {
    case 'pcm16': {
      const n = bytes.byteLength >> 1;
      const out = new Float32Array(n);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true) / INT16_SCALE;
      return out;
    }
    case 'float32': {
      const n = bytes.byteLength >> 2;
      const out = new Float32Array(n);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let i = 0; i < n; i++) {
        const x = view.getFloat32(i * 4, true);
        out[i] = Number.isNaN(x) ? 0 : x;
      }
      return out;
    }
    case 'mulaw': {
      return int16ToFloat(alawmulaw.mulaw.decode(bytes));
    }
  }
}

/** Signed 16-bit samples as floats in [-1, 1): each ÷ 32768 (−32768 ↦ −1.0). */
export function int16ToFloat(pcm: Int16Array): Float32Array {
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i]! / INT16_SCALE;
  return out;
}

/**
 * Encodes float samples in [-1, 1] (values outside are clipped) as `format`.
 * pcm16: x × 32768, rounded to nearest, 1.0 clipped to 32767.
 * @returns a Buffer of `samples.length × bytesPerSample(format)` bytes.
 */
export function encodeFloat(samples: Float32Array, format: AudioFormat): Buffer {
  if (format === 'float32') {
    const out = Buffer.allocUnsafe(samples.length * 4);
    for (let i = 0; i < samples.length; i++) out.writeFloatLE(clip(samples[i]!), i * 4);
    return out;
  }
  const pcm = floatToPcm16(samples);
  if (format === 'pcm16') return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  return Buffer.from(alawmulaw.mulaw.encode(pcm));
}

/** Float samples in [-1, 1] to signed 16-bit samples (clipped, × 32768, rounded to nearest). */
export function floatToPcm16(samples: Float32Array): Int16Array {
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) pcm[i] = toInt16(samples[i]!);
  return pcm;
}

/** One float sample as a signed 16-bit one: clipped to [-1, 1], × 32768, rounded, at most 32767. */
function toInt16(x: number): number {
  return Math.min(32767, Math.round(clip(x) * INT16_SCALE));
}

/**
 * Decodes audio bytes of `format` into signed 16-bit little-endian PCM bytes, the form the sound
 * card gets (docs/cli.md §2: µ-law is decoded to 16-bit for playback).
 * `bytes.length` must be a whole number of samples; a trailing partial sample is dropped.
 * @returns a Buffer of (samples × 2) bytes.
 */
export function toPcm16Bytes(bytes: Uint8Array, format: AudioFormat): Buffer {
  switch (format) {
    case 'pcm16':
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength - (bytes.byteLength % 2));
    case 'mulaw': {
      const pcm = alawmulaw.mulaw.decode(bytes);
      return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    }
    case 'float32': {
      const n = Math.floor(bytes.byteLength / 4);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const out = Buffer.allocUnsafe(n * 2);
      for (let i = 0; i < n; i++) out.writeInt16LE(toInt16(view.getFloat32(i * 4, true)), i * 2);
      return out;
    }
  }
}

/** `x` within [-1, 1]; NaN is 0. */
export function clip(x: number): number {
  return x > 1 ? 1 : x < -1 ? -1 : Number.isNaN(x) ? 0 : x;
}
