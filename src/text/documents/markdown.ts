/**
 * Markdown read the way a person reads it (docs/cli.md §10 "Markdown"): parsed by
 * mdast-util-from-markdown (micromark, CommonMark-exact, with the GFM table and front matter
 * extensions), then the syntax tree is walked: headings, paragraphs, list items, table rows and
 * quoted paragraphs are sentences; emphasis, code markers, HTML, front matter and link URLs are
 * not spoken; a link is read as its text, a bare URL (`<https://…>`) as its host; an image as its
 * alt text; fenced and indented code blocks are skipped (a phrase may stand in for them).
 */
import type { Nodes, Root, RootContent } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { frontmatter } from 'micromark-extension-frontmatter';
import { gfmTable } from 'micromark-extension-gfm-table';
import { TtsError } from '../../errors.js';
import { htmlInlineText } from './html.js';
import { DEFAULT_LIMITS, DocumentBuilder, isBareUrl, speakUrlsIn, spokenUrl, type DocumentLimits, type SpokenDocument } from './model.js';

/** How a Markdown document is read. */
export interface MarkdownOptions {
  /** Headings of this level or above (1 = `#` only) start chapters (`--chapter-level`). */
  chapterLevel: number;
  /** Spoken in place of a skipped code block; '' = nothing (`--code-phrase`). */
  codePhrase: string;
  /** Names the document in errors (its path). */
  what: string;
  limits?: DocumentLimits;
}

/** Largest Markdown source parsed, in UTF-16 code units: micromark builds a whole tree. */
export const MAX_MARKDOWN_CHARS = 8 * 1024 * 1024;

/**
 * Reads a Markdown document.
 * @param source the whole document (UTF-8 decoded).
 * @returns the spoken document; its title is front matter `title`, else the first heading.
 * @throws TtsError `usage` (exit 2) for a source over {@link MAX_MARKDOWN_CHARS}, nesting deeper
 *   than the limits allow, or too much text.
 */
export function readMarkdown(source: string, options: MarkdownOptions): SpokenDocument {
  if (source.length > MAX_MARKDOWN_CHARS) {
    throw new TtsError('usage', `${options.what} is larger than a Markdown document may be (${MAX_MARKDOWN_CHARS / 1024 / 1024} MiB)`, {
      hint: 'split it, or read it as plain text with --input-format text',
    });
  }
  const limits = options.limits ?? DEFAULT_LIMITS;
  // micromark nests containers (block quotes, lists) by recursion; a hostile `>>>>…` is refused first.
  checkContainerDepth(source, limits.maxDepth, options.what);
  const tree: Root = fromMarkdown(source, {
    extensions: [gfmTable(), frontmatter(['yaml', 'toml'])],
    mdastExtensions: [gfmTableFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml'])],
  });
  const doc = new DocumentBuilder(limits, options.what);
  for (const node of tree.children) block(node, doc, options, 1);
  return doc.finish();
}

/** One block-level node: its text becomes one or more sentences. */
function block(node: RootContent, doc: DocumentBuilder, options: MarkdownOptions, depth: number): void {
  doc.checkDepth(depth);
  switch (node.type) {
    case 'heading': {
      doc.endBlock();
      inline(node, doc, depth);
      const name = doc.peek();
      doc.firstHeading ??= name === '' ? undefined : name;
      if (node.depth <= options.chapterLevel) doc.chapter(name);
      doc.endBlock();
      return;
    }
    case 'paragraph':
    case 'tableCell':
      inline(node, doc, depth);
      if (node.type === 'paragraph') doc.endBlock();
      return;
    case 'table':
      for (const row of node.children) {
        // A row is read as one sentence, its cells separated by commas.
        row.children.forEach((cell, i) => {
          if (i > 0) doc.text(', ');
          inline(cell, doc, depth + 1);
        });
        doc.endBlock();
      }
      return;
    case 'blockquote':
    case 'list':
    case 'listItem':
    case 'footnoteDefinition':
      for (const child of node.children) block(child as RootContent, doc, options, depth + 1);
      doc.endBlock();
      return;
    case 'code':
      doc.skippedCode++;
      if (options.codePhrase !== '') {
        doc.text(options.codePhrase);
        doc.endBlock();
      }
      return;
    case 'html':
      // A block of raw HTML: its words (not its tags, never a comment).
      doc.text(htmlInlineText(node.value));
      doc.endBlock();
      return;
    case 'yaml':
      frontMatter(node.value, doc);
      return;
    default: {
      // TOML front matter (`+++`; a node type mdast's types do not list); thematicBreak and
      // definition have nothing to say.
      const other = node as { type: string; value?: unknown };
      if (other.type === 'toml' && typeof other.value === 'string') frontMatter(other.value, doc);
      return;
    }
  }
}

/** The words of an inline subtree, appended to the current block. */
function inline(node: Nodes, doc: DocumentBuilder, depth: number): void {
  doc.checkDepth(depth);
  switch (node.type) {
    case 'text':
      doc.text(speakUrlsIn(node.value));
      return;
    case 'inlineCode':
      // The code's words are read, the backticks are not.
      doc.text(node.value);
      return;
    case 'break':
      doc.text(' ');
      return;
    case 'image':
    case 'imageReference':
      if (node.alt) doc.text(` ${node.alt} `);
      return;
    case 'link': {
      // `<https://example.com>` and GFM-less bare links: the text is the URL itself.
      const only = node.children.length === 1 && node.children[0]?.type === 'text' ? node.children[0].value : undefined;
      if (only !== undefined && (only === node.url || isBareUrl(only) || only === node.url.replace(/^mailto:/u, ''))) {
        doc.text(spokenUrl(node.url));
        return;
      }
      break;
    }
    case 'html':
      // Inline tags and comments: not spoken (text between tags is a text node of its own).
      return;
    case 'footnoteReference':
      return;
    default:
      break;
  }
  if ('children' in node) for (const child of node.children) inline(child as Nodes, doc, depth + 1);
}

/** `title:` and `author:` of YAML or TOML front matter (only plain one-line values are taken). */
function frontMatter(value: string, doc: DocumentBuilder): void {
  for (const line of value.split('\n')) {
    const sep = line.search(/[:=]/u);
    if (sep <= 0) continue;
    const key = line.slice(0, sep).trim().toLowerCase();
    const raw = line.slice(sep + 1).trim().replace(/^["']|["']$/gu, '');
    if (raw === '') continue;
    if (key === 'title') doc.title ??= raw;
    else if (key === 'author') doc.author ??= raw;
  }
}

/**
 * Refuses a source whose block quotes or list markers nest deeper than `max` on one line before
 * micromark sees it (its tokenizer recurses per container level).
 * @throws TtsError `usage` (exit 2).
 */
function checkContainerDepth(source: string, max: number, what: string): void {
  let depth = 0;
  let lineStart = true;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x0a) {
      lineStart = true;
      depth = 0;
      continue;
    }
    if (!lineStart) continue;
    // `>` quotes, list bullets and the spaces between them open one container each.
    if (c === 0x3e || c === 0x2d || c === 0x2a || c === 0x2b) {
      if (++depth > max) throw new TtsError('usage', `${what} nests block quotes or lists more than ${max} deep`, { hint: 'this does not look like a document written to be read' });
    } else if (c !== 0x20 && c !== 0x09) lineStart = false;
  }
}
