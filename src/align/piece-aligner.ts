/**
 * The aligner in the shape the run's word timings take it (speak/word-source.ts `PieceAligner`,
 * docs/cli.md §12.1): a piece's text and its audio bytes as they arrived, in, word timings in the
 * frames of that audio, out. Never throws for audio it cannot time: it gives `undefined` (the
 * piece then has no word timings) and says why once through `warn`.
 */
import type { AudioSpec } from '../dsp/spec.js';
import { decodeToFloat } from '../dsp/encoding.js';
import { mixChannels } from '../dsp/mix.js';
import type { Language } from '../protocol/types.js';
import type { WordTiming } from '../protocol/words.js';
import type { MonoAudio } from './align.js';
import type { PieceAligner } from '../speak/word-source.js';
import { WordTimer, type WordTimerOptions } from './word-timer.js';

/** A piece to time: the text sent for it, its language, its audio as it arrived (whole frames of `spec`). */
export interface ArrivedPiece {
  text: string;
  language: Language;
  audio: Buffer;
  spec: AudioSpec;
}

/** {@link createPieceAligner}'s result: the aligner and how to stop it. */
export interface PieceAlignerHandle {
  /** {@link align} with {@link prepare} as its `prepare`: the run's hook (speak/word-source.ts PieceAligner). */
  hook: PieceAligner;
  /** Word timings of a piece (frames of `piece.spec.sampleRate`, UTF-16 offsets of `piece.text`), or undefined. */
  align: (piece: ArrivedPiece, signal: AbortSignal) => Promise<WordTiming[] | undefined>;
  /** Starts rendering the reference of a piece about to be requested (WordTimer.prepare); optional, never throws. */
  prepare: (text: string, language: Language) => void;
  /** Pieces left without timings because the aligner could not keep up. */
  skipped: () => number;
  /** Stops the aligner's thread and its engine. */
  close: () => Promise<void>;
}

/** Interleaved bytes of `spec` as one channel of floats (channels averaged). */
export function monoAudio(bytes: Uint8Array, spec: AudioSpec): MonoAudio {
  return { samples: mixChannels(decodeToFloat(bytes, spec.format), spec.channels, 1), sampleRate: spec.sampleRate };
}

/**
 * An aligner for a run (see the file comment); `options.warn` gets at most one line for failures
 * and one for pieces it could not keep up with.
 */
export function createPieceAligner(options: WordTimerOptions = {}): PieceAlignerHandle {
  const warn = options.warn ?? (() => {});
  const timer = new WordTimer(options);
  let failed = false;
  const align = async (piece: ArrivedPiece, signal: AbortSignal): Promise<WordTiming[] | undefined> => {
    try {
      return await timer.time({ text: piece.text, language: piece.language, audio: monoAudio(piece.audio, piece.spec) }, signal);
    } catch (err) {
      if (signal.aborted) return undefined;
      if (!failed) warn(`word timings: the aligner failed (${err instanceof Error ? err.message : String(err)}); pieces it could not time have none`);
      failed = true;
      return undefined;
    }
  };
  const prepare = (text: string, language: Language): void => timer.prepare(text, language);
  return {
    hook: Object.assign((piece: ArrivedPiece, signal: AbortSignal) => align(piece, signal), { prepare }),
    align,
    prepare,
    skipped: () => timer.skipped,
    close: () => timer.close(),
  };
}
