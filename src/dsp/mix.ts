/**
 * The channel mixing of docs/cli.md §2 (`-c`): the client converts what the service sends to
 * what the user asked for (mono → stereo duplicates, stereo → mono averages). Float samples are
 * in [-1, 1], interleaved when channels > 1.
 */

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
