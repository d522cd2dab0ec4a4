/**
 * Sample encodings of docs/cli.md §2: pcm16 (signed 16-bit little-endian), float32 (IEEE-754
 * 32-bit little-endian) and mulaw (8-bit G.711 µ-law, via the `alawmulaw` package).
 * Interleaved when channels > 1. All functions here are pure and allocate their result.
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

/**
 * Encodes float samples in [-1, 1] (values outside are clipped) as `format`.
 * Rounding to pcm16 is symmetric: x × 32767, rounded to nearest.
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

/** Float samples in [-1, 1] to signed 16-bit samples (clipped, rounded to nearest). */
export function floatToPcm16(samples: Float32Array): Int16Array {
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) pcm[i] = Math.round(clip(samples[i]!) * 32767);
  return pcm;
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
      for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(clip(view.getFloat32(i * 4, true)) * 32767), i * 2);
      return out;
    }
  }
}

function clip(x: number): number {
  return x > 1 ? 1 : x < -1 ? -1 : Number.isNaN(x) ? 0 : x;
}
