/**
 * How far a run is (docs/cli.md §2 "Progress"): text done of the total, audio produced, time
 * elapsed and an estimate of what is left. Only counts; src/cli/run-lines.ts writes the line and progress-display.ts draws it.
 *
 * Text is counted in UTF-8 bytes against the total, because the total of a file is known before
 * it is read only as its size; characters (code points) are counted beside it for display. A
 * piece counts as done once all its audio arrived (from the service or the cache).
 */
import type { OpenRequest } from './channels.js';

/** One reading of a run's progress. */
export interface ProgressSnapshot {
  /** Characters (code points) of the pieces done. */
  doneChars: number;
  /** UTF-8 bytes of the pieces done. */
  doneBytes: number;
  /** UTF-8 bytes of the whole text; undefined when not known (stdin, --lines). */
  totalBytes: number | undefined;
  /** Share done, 0 … 1; undefined without a total. Held below 1 until the run finished. */
  fraction: number | undefined;
  /** Seconds of audio handed to the outputs so far. */
  audioSeconds: number;
  /** Seconds since the run started. */
  elapsedSeconds: number;
  /** Estimated seconds still needed; undefined until a share is known and some work was done. */
  leftSeconds: number | undefined;
  /** Pieces done, and of them those replayed from the cache. */
  pieces: number;
  cachedPieces: number;
}

/** Counts a run's progress. */
export class Progress {
  #totalBytes: number | undefined;
  readonly #bytesPerSecond: number;
  readonly #started: number;
  #doneBytes = 0;
  #doneChars = 0;
  #audioBytes = 0;
  #pieces = 0;
  #cached = 0;
  #finished = false;

  /**
   * @param totalBytes UTF-8 bytes of the whole text (a file's size, the words' length), or undefined.
   * @param bytesPerSecond audio bytes per second of the output (rate × frame bytes).
   * @param started `performance.now()` when the run started.
   */
  constructor(totalBytes: number | undefined, bytesPerSecond: number, started: number = performance.now()) {
    this.#totalBytes = totalBytes !== undefined && totalBytes > 0 ? totalBytes : undefined;
    this.#bytesPerSecond = bytesPerSecond;
    this.#started = started;
  }

  /**
   * Sets the total once it is known only after reading (a document's spoken text, in UTF-8
   * bytes, rather than its file's size; docs/cli.md §10).
   */
  setTotal(totalBytes: number): void {
    this.#totalBytes = totalBytes > 0 ? totalBytes : undefined;
  }

  /** A piece's audio all arrived; `text` as it was sent. */
  pieceDone(text: string, fromCache: boolean): void {
    this.#doneBytes += Buffer.byteLength(text);
    for (const _ of text) this.#doneChars++;
    this.#pieces++;
    if (fromCache) this.#cached++;
  }

  /** `bytes` of audio went to the outputs. */
  audio(bytes: number): void {
    this.#audioBytes += bytes;
  }

  /** The run completed: the share is 1 from now on. */
  finish(): void {
    this.#finished = true;
  }

  /** The progress now. */
  snapshot(now: number = performance.now()): ProgressSnapshot {
    const elapsedSeconds = Math.max(0, (now - this.#started) / 1000);
    let fraction: number | undefined;
    if (this.#finished) fraction = 1;
    else if (this.#totalBytes !== undefined) fraction = Math.min(0.99, this.#doneBytes / this.#totalBytes);
    const leftSeconds = fraction !== undefined && fraction > 0 && fraction < 1 && elapsedSeconds > 0 ? (elapsedSeconds * (1 - fraction)) / fraction : fraction === 1 ? 0 : undefined;
    return {
      doneChars: this.#doneChars,
      doneBytes: this.#doneBytes,
      totalBytes: this.#totalBytes,
      fraction,
      audioSeconds: this.#bytesPerSecond > 0 ? this.#audioBytes / this.#bytesPerSecond : 0,
      elapsedSeconds,
      leftSeconds,
      pieces: this.#pieces,
      cachedPieces: this.#cached,
    };
  }
}

/**
 * Wraps `open` to tell when each piece's audio was all handed on — `text` as sent, `fromCache`
 * when the piece cache replayed it ({@link ServiceAnswer.replayed}) — for the progress line.
 * @returns an opener with `open`'s contract.
 */
export function reportingPieceDone(open: OpenRequest, onPieceDone: (text: string, fromCache: boolean) => void): OpenRequest {
  return (text, signal, piece) => {
    const answer = open(text, signal, piece);
    return {
      chunks: (async function* () {
        yield* answer.chunks;
        onPieceDone(text, answer.replayed?.() === true);
      })(),
      arriving: () => answer.arriving(),
      spoke: () => answer.spoke(),
      replayed: () => answer.replayed?.() === true,
    };
  };
}
