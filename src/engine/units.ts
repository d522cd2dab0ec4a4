/**
 * The engine's units of work (docs/cli.md §5, "Fairness" and "Clients that do not read"): a
 * stream's text is cut on the main thread into sentences, packed up to {@link UNIT_CHARS}
 * characters, and a worker synthesizes one unit at a time. Between units the engine can give
 * the worker to another stream (fairness) or hold a stream whose client is not reading
 * (backpressure), so a unit is the most audio a stream makes beyond its buffer, and the longest a
 * newly arrived stream waits for a busy worker.
 *
 * The cut uses the client's own splitter (src/text/split.ts: ICU sentence boundaries, then
 * clauses and words for a longer sentence), fed in bounded windows so a long text costs no more
 * than a window at a time. Sentence boundaries are pauses in speech, so synthesizing sentences
 * apart changes nothing a listener hears (each unit's resampling starts afresh; its length is
 * rounded to whole frames on its own).
 */
import { hasSpeech, StreamSplitter, WINDOW_CHARS } from '../text/split.js';
import type { JobReport } from './types.js';

/**
 * Longest unit, in code points: one or two ordinary sentences, about 10 s of speech and, with
 * eSpeak NG in WebAssembly, 0.1–0.2 s of an idle worker's time — short enough that a waiting
 * stream starts soon, long enough that the per-unit cost (a message each way, a resampler, the
 * silence eSpeak NG puts around each call) stays small. Longer sentences are cut at clauses.
 */
export const UNIT_CHARS = 150;

/**
 * The units of `text`, in order, lazily: the text is segmented one window (WINDOW_CHARS) at a
 * time as units are taken. Units with nothing but whitespace are left out; concatenated, the
 * units give back the text without those.
 * @param maxChars longest unit in code points (≥ 1).
 */
export function* speechUnits(text: string, maxChars: number = UNIT_CHARS): Generator<string, void, undefined> {
  const splitter = new StreamSplitter(maxChars);
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + WINDOW_CHARS);
    // A window never ends between the two halves of a surrogate pair.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    for (const piece of splitter.push(text.slice(start, end))) if (hasSpeech(piece)) yield piece;
    start = end;
  }
  for (const piece of splitter.end()) if (hasSpeech(piece)) yield piece;
}

/**
 * One report for a whole stream from the reports of its units, in order: segments joined,
 * sample and frame counts summed, `aborted` if any unit was, the first unit's first-chunk time
 * and start-up times, the units' total time summed (time spent waiting between units is not
 * counted). Undefined for no units.
 */
export function mergeReports(reports: readonly JobReport[]): JobReport | undefined {
  const first = reports[0];
  const last = reports.at(-1);
  if (first === undefined || last === undefined) return undefined;
  const merged: JobReport = {
    aborted: reports.some((r) => r.aborted),
    segments: reports.flatMap((r) => r.segments),
    inputSamples: reports.reduce((n, r) => n + r.inputSamples, 0),
    outputFrames: reports.reduce((n, r) => n + r.outputFrames, 0),
    kuromojiLoaded: last.kuromojiLoaded,
    totalMs: reports.reduce((n, r) => n + r.totalMs, 0),
  };
  const kuromojiLoadMs = reports.find((r) => r.kuromojiLoadMs !== undefined)?.kuromojiLoadMs;
  if (kuromojiLoadMs !== undefined) merged.kuromojiLoadMs = kuromojiLoadMs;
  const dictionarySource = last.dictionarySource;
  if (dictionarySource !== undefined) merged.dictionarySource = dictionarySource;
  if (last.fliteSource !== undefined) merged.fliteSource = last.fliteSource;
  const espeakInit = reports.find((r) => r.espeakInitMs !== undefined);
  if (espeakInit?.espeakInitMs !== undefined) merged.espeakInitMs = espeakInit.espeakInitMs;
  if (espeakInit?.espeakInitialState !== undefined) merged.espeakInitialState = espeakInit.espeakInitialState;
  // Units may run on different workers: any that started eSpeak NG counts.
  if (reports.some((r) => r.espeakStarted === true)) merged.espeakStarted = true;
  if (reports.some((r) => r.words !== undefined)) merged.words = reports.flatMap((r) => r.words ?? []);
  const withChunk = reports.find((r) => r.firstChunkMs !== undefined);
  if (withChunk?.firstChunkMs !== undefined) merged.firstChunkMs = withChunk.firstChunkMs;
  return merged;
}
