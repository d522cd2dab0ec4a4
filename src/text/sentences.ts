/**
 * Sentence by sentence (docs/cli.md §1 `--pause`, `--subtitles`): a pause goes between sentences
 * and a cue spans one, so each sentence is its own request. The pieces of text/split.ts already
 * end at sentence ends (or, for a sentence over `--max-chars`, at clauses and words); this cuts
 * each piece further at every sentence end, with the same segmenter (Unicode UAX #29 through
 * `Intl.Segmenter`, so "e.g." and "3.14" stay whole and 。！？ and line breaks end sentences).
 */
import { segmenter, segmentsOf } from './split.js';

/**
 * The sentences of one piece, in order; joined, they give the piece back exactly (whitespace
 * rides with the sentence before it).
 */
export function sentencesOf(piece: string): string[] {
  // In slices: a piece of up to --max-chars (1,000,000) characters is never segmented at once.
  return segmentsOf(piece, 'sentence');
}

/** Characters of context on each side of a join that {@link sentenceBreakBetween} segments. */
const JOIN_CONTEXT_CHARS = 256;

/**
 * Whether `after` starts a new sentence when it follows `before` in the text (UAX #29 sentence
 * boundary at the join), looking at most {@link JOIN_CONTEXT_CHARS} code units on each side.
 * False for two parts of one sentence cut at a clause, word or grapheme.
 */
export function sentenceBreakBetween(before: string, after: string): boolean {
  if (before.trim() === '') return true;
  const tail = before.slice(-JOIN_CONTEXT_CHARS);
  const text = tail + after.slice(0, JOIN_CONTEXT_CHARS);
  for (const s of segmenter('sentence').segment(text)) {
    if (s.index === tail.length) return true;
    if (s.index > tail.length) return false;
  }
  return false;
}
