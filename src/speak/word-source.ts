/**
 * Where a run's word timings come from (docs/cli.md §12.1): for each piece, the `words` the
 * built-in service sent with `done` (docs/protocol.md §2.4), or what the piece cache stored with
 * the piece (the same, replayed) — and, for a piece that has none (a remote service), the
 * aligner's, once one is plugged in ({@link PieceAligner}: the one hook for it).
 */
import type { AudioSpec } from '../dsp/spec.js';
import type { Language } from '../protocol/types.js';
import type { WordTiming } from '../protocol/words.js';
import type { OpenRequest } from './channels.js';
import type { AudioChunk } from '../wire/delta.js';

/** A piece's word timings and the rate their frames count at (the audio as the service sent it). */
export interface PieceWords {
  /** Frames of the piece's audio as it arrived, UTF-16 offsets of the piece's text. */
  words: WordTiming[];
  /** Sample rate of those frames, in Hz (24000 for SSE). */
  sampleRate: number;
}

/**
 * The aligner's hook (issue 23 point 2): word timings for a piece whose service sent none, from
 * its audio as it arrived (`audio`, whole frames of `spec`) and its `text`; in the shape of the
 * built-in service's (frames of `spec.sampleRate`, UTF-16 offsets of `text`). Undefined: none.
 * Must not throw for audio it cannot align (return undefined).
 */
export type PieceAligner = ((piece: { text: string; language: Language; audio: Buffer; spec: AudioSpec }, signal: AbortSignal) => Promise<WordTiming[] | undefined>) & {
  /**
   * Optional: told each piece's text as its request opens, so the aligner can make ready what it
   * needs (its reference rendering, src/align/word-timer.ts) while the audio arrives. Never throws.
   */
  prepare?: (text: string, language: Language) => void;
};

/** Most audio bytes of one piece kept for the aligner (64 MiB: ~20 min of 24 kHz pcm16). */
const MAX_ALIGN_BYTES = 64 * 1024 * 1024;

/**
 * Word timings of answered pieces, waiting for their piece's end in the output: pieces end in
 * text order, so each text has a queue (the same sentence twice gets its two answers in order).
 */
export class PieceWordsQueue {
  readonly #byText = new Map<string, Promise<PieceWords | undefined>[]>();

  /** Keeps `words` for the next end of a piece of text `text`. */
  put(text: string, words: Promise<PieceWords | undefined>): void {
    const list = this.#byText.get(text) ?? [];
    list.push(words);
    this.#byText.set(text, list);
  }

  /** The oldest timings kept for `text` (forgotten now), or undefined. */
  async take(text: string): Promise<PieceWords | undefined> {
    const list = this.#byText.get(text);
    const first = list?.shift();
    if (list !== undefined && list.length === 0) this.#byText.delete(text);
    return first === undefined ? undefined : await first.catch(() => undefined);
  }
}

/**
 * Wraps an opener so that each answer that reached its end leaves its word timings in `queue`
 * (a broken or aborted answer leaves nothing: its piece is requested again or the run fails).
 * Without words from the service or the cache, `aligner` (if any) is asked, given the piece's
 * audio as it arrived, in the piece's language (its span's, else `language`, the run's).
 */
export function recordingWords(open: OpenRequest, queue: PieceWordsQueue, language: Language, aligner?: PieceAligner): OpenRequest {
  return (text, signal, piece) => {
    // The piece's own voice and language (a span's, text/spans.ts) go on to the request: dropping
    // them sent every piece of an SSML document or a script in the run's voice.
    const answer = open(text, signal, piece);
    const spoken = piece?.language ?? language;
    aligner?.prepare?.(text, spoken);
    async function* chunks(): AsyncGenerator<AudioChunk, void, undefined> {
      const kept: Buffer[] = [];
      let keptBytes = 0;
      for await (const chunk of answer.chunks) {
        if (aligner !== undefined && keptBytes + chunk.data.length <= MAX_ALIGN_BYTES) {
          kept.push(chunk.data);
          keptBytes += chunk.data.length;
        }
        yield chunk;
      }
      const spec = answer.arriving();
      const words = answer.words?.();
      if (words !== undefined) queue.put(text, Promise.resolve({ words, sampleRate: spec.sampleRate }));
      else if (aligner !== undefined && keptBytes > 0) {
        queue.put(
          text,
          aligner({ text, language: spoken, audio: Buffer.concat(kept), spec }, signal).then((w) => (w === undefined ? undefined : { words: w, sampleRate: spec.sampleRate })),
        );
      }
    }
    return { ...answer, chunks: chunks() };
  };
}
