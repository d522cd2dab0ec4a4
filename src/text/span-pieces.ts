/**
 * Speech spans (text/spans.ts) → the pieces the pipeline requests (docs/cli.md §11): each span's
 * text is split on its own (text/split.ts), so a piece never crosses a change of voice, language
 * or prosody, and every piece keeps a reference to its span's settings for the request (voice,
 * language) and the audio stage (rate, gain; break and marks on the span's first piece only).
 */
import { SpanList } from './span-list.js';
import type { SpanSettings, SpeechSpan } from './spans.js';
import { sentencesOf } from './sentences.js';
import { splitStream, splitText } from './split.js';

/** One piece of one span, as the pipeline takes it (speak/pipeline.ts). */
export interface SpanPiece {
  /** The piece's text, as split (whitespace rides with it; may be '' for a span with no text). */
  text: string;
  /** The span it belongs to (shared by all its pieces; never modified). */
  span: SpanSettings;
  /** True for the span's first piece: the one its break, marks and `newSentence` belong to. */
  first: boolean;
}

/**
 * The pieces of `spans`, span by span, in order. A span with no text still gives one piece ('')
 * so that its break and marks reach the audio stage.
 * @param spans in document order; read lazily (one span ahead of the pieces given out). From a
 *   {@link SpanList}, a span's text is split as it is read, in blocks: a span of 60 MB is never
 *   one string, nor all its pieces at once.
 * @param maxChars longest piece, in code points (--max-chars, ≥ 1).
 * @param bySentence one sentence per piece (with `--pause` or `--subtitles`, as for plain text:
 *   a pause goes between sentences and a cue spans one).
 */
export async function* spanPieces(spans: SpanList | AsyncIterable<SpeechSpan> | Iterable<SpeechSpan>, maxChars: number, bySentence = false): AsyncGenerator<SpanPiece, void, undefined> {
  if (spans instanceof SpanList) {
    for (const entry of spans.entries()) {
      let first = true;
      // A long text is split as it is read: the pieces splitText would make of it whole (text/split.ts `splitStream`).
      const pieces = entry.storedBytes <= LONG_SPAN_BYTES ? splitText(spans.textOf(entry), maxChars) : splitStream(asyncBlocks(spans.textBlocks(entry)), maxChars);
      for await (const piece of pieces) {
        for (const text of bySentence ? sentencesOf(piece) : [piece]) {
          yield { text, span: entry.span, first };
          first = false;
        }
      }
      if (first) yield { text: '', span: entry.span, first: true };
    }
    return;
  }
  for await (const span of spans) {
    const split = splitText(span.text, maxChars);
    const parts = bySentence ? split.flatMap(sentencesOf) : split;
    if (parts.length === 0) {
      yield { text: '', span, first: true };
      continue;
    }
    for (const [i, text] of parts.entries()) yield { text, span, first: i === 0 };
  }
}

/** Bytes a span's text is stored in (text/span-list.ts `storedBytes`) above which it is split as it is read, in blocks. */
const LONG_SPAN_BYTES = 64 * 1024;

/** `blocks` as an async iterable, for text/split.ts `splitStream`. */
async function* asyncBlocks(blocks: Iterable<string>): AsyncGenerator<string, void, undefined> {
  yield* blocks;
}

/** True when a span's first piece must reach the audio stage even with nothing to say: it carries a break or marks. */
export function carriesTiming(span: SpanSettings): boolean {
  return span.breakBeforeMs !== undefined || (span.marks !== undefined && span.marks.length > 0);
}
