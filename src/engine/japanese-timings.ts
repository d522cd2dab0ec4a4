/**
 * The words of a Japanese job (japanese-words.ts) timed from what its segments left (worker.ts):
 * the segments are the job's text cut into Japanese stretches and Latin runs (japanese.ts
 * speechSegments), so segment i is stretch i of the text as written; a Latin run's words are
 * Flite's (exact), a Japanese stretch's are spread over its sound.
 */
import type { WordTiming } from '../protocol/words.js';
import type { SpeechSegment } from './japanese.js';
import { japaneseWords, moraWeight, spreadWords, stretches } from './japanese-words.js';
import { nfkcRanges, speakableTokens, type EnergyEnvelope, type TextToken } from './word-timings.js';

/** What one spoken segment left to time its words by. */
export interface SegmentTiming {
  /** Words a synthesizer timed (Flite): output frames, UTF-16 range in the segment's text. */
  words: { start: number; end: number; segStart: number; segEnd: number }[];
  /** Each eSpeak NG call's sound: its output clock (AudioOutput.clock), energy and samples. */
  sounds: { clock: (n: number) => number; envelope: EnergyEnvelope; total: number }[];
}

/**
 * The job's words: `text` as written, `segments` as spoken (speechSegments' order) and what each
 * left. Empty when the segments do not pair with the text's stretches (then nothing is guessed).
 * Frames are the job's output frames; char offsets UTF-16 of `text`.
 */
export function japaneseTimings(text: string, segments: readonly SpeechSegment[], timings: readonly SegmentTiming[]): WordTiming[] {
  const normalized = text.normalize('NFKC');
  const range = nfkcRanges(text);
  const parts = stretches(normalized);
  if (range === undefined || parts.length !== segments.length || timings.length !== segments.length) return [];
  const out: WordTiming[] = [];
  const add = (token: TextToken, start: number, end: number): void => {
    const [charStart, charEnd] = range(token.start, token.end);
    const last = out[out.length - 1];
    const from = Math.max(start, last?.end ?? 0);
    if (end <= from || charEnd <= charStart || (last !== undefined && charStart < last.charEnd)) return;
    out.push({ text: text.slice(charStart, charEnd), start: from, end, charStart, charEnd });
  };
  parts.forEach((part, i) => {
    const timing = timings[i]!;
    const segment = segments[i]!;
    if (part.language !== segment.language) return;
    const slice = normalized.slice(part.start, part.end);
    if (part.language === 'en' && timing.words.length > 0) {
      // The run as spoken and as written have the same words, in order.
      const spokenTokens = speakableTokens(segment.text);
      const writtenTokens = speakableTokens(slice).map((t) => ({ start: part.start + t.start, end: part.start + t.end }));
      if (spokenTokens.length !== writtenTokens.length) return;
      for (const w of timing.words) {
        const k = spokenTokens.findIndex((t) => t.start === w.segStart);
        if (k >= 0) add(writtenTokens[k]!, w.start, w.end);
      }
      return;
    }
    const sound = timing.sounds.length === 1 ? timing.sounds[0]! : undefined;
    if (sound === undefined) return;
    const tokens = part.language === 'ja' ? japaneseWords(normalized, part.start, part.end) : speakableTokens(slice).map((t) => ({ start: part.start + t.start, end: part.start + t.end }));
    const spread = spreadWords(
      tokens.map((t) => moraWeight(normalized.slice(t.start, t.end))),
      sound.envelope,
      sound.total,
    );
    for (const w of spread) add(tokens[w.token]!, sound.clock(w.start), sound.clock(w.end));
  });
  return out;
}
