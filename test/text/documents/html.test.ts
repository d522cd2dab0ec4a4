/** HTML and XHTML read as a person reads them (docs/cli.md §10 "HTML"). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { htmlInlineText, readHtml } from '../../../src/text/documents/html.js';
import { TtsError } from '../../../src/errors.js';

const read = (html: string, chapterLevel = 2, marks?: Map<string, string>) => readHtml(html, { chapterLevel, codePhrase: '', what: 'page.html', marks });

describe('readHtml', () => {
  it('reads blocks as sentences and skips script, style, nav, aside, header, footer and the head', () => {
    const html = `<!doctype html><html><head><title>The Page</title><meta name="author" content="Bo"><style>p{}</style></head>
      <body><header>Site menu</header><nav><a href="/">Home</a></nav><script>alert(1)</script>
      <h1>Welcome</h1><p>First <em>para</em>graph<br>goes on</p><ul><li>one</li><li>two</li></ul>
      <aside>ad</aside><div role="navigation">next</div><footer>© me</footer></body></html>`;
    const doc = read(html);
    assert.deepEqual(doc.blocks, ['Welcome.', 'First paragraph goes on.', 'one.', 'two.']);
    assert.equal(doc.title, 'The Page');
    assert.equal(doc.author, 'Bo');
  });

  it('reads alt text, a link as its text, a bare URL link as its host, and decodes entities', () => {
    const doc = read('<p><img src="a.png" alt="A red door"> See <a href="https://x.org/a">the docs</a> at <a href="https://www.example.com/">https://www.example.com/</a> &amp; more.</p>');
    assert.deepEqual(doc.blocks, ['A red door See the docs at example dot com & more.']);
  });

  it('reads ruby as its reading, not base and reading both', () => {
    const doc = read('<p><ruby>漢字<rp>(</rp><rt>かんじ</rt><rp>)</rp></ruby>を読む</p>');
    assert.deepEqual(doc.blocks, ['かんじを読む。']);
  });

  it('skips pre blocks, reads tables row by row', () => {
    const doc = read('<pre><code>make all</code></pre><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>');
    assert.deepEqual(doc.blocks, ['A, B.', '1, 2.']);
    assert.equal(doc.skippedCode, 1);
  });

  it('starts chapters at headings up to the level, and at marked ids', () => {
    const html = '<h1>Book</h1><p>a</p><h2>One</h2><p>b</p><h3>Sub</h3><p>c</p><p id="x">d</p>';
    assert.deepEqual(read(html, 2).chapters.map((c) => c.title), ['Book', 'One']);
    assert.deepEqual(read(html, 0, new Map([['x', 'Marked']])).chapters, [{ title: 'Marked', block: 6 }]);
  });

  it('refuses elements nested deeper than the limit (exit 2), in time linear in the input', () => {
    const html = '<div>'.repeat(100_000) + 'deep' + '</div>'.repeat(100_000);
    assert.throws(() => read(html), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /nests elements more than 256 deep/.test(e.message));
  });

  it('htmlInlineText keeps words, drops tags and comments', () => {
    assert.equal(htmlInlineText('<p align="center"><!-- x --><img alt="logo"> <b>Bold</b> words</p>'), 'logo Bold words');
  });
});
