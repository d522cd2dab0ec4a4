/**
 * Moves times of the reference signal onto the target's time axis along a warping path
 * (issue 23 point 2: "warp the reference word boundaries onto the service's audio").
 */
import { HOP_SECONDS } from './features.js';
import type { WarpPath } from './dtw.js';

/**
 * The target time, in seconds, of reference time `seconds`: the reference frame position
 * (seconds / 10 ms, fractional) is mapped through the path — each reference frame to the middle of
 * the target frames it was matched with — interpolating linearly between two frames. Both signals'
 * frames start at the same offsets, so no frame-centre correction is needed. Monotonic in
 * `seconds`; clamped to the target's frames (a time past the reference's end maps to the target's
 * last frame). Deterministic.
 */
export function warpTime(path: WarpPath, seconds: number): number {
  const n = path.first.length;
  const x = Math.min(n - 1, Math.max(0, seconds / HOP_SECONDS));
  const i = Math.floor(x);
  const frac = x - i;
  const here = middle(path, i);
  const next = i + 1 < n ? middle(path, i + 1) : here;
  return (here + frac * (next - here)) * HOP_SECONDS;
}

function middle(path: WarpPath, i: number): number {
  return (path.first[i]! + path.last[i]!) / 2;
}
