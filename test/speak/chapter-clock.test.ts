/** Chapter times from the pieces as they end (docs/cli.md §10 "Requests"). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChapterClock } from '../../src/speak/chapter-clock.js';
import { splitText } from '../../src/text/split.js';
import { sentencesOf } from '../../src/text/sentences.js';

const TEXTS = ['Intro. Words here.', 'Second chapter! More text; and more.', '第三章。日本語の文です。'];
const TITLES = ['One', 'Two', 'Three'];

/** Feeds `pieces` as ending one after another, each 1 s long, with a 0.5 s pause before each but the first. */
function feed(clock: ChapterClock, pieces: string[], silent: Set<number> = new Set()): number {
  let t = 0;
  pieces.forEach((p, i) => {
    if (silent.has(i)) return clock.pieceEnd(p, undefined);
    if (i > 0) t += 0.5;
    clock.pieceEnd(p, { start: t, end: t + 1, text: p });
    t += 1;
  });
  return t;
}

describe('ChapterClock', () => {
  it('starts each chapter at its first piece, the first at 0, each ending where the next begins', () => {
    const clock = new ChapterClock(TITLES, TEXTS);
    const pieces = TEXTS.flatMap((t) => splitText(t, 1000));
    const total = feed(clock, pieces);
    assert.deepEqual(clock.chapters(total), [
      { title: 'One', start: 0, end: 1.5 },
      { title: 'Two', start: 1.5, end: 3 },
      { title: 'Three', start: 3, end: 4 },
    ]);
  });

  it('follows pieces cut further into sentences (--pause, --subtitles), whitespace and all', () => {
    const clock = new ChapterClock(TITLES, TEXTS);
    const pieces = TEXTS.flatMap((t) => splitText(t, 1000)).flatMap(sentencesOf).map((s) => s.trim());
    assert.equal(pieces.length, 6);
    const total = feed(clock, pieces);
    const chapters = clock.chapters(total);
    assert.deepEqual(chapters.map((c) => c.start), [0, 3, 6]);
    assert.equal(clock.currentTitle(), 'Three');
  });

  it('a chapter whose first piece gave no audio starts at its next piece; a silent chapter is left out', () => {
    const clock = new ChapterClock(TITLES, TEXTS);
    const pieces = TEXTS.flatMap((t) => sentencesOf(t));
    // Pieces: Intro. | Words here. | Second chapter! | More text; and more. | 第三章。 | 日本語の文です。
    const total = feed(clock, pieces, new Set([2]));
    const chapters = clock.chapters(total);
    assert.deepEqual(chapters.map((c) => c.title), TITLES);
    assert.equal(chapters[1]!.start, 3, 'Two starts at its second piece');
    const silent = new ChapterClock(TITLES, TEXTS);
    feed(silent, pieces, new Set([2, 3]));
    assert.deepEqual(silent.chapters(10).map((c) => c.title), ['One', 'Three']);
  });
});
