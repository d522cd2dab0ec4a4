/**
 * Text rewritten in passes that keeps, for each unit, where in the source it came from
 * (src/engine/mapped-text.ts): what the number reader rewrote must be told in the source's offsets
 * for the word timings (docs/cli.md §12.1), through passes that read each other's output.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MappedText, mappedOf, RunMappedText } from '../../src/engine/mapped-text.js';

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

// RunMappedText: MappedText's map kept as runs (the lexicon's, docs/cli.md §11.3, §12.1).

/** A small generator of numbers from a seed (xorshift), so the random edits are the same every run. */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** Random edits of `text`: in order, not overlapping, some empty (insertions), some the same text, some deletions. */
function randomEdits(text: string, random: () => number): { start: number; end: number; text: string }[] {
  const edits: { start: number; end: number; text: string }[] = [];
  let at = 0;
  while (at < text.length) {
    const start = at + Math.floor(random() * 4);
    if (start > text.length) break;
    const end = Math.min(text.length, start + Math.floor(random() * 4));
    const kind = random();
    const out = kind < 0.15 ? '' : kind < 0.3 ? text.slice(start, end) : 'xyz'.slice(0, 1 + Math.floor(random() * 3));
    edits.push({ start, end, text: out });
    at = end + 1;
  }
  return edits;
}

test('RunMappedText maps every range as MappedText does, through two passes of random edits', () => {
  const random = seeded(20240607);
  for (let round = 0; round < 300; round++) {
    const source = 'abcdefghijklmnopqrstuvwxyz'.slice(0, 1 + Math.floor(random() * 26));
    const first = randomEdits(source, random);
    let units = MappedText.of(source).edit(first);
    let runs = RunMappedText.of(source).edit(first);
    assert.equal(runs.text, units.text);
    const second = randomEdits(units.text, random);
    units = units.edit(second);
    runs = runs.edit(second);
    assert.equal(runs.text, units.text);
    assert.equal(runs.source, source);
    // MappedText's units: each one's origin, as its rewritten() and the word timings read them.
    const origins = (units as unknown as { origins: { start: number; end: number }[] }).origins;
    for (let s = 0; s < units.text.length; s++) {
      for (let e = s + 1; e <= units.text.length; e++) {
        assert.deepEqual(runs.sourceRange(s, e), { start: origins[s]!.start, end: origins[e - 1]!.end }, `${source} → ${units.text}: ${s}–${e}`);
      }
    }
    assert.equal(runs.changed, units.text !== source || units.rewritten().length > 0);
  }
});

test('RunMappedText: a word inside a replacement maps to the whole stretch it replaced; texts joined keep their maps', () => {
  const sql = RunMappedText.of('SQL and Kubernetes run.').edit([
    { start: 0, end: 3, text: 'structured query language' },
    { start: 8, end: 18, text: 'K' },
  ]);
  assert.equal(sql.text, 'structured query language and K run.');
  assert.deepEqual(sql.sourceRange(11, 16), { start: 0, end: 3 }); // query → SQL
  assert.deepEqual(sql.sourceRange(26, 29), { start: 4, end: 7 }); // and
  assert.deepEqual(sql.sourceRange(30, 31), { start: 8, end: 18 }); // K → Kubernetes
  assert.deepEqual(sql.sourceRange(32, 36), { start: 19, end: 23 }); // run.
  assert.ok(sql.changed);
  assert.ok(!RunMappedText.of('as it was').edit([{ start: 0, end: 2, text: 'as' }]).changed);
  const both = RunMappedText.concat([RunMappedText.of('Hi '), sql]);
  assert.equal(both.source, 'Hi SQL and Kubernetes run.');
  assert.deepEqual(both.sourceRange(3 + 30, 3 + 31), { start: 11, end: 21 });
  assert.deepEqual(mappedOf('abc', 'abc').changed, false);
  assert.deepEqual(mappedOf('abc', 'x y').sourceRange(2, 3), { start: 0, end: 3 });
});

test('RunMappedText.relativeTo tells a map in another map of the same source (an SSML span tidied on both sides)', () => {
  // Parts as sent and as written, each side's white space made one space and trimmed.
  const tidy = (m: RunMappedText): RunMappedText => m.replace(/\s+/gu, () => ' ').replace(/^ | $/gu, () => '');
  const whole = RunMappedText.concat([RunMappedText.of(' Use '), RunMappedText.of(' SQL now').edit([{ start: 1, end: 4, text: 'structured  query' }])]);
  const sent = tidy(whole);
  const written = tidy(RunMappedText.of(whole.source));
  assert.equal(sent.text, 'Use structured query now');
  assert.equal(written.text, 'Use SQL now');
  const mapped = sent.relativeTo(written);
  assert.equal(mapped.source, 'Use SQL now');
  assert.deepEqual(mapped.sourceRange(0, 3), { start: 0, end: 3 });
  assert.deepEqual(mapped.sourceRange(4, 14), { start: 4, end: 7 });
  assert.deepEqual(mapped.sourceRange(15, 20), { start: 4, end: 7 });
  assert.deepEqual(mapped.sourceRange(21, 24), { start: 8, end: 11 });
  assert.ok(!tidy(RunMappedText.of(' a  b ')).relativeTo(tidy(RunMappedText.of(' a  b '))).changed);
});
