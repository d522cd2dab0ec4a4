/**
 * Speech spans held compactly (src/text/span-list.ts): what is written comes back, span by span —
 * text across the 64 KiB chunks it is kept in (a character's bytes cut by a chunk's end), marks,
 * settings records shared by spans, breaks, texts kept to be made again when read — whole, in
 * blocks, and as the start of the text the script check reads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteLog, SpanList } from '../../src/text/span-list.js';

describe('a span list gives back what was written', () => {
  it('text across chunks, marks, settings, breaks and a span that only carries a break', () => {
    // Made texts are the record's bytes read as UTF-8, twice.
    const list = new SpanList((record) => record.toString('utf8').repeat(2));
    // 3-byte characters whose bytes straddle the first chunk's end.
    const long = 'x'.repeat(65_535) + '東雲'.repeat(40_000);
    list.appendText(long);
    list.endSpan({ newSentence: true });
    const settings = list.settings({ voice: list.name('ja-man-1'), language: 'ja', rate: 0.92, gainDb: -Infinity });
    list.addMark('here');
    list.addMark('and here');
    list.appendText('short ');
    list.appendMade(Buffer.from('made'), 'mademade');
    list.appendText(' end');
    const second = list.endSpan({ newSentence: false, settings, breakBeforeMs: 250 });
    list.startsSentence(second);
    const speaker = list.settings({ voice: list.name('en-man-1'), language: 'en', speaker: list.name('Alice') });
    list.appendText('Hi.');
    list.endSpan({ newSentence: true, settings: speaker, breakBeforeMs: 12.5 });
    list.addMark('last');
    list.endSpan({ breakBeforeMs: 1000 });
    const spans = [...list];
    assert.deepEqual(spans, [
      { text: long, newSentence: true },
      { text: 'short mademade end', voice: 'ja-man-1', language: 'ja', rate: 0.92, gainDb: -Infinity, marks: ['here', 'and here'], breakBeforeMs: 250, newSentence: true },
      { text: 'Hi.', voice: 'en-man-1', language: 'en', speaker: 'Alice', newSentence: true, breakBeforeMs: 12.5 },
      { text: '', marks: ['last'], breakBeforeMs: 1000 },
    ]);
    assert.equal(list.length, 4);
    assert.equal(list.textBytes, Buffer.byteLength(long) + Buffer.byteLength('short mademade end') + 3);
    const entries = [...list.entries()];
    assert.deepEqual(
      entries.map((e) => [...list.textBlocks(e)].join('')),
      spans.map((s) => s.text),
    );
    assert.ok([...list.textBlocks(entries[0]!)].every((b) => b.length <= 64 * 1024));
    // Without the mark names: the same spans and texts, the names read past.
    assert.deepEqual(
      [...list.entries(false)].map((e) => [list.textOf(e), e.span.marks]),
      spans.map((s) => [s.text, undefined]),
    );
    assert.equal(list.head(70_000), [long, 'short mademade end', 'Hi.', ''].join(' ').slice(0, 70_000));
    assert.equal(list.head(10_000_000), [long, 'short mademade end', 'Hi.', ''].join(' '));
  });
});

describe('a byte log', () => {
  it('reads back numbers and strings as written, across its chunks, and reads past a string without making it', () => {
    const log = new ByteLog();
    log.text('x'.repeat(65_530));
    const at = log.length;
    for (const n of [0, 127, 128, 300, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]) log.varint(n);
    log.float64(-Infinity);
    for (const name of ['first', 'δεύτερο', '三番目']) {
      log.varint(Buffer.byteLength(name));
      log.text(name);
    }
    const r = log.reader(at);
    assert.deepEqual([0, 1, 2, 3, 4, 5].map(() => r.varint()), [0, 127, 128, 300, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]);
    assert.equal(r.float64(), -Infinity);
    r.skipString();
    assert.equal(r.string(), 'δεύτερο');
    r.skipString();
    assert.equal(r.offset, log.length);
  });
});
