/**
 * The spoken document (docs/cli.md §10): what Markdown, HTML and EPUB readers turn a document
 * into — blocks of plain text in reading order, each spoken as one or more sentences with the
 * engine's sentence pause after it, and chapter marks between them. Markup never reaches it: the
 * readers hand over only the words a person would read aloud.
 *
 * Every reader builds through one {@link DocumentBuilder}, which bounds what a hostile document
 * can make: characters of spoken text, blocks and nesting depth (docs/cli.md §10 "Limits").
 */
import { TtsError } from '../../errors.js';
import { containsJapaneseScript } from '../../engine/han.js';

/** One chapter mark: a block that starts a chapter, and the chapter's name. */
export interface ChapterMark {
  /** The chapter's name (the heading's or the table of contents entry's text). */
  title: string;
  /** Index into {@link SpokenDocument.blocks} of the chapter's first block. */
  block: number;
}

/** A document as it will be spoken. */
export interface SpokenDocument {
  /** The document's title (EPUB `dc:title`, front matter `title`, HTML `<title>`, else the first heading). */
  title: string | undefined;
  /** Its author (EPUB `dc:creator`, front matter `author`, HTML `<meta name="author">`). */
  author: string | undefined;
  /** Blocks of plain text in reading order: each ends a sentence (see {@link DocumentBuilder.endBlock}). */
  blocks: string[];
  /** Chapter starts in increasing block order; empty when the document has none. */
  chapters: ChapterMark[];
  /** Fenced or indented code blocks that were not read (for one `--verbose` notice). */
  skippedCode: number;
}

/** Limits on what one document may make (docs/cli.md §10 "Limits"). */
export interface DocumentLimits {
  /** Most spoken characters (UTF-16 code units) in all. */
  maxChars: number;
  /** Most elements open at once (HTML, EPUB) or nesting of Markdown containers. */
  maxDepth: number;
}

/** Defaults: a long book is ~3 M characters; real documents nest to a few dozen levels. */
export const DEFAULT_LIMITS: DocumentLimits = { maxChars: 32 * 1024 * 1024, maxDepth: 256 };

/** Characters that end a sentence already; a block ending otherwise gets a full stop. */
const SENTENCE_END = /[.!?。！？…:;：；]$/u;

/**
 * Collects a document's text block by block. Readers call {@link text} for each run of words
 * (whitespace in it is collapsed), {@link endBlock} where a heading, paragraph, list item, table
 * row or the like ends, and {@link chapter} before a block that starts a chapter.
 */
export class DocumentBuilder {
  readonly #blocks: string[] = [];
  readonly #chapters: ChapterMark[] = [];
  #parts: string[] = [];
  #chars = 0;
  #pendingChapter: string | undefined;
  skippedCode = 0;
  title: string | undefined;
  author: string | undefined;
  /** Text of the first heading, the title when the document names none. */
  firstHeading: string | undefined;

  constructor(
    readonly limits: DocumentLimits,
    /** Names the document in errors. */
    readonly what: string,
  ) {}

  /**
   * Adds words to the current block.
   * @throws TtsError `usage` (exit 2) once the document's spoken text passes `limits.maxChars`.
   */
  text(words: string): void {
    if (words === '') return;
    this.#chars += words.length;
    if (this.#chars > this.limits.maxChars) {
      throw new TtsError('usage', `${this.what} has more than ${this.limits.maxChars} characters of text to speak`, { hint: 'split the document, or give a part of it' });
    }
    this.#parts.push(words);
  }

  /** The text of the current block so far, whitespace collapsed (e.g. a heading's name). */
  peek(): string {
    return collapse(this.#parts.join(''));
  }

  /** Ends the current block: it becomes a sentence of its own. A block with nothing to say is dropped. */
  endBlock(): void {
    // A list item ending in a comma ("tools,") ends its sentence with the full stop alone.
    let block = collapse(this.#parts.join('')).replace(/[,、]+$/u, '');
    this.#parts = [];
    if (!/[\p{L}\p{N}]/u.test(block)) return;
    if (!SENTENCE_END.test(block)) block += containsJapaneseScript(block) ? '。' : '.';
    if (this.#pendingChapter !== undefined) {
      this.#chapters.push({ title: this.#pendingChapter, block: this.#blocks.length });
      this.#pendingChapter = undefined;
    }
    this.#blocks.push(block);
  }

  /**
   * Marks that the current block (or, when it has nothing to say, the next one that has) starts
   * a chapter called `title`. A second mark before any such block replaces the first (an empty
   * chapter has no time of its own).
   */
  chapter(title: string): void {
    const name = collapse(title);
    this.#pendingChapter = name === '' ? `Chapter ${this.#chapters.length + 1}` : name;
  }

  /**
   * @throws TtsError `usage` when `depth` passes `limits.maxDepth`.
   */
  checkDepth(depth: number): void {
    if (depth > this.limits.maxDepth) {
      throw new TtsError('usage', `${this.what} nests elements more than ${this.limits.maxDepth} deep`, { hint: 'this does not look like a document written to be read' });
    }
  }

  /** The finished document. */
  finish(): SpokenDocument {
    this.endBlock();
    return { title: this.title ?? this.firstHeading, author: this.author, blocks: this.#blocks, chapters: this.#chapters, skippedCode: this.skippedCode };
  }
}

/** Whitespace runs (line breaks included) made one space, trimmed. */
export function collapse(s: string): string {
  return s.replace(/\s+/gu, ' ').trim();
}

/**
 * How a URL is spoken: its host with its dots read out (`https://www.example.com/a?b` →
 * "example dot com"; a leading `www.` is dropped); nothing for a URL without a host (mailto:
 * gives its address's domain the same way).
 */
export function spokenUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '';
  }
  let host = parsed.hostname;
  if (host === '' && parsed.protocol === 'mailto:') host = parsed.pathname.split('@')[1] ?? '';
  host = host.replace(/^www\./u, '');
  return host.split('.').filter((p) => p !== '').join(' dot ');
}

/** Whether a run of text is a bare URL (`http://`, `https://`), spoken as its host. */
export function isBareUrl(word: string): boolean {
  return /^https?:\/\/\S+$/iu.test(word) && URL.canParse(word);
}

/**
 * `text` with every bare URL in it read as its host (see {@link spokenUrl}). Brackets or
 * parentheses around the URL alone go with it (`[https://x.org/a]`, as generated books print a
 * link's target); punctuation after it stays with the sentence.
 */
export function speakUrlsIn(text: string): string {
  if (!/https?:\/\//iu.test(text)) return text;
  return text
    .split(/(\s+)/u)
    .map((w) => {
      const m = /^([([<]?)(https?:\/\/\S*?)([)\]>]?)([.,;:!?]*)$/iu.exec(w);
      if (m === null || !isBareUrl(m[2]!)) return w;
      const enclosed = m[1] !== '' && m[3] !== '';
      return `${enclosed ? '' : m[1]}${spokenUrl(m[2]!)}${enclosed ? '' : m[3]}${m[4]}`;
    })
    .join('');
}

/** A chapter of a spoken document, with its text. */
export interface SpokenChapter {
  title: string;
  /** The chapter's blocks joined by blank lines (each block ends a sentence). */
  text: string;
}

/**
 * The document cut at its chapter marks. Blocks before the first mark form a chapter of their
 * own, named by the document's title (else "Opening"); a document without marks is one chapter.
 */
export function chaptersOf(doc: SpokenDocument): SpokenChapter[] {
  const out: SpokenChapter[] = [];
  const starts = doc.chapters.map((c) => c.block);
  const first = starts[0] ?? doc.blocks.length;
  if (first > 0) out.push({ title: doc.title ?? 'Opening', text: doc.blocks.slice(0, first).join('\n\n') });
  doc.chapters.forEach((c, i) => {
    out.push({ title: c.title, text: doc.blocks.slice(c.block, doc.chapters[i + 1]?.block ?? doc.blocks.length).join('\n\n') });
  });
  return out;
}
