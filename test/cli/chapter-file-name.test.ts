/** `--split-chapters` file names (docs/cli.md §10): no `/`, control or `\:*?"<>|` characters, at most 80 characters. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chapterFileName } from '../../src/cli/document-run.js';

describe('chapterFileName', () => {
  it('numbers the chapter and keeps its title', () => {
    assert.equal(chapterFileName(3, 12, 'Getting Set Up', 'mp3'), '03 Getting Set Up.mp3');
    assert.equal(chapterFileName(7, 120, 'a/b:c*d?"e"<f>|g\\h', 'wav'), '007 a b c d e f g h.wav');
  });

  it('leaves out C0 and C1 control characters (an ESC or CSI from the document never reaches a listing)', () => {
    assert.equal(chapterFileName(1, 2, 'Chap \u001b[2J one', 'mp3'), '01 Chap [2J one.mp3');
    assert.equal(chapterFileName(2, 2, 'Second \u009b31m part\u0085', 'mp3'), '02 Second 31m part.mp3');
    // Left out as the chapter's tags and the chapters track leave them out (chapters.ts metadataText).
    assert.equal(chapterFileName(1, 1, 'notes\u202Egpj.exe', 'mp3'), '01 notesgpj.exe.mp3');
    assert.equal(chapterFileName(1, 1, 'Ch\u001b]0;PWN\u0007one', 'mp3'), '01 Ch]0;PWNone.mp3');
  });

  it('cuts a long title at 80 characters, never inside a surrogate pair', () => {
    const name = chapterFileName(1, 1, `${'a'.repeat(79)}😀tail`, 'mp3');
    assert.equal(name, `01 ${'a'.repeat(79)}😀.mp3`);
    assert.ok(name.isWellFormed());
    assert.equal(chapterFileName(1, 1, 'x'.repeat(200), 'mp3'), `01 ${'x'.repeat(80)}.mp3`);
  });
});
