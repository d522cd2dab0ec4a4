/**
 * Word timings for a piece whose service sent none (any service but the built-in one; issue 23
 * point 2): the piece's text is rendered by the built-in voice of its language (reference.ts), and
 * the reference's exact word boundaries are carried onto the service's audio by alignment, in the
 * aligner's thread (align-thread.ts).
 *
 * It runs beside the stream and never delays the audio: the caller hands over a piece's audio once
 * it has it and goes on; the reference is synthesized by the built-in engine's own worker, the
 * alignment by the aligner's thread. The work waiting is bounded (seconds of audio, AlignThread);
 * a piece over the bound gets no word timings and one notice says so. Deterministic: the same
 * text and audio (e.g. from the cache) give the same timings.
 */
import { createEngine, type SpeechEngine } from '../engine/index.js';
import type { Language } from '../protocol/types.js';
import type { WordTiming } from '../protocol/words.js';
import type { MonoAudio } from './align.js';
import { AlignThread, MAX_PENDING_SECONDS, type AlignThreadOptions } from './align-thread.js';
import { alignWords, renderReference, type Reference } from './reference.js';

/**
 * Most texts whose references are rendered ahead ({@link WordTimer.prepare}) and not yet used: a
 * reference is ~32 kB per second of speech, and pieces are timed in the order they are requested.
 */
export const MAX_PREPARED = 8;

/**
 * Longest piece aligned, in seconds of its audio: the DTW's backpointers take ~80 kB per second
 * (dtw.ts: one byte per band cell, 801 cells per 10 ms frame), so 300 s is ~24 MB. A default piece
 * (`--max-chars 1000`) is about a minute; a longer one gets no word timings, with a notice.
 */
export const MAX_PIECE_SECONDS = 300;

/**
 * Most the service's audio and the reference may differ in length, as a ratio either way: past it
 * they cannot be saying the same thing at any usual rate (another text, another language, a
 * message instead of speech), and an alignment would only place words at random.
 */
export const MAX_LENGTH_RATIO = 2.5;

/** A piece of speech to time: the text sent for it, its language, and the audio the service sent for it. */
export interface PieceToTime {
  text: string;
  language: Language;
  /** The piece's audio as the service sent it, mono (a stereo stream's first channel will do). */
  audio: MonoAudio;
}

/** Options of {@link WordTimer}. */
export interface WordTimerOptions extends AlignThreadOptions {
  /** The engine that renders references; default one of its own (one worker), closed by {@link WordTimer.close}. */
  engine?: SpeechEngine;
  /** Where notices go (printed unless -q): said once when pieces start being left without timings. */
  warn?: (line: string) => void;
}

/** Times the words of other services' pieces (see the file comment). */
export class WordTimer {
  readonly #thread: AlignThread;
  readonly #ownEngine: boolean;
  #engine: SpeechEngine | undefined;
  readonly #warn: (line: string) => void;
  readonly #maxPendingSeconds: number;
  /** Seconds of service audio handed to {@link time} and not yet timed (reference or alignment under way). */
  #pendingSeconds = 0;
  #pieces = 0;
  #skipped = 0;
  #closed = false;
  #warnedLong = false;
  #warnedMismatch = false;
  /** References rendered ahead by {@link prepare}, by language and text, with how many pieces will use each. */
  readonly #prepared = new Map<string, { reference: Promise<Reference>; uses: number }>();

  /** @throws RangeError for a bound that is not a positive number. */
  constructor(options: WordTimerOptions = {}) {
    this.#thread = new AlignThread(options);
    this.#maxPendingSeconds = options.maxPendingSeconds ?? MAX_PENDING_SECONDS;
    this.#engine = options.engine;
    this.#ownEngine = options.engine === undefined;
    this.#warn = options.warn ?? (() => {});
  }

  /** Pieces left without word timings because the aligner could not keep up. */
  get skipped(): number {
    return this.#skipped;
  }

  /**
   * Starts rendering the reference of a piece about to be requested, so that it is ready when the
   * piece's audio has arrived and {@link time} needs it: the alignment then waits for nothing but
   * itself. Optional (time() renders what was not prepared). At most {@link MAX_PREPARED} texts
   * wait, the oldest dropped for a new one; ignored after close(). Never throws: a failure is
   * {@link time}'s to report.
   */
  prepare(text: string, language: Language): void {
    if (this.#closed || text.trim() === '') return;
    const key = `${language}\0${text}`;
    const entry = this.#prepared.get(key);
    if (entry !== undefined) {
      entry.uses++;
      return;
    }
    // Full: the oldest goes (a piece answered with the service's own words never takes its reference).
    if (this.#prepared.size >= MAX_PREPARED) this.#prepared.delete(this.#prepared.keys().next().value!);
    this.#engine ??= createEngine();
    const reference = renderReference(this.#engine, text, language);
    reference.catch(() => {}); // reported by time(), which awaits it
    this.#prepared.set(key, { reference, uses: 1 });
  }

  /** The prepared reference for this text (one use of it taken), or a new rendering. */
  #reference(text: string, language: Language, signal: AbortSignal | undefined): Promise<Reference> {
    const key = `${language}\0${text}`;
    const entry = this.#prepared.get(key);
    if (entry === undefined) {
      this.#engine ??= createEngine();
      return renderReference(this.#engine, text, language, signal);
    }
    if (--entry.uses === 0) this.#prepared.delete(key);
    return entry.reference;
  }

  /**
   * The piece's words, in sample frames of `piece.audio` at its rate and UTF-16 offsets of
   * `piece.text` (protocol/words.ts WordTiming): `[]` when the text has no word the engine times,
   * `undefined` when more than `maxPendingSeconds` of audio is already waiting to be timed
   * (rendering its reference or being aligned) or the piece is longer than
   * {@link MAX_PIECE_SECONDS}, or when its audio and the reference differ in length by more than
   * {@link MAX_LENGTH_RATIO} times: no timings, and a notice once for each reason.
   * @throws EngineError when the reference cannot be synthesized; Error when the aligner's thread
   *   fails or the timer is closed.
   */
  async time(piece: PieceToTime, signal?: AbortSignal): Promise<WordTiming[] | undefined> {
    if (this.#closed) throw new Error('the word timer is closed');
    if (piece.audio.samples.length === 0 || piece.text.trim() === '') return [];
    const seconds = piece.audio.samples.length / piece.audio.sampleRate;
    if (seconds > MAX_PIECE_SECONDS) {
      if (!this.#warnedLong) this.#warn(`word timings: a piece of ${Math.round(seconds)} s is too long to align (over ${MAX_PIECE_SECONDS} s) and has none; a smaller --max-chars makes shorter pieces`);
      this.#warnedLong = true;
      return undefined;
    }
    if (this.#pieces > 0 && this.#pendingSeconds + seconds > this.#maxPendingSeconds) {
      if (this.#skipped++ === 0) this.#warn('word timings: the aligner cannot keep up with the audio; some pieces have no word timings');
      return undefined;
    }
    this.#pieces++;
    this.#pendingSeconds += seconds;
    try {
      const reference = await this.#reference(piece.text, piece.language, signal);
      const expected = reference.audio.samples.length / reference.audio.sampleRate;
      if (reference.words.length > 0 && !(seconds <= expected * MAX_LENGTH_RATIO && seconds * MAX_LENGTH_RATIO >= expected)) {
        if (!this.#warnedMismatch) this.#warn(`word timings: a piece's audio (${seconds.toFixed(1)} s) is far from its text's length (about ${expected.toFixed(1)} s) and has none`);
        this.#warnedMismatch = true;
        return undefined;
      }
      // The thread's own bound is the same and everything it holds is counted here: it never says no.
      return await alignWords(reference, piece.audio, (ref, target, spans) => this.#thread.align(ref, target, spans));
    } finally {
      this.#pieces--;
      this.#pendingSeconds = this.#pieces === 0 ? 0 : this.#pendingSeconds - seconds;
    }
  }

  /** Stops the aligner's thread (and the engine when it is the timer's own). Safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#prepared.clear();
    await this.#thread.close();
    if (this.#ownEngine) await this.#engine?.close();
    this.#engine = undefined;
  }
}
