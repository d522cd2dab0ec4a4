/** Cutting test data the way deltas arrive: at uneven sizes, odd ones included. */

/**
 * Splits `data` into pieces of `sizes[0]`, `sizes[1]`, … bytes, cycling through `sizes`, so
 * samples and frames straddle writes. The last piece may be shorter.
 */
export function splitBySizes(data: Buffer, sizes: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 0, i = 0; o < data.length; i++) {
    const s = sizes[i % sizes.length]!;
    out.push(data.subarray(o, o + s));
    o += s;
  }
  return out;
}
