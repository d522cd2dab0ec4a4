/**
 * Moves times of the reference signal onto the target's time axis along a warping path
 * (issue 23 point 2: "warp the reference word boundaries onto the service's audio").
 *
 * A word boundary lies between two frames, so it is mapped as one: the boundary before reference
 * frame i goes to the middle of the gap between the last target frame matched with frame i−1 and
 * the first matched with frame i. On a diagonal step that is the boundary before the matching
 * target frame; where the target has a longer pause than the reference (one reference frame of
 * silence matched with many target frames), the boundary stays at the edge of the speech, not in
 * the middle of the pause.
 */
import { HOP_SECONDS } from './features.js';
import type { WarpPath } from './dtw.js';

/**
 * Time of the boundary between two consecutive frames, from the start of the audio: frames are
 * 32 ms long and 10 ms apart, so the boundary between frames i−1 and i (their centres at
 * 16 ms + (i−1) × 10 ms and 16 ms + i × 10 ms) is at 11 ms + i × 10 ms.
 */
const BOUNDARY_OFFSET_SECONDS = 0.011;

/**
 * The target time, in seconds, of reference time `seconds` (see the file comment), interpolating
 * linearly between frame boundaries. Monotonic in `seconds`; deterministic. A time before the
 * first frame boundary (11 ms) stays as it is; one after the last maps to the target's last.
 */
export function warpTime(path: WarpPath, seconds: number): number {
  // Before the first frame boundary both signals begin alike: the start of the audio is the start.
  if (seconds <= BOUNDARY_OFFSET_SECONDS) return Math.max(0, seconds);
  const n = path.first.length;
  const x = Math.min(n, Math.max(0, (seconds - BOUNDARY_OFFSET_SECONDS) / HOP_SECONDS));
  const i = Math.floor(x);
  const frac = x - i;
  const here = boundary(path, i);
  const next = i < n ? boundary(path, i + 1) : here;
  return (here + frac * (next - here)) * HOP_SECONDS + BOUNDARY_OFFSET_SECONDS;
}

/** Target frame boundary (fractional index) matching the boundary before reference frame i (0 … n). */
function boundary(path: WarpPath, i: number): number {
  const n = path.first.length;
  if (i <= 0) return 0;
  if (i >= n) return path.last[n - 1]! + 1;
  return (path.last[i - 1]! + 1 + path.first[i]!) / 2;
}
