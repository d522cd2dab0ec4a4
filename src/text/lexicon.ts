/**
 * The pronunciation lexicon (docs/cli.md §11.3): `lexicon.toml` beside the config file, or the
 * file of `--lexicon FILE` (`lexicon = "path"` in the config file or a profile). Entries are per
 * language, one TOML table each (`[en]` `"SQL" = "sequel"`, `[ja]` `"東雲" = "しののめ"`), and are
 * applied to the text sent to the service — so the piece cache key (docs/cli.md §8) sees the
 * replacement — for plain text, documents, dialogue scripts and SSML text nodes alike.
 *
 * Matching: case-sensitive unless the file says `case-sensitive = false`; the longest key wins
 * where several start at one place; ONE pass over the text (a replacement is never searched
 * again, so `"SQL" = "SQL server"` cannot loop). A key is whole-word at each of its ends that is
 * a letter, digit or `_` of a spaced script (Latin, Greek, Cyrillic…): "SQL" does not match in
 * "MySQL". An end in kana or kanji matches anywhere (Japanese has no spaces between words), so
 * `"東雲"` matches inside `東雲の空`.
 *
 * Bounded: the file is at most {@link MAX_LEXICON_BYTES}, {@link MAX_LEXICON_ENTRIES} entries,
 * keys and replacements at most {@link MAX_KEY_CHARS} / {@link MAX_REPLACEMENT_CHARS}
 * characters. The keys are a trie walked in one left-to-right scan of each piece of text: the
 * time is linear in the text (times the longest key at most), whatever the number of entries. (A
 * regular expression alternation of 10,000 keys with a word boundary each took seconds per
 * kilobyte in V8: it tries every alternative at every place.)
 */
import { dirname, join } from 'node:path';
import { TtsError } from '../errors.js';
import { LANGUAGES, type Language } from '../protocol/types.js';
import { lineIndex, parseSettingsToml, readSettingsFile } from '../settings-file.js';
import { RunMappedText, type Rewrite as Replaced } from '../engine/mapped-text.js';
import { GatheredText } from './spans.js';
import { splitText } from './split.js';
import type { LinePiece, TextPiece } from './source.js';

/** Largest lexicon file read, in bytes (1 MiB: some 30,000 entries). */
export const MAX_LEXICON_BYTES = 1024 * 1024;
/** Most entries in one lexicon file, all languages together. */
export const MAX_LEXICON_ENTRIES = 20_000;
/** Longest key, in UTF-16 code units. */
export const MAX_KEY_CHARS = 100;
/** Longest replacement, in UTF-16 code units. */
export const MAX_REPLACEMENT_CHARS = 1000;

/** Rewrites a text of the given language as the lexicon says; returns it unchanged when no entry applies. */
export type Rewrite = (text: string, language: Language) => string;

/**
 * {@link Rewrite} with its map: the text as sent (`text`) and, for each of its UTF-16 units, the
 * stretch of the text given (`source`) it came from — a replacement's units the whole key it
 * replaced (engine/mapped-text.ts RunMappedText) — so that word timings and subtitles can be told
 * in the text the user wrote (docs/cli.md §12.1).
 */
export interface MappedRewrite {
  (text: string, language: Language): RunMappedText;
  /**
   * The same rewrite without its map: the text as sent alone, gathered in few strings (text/spans.ts
   * GatheredText) — for a text whose map would cost more than it is worth (text/span-list.ts: a
   * text node or turn of many megabytes, whose map would be objects by the million).
   */
  plain(text: string, language: Language): string;
}

/** A lexicon file, read and checked. */
export interface Lexicon {
  /** The file it was read from. */
  path: string;
  /** Whether keys match only in the same case (the default; `case-sensitive = false` turns it off). */
  caseSensitive: boolean;
  /** Entries per language: key → replacement, in file order. */
  entries: Map<Language, Map<string, string>>;
}

/** The lexicon used when no `--lexicon` is given: `lexicon.toml` in the config file's folder (docs/cli.md §7). */
export function defaultLexiconPath(configFile: string): string {
  return join(dirname(configFile), 'lexicon.toml');
}

/**
 * Reads and checks the lexicon file at `path`.
 * @param required true for a file named by `--lexicon` (a missing one is an error); false for the
 *   default `lexicon.toml` (a missing one means no lexicon).
 * @returns the lexicon, or undefined when an optional file does not exist.
 * @throws TtsError `usage` (exit 2) naming the file (and line where there is one): unreadable,
 *   not a regular file, over {@link MAX_LEXICON_BYTES}, or what {@link parseLexicon} refuses.
 */
export async function loadLexicon(path: string, required: boolean): Promise<Lexicon | undefined> {
  const text = await readLexiconText(path, required);
  return text === undefined ? undefined : parseLexicon(text, path);
}

/**
 * Parses a lexicon file's text (TOML 1.0, smol-toml).
 * @param path the file's name, for messages.
 * @throws TtsError `usage` (exit 2) naming `path:line`: a TOML error; a top-level key other than
 *   `case-sensitive` (a boolean); a table that is not a language of docs/protocol.md §1.3; a value
 *   that is not a string; an empty key; a key or replacement too long; more than
 *   {@link MAX_LEXICON_ENTRIES} entries; two keys equal but for case with `case-sensitive = false`.
 */
export async function parseLexicon(text: string, path: string): Promise<Lexicon> {
  const doc = await parseSettingsToml(text, path, HINT);
  const lines = lineIndex(text);
  const fail = (table: string[], key: string, why: string): TtsError => {
    const line = lines.get([...table, key].join('.'))?.line ?? 0;
    return new TtsError('usage', `${path}${line > 0 ? `:${line}` : ''}: ${why}`, { hint: HINT });
  };
  const lexicon: Lexicon = { path, caseSensitive: true, entries: new Map() };
  let count = 0;
  for (const [name, value] of Object.entries(doc)) {
    if (name === 'case-sensitive') {
      if (typeof value !== 'boolean') throw fail([], name, 'case-sensitive must be true or false');
      lexicon.caseSensitive = value;
      continue;
    }
    if (!(LANGUAGES as readonly string[]).includes(name)) {
      throw fail([], name, `"${name}" is not a language table: entries go under ${LANGUAGES.map((l) => `[${l}]`).join(' or ')}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date) throw fail([], name, `${name} must be a table: [${name}] with "word" = "reading" under it`);
    const entries = new Map<string, string>();
    for (const [key, replacement] of Object.entries(value as Record<string, unknown>)) {
      if (typeof replacement !== 'string') throw fail([name], key, `[${name}] "${key}" must be a string (the text to say instead)`);
      if (key.trim() === '') throw fail([name], key, `[${name}] has an empty key`);
      if (key.length > MAX_KEY_CHARS) throw fail([name], key, `[${name}] a key is longer than ${MAX_KEY_CHARS} characters`);
      if (replacement.length > MAX_REPLACEMENT_CHARS) throw fail([name], key, `[${name}] "${key}": the replacement is longer than ${MAX_REPLACEMENT_CHARS} characters`);
      if (++count > MAX_LEXICON_ENTRIES) throw fail([name], key, `more than ${MAX_LEXICON_ENTRIES} entries`);
      entries.set(key, replacement);
    }
    lexicon.entries.set(name as Language, entries);
  }
  if (!lexicon.caseSensitive) {
    for (const [language, entries] of lexicon.entries) {
      const seen = new Map<string, string>();
      for (const key of entries.keys()) {
        const other = seen.get(key.toLowerCase());
        if (other !== undefined) throw fail([language], key, `[${language}] "${key}" and "${other}" are the same key with case-sensitive = false`);
        seen.set(key.toLowerCase(), key);
      }
    }
  }
  return lexicon;
}

const HINT = 'see docs/cli.md §11.3 for the format: [en] "SQL" = "sequel"';

/** A letter, mark, digit or `_`: what a whole word is made of. */
const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;
/** Kana and kanji (and the prolonged sound mark): scripts written without spaces, where keys match anywhere. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々〆]/u;
/**
 * The keys' trie, by UTF-16 code unit, kept compact: nodes are numbers (0 is the root), all edges
 * live in one map keyed by `node * 65536 + code unit`, and the replacements in one map by node
 * (a Map per node cost about 200 bytes a node: 200 MB for a lexicon of long keys).
 */
interface Trie {
  edges: Map<number, number>;
  values: Map<number, string>;
}

/** Whether a character is part of a word of a spaced script (Latin, Greek, Cyrillic…): a key ending in one needs a neighbour that is not one; kana and kanji neighbours are word breaks. */
function needsBoundary(ch: string): boolean {
  if (ch === '') return false;
  return WORD_CHAR.test(ch) && !UNSPACED.test(ch);
}

/** The character (code point) that ends just before `at`, '' at the start. */
function charBefore(text: string, at: number): string {
  if (at <= 0) return '';
  const low = text.charCodeAt(at - 1);
  return at >= 2 && low >= 0xdc00 && low <= 0xdfff ? text.slice(at - 2, at) : text.charAt(at - 1);
}

/** The character (code point) that starts at `at`, '' at the end. */
function charAt(text: string, at: number): string {
  const cp = text.codePointAt(at);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/** Most times longer the lexicon may make a text (plus {@link MAX_GROWTH_SLACK}); past it, exit 2 (docs/cli.md §11.3). */
export const MAX_GROWTH = 4;
/** UTF-16 code units a text may grow by whatever its length (a short text with a long reading). */
export const MAX_GROWTH_SLACK = 64 * 1024;

/** The trie of one language's entries (keys folded to lower case per code unit when not case-sensitive). */
function trieOf(entries: ReadonlyMap<string, string>, caseSensitive: boolean): Trie {
  const trie: Trie = { edges: new Map(), values: new Map() };
  let nodes = 1;
  for (const [key, value] of entries) {
    let node = 0;
    for (let k = 0; k < key.length; k++) {
      const edge = node * 65536 + foldUnit(key.charCodeAt(k), caseSensitive);
      let child = trie.edges.get(edge);
      if (child === undefined) trie.edges.set(edge, (child = nodes++));
      node = child;
    }
    trie.values.set(node, value);
  }
  return trie;
}

/** A UTF-16 code unit, folded to lower case when not case-sensitive (when its lower case is one unit). */
function foldUnit(code: number, caseSensitive: boolean): number {
  if (caseSensitive || code < 0x41) return code;
  const lower = String.fromCharCode(code).toLowerCase();
  return lower.length === 1 ? lower.charCodeAt(0) : code;
}

/**
 * The lexicon as one function, for the text layer and SSML text nodes (docs/cli.md §11.3).
 * Each language's keys become a trie on first use; the text is scanned once, left to right: at
 * each place where a key may start (a word start, or a kana/kanji/non-word character), the trie
 * is walked as far as the text follows it (at most {@link MAX_KEY_CHARS} steps) and the longest
 * key whose end is allowed there is replaced; the scan goes on after it. So the time is at most
 * the text's length × the longest key, whatever the number of entries.
 * @returns a {@link MappedRewrite}: the text as sent, mapped to the text given (unchanged, with
 *   nothing rewritten, for languages without entries). It throws TtsError `usage` (exit 2) when
 *   the text would grow past {@link MAX_GROWTH} times its length plus {@link MAX_GROWTH_SLACK}
 *   code units.
 */
export function compileMappedLexicon(lexicon: Lexicon): MappedRewrite {
  const tries = new Map<Language, Trie | null>();
  const cs = lexicon.caseSensitive;
  /** The language's trie; null when it has no entries. */
  const trieFor = (language: Language): Trie | null => {
    let trie = tries.get(language);
    if (trie === undefined) {
      const entries = lexicon.entries.get(language);
      trie = entries === undefined || entries.size === 0 ? null : trieOf(entries, cs);
      tries.set(language, trie);
    }
    return trie;
  };
  /** Scans `text` once, handing each replacement to `edit` in order (start, end: UTF-16 offsets of the key; value: its replacement). */
  const scan = (text: string, trie: Trie, edit: (start: number, end: number, value: string) => void): void => {
    const { edges, values } = trie;
    // Bounded output (docs/cli.md §11.3): replacements longer than their keys cannot blow a text up
    // beyond a few times its size (a 1-letter key with a 1000-character value made 800 kB 400 MB).
    const limit = text.length * MAX_GROWTH + MAX_GROWTH_SLACK;
    let length = text.length;
    let i = 0;
    while (i < text.length) {
      let node = edges.get(foldUnit(text.charCodeAt(i), cs));
      // A key starting with a word character of a spaced script starts only where a word does.
      if (node === undefined || (needsBoundary(charAt(text, i)) && needsBoundary(charBefore(text, i)))) {
        i++;
        continue;
      }
      let found: { end: number; value: string } | undefined;
      let j = i + 1;
      for (;;) {
        const value = values.get(node);
        if (value !== undefined && !(needsBoundary(charBefore(text, j)) && needsBoundary(charAt(text, j)))) found = { end: j, value };
        if (j >= text.length) break;
        const child = edges.get(node * 65536 + foldUnit(text.charCodeAt(j), cs));
        if (child === undefined) break;
        node = child;
        j++;
      }
      if (found === undefined) {
        i++;
        continue;
      }
      length += found.value.length - (found.end - i);
      if (length > limit) throw growthError();
      // One pass: what is put in is never searched again.
      edit(i, found.end, found.value);
      i = found.end;
    }
  };
  const mapped = (text: string, language: Language): RunMappedText => {
    const trie = trieFor(language);
    if (trie === null) return RunMappedText.of(text);
    const edits: Replaced[] = [];
    scan(text, trie, (start, end, value) => edits.push({ start, end, text: value }));
    return RunMappedText.of(text).edit(edits);
  };
  const plain = (text: string, language: Language): string => {
    const trie = trieFor(language);
    if (trie === null) return text;
    // The text rewritten, gathered: 16 MB of prose with a replacement every 12 characters was
    // 2.8 million parts, 200 MB of them.
    const out = new GatheredText();
    let copied = 0;
    scan(text, trie, (start, end, value) => {
      out.add(text.slice(copied, start));
      out.add(value);
      copied = end;
    });
    if (copied === 0) return text;
    out.add(text.slice(copied));
    return out.text();
  };
  return Object.assign(mapped, { plain });
}

/** {@link compileMappedLexicon}'s rewrite, the text as sent alone (`tts lexicon check`, tests). */
export function compileLexicon(lexicon: Lexicon): Rewrite {
  const mapped = compileMappedLexicon(lexicon);
  return (text, language) => mapped(text, language).text;
}

/** The refusal of a text the lexicon would blow up (docs/cli.md §11.3): exit 2. */
function growthError(): TtsError {
  return new TtsError('usage', `the lexicon would make the text more than ${MAX_GROWTH} times as long (a short key with a long replacement, repeated)`, { hint: 'shorten the replacements, or check the lexicon with `tts lexicon check`' });
}

/**
 * The lexicon for one input read whole and rewritten in parts — SSML text nodes, a script's
 * turns, a document's chapters (docs/cli.md §11.3): every call shares one bound, so all it
 * returns is at most {@link MAX_GROWTH} times what it was given plus {@link MAX_GROWTH_SLACK}
 * code units. Each part's own bound alone let the parts' slack add up: 100,000 text nodes `x`
 * with a 1000-character reading (2.1 MB of SSML) became 99.8 MB of text in memory.
 * @returns a {@link MappedRewrite} that throws TtsError `usage` (exit 2) past the shared bound,
 *   as `rewrite` does past its own.
 */
export function sharedGrowthBound(rewrite: MappedRewrite): MappedRewrite {
  let given = 0;
  let made = 0;
  const count = (text: string, out: string): void => {
    given += text.length;
    made += out.length;
    if (made > given * MAX_GROWTH + MAX_GROWTH_SLACK) throw growthError();
  };
  const mapped = (text: string, language: Language): RunMappedText => {
    const out = rewrite(text, language);
    count(text, out.text);
    return out;
  };
  const plain = (text: string, language: Language): string => {
    const out = rewrite.plain(text, language);
    count(text, out);
    return out;
  };
  return Object.assign(mapped, { plain });
}

/** Longest text whose map {@link mapWithin} makes, and of an SSML span that keeps one (text/ssml.ts): UTF-16 code units (a text node, a script turn). */
export const MAX_MAPPED_TEXT_UNITS = 256 * 1024;
/**
 * What the maps {@link mapWithin} makes for one input may hold in all: UTF-16 code units of their
 * texts as sent and as written, and {@link MAP_RUN_UNITS} for each run.
 */
export const MAX_HELD_MAP_UNITS = 8 * 1024 * 1024;
/** A run of a map (engine/mapped-text.ts RunMappedText) counted as this many code units (its object, some 60 bytes). */
const MAP_RUN_UNITS = 32;

/**
 * The lexicon for an input read into a span list (text/span-list.ts: SSML text nodes, a script's
 * turns), with its map (by which word timings and subtitles are told in the text as written,
 * docs/cli.md §12.1) while maps stay small: a text longer than {@link MAX_MAPPED_TEXT_UNITS}, or
 * one that would take the maps made for the input past {@link MAX_HELD_MAP_UNITS}, is rewritten
 * without one (`rewrite.plain`) — the list holds the text as bytes, and a map is objects by the
 * million for megabytes of text (40 MiB of prose with a replacement every 12 characters) — and its
 * span's words are then told in the text as sent, as before the lexicon had maps.
 * @returns the text and its map (RunMappedText; unchanged, when the lexicon changed nothing), or
 *   the text alone (a string) when its map is not kept; throws as `rewrite` does.
 */
export function mapWithin(rewrite: MappedRewrite): (text: string, language: Language) => string | RunMappedText {
  let held = 0;
  return (text, language) => {
    if (text.length > MAX_MAPPED_TEXT_UNITS || held + 2 * text.length > MAX_HELD_MAP_UNITS) return rewrite.plain(text, language);
    const out = rewrite(text, language);
    if (!out.changed) return out;
    held += out.text.length + out.source.length + out.runCount * MAP_RUN_UNITS;
    return held > MAX_HELD_MAP_UNITS ? out.text : out;
  };
}

/**
 * The lexicon as a reader of an input read whole applies it (text/ssml.ts, text/script.ts):
 * with maps while they stay small ({@link mapWithin}), or, where nothing reads them
 * (`--print-text`, which prints the text and exits), the text alone (`rewrite.plain`): the same
 * text — both come from the one scan of {@link compileMappedLexicon} — and no map built.
 * @param maps whether the words and cues of the run are told in the text as written (docs/cli.md §12.1).
 * @returns what {@link mapWithin} returns, or with `maps` false the text alone (a string).
 */
export function lexiconReader(rewrite: MappedRewrite, maps: boolean): (text: string, language: Language) => string | RunMappedText {
  return maps ? mapWithin(rewrite) : (text, language) => rewrite.plain(text, language);
}

/**
 * The lexicon of a run (docs/cli.md §11.3): the file of `--lexicon` (`lexicon` in the config
 * file), else `lexicon.toml` beside the config file when it exists; none with `--no-lexicon`.
 * @param flag `--lexicon`'s value: a path, false for `--no-lexicon`, undefined when not given.
 * @param configFile the config file's path (src/cli/config-file.ts `configPath`).
 * @returns the rewrite function (with its map: {@link MappedRewrite}), or undefined when there is no lexicon.
 * @throws TtsError `usage` (exit 2) as {@link loadLexicon}.
 */
export async function lexiconFor(flag: string | boolean | undefined, configFile: string): Promise<MappedRewrite | undefined> {
  if (flag === false) return undefined;
  const lexicon = typeof flag === 'string' ? await loadLexicon(flag, true) : await loadLexicon(defaultLexiconPath(configFile), false);
  return lexicon === undefined ? undefined : compileMappedLexicon(lexicon);
}

/**
 * Reads a lexicon file without blocking or reading without end, like the config file
 * (settings-file.ts): a regular file of at most {@link MAX_LEXICON_BYTES}.
 * @returns the text, or undefined when the file does not exist and is not `required`.
 * @throws TtsError `usage` (exit 2) naming the file.
 */
function readLexiconText(path: string, required: boolean): Promise<string | undefined> {
  return readSettingsFile(path, {
    what: 'the lexicon',
    maxBytes: MAX_LEXICON_BYTES,
    required,
    hint: 'check the name given to --lexicon (or lexicon in the config file)',
    tooBigHint: `keep it under ${MAX_LEXICON_ENTRIES} entries`,
  });
}

/**
 * Pieces of plain text with the lexicon applied, each cut again to at most `maxChars` code points
 * (a replacement may lengthen a piece; text/split.ts); the parts of a `--lines` piece continue its
 * line. The parts of a piece the lexicon changed carry its map (`written`, shared by them all:
 * text/source.ts WrittenPiece), by which its words are told in the text as written (docs/cli.md
 * §12.1); a piece it left as it was goes on as before (a string, or a LinePiece without it).
 */
export async function* rewritePieces(pieces: AsyncIterable<TextPiece>, rewrite: MappedRewrite, language: Language, maxChars: number): AsyncIterable<TextPiece> {
  for await (const piece of pieces) {
    const rewritten = rewrite(typeof piece === 'string' ? piece : piece.text, language);
    const written = rewritten.changed ? rewritten : undefined;
    const parts = splitText(rewritten.text, maxChars);
    if (typeof piece === 'string') {
      for (const text of parts) yield written === undefined ? text : { text, written };
      continue;
    }
    const lineStart = 'lineStart' in piece && piece.lineStart;
    // The input before the line (its breaks, blank lines) goes with its first part.
    const before = 'before' in piece ? piece.before : undefined;
    for (const [i, text] of parts.entries()) {
      const line: LinePiece = before !== undefined && i === 0 ? { text, lineStart: lineStart && i === 0, before } : { text, lineStart: lineStart && i === 0 };
      yield written === undefined ? line : { ...line, written };
    }
  }
}
