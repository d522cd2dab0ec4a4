/**
 * The small TOML settings files tts reads (docs/cli.md §7 the config file, §11.3 the lexicon):
 * read without ever blocking or reading without end, and where each key is set, for messages
 * that name the line.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { formatByteSize } from './byte-size.js';
import { TtsError } from './errors.js';

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
 * that many bytes even if it grows meanwhile.
 * @returns the text (UTF-8), or undefined when there is no file and it is not `required`.
 * @throws TtsError `usage` (exit 2) naming the file: unreadable, missing when required, not a
 *   regular file (FIFO, folder, socket, device), or too big.
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
    return buffer.subarray(0, length).toString('utf8');
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

/** The first 1-based line of each dotted key path (`profile.work.voice`) and table header (`profile.work`). */
export type LineIndex = ReadonlyMap<string, number>;

/**
 * Finds, in one pass over the lines as TOML writes them (smol-toml gives no positions), where
 * each table header and each key is first set, by its full dotted path: `voice` under
 * `[profile.work]` and a top-level dotted `profile.work.voice = …` are both `profile.work.voice`.
 * Quoted keys (`"sample-rate" =`) count as bare ones.
 */
export function lineIndex(text: string): LineIndex {
  const index = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  const inString = linesInMultilineStrings(lines);
  let current = '';
  const note = (name: string, line: number): void => {
    if (!index.has(name)) index.set(name, line);
  };
  for (let i = 0; i < lines.length; i++) {
    // A line of a multi-line string's value is text, whatever it looks like (`speed = 7`).
    if (inString[i] === true) continue;
    const header = /^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$/.exec(lines[i]!);
    if (header !== null) {
      // Spaces around the dots go, those inside a quoted name stay (`[profile."my laptop"]`).
      current = header[1]!.replace(/\s*\.\s*/g, '.').replace(/["']/g, '');
      note(current, i + 1);
      continue;
    }
    const key = /^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=/.exec(lines[i]!);
    if (key === null) continue;
    const name = key[1]!.replace(/\s*\.\s*/g, '.').replace(/["']/g, '');
    note(current === '' ? name : `${current}.${name}`, i + 1);
  }
  return index;
}

/**
 * For each line of a TOML document, whether it starts inside a multi-line string (`"""` basic,
 * `'''` literal; TOML 1.0): one scan that follows the strings as TOML writes them — a basic
 * string's escapes, up to two quotes ending a multi-line one's text (`"""a""""`), comments
 * outside strings. On a document that is not valid TOML (which the parser refuses anyway) it
 * guesses.
 */
function linesInMultilineStrings(lines: readonly string[]): boolean[] {
  let open: '"""' | "'''" | undefined;
  return lines.map((line) => {
    const inside = open !== undefined;
    for (let i = 0; i < line.length; ) {
      if (open !== undefined) {
        if (open === '"""' && line[i] === '\\') i += 2;
        else if (line.startsWith(open, i)) {
          i += 3;
          for (let extra = 0; extra < 2 && line[i] === open[0]; extra++) i++;
          open = undefined;
        } else i++;
        continue;
      }
      const c = line[i]!;
      if (c === '#') break;
      if (line.startsWith('"""', i) || line.startsWith("'''", i)) {
        open = c === '"' ? '"""' : "'''";
        i += 3;
      } else if (c === '"') {
        for (i++; i < line.length && line[i] !== '"'; i += line[i] === '\\' ? 2 : 1);
        i++;
      } else if (c === "'") {
        const end = line.indexOf("'", i + 1);
        i = end < 0 ? line.length : end + 1;
      } else i++;
    }
    return inside;
  });
}

/**
 * The value of the `key = value` on 1-based `line` of `text` as it is written there, when it is
 * one TOML number literal (`99999999999999999999`, `1e400`, `0x10`, `1_000`, `inf`; a trailing
 * `# comment` is not part of it): what a message quotes, since the parsed number has lost it.
 * Undefined for a line that holds no such `=` value (a string, an inline table, a line of 0).
 */
export function numberAsWritten(text: string, line: number): string | undefined {
  if (line < 1) return undefined;
  const at = text.split(/\r?\n/, line)[line - 1];
  return at === undefined ? undefined : /^[^=]*=\s*([+-]?[\w.+-]+)\s*(?:#.*)?$/.exec(at)?.[1];
}
