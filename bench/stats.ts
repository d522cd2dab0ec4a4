/**
 * Statistics of repeated measurements, for the benchmarks (`npm run bench`).
 */

/** Median of `xs` (mean of the two middle values for an even count). @throws on an empty list. */
export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/**
 * The `p`-th percentile (0–100) of `xs`, interpolating linearly between closest ranks
 * (the "R-7" / Excel PERCENTILE.INC definition). @throws on an empty list.
 */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) throw new RangeError('percentile of an empty list');
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

/** Arithmetic mean of `xs`. @throws on an empty list. */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError('mean of an empty list');
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

// Figures

/** Megabytes (10⁶ bytes). */
export function mb(bytes: number): number {
  return bytes / 1e6;
}
