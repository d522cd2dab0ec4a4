/**
 * ICU segmenters only where they decide something (issue 20): a thread's first Intl.Segmenter
 * costs ~12 ms, which an English one-shot paid twice on its way to first audio (the CLI's
 * splitter, the engine worker's module load). Each case runs in a fresh Node whose Intl.Segmenter
 * throws, so a segmenter built anywhere fails it; and the shortcuts give what ICU gives.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { englishSentences } from '../../src/engine/flite.js';
import { codePointLength, hasSpeech, StreamSplitter } from '../../src/text/split.js';

const dist = new URL('../../src/', import.meta.url).href;

/** Runs `body` (an async function body) in a fresh Node whose Intl.Segmenter throws; its stdout. */
function withoutSegmenter(body: string): string {
  const script = `Intl.Segmenter = class { constructor() { throw new Error('an Intl.Segmenter was built'); } };\n(async () => {\n${body}\n})().catch((e) => { console.error(e.stack); process.exit(3); });`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

describe('segmenters built only when needed', () => {
  it('loading the engine worker\'s modules builds none (they load before the worker serves)', () => {
    withoutSegmenter(`await import('${dist}engine/worker.js'); await import('${dist}engine/word-timings.js');`);
  });

  it('a text that fits in one piece is not segmented into sentences', () => {
    const out = withoutSegmenter(`
      const { StreamSplitter, splitText } = await import('${dist}text/split.js');
      const sp = new StreamSplitter(1000);
      const pieces = [...sp.push('Build finished. All tests passed! '), ...sp.push('Next? Yes.'), ...sp.end()];
      console.log(JSON.stringify([pieces, splitText('One. Two.', 9)]));`);
    assert.deepEqual(JSON.parse(out), [['Build finished. All tests passed! Next? Yes.'], ['One. Two.']]);
  });

  it("Flite's pieces of one sentence are found without a segmenter", () => {
    const out = withoutSegmenter(`
      const { flitePieces } = await import('${dist}engine/flite.js');
      console.log(JSON.stringify(flitePieces('The build finished without errors, and all tests passed.')));`);
    assert.deepEqual(JSON.parse(out), ['The build finished without errors, and all tests passed.']);
  });

  it('englishSentences gives what ICU gives, for any text', () => {
    const icu = new Intl.Segmenter('en', { granularity: 'sentence' });
    const parts = ['a', 'B', ' ', '.', '!', '?', '"', ')', '\n', '\r', '1', '。', '\u2024', '\u2029', '\u0085', 'é', '\u0301', '؟', '।', '…', '‼', 'Mr', '\u00a0', '\t', ',', ';', '\uff0e', '\ufe52', '😀', 'e.g.', '3.14'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...parts), { maxLength: 14 }), (chosen) => {
        const text = chosen.join('');
        assert.deepEqual(englishSentences(text), Array.from(icu.segment(text), (s) => s.segment));
      }),
      { numRuns: 3000 },
    );
  });

  it('the splitter packs sentences as ICU cuts them, whether or not it segments the end', () => {
    const icu = new Intl.Segmenter(undefined, { granularity: 'sentence' });
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('Hello', ' ', 'world', '.', '!', '\n', 'e.g.', '今日は', '。', '😀', '   '), { maxLength: 40 }),
        fc.integer({ min: 1, max: 40 }),
        (chosen, max) => {
          const text = chosen.join('');
          const sentences = Array.from(icu.segment(text), (s) => s.segment);
          fc.pre(sentences.every((s) => codePointLength(s) <= max));
          // The greedy packing of whole sentences (StreamSplitter's #add when every sentence fits).
          const want: string[] = [];
          let current = '';
          for (const s of sentences) {
            if (current !== '' && codePointLength(current) + codePointLength(s) > max && hasSpeech(s)) {
              want.push(current);
              current = '';
            }
            current += s;
          }
          if (current !== '') want.push(current);
          const sp = new StreamSplitter(max);
          assert.deepEqual([...sp.push(text), ...sp.end()], want);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
