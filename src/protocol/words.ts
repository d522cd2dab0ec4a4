/**
 * Word timings: where each word of a request's text is in the audio the service streamed for it
 * (docs/protocol.md §"Word timings", an extension only the built-in service sends; docs/cli.md §12.1).
 */

/**
 * One spoken word of a request.
 * - `start`, `end`: sample frames of the audio the service streams for that request (at the
 *   request's sample rate: 24000 Hz for SSE), from the first frame of that request's audio;
 *   `start < end`, and `end` is at most the request's total frames.
 * - `charStart`, `charEnd`: the word's range in the request's `input` string, in UTF-16 code
 *   units (JavaScript string indices: `input.slice(charStart, charEnd)` is the word as written),
 *   `charStart < charEnd`.
 * - `text`: that slice of `input`.
 * A request's words are in order: starts and char offsets never decrease, and words do not overlap
 * (a word's `end` ≤ the next word's `start`).
 */
export interface WordTiming {
  text: string;
  start: number;
  end: number;
  charStart: number;
  charEnd: number;
}

/** Most words one request's timings may hold (a bound on what a client accepts from the wire). */
export const MAX_WORDS = 100_000;

/**
 * Checks and copies word timings read from the wire or the cache: an array of at most
 * {@link MAX_WORDS} objects with the fields of {@link WordTiming} (finite non-negative integers,
 * start < end, charStart < charEnd, a string text), in order.
 * @returns the words, or undefined when `value` is not such an array (a client then has none).
 */
export function parseWordTimings(value: unknown): WordTiming[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_WORDS) return undefined;
  const words: WordTiming[] = [];
  let lastStart = 0;
  let lastChar = 0;
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) return undefined;
    const w = item as Record<string, unknown>;
    const { text, start, end, charStart, charEnd } = w;
    if (typeof text !== 'string' || text.length > 10_000) return undefined;
    const ints = [start, end, charStart, charEnd];
    if (!ints.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)) return undefined;
    const word: WordTiming = { text, start: start as number, end: end as number, charStart: charStart as number, charEnd: charEnd as number };
    if (word.start >= word.end || word.charStart >= word.charEnd || word.start < lastStart || word.charStart < lastChar) return undefined;
    lastStart = word.start;
    lastChar = word.charStart;
    words.push(word);
  }
  return words;
}
