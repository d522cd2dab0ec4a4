import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { KeyDecoder } from '../../src/player/keys.js';

describe('player keys (docs/cli.md §12.2)', () => {
  it('decodes every key of the player, arrows in normal and application cursor mode', () => {
    const d = new KeyDecoder();
    assert.deepEqual(d.push(' \x1b[A\x1b[B\x1b[C\x1b[Drq\x03\x1a'), ['pause', 'faster', 'slower', 'next', 'previous', 'repeat', 'quit', 'interrupt', 'suspend']);
    assert.deepEqual(d.push('\x1bOC\x1bOD\x1bOA\x1bOB'), ['next', 'previous', 'faster', 'slower']);
    assert.deepEqual(d.push('RQ'), ['repeat', 'quit']);
  });

  it('keeps an arrow split across reads at every offset', () => {
    const bytes = Buffer.from('a\x1b[Cb\x1bOD ');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const d = new KeyDecoder();
      assert.deepEqual([...d.push(bytes.subarray(0, cut)), ...d.push(bytes.subarray(cut))], ['next', 'previous', 'pause'], `cut at ${cut}`);
    }
  });

  it('ignores other keys and sequences: letters, Ctrl-→, F5, bracketed paste markers', () => {
    const d = new KeyDecoder();
    assert.deepEqual(d.push('xyz\x1b[1;5C\x1b[15~\x1b[200~hello\x1b[201~\x1bx'), []);
    assert.deepEqual(d.push(' '), ['pause'], 'the decoder is not left waiting after them');
  });

  it('Esc alone, then a key: the key counts, also when Esc came in an earlier read', () => {
    const d = new KeyDecoder();
    assert.deepEqual(d.push('\x1b q'), ['pause', 'quit']);
    assert.deepEqual(d.push('\x1b'), []);
    assert.deepEqual(d.push(' '), ['pause']);
  });

  it('holds at most 16 bytes of an unfinished sequence (bounded memory)', () => {
    const d = new KeyDecoder();
    assert.deepEqual(d.push(`\x1b[${'1'.repeat(40)}`), []);
    assert.deepEqual(d.push('C q'), ['pause', 'quit'], 'the over-long sequence was dropped, not completed by C');
  });
});
