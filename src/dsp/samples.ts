/**
 * Encoded audio bytes ↔ float samples, and the channel mixing of docs/cli.md §2 (`-c`): the
 * client converts what the service sends to what the user asked for (mono → stereo duplicates,
 * stereo → mono averages). Float samples are in [-1, 1], interleaved when channels > 1.
 *
 * Decoding is the exact inverse of {@link encodeFloat} (pcm16 scaled by 32767), so audio that
 * goes through decode → encode without other change comes out with the same bytes.
 */
import alawmulaw from 'alawmulaw';
import type { AudioFormat } from '../protocol/types.js';

/**
 * Decodes whole samples of `format` into floats (pcm16 ÷ 32767; µ-law through G.711's table;
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
      for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true) / 32767;
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
      const pcm = alawmulaw.mulaw.decode(bytes);
      const out = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) out[i] = pcm[i]! / 32767;
      return out;
    }
  }
}

/**
 * Converts interleaved frames of `from` channels to `to` channels: one channel is copied to
 * every output channel (mono → stereo duplicates); to mono, the channels are averaged (stereo →
 * mono); otherwise output channel c takes input channel c, or averages the input channels
 * c, c + to, c + 2·to… when there are more inputs than outputs, and repeats them cyclically when
 * there are fewer.
 * @param samples interleaved, `frames × from` floats.
 * @returns `samples` itself when from = to; else a new array of `frames × to` floats.
 */
export function mixChannels(samples: Float32Array, from: number, to: number): Float32Array {
  if (from === to) return samples;
  const frames = Math.floor(samples.length / from);
  const out = new Float32Array(frames * to);
  if (to < from) {
    for (let f = 0; f < frames; f++) {
      for (let c = 0; c < to; c++) {
        let sum = 0;
        let n = 0;
        for (let i = c; i < from; i += to) {
          sum += samples[f * from + i]!;
          n++;
        }
        out[f * to + c] = sum / n;
      }
    }
  } else {
    for (let f = 0; f < frames; f++) {
      for (let c = 0; c < to; c++) out[f * to + c] = samples[f * from + (c % from)]!;
    }
  }
  return out;
}
