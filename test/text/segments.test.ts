/**
 * Segments found as text comes and for many short texts at once (text/split.ts `segmentsFrom`,
 * `segmentPieces`; text/sentences.ts `sentencePiecesOfEach`, `sentenceBreaksBetween`): the same as
 * segmenting each whole text alone, whatever the blocks it comes in — they are what SSML,
 * dialogue scripts and `--print-text` read without holding a text whole (docs/cli.md §11).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { sentenceBreakBetween, sentenceBreaksBetween, sentencePiecesOfEach, sentencesOf } from '../../src/text/sentences.js';
import { segmentPieces, segmentsFrom, segmentsOf } from '../../src/text/split.js';

/** Texts with sentence ends of several scripts, closing marks, spaces, line breaks, combining marks and emoji. */
const token = fc.constantFrom('Hello', ' ', '  ', 'world', '.', '. ', '!', '?', '"', ')', '\n', '\r', '\u2029', 'e.g.', 'U.S. ', '3.14', '😀', 'é', '\u0301', '今日は', '。', '」', '、', 'ok', 'x'.repeat(700), ' and so on'.repeat(60));
const text = fc.array(token, { maxLength: 60 }).map((parts) => parts.join(''));
/** The segments pieces make, each joined up to the piece that ends it; throws if the last does not end one. */
function joinedPieces(pieces: Iterable<{ text: string; ends: boolean }>): string[] {
  const segments: string[] = [];
  let current = '';
  for (const piece of pieces) {
    current += piece.text;
    if (!piece.ends) continue;
    segments.push(current);
    current = '';
  }
  assert.equal(current, '', 'the last piece ends its segment');
  return segments;
}

/** `s` cut into blocks at `cuts` (fractions), never inside a surrogate pair. */
function blocksOf(s: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * s.length)))].sort((a, b) => a - b).filter((i) => i > 0 && i < s.length && !/[\udc00-\udfff]/.test(s[i]!));
  return [0, ...at].map((start, k) => s.slice(start, at[k] ?? s.length));
}

describe('segments of a text as it comes', () => {
  it('are those of the whole text, for sentences, words and graphemes, whatever the blocks', () => {
    fc.assert(
      fc.property(text, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), fc.constantFrom('sentence', 'word', 'grapheme' as const), (s, cuts, kind) => {
        const blocks = blocksOf(s, cuts);
        assert.equal(blocks.join(''), s);
        const whole = segmentsOf(s, kind);
        assert.deepEqual([...segmentsFrom(blocks, kind)], whole);
        // In pieces: joined up to each one that ends a segment, the same segments.
        assert.deepEqual(joinedPieces(segmentPieces(blocks, kind)), whole);
      }),
      { numRuns: 300 },
    );
  });

  it('a text without a sentence end is one sentence, as ICU finds it (no call of ICU for it)', () => {
    for (const s of ['no end here', 'x'.repeat(5000), `${'word '.repeat(2000)}and 😀 é`, '、今日は、良い天気']) {
      assert.deepEqual(segmentsOf(s, 'sentence'), [s]);
      assert.deepEqual(Array.from(new Intl.Segmenter(undefined, { granularity: 'sentence' }).segment(s), (x) => x.segment), [s]);
    }
  });
});

describe('sentences of many short texts, segmented together', () => {
  it('are each text\'s own sentences, in order', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 30 }), (texts) => {
        assert.deepEqual(joinedPieces(sentencePiecesOfEach(texts)), texts.flatMap(sentencesOf));
      }),
      { numRuns: 300 },
    );
  });

  it('a long text given in blocks: its sentences in pieces', () => {
    const long = 'A sentence here. '.repeat(20_000);
    const texts: (string | string[])[] = ['Short.', [long.slice(0, 100_001), long.slice(100_001)], 'Last one? Yes.'];
    assert.deepEqual(joinedPieces(sentencePiecesOfEach(texts)), ['Short.', ...sentencesOf(long), 'Last one? ', 'Yes.']);
  });

  it('where a text starts a new sentence after another, for many joins at once', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { maxLength: 40 }), (pairs) => {
        const joins = pairs.map(([a, b]) => [`${a} `, b === '' ? 'x' : b] as const);
        assert.deepEqual(
          sentenceBreaksBetween(joins),
          joins.map(([a, b]) => sentenceBreakBetween(a, b)),
        );
      }),
      { numRuns: 300 },
    );
  });
});
