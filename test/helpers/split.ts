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

/**
 * Cuts `bytes` at the given fractions of its length (0…1), each rounded down to a multiple of
 * `align` bytes (1 = any byte offset); equal cut points count once, a cut at 0 gives an empty first piece.
 */
export function cutAt(bytes: Buffer, cuts: readonly number[], align = 1): Buffer[] {
  const at = [...new Set(cuts.map((c) => Math.floor((c * bytes.length) / align) * align))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let prev = 0;
  for (const a of [...at, bytes.length]) {
    parts.push(bytes.subarray(prev, a));
    prev = a;
  }
  return parts;
}
