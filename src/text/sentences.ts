/**
 * Sentence by sentence (docs/cli.md §1 `--pause`, `--subtitles`): a pause goes between sentences
 * and a cue spans one, so each sentence is its own request. The pieces of text/split.ts already
 * end at sentence ends (or, for a sentence over `--max-chars`, at clauses and words); this cuts
 * each piece further at every sentence end, with the same segmenter (Unicode UAX #29 through
 * `Intl.Segmenter`, so "e.g." and "3.14" stay whole and 。！？ and line breaks end sentences).
 */
import { segmenter, segmentPieces, segmentsOf, type SegmentPiece } from './split.js';

/**
 * The sentences of one piece, in order; joined, they give the piece back exactly (whitespace
 * rides with the sentence before it).
 */
export function sentencesOf(piece: string): string[] {
  // In slices: a piece of up to --max-chars (1,000,000) characters is never segmented at once.
  return segmentsOf(piece, 'sentence');
}

/** Characters of context on each side of a join that {@link sentenceBreakBetween} segments. */
export const JOIN_CONTEXT_CHARS = 256;

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

/**
 * Code units of short texts segmented together by one call of ICU ({@link sentenceStarts}): the
 * slice {@link segmentsOf} segments at once.
 */
const BATCH_UNITS = 2048;

/**
 * Where the sentences of each of `texts` start, as segmenting each alone finds them (UAX #29,
 * `Intl.Segmenter`), with one segmentation of them all, a line break between two: always a
 * boundary after it (UAX #29 SB4), and a text's end followed by a line break has the boundaries
 * it has at the end of the text (the rules that look ahead, SB8's for a lower-case letter, stop
 * at either). Each call of the segmenter leaves ICU memory (a copy of its break iterator) that is
 * freed only when the garbage collector collects the call's small JavaScript object, which it
 * does not hurry to do: 1.2 million short spans each segmented alone grew the process by 250 MB.
 * @param texts each at most {@link BATCH_UNITS} code units (longer ones are segmented alone).
 * @returns for each text, the offsets (UTF-16 code units) where its sentences start: 0 first; none for ''.
 */
function sentenceStarts(texts: readonly string[]): number[][] {
  const starts: number[][] = texts.map(() => []);
  const offsets: number[] = [];
  let at = 0;
  for (const text of texts) {
    offsets.push(at);
    at += text.length + 1;
  }
  let i = 0;
  for (const s of segmenter('sentence').segment(texts.join('\n'))) {
    while (i + 1 < texts.length && s.index >= offsets[i + 1]!) i++;
    const index = s.index - offsets[i]!;
    if (index < texts[i]!.length) starts[i]!.push(index);
  }
  return starts;
}

/**
 * The sentences of each of `texts`, in order, as {@link sentencesOf} gives them, each as one
 * piece or more (text/split.ts `SegmentPiece`: the last `ends` it) — short texts segmented
 * together ({@link sentenceStarts}), so that many short texts (an SSML document's spans) cost one
 * call of the segmenter per {@link BATCH_UNITS} code units, not one each.
 * @param texts each a string, or a long text in blocks: its sentences are then handed on in
 *   pieces as they are found (text/split.ts `segmentPieces`), never the text nor a sentence whole.
 */
export function* sentencePiecesOfEach(texts: Iterable<string | Iterable<string>>): Generator<SegmentPiece, void, undefined> {
  let batch: string[] = [];
  let units = 0;
  const cut = function* (): Generator<SegmentPiece, void, undefined> {
    const starts = sentenceStarts(batch);
    for (const [i, text] of batch.entries()) {
      for (const [k, start] of starts[i]!.entries()) yield { text: text.slice(start, starts[i]![k + 1] ?? text.length), ends: true };
    }
    batch = [];
    units = 0;
  };
  for (const text of texts) {
    if (typeof text !== 'string' || text.length > BATCH_UNITS) {
      yield* cut();
      if (typeof text !== 'string') yield* segmentPieces(text, 'sentence');
      else for (const sentence of sentencesOf(text)) yield { text: sentence, ends: true };
      continue;
    }
    if (units + text.length > BATCH_UNITS) yield* cut();
    batch.push(text);
    units += text.length + 1;
  }
  yield* cut();
}

/**
 * {@link sentenceBreakBetween} for many joins at once, with one call of the segmenter for many
 * ({@link sentenceStarts}): each join's text is the same {@link JOIN_CONTEXT_CHARS} code units on
 * each side.
 * @returns for each `[before, after]`, whether `after` starts a new sentence.
 */
export function sentenceBreaksBetween(joins: readonly (readonly [before: string, after: string])[]): boolean[] {
  const texts = joins.map(([before, after]) => before.slice(-JOIN_CONTEXT_CHARS) + after.slice(0, JOIN_CONTEXT_CHARS));
  const answers: boolean[] = [];
  for (let from = 0; from < joins.length; ) {
    let to = from;
    for (let units = 0; to < joins.length && (to === from || units + texts[to]!.length <= BATCH_UNITS); to++) units += texts[to]!.length + 1;
    const starts = sentenceStarts(texts.slice(from, to));
    for (let i = from; i < to; i++) {
      const [before] = joins[i]!;
      answers.push(before.trim() === '' || starts[i - from]!.includes(Math.min(before.length, JOIN_CONTEXT_CHARS)));
    }
    from = to;
  }
  return answers;
}
