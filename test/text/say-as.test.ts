/**
 * SSML say-as rendered per language (text/say-as.ts, docs/cli.md §11.1 tables), and the English
 * number words under it (text/number-words.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cardinalWords, ordinalWords, yearWords } from '../../src/text/number-words.js';
import { MAX_SAY_AS_CHARS, renderSayAs, SayAsError } from '../../src/text/say-as.js';

describe('English number words', () => {
  it('cardinals, ordinals and years', () => {
    assert.equal(cardinalWords(0), 'zero');
    assert.equal(cardinalWords(15), 'fifteen');
    assert.equal(cardinalWords(40), 'forty');
    assert.equal(cardinalWords(1_000_001), 'one million one');
    assert.equal(cardinalWords(999_999_999_999_999), 'nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred ninety-nine million nine hundred ninety-nine thousand nine hundred ninety-nine');
    assert.throws(() => cardinalWords(1e15), RangeError);
    assert.deepEqual([1, 2, 3, 5, 8, 9, 12, 20, 21, 30, 100].map(ordinalWords), ['first', 'second', 'third', 'fifth', 'eighth', 'ninth', 'twelfth', 'twentieth', 'twenty-first', 'thirtieth', 'one hundredth']);
    assert.deepEqual([1999, 2000, 2005, 2010, 1900, 1905, 800].map(yearWords), ['nineteen ninety-nine', 'two thousand', 'two thousand five', 'twenty ten', 'nineteen hundred', 'nineteen oh five', 'eight hundred']);
  });
});

describe('say-as', () => {
  const en = (kind: Parameters<typeof renderSayAs>[0], text: string, format?: string): string => renderSayAs(kind, format, text, 'en');
  const ja = (kind: Parameters<typeof renderSayAs>[0], text: string, format?: string): string => renderSayAs(kind, format, text, 'ja');

  it('characters / spell-out and digits', () => {
    assert.equal(en('characters', 'abc 12'), 'A B C one two');
    assert.equal(en('spell-out', 'N.A.S.A.'), 'N A S A');
    assert.equal(ja('characters', 'SQL'), 'エス、キュー、エル');
    assert.equal(en('digits', '2048'), 'two zero four eight');
    assert.equal(ja('digits', '2048'), 'ニゼロヨンハチ');
    assert.throws(() => en('digits', '20a'), SayAsError);
  });

  it('cardinal: sign, thousands commas, decimals', () => {
    assert.equal(en('cardinal', '-1,234.05'), 'minus one thousand two hundred thirty-four point zero five');
    assert.equal(ja('cardinal', '3000'), 'サンゼン');
    assert.equal(ja('cardinal', '-12'), 'マイナスジューニ');
    assert.throws(() => en('cardinal', '1,23'), SayAsError);
    assert.throws(() => en('cardinal', '1000000000000000'), SayAsError);
  });

  it('date in every field order; bad fields refused', () => {
    assert.equal(en('date', '2026-03-01'), 'March first, twenty twenty-six');
    assert.equal(en('date', '01/03/2026', 'dmy'), 'March first, twenty twenty-six');
    assert.equal(en('date', '12/25', 'md'), 'December twenty-fifth');
    assert.equal(en('date', '1999-12', 'ym'), 'December nineteen ninety-nine');
    assert.equal(en('date', '7', 'd'), 'the seventh');
    assert.equal(ja('date', '2026/4/1'), 'ニセンニジューロクネンシガツツイタチ');
    assert.throws(() => en('date', '2026-02-32'), /day 32/);
    assert.throws(() => en('date', '2026-02', 'ymd'), /not a date of the form ymd/);
    assert.throws(() => en('date', '2026-02-01', 'qq'), /format "qq"/);
  });

  it('time: 12-hour English by default, 24-hour Japanese by default', () => {
    assert.equal(en('time', '0:00'), "twelve o'clock A M");
    assert.equal(en('time', '13:07'), 'one oh seven P M');
    assert.equal(en('time', '13:07', 'hms24'), 'thirteen oh seven');
    assert.equal(en('time', '09:30:01'), 'nine thirty and one second A M');
    assert.equal(ja('time', '9:05'), 'クジゴフン');
    assert.equal(ja('time', '15:00', 'hms12'), 'ゴゴサンジ');
    assert.throws(() => en('time', '24:00'), /not a time of day/);
  });

  it('telephone: digit groups with a pause between them', () => {
    assert.equal(en('telephone', '+1 (555) 010-0199'), 'plus one, five five five, zero one zero, zero one nine nine');
    assert.equal(ja('telephone', '03-1234-5678'), 'ゼロサン ノ イチニーサンヨン ノ ゴーロクナナハチ');
    assert.throws(() => en('telephone', 'call me'), SayAsError);
  });
});

describe('say-as errors quote at most a short piece of the content', () => {
  it('100,000 digits as a cardinal: the message is short, not the whole number', () => {
    const huge = '9'.repeat(100_000);
    for (const [kind, content] of [['cardinal', huge], ['telephone', `x${huge}`], ['date', huge], ['time', huge], ['digits', `${huge}x`]] as const) {
      assert.throws(
        () => renderSayAs(kind, undefined, content, 'en'),
        (e: unknown) => e instanceof SayAsError && e.message.length < 200 && e.message.includes('…'),
        kind,
      );
    }
  });
});

describe('say-as content is at most 10,000 characters', () => {
  it('10,000 (white space collapsed, astral characters one each) is read; one more is refused, quoted short', () => {
    assert.equal(MAX_SAY_AS_CHARS, 10_000);
    assert.equal(renderSayAs('digits', undefined, `  ${'7 '.repeat(5_000)}\n`, 'en').split(' ').length, 5_000);
    assert.equal(renderSayAs('characters', undefined, '𝐀'.repeat(10_000), 'en').length, 2 * 10_000 + 9_999);
    for (const content of ['7'.repeat(10_001), '😀'.repeat(10_001), 'x'.repeat(1_000_000)]) {
      assert.throws(
        () => renderSayAs('characters', undefined, content, 'en'),
        (e: unknown) => e instanceof SayAsError && /^say-as characters: ".{40}…" is longer than 10,000 characters$/u.test(e.message),
      );
    }
  });
});
