/**
 * The text of a run as pieces (src/text/source.ts), with `--lines`: each line's pieces marked
 * with where the line starts, and a long line split as it is requested — block by block, like a
 * file — not whole before its first piece (which held the first audio and Ctrl-C back for about
 * 0.5 s a MB). In-process, from a PassThrough stdin.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { StreamSplitter } from '../../src/text/split.js';
import { textSource, type LinePiece } from '../../src/text/source.js';

const options = (stdin: PassThrough, maxChars: number) => ({ words: [], file: undefined, lines: true, maxInputBytes: 64 * 2 ** 20, maxChars, stdin, signal: new AbortController().signal });

describe('textSource --lines', () => {
  it('marks the first piece of each line; the others continue it', async () => {
    const stdin = new PassThrough();
    stdin.end('Apples ripen slowly in the autumn sun and bridges carry trains.\n\nSecond line.\n');
    const { pieces } = await textSource(options(stdin, 30));
    const got: LinePiece[] = [];
    for await (const p of pieces) got.push(p as LinePiece);
    assert.ok(got.length > 2);
    assert.deepEqual(
      got.map((p) => p.lineStart),
      got.map((_, i) => i === 0 || i === got.length - 1),
    );
    assert.equal(got.at(-1)!.text, 'Second line.');
    assert.equal(got.slice(0, -1).map((p) => p.text).join(''), 'Apples ripen slowly in the autumn sun and bridges carry trains.');
  });

  it('splits a long line block by block: its first piece comes before the rest of it is split', async (t) => {
    const pushed: number[] = [];
    const push = StreamSplitter.prototype.push;
    t.mock.method(StreamSplitter.prototype, 'push', function (this: StreamSplitter, block: string) {
      pushed.push(block.length);
      return push.call(this, block);
    });
    const line = 'apple river candle stone window '.repeat(64 * 1024); // 2 MiB, no sentence end
    const stdin = new PassThrough();
    stdin.end(`${line}\n`);
    const { pieces } = await textSource(options(stdin, 1000));
    const first = await pieces[Symbol.asyncIterator]().next();
    assert.equal(first.done, false);
    const before = pushed.reduce((a, b) => a + b, 0);
    assert.ok(before <= 64 * 1024, `${before} characters of the line were split before its first piece`);
  });
});
