/**
 * Word timings for audio whose service sent none, by alignment (issue 23 point 2; the method of
 * the forced aligner aeneas): the same text rendered by a built-in voice whose word boundaries are
 * known (the reference) is matched frame by frame with the service's audio (the target) by DTW on
 * MFCCs, and each reference boundary is carried over to the target's time axis.
 */
import { warpPath, type BandOptions } from './dtw.js';
import { ALIGN_RATE, mfccFrames, toAlignRate } from './features.js';
import { warpTime } from './warp.js';

/** Mono float samples (−1 … 1) and their rate in Hz. */
export interface MonoAudio {
  samples: Float32Array;
  sampleRate: number;
}

/** A span of time, in seconds from the start of its audio. */
export interface TimeSpan {
  start: number;
  end: number;
}

/** What {@link alignSpans} gives back. */
export interface Alignment<T extends TimeSpan> {
  /** The input spans in order, each with `start`/`end` moved to the target's time axis (seconds, rounded to 0.1 ms). */
  spans: T[];
  /** Mean DTW cost per path step (feature distance units): high when the two audios do not say the same thing. */
  meanCost: number;
  /**
   * CPU seconds of the process while aligning (resampling, features, DTW, warping; not the
   * reference's synthesis). Node 20 has no per-thread figure: other threads' work counts too.
   */
  cpuSeconds: number;
}

/**
 * Carries `spans` (times in `reference`, seconds) over to `target`'s time axis. Both audios are
 * brought to 16 kHz through the project's resampler, their MFCC frames matched by banded DTW
 * (dtw.ts), and each start and end warped (warp.ts). The result is monotonic (a span never starts
 * before the previous one ends… unless the reference's did), each end ≥ its start, all within
 * 0 … the target's duration. Deterministic: the same audios and spans give the same result.
 * @throws RangeError for a sample rate the resampler does not take.
 */
export async function alignSpans<T extends TimeSpan>(reference: MonoAudio, target: MonoAudio, spans: readonly T[], band: BandOptions = {}): Promise<Alignment<T>> {
  const started = process.cpuUsage();
  const ref = await toAlignRate(reference.samples, reference.sampleRate);
  const tgt = await toAlignRate(target.samples, target.sampleRate);
  const path = warpPath(mfccFrames(ref), mfccFrames(tgt), band);
  const duration = tgt.length / ALIGN_RATE;
  const at = (seconds: number): number => Math.round(Math.min(duration, Math.max(0, warpTime(path, seconds))) * 10_000) / 10_000;
  const out = spans.map((span) => {
    const start = at(span.start);
    return { ...span, start, end: Math.max(start, at(span.end)) };
  });
  const used = process.cpuUsage(started);
  return { spans: out, meanCost: path.meanCost, cpuSeconds: (used.user + used.system) / 1e6 };
}
