/**
 * HTML and XHTML read the way a person reads them (docs/cli.md §10 "HTML"), from htmlparser2's
 * event stream (it follows the HTML5 rules for implied end tags and decodes entities): headings,
 * paragraphs, list items, table rows and other blocks are sentences; `script`, `style`, `nav`,
 * `aside`, `header`, `footer`, `template` and the `head` are skipped (the `<title>` names the
 * document); `pre` is a code block (skipped like Markdown's); an image is read as its `alt`; a
 * link as its text (a bare URL as its host); ruby is read as its reading (`<rt>`), not its base
 * and reading both. Being event-driven, it holds no tree: deep nesting costs a counter, and is
 * refused past the limit.
 */
import { Parser } from 'htmlparser2';
import { DEFAULT_LIMITS, DocumentBuilder, isBareUrl, speakUrlsIn, spokenUrl, type DocumentLimits, type SpokenDocument } from './model.js';

/** How an HTML document is read. */
export interface HtmlOptions {
  /** Headings `h1`…`hN` with N ≤ this start chapters (`--chapter-level`; 0 = none). */
  chapterLevel: number;
  /** Spoken in place of a skipped `pre` block; '' = nothing. */
  codePhrase: string;
  /** Names the document in errors. */
  what: string;
  limits?: DocumentLimits;
  /** Element ids that start a chapter, with its name (EPUB table of contents fragments). */
  marks?: ReadonlyMap<string, string> | undefined;
}

/** Elements whose content is never read. */
const SKIPPED = new Set(['title', 'script', 'style', 'nav', 'aside', 'header', 'footer', 'template', 'head', 'noscript', 'rp', 'svg', 'math', 'object', 'iframe', 'select', 'button']);
/** ARIA landmark roles of the same kinds (`<div role="navigation">` of generated books). */
const SKIPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'doc-pagebreak', 'doc-toc']);
/** Elements that end a sentence where they start and end. */
const BLOCKS = new Set([
  'p', 'div', 'li', 'dt', 'dd', 'tr', 'blockquote', 'section', 'article', 'main', 'figcaption', 'caption', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'dl', 'table', 'figure', 'hr', 'body', 'address', 'details', 'summary',
]);

/**
 * Reads a whole HTML or XHTML document.
 * @throws TtsError `usage` (exit 2) for elements nested deeper than the limits allow, or too much text.
 */
export function readHtml(source: string, options: HtmlOptions): SpokenDocument {
  const doc = new DocumentBuilder(options.limits ?? DEFAULT_LIMITS, options.what);
  htmlInto(doc, source, options);
  return doc.finish();
}

/**
 * Reads one HTML or XHTML document into `doc` (an EPUB adds its spine's documents one by one).
 * Sets `doc.title` from `<title>` and `doc.author` from `<meta name="author">` when unset.
 * @throws TtsError `usage` as {@link readHtml}.
 */
export function htmlInto(doc: DocumentBuilder, source: string, options: HtmlOptions): void {
  /** Open elements (bounded by the depth limit). */
  const open: string[] = [];
  /** Length of `open` when the outermost skipped element opened; undefined = reading. */
  let skipFrom: number | undefined;
  let inTitle = false;
  let titleText = '';
  /** Inside `<ruby>`: base text waiting to learn whether a reading replaces it. */
  let rubyBase: string[] | undefined;
  let inRt = 0;
  /** Per open `<a>`: its href and the text seen inside it. */
  const links: { href: string; text: string[] }[] = [];
  let headingText: string | undefined;
  /** Cells seen in the current table row (a comma goes between them). */
  let cells = 0;

  const say = (words: string): void => {
    if (links.length > 0) links[links.length - 1]!.text.push(words);
    else doc.text(words);
  };
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        open.push(name);
        doc.checkDepth(open.length);
        if (name === 'title') inTitle = true;
        if (name === 'meta' && attrs.name?.toLowerCase() === 'author' && attrs.content) doc.author ??= attrs.content;
        if (skipFrom !== undefined) return;
        if (SKIPPED.has(name) || name === 'pre' || SKIPPED_ROLES.has(attrs.role ?? '') || attrs.hidden !== undefined) {
          if (name === 'pre') {
            doc.endBlock();
            doc.skippedCode++;
            if (options.codePhrase !== '') {
              doc.text(options.codePhrase);
              doc.endBlock();
            }
          }
          skipFrom = open.length;
          return;
        }
        const mark = attrs.id === undefined ? undefined : options.marks?.get(attrs.id);
        if (mark !== undefined) {
          doc.endBlock();
          doc.chapter(mark);
        }
        if (BLOCKS.has(name)) doc.endBlock();
        if (/^h[1-6]$/u.test(name)) headingText = '';
        if (name === 'ruby') rubyBase = [];
        else if (name === 'rt') inRt++;
        else if (name === 'a') links.push({ href: attrs.href ?? '', text: [] });
        else if (name === 'img' || (name === 'input' && attrs.type === 'image')) {
          if (attrs.alt) say(` ${attrs.alt} `);
        } else if (name === 'br') say(' ');
        else if (name === 'tr') cells = 0;
        else if ((name === 'td' || name === 'th') && cells++ > 0) say(', ');
      },
      ontext(text) {
        if (inTitle) titleText += text;
        if (skipFrom !== undefined) return;
        if (rubyBase !== undefined && inRt === 0) {
          rubyBase.push(text);
          return;
        }
        if (headingText !== undefined) headingText += text;
        say(speakUrlsIn(text));
      },
      onclosetag(name) {
        // htmlparser2 closes implied elements one by one, so the stack stays in step.
        const at = open.lastIndexOf(name);
        if (at !== -1) open.length = at;
        if (name === 'title') {
          inTitle = false;
          if (titleText.trim() !== '') doc.title ??= titleText.replace(/\s+/gu, ' ').trim();
        }
        if (skipFrom !== undefined) {
          if (open.length < skipFrom) skipFrom = undefined;
          return;
        }
        if (name === 'rt') {
          // The reading replaces its base: 漢字<rt>かんじ</rt> is read かんじ.
          if (inRt > 0) inRt--;
          if (rubyBase !== undefined) rubyBase = [];
        } else if (name === 'ruby') {
          const base = rubyBase ?? [];
          rubyBase = undefined;
          for (const t of base) say(t);
        } else if (name === 'a') {
          const link = links.pop();
          if (link !== undefined) {
            const text = link.text.join('');
            const bare = text.trim() === link.href || isBareUrl(text.trim());
            say(bare ? spokenUrl(link.href || text.trim()) : text);
          }
        }
        const level = /^h([1-6])$/u.exec(name);
        if (level !== null && headingText !== undefined) {
          const heading = headingText.replace(/\s+/gu, ' ').trim();
          headingText = undefined;
          if (heading !== '') doc.firstHeading ??= heading;
          if (Number(level[1]) <= options.chapterLevel) doc.chapter(heading);
        }
        if (BLOCKS.has(name)) doc.endBlock();
      },
    },
    { decodeEntities: true, recognizeSelfClosing: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(source);
  parser.end();
  doc.endBlock();
}

/**
 * The words of an HTML fragment, without tags and comments (Markdown's raw HTML blocks).
 * Whitespace is collapsed.
 */
export function htmlInlineText(html: string): string {
  const parts: string[] = [];
  let skipping = 0;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (SKIPPED.has(name) || name === 'pre') skipping++;
        else if (skipping === 0 && name === 'img' && attrs.alt) parts.push(` ${attrs.alt} `);
        else if (skipping === 0 && (BLOCKS.has(name) || name === 'br')) parts.push(' ');
      },
      ontext(text) {
        if (skipping === 0) parts.push(text);
      },
      onclosetag(name) {
        if ((SKIPPED.has(name) || name === 'pre') && skipping > 0) skipping--;
        else if (BLOCKS.has(name)) parts.push(' ');
      },
    },
    { decodeEntities: true, recognizeSelfClosing: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return parts.join('').replace(/\s+/gu, ' ').trim();
}
