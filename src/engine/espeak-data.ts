/**
 * eSpeak NG's data package (`espeak-ng.data`, 24.0 MB) with only the files `tts` can read in it
 * (issue 20). Emscripten's loader reads the whole package into one buffer that its in-memory file
 * system then keeps for good, in every worker; 23.3 MB of it are pronunciation dictionaries of
 * languages no voice of ours speaks (Russian alone 8.5 MB, Faroese 5.7 MB). eSpeak NG opens a
 * language's `*_dict` only when a voice of that language is selected or its text switches to it,
 * so those bytes are never read.
 *
 * We hand the loader (its documented `getPreloadedPackage` hook) a buffer of the package's size in
 * which only the kept files are read from disk: every other file is there, at its offset, as
 * zeros the kernel never maps, so the loader and eSpeak see the same layout and the bytes of every
 * file they use. The layout (file names and offsets) is read from the package's own loader
 * (espeak-ng.js); if it cannot be read, or disagrees with the data file, the package loads as
 * shipped.
 */
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { packageVersion } from '../package-version.js';
import { readFully } from './read-fully.js';
import { sha256 } from './sha256.js';

/**
 * The dictionaries kept: English and Japanese (our voices' languages) and the two eSpeak NG may
 * switch to for Han characters left in a text (Mandarin, Cantonese). Every other file of the
 * package (phoneme data, intonation, voices, language definitions: 0.7 MB) is always kept.
 */
export const KEPT_DICTIONARIES: ReadonlySet<string> = new Set(['en_dict', 'ja_dict', 'cmn_dict', 'yue_dict']);

/** One file in the package: its path in eSpeak's file system and its byte range in the package. */
export interface PackagedFile {
  filename: string;
  /** Offset of its first byte in espeak-ng.data. */
  start: number;
  /** Offset just past its last byte. */
  end: number;
}

/** The layout of the data package as the loader script declares it. */
export interface PackageLayout {
  files: PackagedFile[];
  /** The package's size in bytes (`remote_package_size`). */
  size: number;
}

/**
 * Reads the package layout from the text of Emscripten's loader (`loadPackage({files:[{filename:
 * "…",start:N,end:N},…],remote_package_size:N})`).
 * @returns undefined when the text has no such declaration, or one that is not contiguous.
 */
export function parsePackageLayout(loaderJs: string): PackageLayout | undefined {
  const begin = loaderJs.indexOf('loadPackage({files:[');
  if (begin === -1) return undefined;
  const sizeMatch = /remote_package_size:(\d+)/.exec(loaderJs.slice(begin));
  if (sizeMatch === null) return undefined;
  const declaration = loaderJs.slice(begin, begin + sizeMatch.index);
  const files: PackagedFile[] = [];
  for (const m of declaration.matchAll(/\{filename:"([^"]+)",start:(\d+),end:(\d+)/g)) {
    files.push({ filename: m[1]!, start: Number(m[2]), end: Number(m[3]) });
  }
  const size = Number(sizeMatch[1]);
  // The files tile the package end to end; anything else is a format we do not know.
  let at = 0;
  for (const f of files) {
    if (f.start !== at || f.end < f.start) return undefined;
    at = f.end;
  }
  return files.length === 0 || at !== size ? undefined : { files, size };
}

/** Whether `tts` may read the file (see {@link KEPT_DICTIONARIES}). */
export function isKept(filename: string): boolean {
  const base = path.posix.basename(filename);
  return !base.endsWith('_dict') || KEPT_DICTIONARIES.has(base);
}

/**
 * The package as a buffer of its full size holding the bytes of the kept files only (the rest
 * zero, never touched, so never resident).
 * @param dataPath espeak-ng.data.
 * @throws Error when the file cannot be read or its size is not the layout's.
 */
export function sparsePackage(dataPath: string, layout: PackageLayout): ArrayBuffer {
  if (statSync(dataPath).size !== layout.size) throw new Error(`${dataPath} is not ${layout.size} bytes`);
  const buffer = new ArrayBuffer(layout.size);
  const bytes = new Uint8Array(buffer);
  const fd = openSync(dataPath, 'r');
  try {
    for (const f of layout.files) {
      if (!isKept(f.filename)) continue;
      const n = readFully(fd, bytes, f.start, f.end - f.start, f.start);
      if (n !== f.end - f.start) throw new Error(`${dataPath} ended at byte ${f.start + n}`);
    }
  } finally {
    closeSync(fd);
  }
  return buffer;
}

/** Emscripten module options: where eSpeak NG's own messages go, and its data package. */
export interface EspeakModuleOptions {
  /** eSpeak NG's standard output (Emscripten's `print`). */
  print: (text: string) => void;
  /** eSpeak NG's standard error (Emscripten's `printErr`). */
  printErr: (text: string) => void;
  /** The data package, read by us (see above); absent: the loader reads it as shipped. */
  getPreloadedPackage?: (name: string, size: number) => ArrayBuffer | null;
  /** The program name Emscripten gives the module (its environment's `_`): {@link PROGRAM_NAME}. */
  thisProgram: string;
}

/**
 * The program name in eSpeak NG's environment. Emscripten's default is the path of the script
 * the process runs (`process.argv[1]`: bin/tts.js, a test file, a build script), which its
 * start-up writes into the module's memory with the environment: a fixed name keeps that memory
 * the same whatever runs tts (espeak-state.ts restores it from a file the build wrote).
 */
export const PROGRAM_NAME = 'espeak-ng';

/**
 * The `LANG` Emscripten's start-up writes into eSpeak NG's environment (and so its memory): from
 * `navigator.languages[0]` where there is a `navigator` (Node 21 and later: the process's
 * locale), else `C`; with `.UTF-8` added, as its glue does. eSpeak NG does not read it; the state
 * file records it (espeak-state.ts) without comparing it.
 */
export function emscriptenLang(): string {
  const nav = (globalThis as { navigator?: { languages?: readonly string[] } }).navigator;
  return `${(typeof nav === 'object' && nav.languages?.[0]) || 'C'}`.replace('-', '_') + '.UTF-8';
}

/**
 * eSpeak NG's own messages are dropped: by default Emscripten writes them with console.log and
 * console.error, which in an engine worker reach the process's stdout, where nothing but audio
 * may go (docs/cli.md §2), and its stderr, past `-q`. It prints them for text in a language whose
 * dictionary is not loaded (Greek: "Bad data: …el_dict", once per word); the audio says what
 * happened, and the service has no channel for an engine's notes.
 */
const QUIET = { print: (): void => {}, printErr: (): void => {}, thisProgram: PROGRAM_NAME };

/** The installed package as tts reads it (one read of its loader, espeak-ng.js). */
export interface EspeakPackage {
  /** Its version, from its package.json; undefined when that cannot be read. */
  version: string | undefined;
  /** espeak-ng.js: the module, and the loader that declares the data package's layout. */
  js: string;
  /** SHA-256 of espeak-ng.js, hex. */
  jsSha256: string;
  /** espeak-ng.data, beside it (the name its loader asks for). */
  data: string;
  /** Size of espeak-ng.data, in bytes; undefined when it cannot be read. */
  dataBytes: number | undefined;
  /** The data package's layout as espeak-ng.js declares it; undefined when it cannot be read or trusted. */
  layout: PackageLayout | undefined;
}

/**
 * Finds the package and reads its loader once: its layout, for {@link espeakModuleOptions}, and
 * what names it, for eSpeak NG's initialized state (espeak-state.ts).
 * @returns undefined when the package cannot be resolved or its loader read; throws nothing.
 */
export function readEspeakPackage(): EspeakPackage | undefined {
  try {
    const js = createRequire(import.meta.url).resolve('@echogarden/espeak-ng-emscripten');
    const dir = path.dirname(js);
    const loader = readFileSync(js);
    const data = path.join(dir, 'espeak-ng.data');
    let dataBytes: number | undefined;
    try {
      dataBytes = statSync(data).size;
    } catch {
      dataBytes = undefined;
    }
    return {
      version: packageVersion(path.join(dir, 'package.json')),
      js,
      jsSha256: sha256().update(loader).digest('hex'),
      data,
      dataBytes,
      layout: parsePackageLayout(loader.toString('utf8')),
    };
  } catch {
    return undefined;
  }
}

/**
 * Options for the package's module factory: eSpeak NG's messages dropped ({@link QUIET}), the
 * program name fixed ({@link PROGRAM_NAME}), and `getPreloadedPackage` giving
 * {@link sparsePackage}, or none (the package then reads its data file whole) when `pkg` or its
 * layout is unknown.
 * @param pkg the package, as {@link readEspeakPackage} read it.
 */
export function espeakModuleOptions(pkg: EspeakPackage | undefined): EspeakModuleOptions {
  const layout = pkg?.layout;
  if (pkg === undefined || layout === undefined) return { ...QUIET };
  const dir = path.dirname(pkg.js);
  return {
    ...QUIET,
    getPreloadedPackage: (name, size) => {
      if (size !== layout.size) return null;
      try {
        return sparsePackage(path.isAbsolute(name) ? name : path.join(dir, name), layout);
      } catch {
        // null: the loader reads the file itself, as shipped.
        return null;
      }
    },
  };
}
