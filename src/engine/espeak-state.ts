/**
 * eSpeak NG's state right after its initialization, kept in a file (issue 20, ninth round).
 *
 * Every new eSpeak NG instance ran `espeak_Initialize` (the C++ `eSpeakNGWorker` constructor): it
 * reads the phoneme tables, intonation data and voice files through Emscripten's in-memory file
 * system, in JavaScript that V8 has not optimised yet, 80–135 ms of a worker's start on a 2-core
 * machine. What it leaves behind is the module's memory and nothing else: the JavaScript glue
 * keeps no state from it (no file stays open, no function is added to the table, the WebIDL
 * string buffer, the one pointer the glue holds, is made later), the stack pointer is back where
 * it was, and the random seed it takes from `time(NULL)` is held at 0 (espeak.ts). So the build
 * (scripts/espeak-state.js) initializes one instance and writes that memory, up to its last
 * non-zero byte (about 1 MB of 16.3 MiB), to {@link ESPEAK_STATE_FILE}; a new instance writes it
 * back over its fresh memory, zeroes the rest, and wraps the object's address, instead of running
 * the constructor: ~10 ms. test/engine/espeak-state.test.ts checks that the memory after
 * EspeakSynth.create is then the same, byte for byte, and the audio too.
 *
 * What decides that memory: the package (its code and data), the recipe ({@link
 * ESPEAK_STATE_FORMAT}), and the environment Emscripten's start-up writes into memory before
 * initialization: the program name, fixed (espeak-data.ts PROGRAM_NAME), and `LANG`, from the
 * process's locale on Node 21 and later (espeak-data.ts emscriptenLang). The file is used only
 * with the package it was made from (its version, the SHA-256 of its JavaScript, which declares
 * the data package's layout, and the data package's size), by this recipe, for a memory of the
 * same size, and only when its header and bytes have the SHA-256 it gives; otherwise the instance
 * initializes as before, with the same result. `LANG` is written in the header but not compared:
 * eSpeak NG never reads it (it sets its character type locale to `C.UTF-8` itself, and musl reads
 * `LANG` only for `setlocale(…, "")`), so a state made under another locale only carries other
 * environment strings, and gives the same audio (the test checks it).
 *
 * Format: one line of JSON ({@link EspeakStateHeader}), a newline, then the memory's bytes.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openEntry } from '../cache/safe-fs.js';
import type { EspeakPackage } from './espeak-data.js';
import { readFully } from './read-fully.js';
import { sha256 } from './sha256.js';

/** The state file the build writes and new instances read: dist/espeak/initialized.bin. */
export const ESPEAK_STATE_FILE: string = fileURLToPath(new URL('../../espeak/initialized.bin', import.meta.url));

/**
 * Version of the recipe the state is made by: a file of another recipe is not used. Bump it when
 * anything that runs before or during the constructor changes: the seed held at 0, the module
 * options (espeak-data.ts espeakModuleOptions: the program name, the data package handed over),
 * the constructor call (espeak.ts initialize).
 */
export const ESPEAK_STATE_FORMAT = 1;

/** The package eSpeak NG's state comes from (espeak-data.ts {@link EspeakPackage}). */
export interface EspeakPackageStamp {
  /** The package's version. */
  version: string;
  /** SHA-256 of espeak-ng.js, hex. */
  jsSha256: string;
  /** Size of espeak-ng.data, in bytes. */
  dataBytes: number;
}

/** The state file's first line. */
export interface EspeakStateHeader {
  /** {@link ESPEAK_STATE_FORMAT} of the recipe that made it. */
  format: number;
  /** The package it was made from. */
  package: EspeakPackageStamp;
  /** The `LANG` in the module's environment when it was made (information only: see the top). */
  lang: string;
  /** The module's memory size after initialization, in bytes. */
  heapBytes: number;
  /** Address (a byte offset into the memory) of the initialized C++ `eSpeakNGWorker` object. */
  pointer: number;
  /** How many bytes of memory follow the header (the rest of the memory is zero). */
  bytes: number;
  /** SHA-256 of every other field of the header ({@link headerDigestInput}) and the bytes, hex. */
  sha256: string;
}

/**
 * What the header's SHA-256 covers besides the bytes: every other field, in a fixed order, so
 * that a damaged field (an address one bit off) is refused like damaged bytes.
 */
function headerDigestInput(h: Omit<EspeakStateHeader, 'sha256'>): string {
  return `${JSON.stringify([h.format, h.package.version, h.package.jsSha256, h.package.dataBytes, h.lang, h.heapBytes, h.pointer, h.bytes])}\n`;
}

/**
 * The SHA-256 a state file's header of `fields` carries over `bytes` (the memory after the
 * header), hex.
 */
export function stateDigest(fields: Omit<EspeakStateHeader, 'sha256'>, bytes: Uint8Array): string {
  return sha256().update(headerDigestInput(fields)).update(bytes).digest('hex');
}

/** Largest state file read, in bytes: the memory eSpeak NG starts with is 16.3 MiB. */
const MAX_STATE_BYTES = 64 * 1024 * 1024;

/** An initialized state, as read back from the file. */
export interface EspeakState {
  /** The module's memory size after initialization, in bytes. */
  heapBytes: number;
  /** Address (a byte offset into the memory) of the initialized C++ `eSpeakNGWorker` object. */
  pointer: number;
  /** The memory from address 0 up to its last non-zero byte. */
  memory: Uint8Array;
}

/**
 * What names `pkg` in a state file.
 * @returns undefined when its version or data size is unknown (no state is used or written then).
 */
export function packageStamp(pkg: EspeakPackage): EspeakPackageStamp | undefined {
  if (pkg.version === undefined || pkg.dataBytes === undefined) return undefined;
  return { version: pkg.version, jsSha256: pkg.jsSha256, dataBytes: pkg.dataBytes };
}

/** Whether `a` (read from a file: any shape) names the same package as `b`. */
function samePackage(a: unknown, b: EspeakPackageStamp): boolean {
  if (typeof a !== 'object' || a === null) return false;
  const s = a as Partial<EspeakPackageStamp>;
  return s.version === b.version && s.jsSha256 === b.jsSha256 && s.dataBytes === b.dataBytes;
}

/**
 * Writes the state of an instance just initialized to `file`: to a temporary file beside it,
 * renamed into place (an interrupted build leaves no cut-off state; the temporary file is removed
 * when writing or renaming fails).
 * @param state the module's memory size, the initialized object's address, and the memory up to
 *   its last non-zero byte (espeak.ts nonZeroPrefix).
 * @param stamp the package the module was made from ({@link packageStamp}); `lang` the `LANG`
 *   in its environment.
 * @throws the file system's errors.
 */
export function writeEspeakState(file: string, state: EspeakState, stamp: EspeakPackageStamp, lang: string): void {
  const bytes = state.memory;
  const fields = { format: ESPEAK_STATE_FORMAT, package: stamp, lang, heapBytes: state.heapBytes, pointer: state.pointer, bytes: bytes.length };
  const header: EspeakStateHeader = { ...fields, sha256: stateDigest(fields, bytes) };
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), bytes]));
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * The state in `file`, if it was made from the package `stamp` names, by this recipe, and is
 * whole (a regular file, not a symbolic link, of at most {@link MAX_STATE_BYTES}, as many bytes
 * as its header says, the SHA-256 it gives over its header and bytes, its object's address inside
 * them, no more of them than its memory size).
 * @returns (a promise of) undefined otherwise (no file, not a regular file, another package or
 *   recipe, a damaged file): the caller initializes the instance itself. Never rejects.
 */
export async function readEspeakState(file: string, stamp: EspeakPackageStamp): Promise<EspeakState | undefined> {
  const content = await regularFile(file);
  if (content === undefined) return undefined;
  const newline = content.indexOf(10);
  if (newline === -1 || newline > 4096) return undefined;
  let header: Partial<EspeakStateHeader>;
  try {
    header = JSON.parse(content.subarray(0, newline).toString('utf8')) as Partial<EspeakStateHeader>;
  } catch {
    return undefined;
  }
  if (typeof header !== 'object' || header === null) return undefined;
  const memory = content.subarray(newline + 1);
  const { format, lang, heapBytes, pointer, bytes, sha256 } = header;
  if (format !== ESPEAK_STATE_FORMAT || !samePackage(header.package, stamp) || typeof lang !== 'string') return undefined;
  if (!Number.isSafeInteger(heapBytes) || !Number.isSafeInteger(pointer) || heapBytes === undefined || pointer === undefined) return undefined;
  if (bytes !== memory.length || memory.length > heapBytes || pointer <= 0 || pointer >= memory.length) return undefined;
  if (stateDigest({ format, package: stamp, lang, heapBytes, pointer, bytes }, memory) !== sha256) return undefined;
  return { heapBytes, pointer, memory };
}

/**
 * The content of `file` if it is a regular file of at most {@link MAX_STATE_BYTES}, opened as the
 * piece cache opens its entries (cache/safe-fs.ts openEntry: without blocking, so a FIFO put in
 * its place cannot hang the run, and not through a symbolic link).
 * @returns undefined for anything else or when it cannot be read; throws nothing.
 */
async function regularFile(file: string): Promise<Buffer | undefined> {
  let handle: FileHandle;
  try {
    handle = await openEntry(file);
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    if (size > MAX_STATE_BYTES) return undefined;
    const content = Buffer.alloc(size);
    return readFully(handle.fd, content, 0, size, 0) === size ? content : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => {});
  }
}
