/**
 * The small TOML settings files tts reads (docs/cli.md §7 the config file, §11.3 the lexicon):
 * read without ever blocking or reading without end, and where each key is set, for messages
 * that name the line.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { formatByteSize } from './byte-size.js';
import { TtsError } from './errors.js';
import { strictUtf8Document } from './text/utf8.js';

/** How to read one kind of settings file, and what to say when it cannot be read. */
export interface SettingsFileKind {
  /** How messages name it: `the config file`, `the lexicon`. */
  what: string;
  /** The most bytes read; a larger file is refused. */
  maxBytes: number;
  /** Whether a missing file is an error (a file named by a flag) rather than none. */
  required: boolean;
  /** The hint of an unreadable file. */
  hint: string;
  /** The hint of a file over `maxBytes`. */
  tooBigHint: string;
}

/**
 * Reads a settings file: opened non-blocking (a FIFO with no writer would otherwise hang), refused
 * unless it is a regular file (symlinks followed) of at most `kind.maxBytes`, and never read past
 * that many bytes even if it grows meanwhile; its bytes must be strict UTF-8 (TOML 1.0; a byte
 * order mark is kept, for the TOML parser to judge).
 * @returns the text (UTF-8), or undefined when there is no file and it is not `required`.
 * @throws TtsError `usage` (exit 2) naming the file: unreadable, missing when required, not a
 *   regular file (FIFO, folder, socket, device), too big, or not UTF-8 (`PATH:LINE:` and the
 *   byte offset of the first bad byte).
 */
export async function readSettingsFile(path: string, kind: SettingsFileKind): Promise<string | undefined> {
  const unreadable = (cause: unknown): TtsError => {
    const code = (cause as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'error');
    return new TtsError('usage', `cannot read ${kind.what} ${path} (${why})`, { cause, hint: kind.hint });
  };
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (!kind.required && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
    throw unreadable(cause);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      const type = info.isFIFO() ? 'a FIFO' : info.isDirectory() ? 'a folder' : info.isSocket() ? 'a socket' : 'a device';
      throw new TtsError('usage', `${kind.what} ${path} is ${type}, not a regular file`, { hint: kind.hint });
    }
    const tooBig = (): TtsError => new TtsError('usage', `${kind.what} ${path} is larger than ${formatByteSize(kind.maxBytes)}`, { hint: kind.tooBigHint });
    if (info.size > kind.maxBytes) throw tooBig();
    const buffer = Buffer.alloc(kind.maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > kind.maxBytes) throw tooBig();
    }
    // TOML 1.0: "A TOML file must be a valid UTF-8 encoded Unicode document" — refused, not read
    // with U+FFFD in place of what it could not decode.
    const decoded = strictUtf8Document(buffer.subarray(0, length));
    if ('problem' in decoded) {
      const { line, offset } = decoded.problem;
      throw new TtsError('usage', `${path}:${line}: ${kind.what} is not valid UTF-8 text (first bad byte at offset ${offset})`, {
        hint: 'a TOML file is UTF-8: convert it, e.g. iconv -f LATIN1 -t UTF-8',
      });
    }
    return decoded.text;
  } catch (cause) {
    if (cause instanceof TtsError) throw cause;
    throw unreadable(cause);
  } finally {
    await handle.close().catch(() => {});
  }
}

/**
 * Parses a settings file's TOML (TOML 1.0, smol-toml).
 * @param path the file's name, for messages.
 * @throws TtsError `usage` (exit 2) naming `path:line` and what is wrong.
 */
export async function parseSettingsToml(text: string, path: string, hint: string): Promise<Record<string, unknown>> {
  const { parse, TomlError } = await import('smol-toml');
  try {
    return parse(text) as Record<string, unknown>;
  } catch (cause) {
    const line = cause instanceof TomlError ? cause.line : 0;
    const why = (cause instanceof Error ? cause.message : String(cause)).split('\n')[0] ?? '';
    throw new TtsError('usage', `${path}${line > 0 ? `:${line}` : ''}: not valid TOML: ${why}`, { cause, hint });
  }
}

/** Where a key of a TOML document is first set. */
export interface KeyPlace {
  /** 1-based line of the key. */
  line: number;
  /**
   * Its value as written, when that is one bare TOML value — a number (`1e400`, `0x10`, `1_000`,
   * `inf`), a boolean or a date, a trailing comment and the spaces around it left out — for
   * messages that quote a number the parsed value has lost. Undefined for a string, an array and a table.
   */
  value?: string;
}

/**
 * Where each table header and each key of a TOML document is first set, by its full dotted path:
 * `voice` under `[profile.work]`, a top-level dotted `profile.work.voice = …`, and `voice` inside
 * an inline table `profile = { work = { voice = … } }` are all `profile.work.voice`.
 */
export type LineIndex = ReadonlyMap<string, KeyPlace>;

/** The characters that end a bare key (`A-Za-z0-9_-` in TOML 1.0): white space and TOML's punctuation; any other is read as part of it. */
const NOT_BARE = new Set([' ', '\t', '\r', '\n', '=', '.', '[', ']', '{', '}', ',', '#', '"', "'"]);

/**
 * Finds, in one pass over the text as TOML writes it (smol-toml gives no positions), where each
 * table header (`[a.b]`, `[[a.b]]`) and each key is first set, by its full dotted path
 * ({@link LineIndex}), with the value of a key set to one bare value ({@link KeyPlace.value}).
 * It follows TOML's structure, not its lines: strings (basic and literal, multi-line ones with
 * escapes and up to two quotes ending their text), comments, arrays over several lines, inline
 * tables nested in each other and written over several lines (TOML 1.1, which smol-toml reads).
 * Keys inside an array (an inline table in an array) have no path and are not listed; quoted keys
 * count as bare ones (`"sample-rate" =` is `sample-rate`). Meant for a document the parser has
 * accepted: on one it refuses, it guesses and still ends.
 */
export function lineIndex(text: string): LineIndex {
  const index = new Map<string, KeyPlace>();
  const n = text.length;
  let i = 0;
  let line = 1;
  const blank = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\r')) i++;
  };
  /** Skips blanks, comments and line ends. */
  const gap = (): void => {
    for (;;) {
      blank();
      if (text[i] === '#') while (i < n && text[i] !== '\n') i++;
      if (text[i] !== '\n') return;
      i++;
      line++;
    }
  };
  const skipLine = (): void => {
    while (i < n && text[i] !== '\n') i++;
  };
  /** Skips the string at `i`; returns a one-line string's text (escapes decoded where JSON's), for a key. */
  const string = (): string | undefined => {
    const quote = text[i]!;
    const triple = quote.repeat(3);
    if (text.startsWith(triple, i)) {
      for (i += 3; i < n; ) {
        if (text[i] === '\n') line++;
        if (quote === '"' && text[i] === '\\') {
          if (text[i + 1] === '\n') line++;
          i += 2;
        } else if (text.startsWith(triple, i)) {
          i += 3;
          for (let extra = 0; extra < 2 && text[i] === quote; extra++) i++;
          return undefined;
        } else i++;
      }
      return undefined;
    }
    const start = ++i;
    while (i < n && text[i] !== quote && text[i] !== '\n') i += quote === '"' && text[i] === '\\' ? 2 : 1;
    const body = text.slice(start, Math.min(i, n));
    if (text[i] === quote) i++;
    if (quote === "'" || !body.includes('\\')) return body;
    try {
      return JSON.parse(`"${body}"`) as string;
    } catch {
      return body;
    }
  };
  /** A dotted key's parts (`a . "b" . c`); undefined when there is no key at `i`. */
  const key = (): string[] | undefined => {
    const parts: string[] = [];
    for (;;) {
      blank();
      let part: string | undefined;
      if (text[i] === '"' || text[i] === "'") part = string();
      else {
        const start = i;
        while (i < n && !NOT_BARE.has(text[i]!)) i++;
        if (i > start) part = text.slice(start, i);
      }
      if (part === undefined) return undefined;
      parts.push(part);
      blank();
      if (text[i] !== '.') return parts;
      i++;
    }
  };
  /** Skips the value at `i`; returns it as written when it is one bare value. Keys inside are noted under `path` (undefined: not noted). */
  const value = (path: string | undefined): string | undefined => {
    blank();
    const c = text[i];
    if (c === '"' || c === "'") {
      string();
      return undefined;
    }
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      for (i++; ; ) {
        gap();
        if (i >= n) return undefined;
        if (text[i] === close) {
          i++;
          return undefined;
        }
        if (text[i] === ',') {
          i++;
          continue;
        }
        const before = i;
        // An inline table's members are keys under its path; an array's elements have none.
        if (c === '{') keyValue(path);
        else value(undefined);
        if (i === before) i++;
      }
    }
    const start = i;
    while (i < n && text[i] !== ',' && text[i] !== ']' && text[i] !== '}' && text[i] !== '#' && text[i] !== '\n') i++;
    const written = text.slice(start, i).trim();
    return written === '' ? undefined : written;
  };
  /** A `key = value` at `i`, its keys noted under `table` (undefined: not noted); false when there is none. */
  const keyValue = (table: string | undefined): boolean => {
    const at = line;
    const parts = key();
    blank();
    if (parts === undefined || text[i] !== '=') return false;
    i++;
    const path = table === undefined ? undefined : [...(table === '' ? [] : [table]), ...parts].join('.');
    const written = value(path);
    if (path !== undefined && !index.has(path)) index.set(path, written === undefined ? { line: at } : { line: at, value: written });
    return true;
  };
  let table = '';
  for (;;) {
    gap();
    if (i >= n) return index;
    if (text[i] === '[') {
      const at = line;
      i += text[i + 1] === '[' ? 2 : 1;
      const parts = key();
      if (parts !== undefined) {
        table = parts.join('.');
        if (!index.has(table)) index.set(table, { line: at });
      }
      skipLine(); // `]` or `]]`, and a comment
    } else if (!keyValue(table)) skipLine();
  }
}
