/** Sentence splitting for long text (docs/cli.md §1 `--max-chars`). */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isSpeakable } from '../../src/protocol/speakable.js';
import { codePointLength, hasSpeech, requestText, segmentsOf, splitText, StreamSplitter } from '../../src/text/split.js';

function assertPieces(text: string, max: number): string[] {
  const pieces = splitText(text, max);
  assert.equal(pieces.join(''), text, 'pieces join back to the text');
  for (const p of pieces) {
    assert.ok(codePointLength(requestText(p, max)) <= max, `piece ${JSON.stringify(p)} over ${max}`);
    // never inside a surrogate pair
    assert.ok(!/^[\udc00-\udfff]/.test(p) && !/[\ud800-\udbff]$/.test(p), `split inside a surrogate pair: ${JSON.stringify(p)}`);
  }
  return pieces;
}

describe('splitText', () => {
  it('keeps a short text whole', () => {
    assert.deepEqual(splitText('Hello there.', 100), ['Hello there.']);
    assert.deepEqual(splitText('', 10), []);
  });

  it('splits Japanese at 。！？ and line breaks', () => {
    const text = '今日は良い天気です。東京タワーに行きました！本当？\n次の行です。';
    const pieces = assertPieces(text, 12);
    // Sentences are packed greedily while they fit.
    assert.deepEqual(pieces, ['今日は良い天気です。', '東京タワーに行きました！', '本当？\n次の行です。']);
    assert.ok(splitText('本当？\n次の行です。', 5).includes('本当？\n'), 'a line break ends a sentence');
  });

  it('does not break English at "e.g." or inside "3.14"', () => {
    const text = 'We use tools, e.g. this one. It costs 3.14 dollars today. That is all.';
    const pieces = assertPieces(text, 30);
    assert.ok(pieces.every((p) => !p.endsWith('e.g. ') && !p.endsWith('3.')), JSON.stringify(pieces));
    assert.ok(pieces.some((p) => p.includes('3.14')));
  });

  it('falls back to clauses, then words, for a sentence longer than the limit, never inside a word', () => {
    const text = 'This sentence, which is rather long, keeps going and going without any full stop at all';
    const pieces = assertPieces(text, 25);
    const words = new Set(text.split(/\s+/));
    for (const p of pieces) for (const w of p.trim().split(/[\s,]+/).filter((x) => x !== '')) assert.ok(words.has(w) || words.has(`${w},`), `"${w}" is not a whole word`);
  });

  it('never splits a surrogate pair, even in one long "word"', () => {
    const text = '😀'.repeat(30);
    const pieces = assertPieces(text, 7);
    assert.ok(pieces.every((p) => codePointLength(p) <= 7));
  });

  it('never cuts punctuation into a piece of its own, which the service would refuse (text_string_required)', () => {
    const text = 'This is sentence number 1 here. This is sentence number 2 here.';
    const pieces = assertPieces(text, 30);
    for (const p of pieces) assert.ok(isSpeakable(p), `piece ${JSON.stringify(p)} has nothing to speak; pieces: ${JSON.stringify(pieces)}`);
    for (const [t, max] of [['Wait (really)!', 8], ['Yes 😀 indeed.', 7], ['日本語です。', 5]] as const) {
      for (const p of assertPieces(t, max)) assert.ok(isSpeakable(p), `${JSON.stringify(t)} at ${max}: piece ${JSON.stringify(p)}`);
    }
  });

  it('holds its invariants for any text and limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('今日は', '良い天気', 'です', '。', '、', 'Hello', ' ', 'world', '.', '!', '\n', 'e.g.', '3.14', '😀', 'é', 'タワー', '？'), { maxLength: 80 }),
        fc.integer({ min: 1, max: 40 }),
        (parts, max) => {
          const text = parts.join('');
          const pieces = assertPieces(text, max);
          if (hasSpeech(text)) assert.ok(pieces.some(hasSpeech));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('splits a large text in bounded time (ICU segmenting is superlinear; windows keep it linear)', () => {
    const text = 'A sentence of ordinary length goes here. '.repeat(25_000); // 1 MB
    const started = performance.now();
    const pieces = splitText(text, 1000);
    const seconds = (performance.now() - started) / 1000;
    assert.equal(pieces.join(''), text);
    assert.ok(seconds < 20, `took ${seconds.toFixed(1)} s`);
  });
});

describe('StreamSplitter', () => {
  it('makes the same pieces from blocks of any size, with small windows, as one pass over the whole text (sentences shorter than the window)', () => {
    const oneShot = (text: string, max: number): string[] => {
      const sp = new StreamSplitter(max, Number.MAX_SAFE_INTEGER);
      return [...sp.push(text), ...sp.end()];
    };
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('今日は', '良い天気', 'です', '。', '、', 'Hello', ' ', 'world', '.', '!', '\n', 'e.g.', '3.14', '😀', 'é', 'タワー', '？', '   '), { maxLength: 120 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.nat(400), { maxLength: 10 }),
        (parts, max, window, cuts) => {
          const text = parts.join('');
          const sp = new StreamSplitter(max, window);
          const pieces: string[] = [];
          let at = 0;
          for (const cut of [...cuts.map((c) => c % (text.length + 1)), text.length].sort((a, b) => a - b)) {
            let end = cut;
            // Blocks never split a surrogate pair (the reader decodes whole characters).
            if (/[\ud800-\udbff]/.test(text[end - 1] ?? '')) end++;
            if (end <= at) continue;
            pieces.push(...sp.push(text.slice(at, end)));
            at = end;
          }
          pieces.push(...sp.end());
          assert.equal(pieces.join(''), text);
          for (const p of pieces) assert.ok(codePointLength(requestText(p, max)) <= max);
          // A sentence longer than a window is cut where the window ends, and words at the cut may
          // be segmented otherwise than in the whole: only then may the pieces differ.
          const sentences = [...new Intl.Segmenter(undefined, { granularity: 'sentence' }).segment(text)];
          if (sentences.every((x) => x.segment.length * 2 < window)) assert.deepEqual(pieces, oneShot(text, max));
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('the splitter\'s memory follows the pieces, whatever --max-chars and word length (issue 18.8)', () => {
  const SPLIT = new URL('../../src/text/split.js', import.meta.url).href;
  /** Runs the splitter over a generated text in a child process; returns its pieces' count and peak RSS (VmHWM) in MB. */
  const measure = (make: string, maxChars: number): { pieces: number; ok: boolean; longest: number; hwmMB: number } => {
    const script = `
      import { readFileSync } from 'node:fs';
      const { splitStream } = await import(${JSON.stringify(SPLIT)});
      const text = ${make};
      async function* blocks() { for (let i = 0; i < text.length; i += 65536) yield text.slice(i, i + 65536); }
      let pieces = 0, chars = 0, longest = 0;
      for await (const p of splitStream(blocks(), ${maxChars})) { pieces++; chars += p.length; longest = Math.max(longest, [...p].length); }
      const hwm = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
      console.log(JSON.stringify({ pieces, ok: chars === text.length, longest, hwmMB: Math.round(hwm / 1024) }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { pieces: number; ok: boolean; longest: number; hwmMB: number };
  };

  it('1.2 MB of prose at --max-chars 300000, and one 100,000-character word at 1000 and 300000: peak RSS under 300 MB', (t) => {
    if (!existsSync('/proc/self/status')) return t.skip('no /proc/self/status to read the peak RSS from');
    const prose = `(() => { let s = ''; for (let i = 0; s.length < 1_200_000; i++) s += 'Sentence ' + i + ' walks to the old station with a book under its arm. '; return s; })()`;
    for (const [label, make, max] of [
      ['1.2 MB of prose, --max-chars 300000', prose, 300_000],
      ['a 100,000-character word, --max-chars 1000', `'a'.repeat(100_000)`, 1000],
      ['a 100,000-character word, --max-chars 300000', `'a'.repeat(100_000)`, 300_000],
    ] as const) {
      const m = measure(make, max);
      assert.ok(m.ok, `${label}: the pieces do not join back to the text`);
      assert.ok(m.longest <= max, `${label}: a piece of ${m.longest} characters`);
      assert.ok(m.hwmMB < 300, `${label}: peak RSS ${m.hwmMB} MB`);
    }
  });

  it('cuts a word longer than a piece at grapheme boundaries only', () => {
    const word = 'e\u0301👍🏽'.repeat(20_000);
    const pieces = assertPieces(word, 1000);
    const graphemes = new Set(Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment('e\u0301👍🏽'), (s) => s.segment));
    for (const p of pieces) for (const g of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(p)) assert.ok(graphemes.has(g.segment), `a grapheme was cut: ${JSON.stringify(g.segment)}`);
  });
});

describe('segmentsOf', () => {
  /** The code units handed to Intl.Segmenter while `fn` runs. */
  function segmentedUnits(fn: () => void): number {
    const original = Intl.Segmenter.prototype.segment;
    let units = 0;
    Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, input: string) {
      units += input.length;
      return original.call(this, input);
    };
    try {
      fn();
    } finally {
      Intl.Segmenter.prototype.segment = original;
    }
    return units;
  }

  it('gives the segments of the whole text, around segments longer than its slices', () => {
    const long = `${'word '.repeat(3000)}and on`;
    const text = `Short one. ${long}. Then a few more. ${'x'.repeat(5000)} Last? Yes.`;
    const whole = (kind: 'sentence' | 'word' | 'grapheme', locale?: string) => Array.from(new Intl.Segmenter(locale, { granularity: kind }).segment(text), (s) => s.segment);
    assert.deepEqual(segmentsOf(text, 'sentence'), whole('sentence'));
    assert.deepEqual(segmentsOf(text, 'word'), whole('word', 'ja'));
    assert.deepEqual(segmentsOf(text, 'grapheme'), whole('grapheme'));
  });

  it('keeps the context before a long segment\'s kept slice: "x.Yz" (UAX #29 SB7) is no sentence end wherever the slice starts', () => {
    // The cut of a carried segment falls before the full stop for some of these starts: without
    // the letter before it, "." then "Y" was a sentence boundary inside one sentence.
    for (let k = 2040; k < 2056; k++) {
      const text = `${'a'.repeat(k)}x.Yz${' word'.repeat(1000)}.`;
      assert.deepEqual(segmentsOf(text, 'sentence'), [text], `k = ${k}`);
    }
    // Word segmentation too (WB6/WB7: "can't" is one word).
    const words = `${'a'.repeat(2048)}'t${'b'.repeat(3000)}`;
    assert.deepEqual(segmentsOf(words, 'word'), [words]);
  });

  it('segments a sentence that never ends (--print-text of a 3 MB paragraph) in time linear in its length: each code unit at most 3 times', () => {
    const text = 'hi '.repeat(100_000);
    let parts: string[] = [];
    const units = segmentedUnits(() => (parts = segmentsOf(text, 'sentence')));
    assert.deepEqual(parts, [text]);
    assert.ok(units <= 3 * text.length, `segmented ${units} code units for ${text.length}`);
  });
});

describe('splitText cuts between tokens, never inside one (README "Long text")', () => {
  /** Offsets (UTF-16) where `pieces` are cut. */
  const cutsOf = (pieces: string[]): number[] => {
    const cuts: number[] = [];
    let at = 0;
    for (const p of pieces.slice(0, -1)) cuts.push((at += p.length));
    return cuts;
  };

  it('keeps numbers, times, dates, decimals and URLs whole when the clause or word break fits', () => {
    for (const [text, max] of [
      ['Smith arrived at 10:30 on 2024-01-05.', 30],
      ['Smith arrived at 10:30 on 2024-01-05.', 20],
      ['The price was 3.14159 dollars or 1,234,567 yen, roughly.', 25],
      ['Go to https://example.com/a/b;c,d=1:2 and read it now please.', 40],
      [`${'word '.repeat(196)}total 1,234,567 dollars at 10:30 and more words to finish the sentence.`, 1000],
    ] as const) {
      const pieces = assertPieces(text, max);
      for (const cut of cutsOf(pieces)) assert.match(text[cut - 1]!, /\s/, `${JSON.stringify(text)} at ${max} is cut inside a token: ${JSON.stringify(pieces)}`);
    }
  });

  it('keeps a number, time or date that fits whole when the punctuation around it does not fit with it', () => {
    assert.deepEqual(assertPieces('We met at 10:30, then left.', 5), ['We ', 'met ', 'at ', '10:30', ', ', 'then ', 'left.']);
    assert.deepEqual(assertPieces('Paid on 2024-01-05, and 1,234,567; ok', 10), ['Paid on ', '2024-01-05', ', and ', '1,234,567; ', 'ok']);
    assert.deepEqual(assertPieces('1,234,567; ok', 9), ['1,234,567', '; ok']);
    assert.deepEqual(assertPieces('「10:30」に会う', 5), ['「', '10:30', '」に会う']);
    assert.deepEqual(assertPieces('(10:30)', 5), ['(', '10:30', ')']);
  });

  it('keeps a sentence of exactly the limit whole: the white space after it does not count against the cut', () => {
    assert.deepEqual(splitText('Hello there. How are you?', 12), ['Hello there. ', 'How are you?']);
    assert.deepEqual(splitText('one two three four', 9), ['one two ', 'three ', 'four']);
  });

  it('still cuts at a clause: punctuation followed by white space', () => {
    assert.deepEqual(splitText('One two three, four five six; seven eight nine', 16), ['One two three, ', 'four five six; ', 'seven eight nine']);
    // "x:y" is a token, not a clause: the cut after "world; " is the clause's, the next one at white space.
    assert.deepEqual(splitText('Hello, world; x:y and so on, right', 12), ['Hello, ', 'world; ', 'x:y and so ', 'on, right']);
  });

  it('in Japanese cuts at 、 and between words, never inside a number or a time', () => {
    const text = 'それから会議に出席しました、東京駅に午前10:30に到着しました。';
    assert.deepEqual(assertPieces(text, 10), ['それから会議に出席', 'しました、', '東京駅に午前', '10:30に到着しま', 'した。']);
    const pieces = assertPieces('東京駅に午前10:30に到着しました、それから1,234,567円を払いました。', 12);
    for (const token of ['10:30', '1,234,567']) assert.ok(pieces.some((p) => p.includes(token)), `${token} is cut: ${JSON.stringify(pieces)}`);
    // A run with no 、 is still cut between dictionary words, as before.
    const run = '東京駅に午前十時に到着しましてそれから会議に出席しましたがとても長かったです。';
    assert.ok(assertPieces(run, 12).length > 1);
  });

  it('cuts a single token longer than the limit inside it, at a grapheme boundary', () => {
    // As docs/cli.md §1 --max-chars says: a word longer than N is cut at a grapheme boundary.
    assert.deepEqual(assertPieces('1,234,567,890', 5), ['1,23', '4,56', '7,890']);
    assert.deepEqual(assertPieces('See https://example.com/x now', 10), ['See ', 'https://ex', 'ample.com/', 'x now']);
  });

  it('for any text of tokens and any limit over the longest token, cuts only after white space', () => {
    const tokens = ['1,234,567', '10:30', '2024-01-05', '3.14159', 'https://example.com/a,b;c:d', 'word', 'clause,', 'semi;', 'colon:', 'end.', '12:00:00', '$1,000.50'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...tokens), { minLength: 1, maxLength: 60 }), fc.constantFrom(' ', '  ', '\t'), fc.integer({ min: 0, max: 40 }), (words, space, extra) => {
        const text = words.join(space);
        const max = Math.max(...words.map((w) => w.length)) + space.length + extra;
        const pieces = assertPieces(text, max);
        for (const cut of cutsOf(pieces)) assert.match(text[cut - 1]!, /\s/, `${JSON.stringify(pieces)}`);
      }),
      { numRuns: 300 },
    );
  });
});
