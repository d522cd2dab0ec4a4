/**
 * Dynamic time warping of two feature sequences inside a Sakoe-Chiba band (issue 23 point 2):
 * the cheapest monotonic path from (0, 0) to (n−1, m−1) that matches every reference frame with
 * one or more target frames and back, where a cell's cost is the Euclidean distance of the two
 * frames' feature vectors. Step pattern "symmetric2" (Sakoe & Chiba 1978) — a diagonal step costs
 * twice the cell, a horizontal or vertical one once — with the horizontal and vertical steps
 * weighted by {@link OFF_DIAGONAL_WEIGHT}: a mild preference for advancing both signals together,
 * which keeps a short word from being squeezed to a point where the two voices sound alike.
 *
 * Memory and time are bounded: only the band is ever looked at — for reference frame i, the
 * target frames within `halfWidth` of the diagonal scaled to the two lengths (i × (m−1)/(n−1)) —
 * and the band's half-width is a fraction of the longer length, at least a minimum and at most a
 * maximum. Costs are kept for two rows of the band only; the path is recovered from one byte of
 * backpointer per band cell. So a piece of n frames costs about n × (2 × halfWidth + 1) bytes and
 * as many distance computations: linear in the length, whatever the length.
 */
import { COEFFICIENTS, type FeatureFrames } from './features.js';

/** Band settings of {@link warpPath}, in frames (10 ms each) or as a fraction of the length. */
export interface BandOptions {
  /** Half-width of the band as a fraction of the longer sequence's frames; default 0.1. */
  fraction?: number;
  /** Least half-width, frames; default 50 (0.5 s). */
  minFrames?: number;
  /** Greatest half-width, frames; default 400 (4 s): what keeps memory linear in the length. */
  maxFrames?: number;
}

/** Defaults of {@link BandOptions}. */
export const DEFAULT_BAND: Required<BandOptions> = { fraction: 0.1, minFrames: 50, maxFrames: 400 };

/**
 * The warping path, summarised per reference frame: reference frame i is matched with target
 * frames `first[i]` … `last[i]` (inclusive, non-decreasing in i, `first[0] = 0`,
 * `last[n−1] = m−1`).
 */
export interface WarpPath {
  first: Int32Array;
  last: Int32Array;
  /** Mean cost per step along the path (distance units of the features). */
  meanCost: number;
  /** Band half-width used, in frames. */
  halfWidth: number;
  /** Bytes of backpointers held (the memory that grows with the length). */
  backpointerBytes: number;
}

/**
 * Weight of a horizontal or vertical step's cell cost (a diagonal step's is 2). Tuned on the bench
 * (`npm run bench -- --only alignment`, ten sentences each): at 1 (plain symmetric2) the mean / p95
 * boundary errors were 19.0 / 64 ms (Flite vs Flite), 28.1 / 100 ms (eSpeak NG vs Flite) and
 * 20.3 / 125 ms (Japanese); at 1.5, 11.8 / 40, 22.2 / 77 and 19.9 / 125 ms; at 2, worse again.
 */
export const OFF_DIAGONAL_WEIGHT = 1.5;

/** Backpointer codes. */
const DIAGONAL = 0;
const FROM_PREVIOUS_ROW = 1;
const FROM_PREVIOUS_COLUMN = 2;
const NONE = 3;

/**
 * The band's half-width for sequences of `n` and `m` frames: fraction × max(n, m), clamped to
 * minFrames … maxFrames, and never under the slope max(m/n, n/m) + 1, below which consecutive rows'
 * bands would not overlap and no path could cross.
 */
export function bandHalfWidth(n: number, m: number, band: BandOptions = {}): number {
  const { fraction, minFrames, maxFrames } = { ...DEFAULT_BAND, ...band };
  const wanted = Math.min(maxFrames, Math.max(minFrames, Math.ceil(fraction * Math.max(n, m))));
  return Math.max(wanted, Math.ceil(Math.max(m / n, n / m)) + 1);
}

/**
 * Warps `target` onto `reference` (see the file comment).
 * @throws RangeError when either sequence has no frame.
 */
export function warpPath(reference: FeatureFrames, target: FeatureFrames, band: BandOptions = {}): WarpPath {
  const n = reference.frames;
  const m = target.frames;
  if (n < 1 || m < 1) throw new RangeError(`cannot align ${n} reference frames with ${m} target frames`);
  const w = bandHalfWidth(n, m, band);
  const width = 2 * w + 1;
  const slope = n > 1 ? (m - 1) / (n - 1) : 0;
  /** First target frame of row i's band (may be negative: cells before 0 are skipped). */
  const lo = (i: number): number => Math.round(i * slope) - w;
  const back = new Uint8Array(n * width).fill(NONE);
  let previous = new Float64Array(width).fill(Infinity);
  let current = new Float64Array(width).fill(Infinity);
  const ref = reference.data;
  const tgt = target.data;

  for (let i = 0; i < n; i++) {
    const rowLo = lo(i);
    const prevLo = i > 0 ? lo(i - 1) : 0;
    current.fill(Infinity);
    const jStart = Math.max(0, rowLo);
    const jEnd = Math.min(m - 1, rowLo + width - 1);
    for (let j = jStart; j <= jEnd; j++) {
      const k = j - rowLo;
      const d = distance(ref, i, tgt, j);
      if (i === 0 && j === 0) {
        current[k] = d;
        back[i * width + k] = DIAGONAL;
        continue;
      }
      let best = Infinity;
      let from = NONE;
      if (i > 0) {
        const kd = j - 1 - prevLo;
        if (kd >= 0 && kd < width && previous[kd]! + 2 * d < best) {
          best = previous[kd]! + 2 * d;
          from = DIAGONAL;
        }
        const ku = j - prevLo;
        if (ku >= 0 && ku < width && previous[ku]! + OFF_DIAGONAL_WEIGHT * d < best) {
          best = previous[ku]! + OFF_DIAGONAL_WEIGHT * d;
          from = FROM_PREVIOUS_ROW;
        }
      }
      if (k > 0 && current[k - 1]! + OFF_DIAGONAL_WEIGHT * d < best) {
        best = current[k - 1]! + OFF_DIAGONAL_WEIGHT * d;
        from = FROM_PREVIOUS_COLUMN;
      }
      current[k] = best;
      back[i * width + k] = from;
    }
    [previous, current] = [current, previous];
  }

  const endK = m - 1 - lo(n - 1);
  const total = previous[endK]!;
  if (!Number.isFinite(total)) throw new Error('no warping path inside the band'); // bandHalfWidth rules this out
  return { ...tracePath(back, n, m, width, lo), meanCost: total / (n + m), halfWidth: w, backpointerBytes: back.byteLength };
}

/** Follows the backpointers from (n−1, m−1) to (0, 0), noting each row's first and last column. */
function tracePath(back: Uint8Array, n: number, m: number, width: number, lo: (i: number) => number): { first: Int32Array; last: Int32Array } {
  const first = new Int32Array(n);
  const last = new Int32Array(n).fill(-1);
  let i = n - 1;
  let j = m - 1;
  // Each step lowers i or j or both: at most n + m steps.
  for (let steps = 0; steps <= n + m; steps++) {
    if (last[i] === -1) last[i] = j;
    first[i] = j;
    if (i === 0 && j === 0) break;
    const code = back[i * width + (j - lo(i))];
    if (code === DIAGONAL) {
      i--;
      j--;
    } else if (code === FROM_PREVIOUS_ROW) i--;
    else if (code === FROM_PREVIOUS_COLUMN) j--;
    else throw new Error(`broken warping path at (${i}, ${j})`);
  }
  return { first, last };
}

/** Euclidean distance between reference frame i and target frame j. */
function distance(ref: Float32Array, i: number, tgt: Float32Array, j: number): number {
  let sum = 0;
  const a = i * COEFFICIENTS;
  const b = j * COEFFICIENTS;
  for (let c = 0; c < COEFFICIENTS; c++) {
    const diff = ref[a + c]! - tgt[b + c]!;
    sum += diff * diff;
  }
  return Math.sqrt(sum);
}
