/**
 * When each chapter is heard (docs/cli.md §10 "Chapters"): chapters are split into pieces on
 * their own (a piece never spans two), and the audio stage times every piece from the audio
 * actually delivered (audio-stage.ts). The clock follows the pieces as they end, in order, and
 * gives a chapter the start of its first piece that had audio.
 *
 * Pieces are matched to chapters by counting letters and digits: the pipeline may cut a piece
 * further (sentences, a lower service limit) and drops pieces with nothing to say, but every
 * letter and digit of a chapter is in exactly one piece that ends, in order.
 */
import type { AudioChapter } from '../audio/containers/chapters.js';
import type { Cue } from './audio-stage.js';

const SPOKEN = /[\p{L}\p{N}]/gu;

/** Letters and digits in `text`. */
function spokenCount(text: string): number {
  return text.match(SPOKEN)?.length ?? 0;
}

/** Follows the pieces of a run that speaks `chapters` in order. */
export class ChapterClock {
  /** Letters and digits before each chapter. */
  readonly #thresholds: number[] = [];
  readonly #starts: (number | undefined)[];
  #seen = 0;
  /** Index of the chapter the last piece belonged to (-1 before any). */
  current = -1;

  constructor(readonly titles: readonly string[], texts: readonly string[]) {
    let total = 0;
    for (const text of texts) {
      this.#thresholds.push(total);
      total += spokenCount(text);
    }
    this.#starts = titles.map(() => undefined);
  }

  /**
   * One piece ended (in text order).
   * @param text the piece's text as sent.
   * @param cue its timing; undefined for a piece that gave no audio.
   */
  pieceEnd(text: string, cue: Cue | undefined): void {
    const at = this.#seen;
    this.#seen += spokenCount(text);
    let chapter = this.current;
    while (chapter + 1 < this.#thresholds.length && this.#thresholds[chapter + 1]! <= at) chapter++;
    this.current = chapter;
    if (chapter >= 0 && cue !== undefined) this.#starts[chapter] ??= cue.start;
  }

  /** The name of the chapter being read, or undefined before the first piece ended. */
  currentTitle(): string | undefined {
    return this.titles[this.current];
  }

  /**
   * The chapters heard, with their times: a chapter that gave no audio is left out; each ends
   * where the next begins, the last at `totalSeconds`.
   * @param totalSeconds the length of the whole audio, in seconds.
   */
  chapters(totalSeconds: number): AudioChapter[] {
    const heard = this.titles.map((title, i) => ({ title, start: this.#starts[i] })).filter((c): c is { title: string; start: number } => c.start !== undefined);
    // The first chapter heard begins with the audio (not after a --pause or leading silence).
    if (heard[0] !== undefined) heard[0].start = 0;
    return heard.map((c, i) => ({ title: c.title, start: c.start, end: Math.max(c.start, heard[i + 1]?.start ?? totalSeconds) }));
  }
}
