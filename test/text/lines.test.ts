/** LineCutter (src/text/read.ts): the one line splitter of `--lines` (bytes) and `tts batch` (text). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LineCutter } from '../../src/text/read.js';

function cutAll<C extends Buffer | string>(cutter: LineCutter<C>, chunks: C[]): C[] {
  const out: C[] = [];
  for (const c of chunks) out.push(...cutter.cut(c));
  const last = cutter.end();
  if (last !== undefined) out.push(last);
  return out;
}

describe('LineCutter', () => {
  it('text: lines across chunk boundaries, CRLF split between chunks, a last line without LF', () => {
    const cutter = new LineCutter<string>('\n', (p) => p.join(''), (p) => Buffer.byteLength(p));
    assert.deepEqual(cutAll(cutter, ['a', 'b\r', '\nc\n\n', 'dé']), ['ab', 'c', '', 'dé']);
  });

  it('bytes: the same lines, and the size of the unfinished line in bytes', () => {
    const cutter = new LineCutter<Buffer>(0x0a, (p) => Buffer.concat(p), (b) => b.length);
    const lines = [...cutter.cut(Buffer.from('one\r\ntw'))];
    assert.deepEqual(lines.map(String), ['one']);
    assert.equal(cutter.pendingSize, 2);
    assert.deepEqual(cutAll(cutter, [Buffer.from('o\n')]).map(String), ['two']);
    assert.equal(cutter.end(), undefined);
  });
});
