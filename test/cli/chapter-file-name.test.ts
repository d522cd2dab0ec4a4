/** `--split-chapters` file names (docs/cli.md §10): no `/`, control or `\:*?"<>|` characters, at most 80 characters and 255 bytes for the whole name. */
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

describe('chapterFileName within the file system\'s 255 bytes of a name', () => {
  it('cuts a title of 4-byte characters (𠮷) by bytes too, at a whole character: the name is at most 255 bytes of UTF-8', () => {
    const name = chapterFileName(1, 1, '𠮷'.repeat(90), 'mp3');
    assert.ok(Buffer.byteLength(name) <= 255, `${Buffer.byteLength(name)} bytes`);
    assert.ok(name.isWellFormed());
    // "01 " and ".mp3" are 7 bytes: 62 characters of 4 bytes fill the rest.
    assert.equal(name, `01 ${'𠮷'.repeat(62)}.mp3`);
    // Three-byte characters (kana): 80 of them and the number and extension are 250 bytes: the 80 characters stay.
    assert.equal(chapterFileName(123, 1000, 'あ'.repeat(100), 'opus'), `0123 ${'あ'.repeat(80)}.opus`);
    // A title the bytes cut ends without the white space before the cut.
    assert.equal(chapterFileName(1, 1, `${'𠮷'.repeat(61)} 𠮷𠮷`, 'mp3'), `01 ${'𠮷'.repeat(61)}.mp3`);
  });
});
