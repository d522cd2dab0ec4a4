/**
 * Text rewritten in passes that keeps, for each unit, where in the source it came from
 * (src/engine/mapped-text.ts): what the number reader rewrote must be told in the source's offsets
 * for the word timings (docs/cli.md §12.1), through passes that read each other's output.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MappedText } from '../../src/engine/mapped-text.js';

test('a replacement maps to what it replaced; copies keep their place; later passes map through earlier ones', () => {
  const source = '3-5日と1月5日';
  const ranged = MappedText.of(source).replace(/(?<=\d)-(?=\d)/gu, () => 'カラ');
  assert.equal(ranged.text, '3カラ5日と1月5日');
  // The second pass reads the first one's output; its offsets are still the source's.
  const read = ranged.replace(/\d日|\d月|\d/gu, (m) => ({ '3': 'サン', '5日': 'イツカ', '1月': 'イチガツ' })[m[0]] ?? m[0]);
  assert.equal(read.text, 'サンカライツカとイチガツイツカ');
  // The hyphen (nothing speakable) goes with the number before it.
  assert.deepEqual(read.rewritten(), [
    { start: 0, end: 2, text: 'サンカラ' },
    { start: 2, end: 4, text: 'イツカ' },
    { start: 5, end: 7, text: 'イチガツ' },
    { start: 7, end: 9, text: 'イツカ' },
  ]);
});

test('pieces map each part of a match on its own; an insertion joins the rewrite before it; a silent first part the one after', () => {
  const date = MappedText.of('2024-01-05に').replace(/(\d{4})-(\d\d)-(\d\d)/gu, () => [
    { length: 4, text: '2024' },
    { length: 1, text: '年' },
    { length: 2, text: '1' },
    { length: 1, text: '月' },
    { length: 2, text: '5日' },
  ]);
  assert.equal(date.text, '2024年1月5日に');
  const read = date.replace(/2024年|1月|5日/gu, (m) => ({ '2024年': 'ニセンニジューヨネン', '1月': 'イチガツ', '5日': 'イツカ' })[m[0]]!);
  assert.deepEqual(read.rewritten(), [
    { start: 0, end: 5, text: 'ニセンニジューヨネン' },
    { start: 5, end: 8, text: 'イチガツ' },
    { start: 8, end: 10, text: 'イツカ' },
  ]);
  const postal = MappedText.of('〒1500002').replace(/〒(\d{3})(\d{4})/gu, () => [
    { length: 1, text: 'ユービンバンゴー' },
    { length: 3, text: 'イチゴーゼロ' },
    { length: 0, text: 'ノ' },
    { length: 4, text: 'ゼロゼロゼロニー' },
  ]);
  assert.deepEqual(postal.rewritten(), [
    { start: 0, end: 4, text: 'ユービンバンゴーイチゴーゼロノ' },
    { start: 4, end: 8, text: 'ゼロゼロゼロニー' },
  ]);
  assert.throws(() => MappedText.of('12').replace(/12/gu, () => [{ length: 1, text: 'x' }]), /pieces of 1 units replace a match of 2/);
});

test('replacing a text by itself changes nothing; untouched text has no rewrites', () => {
  const same = MappedText.of('abc').replace(/b/gu, () => 'b');
  assert.equal(same.text, 'abc');
  assert.deepEqual(same.rewritten(), []);
  assert.deepEqual(MappedText.of('今日は').rewritten(), []);
});
