/**
 * Progress counting (src/speak/progress.ts) and its lines (src/cli/report.ts): share, estimate,
 * clock format, and when it is animated.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatClock, formatProgress, formatRunSummary } from '../../src/cli/run-lines.js';
import { progressMode } from '../../src/cli/progress-display.js';
import { Progress } from '../../src/speak/progress.js';

describe('progress', () => {
  it('counts UTF-8 bytes against the total, characters beside, and estimates what is left', () => {
    const p = new Progress(100, 48000, 0);
    p.pieceDone('今日は', false); // 9 bytes, 3 characters
    p.pieceDone('x'.repeat(16), true);
    p.audio(48000 * 5);
    const s = p.snapshot(10_000);
    assert.equal(s.doneBytes, 25);
    assert.equal(s.doneChars, 19);
    assert.equal(s.fraction, 0.25);
    assert.equal(s.audioSeconds, 5);
    assert.equal(s.elapsedSeconds, 10);
    assert.equal(s.leftSeconds, 30);
    assert.equal(s.cachedPieces, 1);
    assert.equal(formatProgress(s), '25% · 19 chars · 5.0 s audio · 0:10 elapsed · ~0:30 left');
  });

  it('holds below 100 % until finished; no share or estimate without a total', () => {
    const p = new Progress(10, 48000, 0);
    p.pieceDone('x'.repeat(12), false);
    assert.equal(p.snapshot(1000).fraction, 0.99);
    p.finish();
    assert.equal(p.snapshot(1000).fraction, 1);
    const s = new Progress(undefined, 48000, 0);
    s.pieceDone('abc', false);
    assert.equal(formatProgress(s.snapshot(2000)), '3 chars · 0.0 s audio · 0:02 elapsed');
  });

  it('while the first piece still streams, says so rather than "0% · 0 chars" beside its audio (issue 19)', () => {
    const p = new Progress(16_000, 48000, 0);
    p.audio(48000 * 46.2);
    const s = p.snapshot(5000);
    assert.equal(formatProgress(s), 'first piece · 46.2 s audio · 0:05 elapsed');
    p.pieceDone('x'.repeat(1000), false);
    assert.match(formatProgress(p.snapshot(6000)), /^6% · 1000 chars · 46\.2 s audio · 0:06 elapsed/);
  });

  it('formats clocks and the summary line', () => {
    assert.equal(formatClock(0), '0:00');
    assert.equal(formatClock(252.9), '4:12');
    assert.equal(formatClock(3725), '1:02:05');
    assert.equal(
      formatRunSummary({ what: 'wrote book.wav', audioSeconds: 252, encoding: 'WAV pcm16', sampleRate: 24000, channels: 1, elapsedSeconds: 38, requests: 23, cacheHits: 12 }),
      'wrote book.wav · 4:12 audio · WAV pcm16 · 24000 Hz · 1 ch · 0:38 elapsed · 23 requests, 12 from cache',
    );
  });

  it('animates only on a terminal with a width, without NO_COLOR or TERM=dumb, -q or --verbose', () => {
    const tty = (columns: number | undefined): NodeJS.WritableStream & { isTTY?: boolean } => ({ isTTY: true, columns }) as never;
    assert.equal(progressMode(tty(100), {}, {}), 'animate');
    assert.equal(progressMode(tty(0), {}, {}), 'plain');
    assert.equal(progressMode(tty(undefined), {}, {}), 'plain');
    assert.equal(progressMode(tty(100), {}, { NO_COLOR: '1' }), 'plain');
    assert.equal(progressMode(tty(100), {}, { TERM: 'dumb' }), 'plain');
    assert.equal(progressMode(tty(100), { quiet: true }, {}), 'off');
    assert.equal(progressMode(tty(100), { verbose: true }, {}), 'off');
    assert.equal(progressMode({ isTTY: false } as never, {}, {}), 'off');
  });
});
