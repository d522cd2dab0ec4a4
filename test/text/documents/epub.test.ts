/** EPUB 2 and 3 in reading order, chapters from the table of contents (docs/cli.md §10 "EPUB"). */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { readEpub } from '../../../src/text/documents/epub.js';
import { chaptersOf } from '../../../src/text/documents/model.js';
import { TtsError } from '../../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'tts-epub-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Writes a ZIP of `files` (strings or bytes) and returns its path. */
function book(files: Record<string, string | Uint8Array>): string {
  const zippable: Zippable = {};
  for (const [name, body] of Object.entries(files)) zippable[name] = typeof body === 'string' ? strToU8(body) : body;
  const path = join(dir, `book${n++}.epub`);
  writeFileSync(path, zipSync(zippable));
  return path;
}

const CONTAINER = '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>';
const page = (body: string): string => `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>${body}</body></html>`;

/** A small EPUB 3 book: two chapters from its nav, the second starting at a fragment. */
function epub3(extra: Record<string, string | Uint8Array> = {}): string {
  return book({
    mimetype: 'application/epub+zip',
    'META-INF/container.xml': CONTAINER,
    'OEBPS/content.opf': `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>A Small Book</dc:title><dc:creator>Jo Writer</dc:creator></metadata>
      <manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/></manifest>
      <spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>`,
    'OEBPS/nav.xhtml': page('<nav epub:type="toc"><ol><li><a href="text/one.xhtml">The Start</a><ol><li><a href="text/one.xhtml#s">Sub</a></li></ol></li><li><a href="text/two.xhtml#c2">The End</a></li></ol></nav>'),
    'OEBPS/text/one.xhtml': page('<h1>Start</h1><p>It was a dark night.</p><p id="s">Sub part.</p>'),
    'OEBPS/text/two.xhtml': page('<p>Preface of two.</p><h1 id="c2">End</h1><p>They lived.</p>'),
    ...extra,
  });
}

const read = (path: string, chapterLevel = 1) => readEpub(path, { chapterLevel, codePhrase: '', what: path });
const refused = (pattern: RegExp) => (e: unknown) => e instanceof TtsError && e.exitCode === 2 && pattern.test(e.message);

describe('readEpub', () => {
  it('reads the spine in order, chapters and names from the EPUB 3 nav, title and author from the OPF', async () => {
    const doc = await read(epub3());
    assert.equal(doc.title, 'A Small Book');
    assert.equal(doc.author, 'Jo Writer');
    assert.deepEqual(doc.blocks, ['Start.', 'It was a dark night.', 'Sub part.', 'Preface of two.', 'End.', 'They lived.']);
    assert.deepEqual(chaptersOf(doc).map((c) => c.title), ['The Start', 'The End']);
    assert.deepEqual((await read(epub3(), 2)).chapters.map((c) => c.title), ['The Start', 'Sub', 'The End']);
  });

  it('takes chapters from an EPUB 2 NCX when there is no nav', async () => {
    const path = book({
      'META-INF/container.xml': CONTAINER,
      'OEBPS/content.opf': `<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Old</dc:title></metadata><manifest><item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/><item id="a" href="a.html" media-type="application/xhtml+xml"/><item id="b" href="b.html" media-type="application/xhtml+xml"/></manifest><spine toc="ncx"><itemref idref="a"/><itemref idref="b"/></spine></package>`,
      'OEBPS/toc.ncx': '<ncx><navMap><navPoint><navLabel><text>Alpha</text></navLabel><content src="a.html"/><navPoint><navLabel><text>Inner</text></navLabel><content src="a.html#i"/></navPoint></navPoint><navPoint><navLabel><text>Beta</text></navLabel><content src="b.html"/></navPoint></navMap></ncx>',
      'OEBPS/a.html': page('<p>aaa</p><p id="i">inner</p>'),
      'OEBPS/b.html': page('<p>bbb</p>'),
    });
    const doc = await read(path);
    assert.deepEqual(doc.chapters, [{ title: 'Alpha', block: 0 }, { title: 'Beta', block: 2 }]);
  });

  it('reads a document once when the spine names it again with a #fragment (live-manual\'s layout)', async () => {
    // live-manual.en.epub (Debian's live-manual-epub) lists `about.xhtml#o8` … as manifest items and
    // spine entries of their own: each names the same file, which must be spoken once, at its first place.
    const path = book({
      'META-INF/container.xml': CONTAINER,
      'OEBPS/content.opf': `<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Manual</dc:title></metadata><manifest><item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/><item id="a#o1" href="a.xhtml#o1" media-type="application/xhtml+xml"/><item id="a#o2" href="a.xhtml#o2" media-type="application/xhtml+xml"/><item id="b" href="b.xhtml" media-type="application/xhtml+xml"/></manifest><spine toc="ncx"><itemref idref="a"/><itemref idref="a#o1"/><itemref idref="a#o2"/><itemref idref="b"/><itemref idref="a"/></spine></package>`,
      'OEBPS/toc.ncx': '<ncx><navMap><navPoint><navLabel><text>One</text></navLabel><content src="a.xhtml"/></navPoint><navPoint><navLabel><text>One, part</text></navLabel><content src="a.xhtml#o2"/></navPoint><navPoint><navLabel><text>Two</text></navLabel><content src="b.xhtml"/></navPoint></navMap></ncx>',
      'OEBPS/a.xhtml': page('<p id="o1">First.</p><p id="o2">Second.</p>'),
      'OEBPS/b.xhtml': page('<p>Third.</p>'),
    });
    const doc = await read(path);
    assert.deepEqual(doc.blocks, ['First.', 'Second.', 'Third.']);
    assert.deepEqual(doc.chapters, [{ title: 'One', block: 0 }, { title: 'One, part', block: 1 }, { title: 'Two', block: 2 }]);
  });

  it('takes an href with a malformed %-escape as written (was an internal error, exit 1)', async () => {
    const path = book({
      'META-INF/container.xml': CONTAINER,
      'OEBPS/content.opf': `<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Pct</dc:title></metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><item id="a" href="a%zz.xhtml" media-type="application/xhtml+xml"/><item id="b" href="b%20c.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="a"/><itemref idref="b"/></spine></package>`,
      'OEBPS/nav.xhtml': page('<nav epub:type="toc"><ol><li><a href="a%zz.xhtml">One</a></li><li><a href="b%20c.xhtml#%E0%A4%A">Two</a></li></ol></nav>'),
      'OEBPS/a%zz.xhtml': page('<p>First.</p>'),
      'OEBPS/b c.xhtml': page('<p>Second.</p><p id="%E0%A4%A">Third.</p>'),
    });
    const doc = await read(path);
    assert.deepEqual(doc.blocks, ['First.', 'Second.', 'Third.']);
    assert.deepEqual(doc.chapters, [{ title: 'One', block: 0 }, { title: 'Two', block: 2 }]);
  });

  it('gives each of many documents its own table of contents entries, also those written from the wrong folder', async () => {
    // Entries are grouped by document and wrong-folder paths looked up by their ending (once
    // a scan of every entry for every document, and of every document for every entry: a 5.7 MB
    // book of 19,000 documents and 300,000 entries took 65 s of CPU).
    const count = 300;
    // The package document at the root, the documents two folders down: a wrong-folder entry is
    // `text/d7.xhtml`, an ending of `OEBPS/text/d7.xhtml`.
    const files: Record<string, string> = { 'META-INF/container.xml': CONTAINER.replace('OEBPS/content.opf', 'content.opf') };
    const items: string[] = [];
    const links: string[] = [];
    for (let i = 0; i < count; i++) {
      items.push(`<item id="d${i}" href="OEBPS/text/d${i}.xhtml" media-type="application/xhtml+xml"/>`);
      files[`OEBPS/text/d${i}.xhtml`] = page(`<p>Doc ${i}.</p><p id="f">Part ${i}.</p>`);
      // Every third entry names the document from the wrong folder.
      links.push(`<li><a href="${i % 3 === 0 ? '' : 'OEBPS/'}text/d${i}.xhtml#f">Part ${i}</a></li>`);
    }
    files['content.opf'] = `<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Many</dc:title></metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>${items.join('')}</manifest><spine>${items.map((_, i) => `<itemref idref="d${i}"/>`).join('')}</spine></package>`;
    files['nav.xhtml'] = page(`<nav epub:type="toc"><ol>${links.join('')}</ol></nav>`);
    const doc = await read(book(files));
    assert.equal(doc.chapters.length, count);
    assert.equal(doc.blocks.length, 2 * count);
    for (const [i, c] of doc.chapters.entries()) assert.deepEqual(c, { title: `Part ${i}`, block: 2 * i + 1 });
  });

  it('refuses a DRM-protected book, but not one with obfuscated fonts only', async () => {
    const enc = (alg: string) => `<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="${alg}"/></enc:EncryptedData></encryption>`;
    await assert.rejects(read(epub3({ 'META-INF/encryption.xml': enc('http://www.w3.org/2001/04/xmlenc#aes128-cbc') })), refused(/protected by DRM .*aes128-cbc/));
    await assert.rejects(read(epub3({ 'META-INF/rights.xml': '<rights/>' })), refused(/protected by DRM/));
    const fonts = await read(epub3({ 'META-INF/encryption.xml': enc('http://www.idpf.org/2008/embedding') }));
    assert.equal(fonts.blocks.length, 6);
  });

  it('refuses a zip bomb by its compression ratio, before inflating it', async () => {
    // 64 MiB of one byte value compresses about 1000 to 1.
    const path = epub3({ 'OEBPS/text/two.xhtml': new Uint8Array(16 * 1024 * 1024 - 1).fill(0x20) });
    await assert.rejects(read(path), refused(/compressed \d+ to 1 .*zip bomb/));
  });

  it('refuses an entry larger than the cap from its declared size', async () => {
    const big = new Uint8Array(17 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24; // barely compressible
    await assert.rejects(read(epub3({ 'OEBPS/text/two.xhtml': big })), refused(/would unpack to \d+ bytes/));
  });

  it('refuses paths that escape the archive: entry names and hrefs', async () => {
    await assert.rejects(read(epub3({ '../evil.xhtml': 'x' })), refused(/invalid relative path/));
    const path = book({
      'META-INF/container.xml': CONTAINER,
      'OEBPS/content.opf': '<package><manifest><item id="a" href="../../etc/passwd.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="a"/></spine></package>',
    });
    await assert.rejects(read(path), refused(/points outside the book/));
  });

  it('refuses a file that is not a ZIP, and a ZIP that is no EPUB', async () => {
    const notZip = join(dir, 'plain.epub');
    writeFileSync(notZip, 'just text');
    await assert.rejects(read(notZip), refused(/not a readable EPUB/));
    await assert.rejects(read(book({ 'a.txt': 'x' })), refused(/container.xml is missing/));
  });

  for (const real of ['/usr/share/doc/ubuntu-packaging-guide-epub/ubuntu-packaging-guide.epub', '/usr/share/doc/live-manual/epub/live-manual.ja.epub']) {
    it(`reads a real book: ${real}`, async (t) => {
      if (!existsSync(real)) return t.skip('not installed (apt-get install ubuntu-packaging-guide-epub live-manual-epub)');
      const doc = await read(real);
      assert.ok(doc.title !== undefined && doc.blocks.length > 100);
      assert.ok(doc.chapters.length >= 2);
      // Tags of the book's markup and undecoded entities. (`<package>` in a sentence is the book's
      // own words, and live-manual's author line is escaped twice by its generator: `&lt;`.)
      const markup = doc.blocks.filter((b) => /<\/?(p|div|span|a|img|br|h[1-6]|li|ul|ol|em|strong|code|pre|table|tr|td|rt|ruby|section)\b[^>]*>|&(nbsp|amp|quot|apos|mdash|#\d+);/u.test(b));
      assert.deepEqual(markup.slice(0, 3), [], 'no tags or entities spoken');
    });
  }
});
