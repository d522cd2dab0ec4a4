/**
 * Where one piece's audio ends in the pipeline's output (pipeline.ts `synthesizePieces`): what
 * the audio stage needs to flush the tempo changer, put a pause between sentences and time a
 * subtitle cue (docs/cli.md §1 `--speed`, `--pause`, `--subtitles`).
 */
import type { AudioChunk } from '../wire/delta.js';

/**
 * Marks the end of one piece's audio: every chunk of the piece came before it, none of the next
 * piece's after it.
 */
export interface PieceEnd {
  /** The text that was requested for the piece (as split; whitespace included). */
  pieceEnd: string;
}

/** What `synthesizePieces` yields: audio, and where each piece's audio ends. */
export type PipelineItem = AudioChunk | PieceEnd;

/** True for a {@link PieceEnd} marker. */
export function isPieceEnd(item: PipelineItem): item is PieceEnd {
  return 'pieceEnd' in item;
}
