/**
 * Where one piece's audio ends in the pipeline's output (pipeline.ts `audioInOrderMarked`): what
 * the audio stage needs to flush the tempo changer, put a pause between sentences and time a
 * subtitle cue (docs/cli.md §1 `--speed`, `--pause`, `--subtitles`).
 */
import type { Language } from '../protocol/types.js';
import type { SpanSettings } from '../text/spans.js';
import type { AudioChunk } from '../wire/delta.js';

/**
 * What one piece asks for beyond its text when it belongs to a speech span (text/spans.ts,
 * docs/cli.md §11): its own voice and language; undefined fields are the run's.
 */
export interface PieceVoice {
  /** Preset voice id with hyphens; undefined = the run's `--voice`. */
  voice?: string | undefined;
  /** Language of the request; undefined = the run's. */
  language?: Language | undefined;
}

/**
 * Marks the end of one piece's audio: every chunk of the piece came before it, none of the next
 * piece's after it.
 */
export interface PieceEnd {
  /** The text that was requested for the piece (as split; whitespace included). */
  pieceEnd: string;
}

/**
 * Marks where one piece's audio starts (yielded again when a piece is requested again after a
 * rewind): whether it begins a new sentence (a new line with `--lines`), or continues the one of
 * the piece before it — a part of a sentence cut at `--max-chars`, or halved after
 * `max_character_length_exceeded`. A pause goes only before a new sentence (docs/cli.md §1).
 */
export interface PieceStart {
  /** The text that is requested for the piece. */
  pieceStart: string;
  /** True when the piece begins a sentence (or line), false when it continues the previous one. */
  newSentence: boolean;
  /** The speech span the piece belongs to (its rate and gain; docs/cli.md §11); absent for plain text. */
  span?: SpanSettings | undefined;
  /** True for the span's first piece: the span's break goes before it and its marks are timed at its start. */
  opensSpan?: boolean | undefined;
}

/** What `audioInOrderMarked` yields: audio, and where each piece's audio starts and ends. */
export type PipelineItem = AudioChunk | PieceEnd | PieceStart;

/** True for a {@link PieceEnd} marker. */
export function isPieceEnd(item: PipelineItem): item is PieceEnd {
  return 'pieceEnd' in item;
}

/** True for a {@link PieceStart} marker. */
export function isPieceStart(item: PipelineItem): item is PieceStart {
  return 'pieceStart' in item;
}
