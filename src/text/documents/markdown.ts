/**
 * Markdown read the way a person reads it (docs/cli.md §10 "Markdown"): tokenized by marked's
 * lexer (CommonMark with GFM tables), then its token tree is walked: headings, paragraphs, list
 * items, table rows and quoted paragraphs are sentences; emphasis, code markers, HTML, front
 * matter and link URLs are not spoken; a link is read as its text, a bare URL (`<https://…>`) as
 * its host; an image as its alt text; fenced and indented code blocks are skipped (a phrase may
 * stand in for them).
 *
 * Why marked and not micromark (mdast-util-from-markdown): both follow CommonMark, but micromark
 * took minutes on a hostile 1 MiB paragraph of `*a *a …` here (its emphasis resolution grows
 * faster than the text), marked's lexer a second — and a document's time must stay bounded.
 */
import { decodeHTML } from 'entities';
import { Lexer, type Token, type Tokens } from 'marked';
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

/** Largest Markdown source parsed, in UTF-16 code units: the lexer builds a whole token tree. */
export const MAX_MARKDOWN_CHARS = 4 * 1024 * 1024;

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
  // The lexer nests containers (block quotes, lists) by recursion; a hostile `>>>>…` is refused first.
  checkContainerDepth(source, limits.maxDepth, options.what);
  const doc = new DocumentBuilder(limits, options.what);
  const body = frontMatter(source, doc);
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(body);
  } catch (error) {
    if (error instanceof RangeError) throw new TtsError('usage', `${options.what} nests too deep to read`, { hint: 'this does not look like a document written to be read' });
    throw error;
  }
  for (const token of tokens) block(token, doc, options, 1);
  return doc.finish();
}

/** One block-level token: its text becomes one or more sentences. */
function block(token: Token, doc: DocumentBuilder, options: MarkdownOptions, depth: number): void {
  doc.checkDepth(depth);
  switch (token.type) {
    case 'heading': {
      const t = token as Tokens.Heading;
      doc.endBlock();
      inline(t.tokens, doc, depth);
      const name = doc.peek();
      doc.firstHeading ??= name === '' ? undefined : name;
      if (t.depth <= options.chapterLevel) doc.chapter(name);
      doc.endBlock();
      return;
    }
    case 'paragraph':
      inline((token as Tokens.Paragraph).tokens, doc, depth);
      doc.endBlock();
      return;
    case 'text':
      // Text directly in a tight list item.
      if ('tokens' in token && Array.isArray(token.tokens)) inline(token.tokens as Token[], doc, depth);
      else doc.text(speakUrlsIn(decodeHTML((token as Tokens.Text).text)));
      doc.endBlock();
      return;
    case 'table': {
      const t = token as Tokens.Table;
      // A row is read as one sentence, its cells separated by commas.
      for (const row of [t.header, ...t.rows]) {
        row.forEach((cell, i) => {
          if (i > 0) doc.text(', ');
          inline(cell.tokens, doc, depth + 1);
        });
        doc.endBlock();
      }
      return;
    }
    case 'blockquote':
      for (const child of (token as Tokens.Blockquote).tokens) block(child, doc, options, depth + 1);
      doc.endBlock();
      return;
    case 'list':
      for (const item of (token as Tokens.List).items) {
        for (const child of item.tokens) block(child, doc, options, depth + 1);
        doc.endBlock();
      }
      return;
    case 'code':
      doc.endBlock();
      doc.skippedCode++;
      if (options.codePhrase !== '') {
        doc.text(options.codePhrase);
        doc.endBlock();
      }
      return;
    case 'html':
      // A block of raw HTML: its words (not its tags, never a comment).
      doc.text(htmlInlineText((token as Tokens.HTML).text));
      doc.endBlock();
      return;
    default:
      // space, hr, def: nothing to say.
      return;
  }
}

/** The words of inline tokens, appended to the current block. */
function inline(tokens: readonly Token[] | undefined, doc: DocumentBuilder, depth: number): void {
  doc.checkDepth(depth);
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'text':
      case 'escape':
        if ('tokens' in token && Array.isArray(token.tokens) && token.tokens.length > 0) inline(token.tokens as Token[], doc, depth + 1);
        else doc.text(speakUrlsIn(decodeHTML((token as Tokens.Text).text)));
        break;
      case 'codespan':
        // The code's words are read, the backticks are not.
        doc.text(decodeHTML((token as Tokens.Codespan).text));
        break;
      case 'br':
        doc.text(' ');
        break;
      case 'image': {
        const alt = decodeHTML((token as Tokens.Image).text);
        if (alt !== '') doc.text(` ${alt} `);
        break;
      }
      case 'link': {
        const t = token as Tokens.Link;
        // `<https://example.com>` and bare links: the text is the URL itself.
        const text = decodeHTML(t.text);
        if (text === t.href || isBareUrl(text) || text === t.href.replace(/^mailto:/u, '')) doc.text(spokenUrl(t.href));
        else inline(t.tokens, doc, depth + 1);
        break;
      }
      case 'html':
        // Inline tags and comments: not spoken (text between tags is a token of its own).
        break;
      default:
        if ('tokens' in token && Array.isArray(token.tokens)) inline(token.tokens as Token[], doc, depth + 1);
        break;
    }
  }
}

/**
 * Front matter: a first line `---` (YAML) or `+++` (TOML) up to the same line again. Its
 * `title:` and `author:` (plain one-line values) become tags; none of it is spoken.
 * @returns the source after it.
 */
function frontMatter(source: string, doc: DocumentBuilder): string {
  const fence = source.startsWith('---\n') || source.startsWith('---\r\n') ? '---' : source.startsWith('+++\n') || source.startsWith('+++\r\n') ? '+++' : undefined;
  if (fence === undefined) return source;
  const lines = source.split('\n');
  const end = lines.findIndex((line, i) => i > 0 && line.replace(/\r$/u, '') === fence);
  if (end === -1) return source;
  frontMatterTags(lines.slice(1, end).join('\n'), doc);
  return lines.slice(end + 1).join('\n');
}

/** `title:` and `author:` of YAML or TOML front matter (only plain one-line values are taken). */
function frontMatterTags(value: string, doc: DocumentBuilder): void {
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

/** Most Markdown containers (block quotes, list items) open at once: real documents use a few. */
export const MAX_MARKDOWN_NESTING = 16;
/** Most leading whitespace of a line, in columns (a tab counts 4): deeper indentation is nesting. */
export const MAX_MARKDOWN_INDENT = 64;

/**
 * Refuses a source whose containers nest deeper than {@link MAX_MARKDOWN_NESTING} on one line, or
 * a line indented more than {@link MAX_MARKDOWN_INDENT} columns, before the lexer sees it: the
 * lexer handles each container level by recursion over the text inside it, so its time grows
 * with depth × size (2 MiB of 1400 nested list items took 72 s; bounded here, and the whole reading is bounded in time and memory by markdown-bounded.ts).
 * @throws TtsError `usage` (exit 2).
 */
function checkContainerDepth(source: string, max: number, what: string): void {
  const limit = Math.min(max, MAX_MARKDOWN_NESTING);
  let depth = 0;
  let indent = 0;
  let lineStart = true;
  const refuse = (why: string): TtsError => new TtsError('usage', `${what} ${why}`, { hint: 'this does not look like a document written to be read' });
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    // A line ends at LF, CR or CR LF (CommonMark §2.1).
    if (c === 0x0a || c === 0x0d) {
      lineStart = true;
      depth = 0;
      indent = 0;
      continue;
    }
    if (!lineStart) continue;
    // `>` quotes, and list bullets followed by a space, open one container each (`-----` is a rule).
    const next = source.charCodeAt(i + 1);
    if (c === 0x3e || ((c === 0x2d || c === 0x2a || c === 0x2b) && (next === 0x20 || next === 0x09))) {
      if (++depth > limit) throw refuse(`nests block quotes or lists more than ${limit} deep`);
    } else if (c === 0x20 || c === 0x09) {
      indent += c === 0x09 ? 4 : 1;
    } else {
      // Indentation counts before something on the line: a line of white space alone is blank.
      if (indent > MAX_MARKDOWN_INDENT) throw refuse(`has a line indented more than ${MAX_MARKDOWN_INDENT} columns (nesting that deep is refused)`);
      lineStart = false;
    }
  }
}
