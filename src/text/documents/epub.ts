/**
 * EPUB 2 and 3 read in reading order (docs/cli.md §10 "EPUB"; EPUB 3.3 §3–§5, OPF 2.0.1 §2):
 * `META-INF/container.xml` names the package document (OPF); its spine gives the XHTML documents
 * in reading order, read through the HTML rules (html.ts); chapters come from the table of
 * contents — the EPUB 3 navigation document's `toc` nav, else the EPUB 2 NCX — entries of level
 * ≤ `chapterLevel` (1 = the top level). A book with encrypted content (DRM: `encryption.xml`
 * naming anything but font obfuscation, or Adobe's `rights.xml`) is refused with the reason.
 */
import { posix } from 'node:path';
import { Parser } from 'htmlparser2';
import { TtsError } from '../../errors.js';
import { htmlInto } from './html.js';
import { DEFAULT_LIMITS, DocumentBuilder, collapse, type DocumentLimits, type SpokenDocument } from './model.js';
import { openZip, type ZipArchive, type ZipLimits } from './zip.js';

/** How an EPUB is read. */
export interface EpubOptions {
  /** Table of contents entries of this level or above start chapters (`--chapter-level`). */
  chapterLevel: number;
  /** Spoken in place of a skipped `pre` block; '' = nothing. */
  codePhrase: string;
  /** Names the book in errors (its path). */
  what: string;
  limits?: DocumentLimits;
  zipLimits?: ZipLimits;
}

/** One entry of the table of contents. */
export interface TocEntry {
  title: string;
  /** Level in the table of contents, 1 = top. */
  level: number;
  /** Archive path of the document it points into. */
  path: string;
  /** The `#fragment` (an element id), or undefined for the document's start. */
  fragment: string | undefined;
}

/** Encryption algorithms that only obfuscate fonts (EPUB OCF §4.2.6.3; Adobe's): not DRM. */
const FONT_OBFUSCATION = new Set(['http://www.idpf.org/2008/embedding', 'http://ns.adobe.com/pdf/enc#RC']);

/**
 * Reads an EPUB file.
 * @returns the spoken document with the book's title (`dc:title`) and author (`dc:creator`), and
 *   its chapters from the table of contents (from headings when it has none).
 * @throws TtsError `usage` (exit 2): not a ZIP or broken, DRM, a path that escapes the archive,
 *   missing package document, the zip and document limits.
 */
export async function readEpub(path: string, options: EpubOptions): Promise<SpokenDocument> {
  const zip = await openZip(path, options.what, options.zipLimits);
  try {
    return await readBook(zip, options);
  } finally {
    zip.close();
  }
}

async function readBook(zip: ZipArchive, options: EpubOptions): Promise<SpokenDocument> {
  const bad = (why: string): TtsError => new TtsError('usage', `${options.what} is not a readable EPUB: ${why}`, { hint: 'check that the file is a whole, DRM-free EPUB' });
  await refuseDrm(zip, options.what);
  if (!zip.names.has('META-INF/container.xml')) throw bad('META-INF/container.xml is missing');
  let opfPath: string | undefined;
  xml(await text(zip, 'META-INF/container.xml'), (name, attrs) => {
    if (name === 'rootfile' && opfPath === undefined && attrs['full-path'] !== undefined) opfPath = attrs['full-path'];
  });
  if (opfPath === undefined) throw bad('container.xml names no package document');
  const opf = parseOpf(await text(zip, inside(opfPath, '', options.what)));
  const resolveHref = (href: string, from: string): string => inside(percentDecoded(href.split('#')[0] ?? ''), posix.dirname(from) === '.' ? '' : posix.dirname(from), options.what);
  const opfRef = opfPath;

  // The table of contents: EPUB 3 nav first, else the NCX the spine names.
  let toc: TocEntry[] = [];
  const nav = [...opf.manifest.values()].find((item) => item.properties.split(/\s+/u).includes('nav'));
  const ncx = opf.tocId === undefined ? [...opf.manifest.values()].find((i) => i.mediaType === 'application/x-dtbncx+xml') : opf.manifest.get(opf.tocId);
  if (nav !== undefined) {
    const navPath = resolveHref(nav.href, opfRef);
    if (zip.names.has(navPath)) toc = parseNav(await text(zip, navPath), navPath, resolveHref);
  }
  if (toc.length === 0 && ncx !== undefined) {
    const ncxPath = resolveHref(ncx.href, opfRef);
    if (zip.names.has(ncxPath)) toc = parseNcx(await text(zip, ncxPath), ncxPath, resolveHref);
  }
  // Some generators write table of contents paths from the wrong folder: an entry whose path is
  // not in the book goes to the one spine document whose path ends with it. Indexed by those
  // endings (a path has a few folders), so a book of thousands of documents and entries is read in
  // time linear in them, not in their product.
  const spinePaths = new Set(opf.spine.map((id) => opf.manifest.get(id)).filter((i) => i !== undefined).map((i) => resolveHref(i.href, opfRef)));
  const byEnding = new Map<string, string | null>();
  for (const p of spinePaths) {
    for (let slash = p.indexOf('/'); slash !== -1; slash = p.indexOf('/', slash + 1)) {
      const ending = p.slice(slash + 1);
      byEnding.set(ending, byEnding.has(ending) ? null : p);
    }
  }
  for (const e of toc) {
    if (zip.names.has(e.path)) continue;
    const found = byEnding.get(e.path);
    if (found !== undefined && found !== null) e.path = found;
  }
  // The chosen entries of each document, in table of contents order.
  const chosen = new Map<string, TocEntry[]>();
  for (const e of toc) {
    if (e.level > options.chapterLevel) continue;
    const list = chosen.get(e.path);
    if (list === undefined) chosen.set(e.path, [e]);
    else list.push(e);
  }
  const doc = new DocumentBuilder(options.limits ?? DEFAULT_LIMITS, options.what);
  doc.title = opf.title;
  doc.author = opf.author;
  // A document is read once, at its first place in the spine: some generators (SiSU, e.g. Debian's
  // live-manual) list `file.xhtml#o8` … as items of their own, each naming the same file again.
  const read = new Set<string>();
  for (const idref of opf.spine) {
    const item = opf.manifest.get(idref);
    if (item === undefined) continue;
    if (!/html/iu.test(item.mediaType)) continue;
    const docPath = resolveHref(item.href, opfRef);
    if (read.has(docPath)) continue;
    read.add(docPath);
    const here = chosen.get(docPath) ?? [];
    const start = here.find((e) => e.fragment === undefined);
    doc.endBlock();
    if (start !== undefined) doc.chapter(start.title);
    const marks = new Map(here.filter((e) => e.fragment !== undefined).map((e) => [e.fragment!, e.title]));
    // Headings make chapters only when the book has no table of contents to go by.
    htmlInto(doc, await text(zip, docPath), { chapterLevel: toc.length === 0 ? options.chapterLevel : 0, codePhrase: options.codePhrase, what: `${options.what}: ${docPath}`, marks });
  }
  return doc.finish();
}

/** The package document's parts that reading needs (OPF 2.0.1 §2, EPUB 3.3 §5). */
interface Opf {
  title: string | undefined;
  author: string | undefined;
  manifest: Map<string, { href: string; mediaType: string; properties: string }>;
  /** Manifest ids in reading order (`linear="no"` items left out). */
  spine: string[];
  /** The spine's `toc` attribute: the NCX's manifest id. */
  tocId: string | undefined;
}

function parseOpf(source: string): Opf {
  const opf: Opf = { title: undefined, author: undefined, manifest: new Map(), spine: [], tocId: undefined };
  let field: 'title' | 'author' | undefined;
  let value = '';
  xml(
    source,
    (name, attrs) => {
      const local = name.replace(/^.*:/u, '');
      if (local === 'title' && name.startsWith('dc:') && opf.title === undefined) field = 'title';
      else if (local === 'creator' && name.startsWith('dc:') && opf.author === undefined) field = 'author';
      else if (local === 'item' && attrs.id !== undefined && attrs.href !== undefined) {
        opf.manifest.set(attrs.id, { href: attrs.href, mediaType: attrs['media-type'] ?? '', properties: attrs.properties ?? '' });
      } else if (local === 'itemref' && attrs.idref !== undefined && attrs.linear !== 'no') opf.spine.push(attrs.idref);
      else if (local === 'spine') opf.tocId = attrs.toc;
      value = '';
    },
    (t) => {
      if (field !== undefined) value += t;
    },
    () => {
      if (field !== undefined && collapse(value) !== '') opf[field] = collapse(value);
      field = undefined;
    },
  );
  return opf;
}

/** The EPUB 3 navigation document's `<nav epub:type="toc">`: nested `ol > li > a`. */
function parseNav(source: string, navPath: string, resolveHref: (href: string, from: string) => string): TocEntry[] {
  const out: TocEntry[] = [];
  let inToc = 0;
  let navDepth = 0;
  let olDepth = 0;
  let link: { href: string; text: string } | undefined;
  xml(
    source,
    (name, attrs) => {
      if (name === 'nav') {
        navDepth++;
        if (inToc === 0 && /\btoc\b/u.test(attrs['epub:type'] ?? attrs.role ?? '')) inToc = navDepth;
      } else if (inToc > 0 && name === 'ol') olDepth++;
      else if (inToc > 0 && name === 'a' && attrs.href !== undefined) link = { href: attrs.href, text: '' };
    },
    (t) => {
      if (link !== undefined) link.text += t;
    },
    (name) => {
      if (name === 'nav') {
        if (navDepth === inToc) inToc = 0;
        navDepth--;
      } else if (name === 'ol' && inToc > 0) olDepth--;
      else if (name === 'a' && link !== undefined) {
        out.push(entry(link.text, olDepth, link.href, navPath, resolveHref));
        link = undefined;
      }
    },
  );
  return out;
}

/** The EPUB 2 NCX's `navMap`: nested `navPoint`s with `navLabel/text` and `content@src`. */
function parseNcx(source: string, ncxPath: string, resolveHref: (href: string, from: string) => string): TocEntry[] {
  const out: TocEntry[] = [];
  let depth = 0;
  let label: string | undefined;
  let inText = false;
  xml(
    source,
    (name, attrs) => {
      const local = name.replace(/^.*:/u, '');
      if (local === 'navPoint') {
        depth++;
        label = '';
      } else if (local === 'text' && label !== undefined) inText = true;
      else if (local === 'content' && attrs.src !== undefined && label !== undefined) {
        out.push(entry(label, depth, attrs.src, ncxPath, resolveHref));
        label = undefined;
      }
    },
    (t) => {
      if (inText && label !== undefined) label += t;
    },
    (name) => {
      const local = name.replace(/^.*:/u, '');
      if (local === 'navPoint') depth--;
      else if (local === 'text') inText = false;
    },
  );
  return out;
}

function entry(title: string, level: number, href: string, from: string, resolveHref: (href: string, from: string) => string): TocEntry {
  const hash = href.indexOf('#');
  const fragment = hash === -1 ? undefined : percentDecoded(href.slice(hash + 1)) || undefined;
  return { title: collapse(title), level: Math.max(1, level), path: resolveHref(href, from), fragment };
}

/**
 * Refuses a book whose content is encrypted (DRM). Font obfuscation alone is not DRM.
 * @throws TtsError `usage` (exit 2) saying so.
 */
async function refuseDrm(zip: ZipArchive, what: string): Promise<void> {
  const drm = (why: string): TtsError => new TtsError('usage', `${what} is protected by DRM (${why}); tts cannot read it`, { hint: 'use a DRM-free copy of the book' });
  if (zip.names.has('META-INF/rights.xml')) throw drm('META-INF/rights.xml');
  if (!zip.names.has('META-INF/encryption.xml')) return;
  const algorithms: string[] = [];
  xml(await text(zip, 'META-INF/encryption.xml'), (name, attrs) => {
    if (name.replace(/^.*:/u, '') === 'EncryptionMethod' && attrs.Algorithm !== undefined) algorithms.push(attrs.Algorithm);
  });
  const other = algorithms.find((a) => !FONT_OBFUSCATION.has(a));
  if (other !== undefined) throw drm(`encrypted with ${other}`);
}

/**
 * A URL path or fragment with its `%XX` escapes decoded (RFC 3986 §2.1); one with a malformed
 * escape (`a%zz.xhtml`, a `%` cut from its UTF-8 sequence) is taken as written, as the archive may
 * hold that very name.
 */
function percentDecoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * An archive path for `href` relative to the folder `dir` (both archive paths).
 * @throws TtsError `usage` when it escapes the archive (`../` above its root, or absolute).
 */
function inside(href: string, dir: string, what: string): string {
  if (href.startsWith('/') || /^[a-z][a-z0-9+.-]*:/iu.test(href)) throw new TtsError('usage', `${what} is not a readable EPUB: ${href} points outside the book`, { hint: 'check that the file is a whole EPUB' });
  const path = posix.normalize(posix.join(dir, href));
  if (path === '..' || path.startsWith('../')) throw new TtsError('usage', `${what} is not a readable EPUB: ${href} points outside the book`, { hint: 'check that the file is a whole EPUB' });
  return path;
}

/** An entry as strict UTF-8 text (a byte order mark dropped). */
async function text(zip: ZipArchive, name: string): Promise<string> {
  const bytes = await zip.read(name);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new TtsError('usage', `${name} in the book is not UTF-8 text`, { hint: 'check that the file is a whole EPUB' });
  }
}

/** Runs htmlparser2 over XML (names kept as written, entities decoded). */
function xml(source: string, open: (name: string, attrs: Record<string, string>) => void, onText?: (t: string) => void, close?: (name: string) => void): void {
  const parser = new Parser(
    { onopentag: open, ...(onText === undefined ? {} : { ontext: onText }), ...(close === undefined ? {} : { onclosetag: close }) },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(source);
  parser.end();
}
