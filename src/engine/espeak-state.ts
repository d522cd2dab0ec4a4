/**
 * eSpeak NG's state right after its initialization, kept in a file (issue 20, ninth round).
 *
 * Every new eSpeak NG instance ran `espeak_Initialize` (the C++ `eSpeakNGWorker` constructor): it
 * reads the phoneme tables, intonation data and voice files through Emscripten's in-memory file
 * system, in JavaScript that V8 has not optimised yet, 80–135 ms of a Japanese one-shot's critical
 * path on a 2-core machine. What it leaves behind is the module's memory and nothing else: the
 * JavaScript glue keeps no state from it (no file stays open; the WebIDL string buffer, the one
 * pointer the glue holds, is made later), the stack pointer is back where it was, and the random
 * seed, which it takes from `time(NULL)`, is held at 0 (espeak.ts). So the build
 * (scripts/espeak-state.js) initializes one instance and writes that memory, up to its last
 * non-zero byte (about 1 MB of 16.3 MiB), to {@link ESPEAK_STATE_FILE}; a new instance writes it
 * back over its fresh memory, zeroes the rest, and wraps the object's address, instead of running
 * the constructor: ~10 ms. test/engine/espeak-state.test.ts checks that the memory after
 * EspeakSynth.create is then the same, byte for byte, and the audio too.
 *
 * The file is only used with the package it was made from: the package's version and the sizes
 * of its JavaScript and data files are written in it and compared (the piece cache names the
 * engine's packages by version too: src/cache/identity.ts), with the memory's size. Anything else
 * (no file, another package, a file cut short or damaged) and the instance initializes as before,
 * with the same result.
 *
 * Format: one line of JSON ({@link EspeakStateHeader}), a newline, then the memory's bytes.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The state file the build writes and new instances read: dist/espeak/initialized.bin. */
export const ESPEAK_STATE_FILE: string = fileURLToPath(new URL('../../espeak/initialized.bin', import.meta.url));

/**
 * Version of the recipe the state is made by (espeak.ts: the seed held at 0, the constructor and
 * nothing before it): a file written by another recipe is not used.
 */
export const ESPEAK_STATE_FORMAT = 1;

/** The package eSpeak NG's state comes from: its version and its files' sizes in bytes. */
export interface EspeakPackageStamp {
  version: string;
  /** espeak-ng.js. */
  jsBytes: number;
  /** espeak-ng.data. */
  dataBytes: number;
}

/** The state file's first line. */
export interface EspeakStateHeader {
  format: number;
  package: EspeakPackageStamp;
  /** The `LANG` in the module's environment (espeak-data.ts emscriptenLang), which is in its memory. */
  lang: string;
  /** The module's memory size, in bytes, after initialization. */
  heapBytes: number;
  /** Address of the initialized C++ `eSpeakNGWorker` object in that memory. */
  pointer: number;
  /** How many bytes of memory follow the header (the rest of the memory is zero). */
  bytes: number;
  /** SHA-256 of those bytes, hex. */
  sha256: string;
}

/** An initialized state, as read back from the file. */
export interface EspeakState {
  heapBytes: number;
  pointer: number;
  /** The memory from address 0, up to its last non-zero byte. */
  memory: Uint8Array;
}

/**
 * The stamp of the package whose `package.json`, JavaScript `js` and data `data` are given (paths).
 * @returns undefined when any of them cannot be read.
 */
export function packageStamp(packageJson: string, js: string, data: string): EspeakPackageStamp | undefined {
  try {
    const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown };
    if (typeof version !== 'string') return undefined;
    return { version, jsBytes: statSync(js).size, dataBytes: statSync(data).size };
  } catch {
    return undefined;
  }
}

/** Whether two stamps name the same package. */
function samePackage(a: EspeakPackageStamp, b: EspeakPackageStamp): boolean {
  return a.version === b.version && a.jsBytes === b.jsBytes && a.dataBytes === b.dataBytes;
}

/**
 * Writes the state of an instance just initialized to `file` (a temporary file renamed into
 * place: an interrupted build leaves no truncated state).
 * @param memory the module's whole memory; `pointer` the initialized object's address in it.
 * @param stamp the package the module was made from ({@link packageStamp}); `lang` the `LANG` in
 *   its environment.
 * @throws the file system's errors.
 */
export function writeEspeakState(file: string, memory: Uint8Array, pointer: number, stamp: EspeakPackageStamp, lang: string): void {
  let end = memory.length;
  while (end > 0 && memory[end - 1] === 0) end--;
  const bytes = memory.subarray(0, end);
  const header: EspeakStateHeader = {
    format: ESPEAK_STATE_FORMAT,
    package: stamp,
    lang,
    heapBytes: memory.length,
    pointer,
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), bytes]));
  renameSync(temporary, file);
}

/**
 * The state in `file`, if it was made from the package `stamp` names, with `LANG` `lang`, by this
 * recipe, and is whole (its bytes as many as the header says, with the same SHA-256).
 * @returns undefined otherwise (no file, another package or recipe, a damaged file): the caller
 *   initializes the instance itself.
 */
export function readEspeakState(file: string, stamp: EspeakPackageStamp, lang: string): EspeakState | undefined {
  let content: Buffer;
  try {
    content = readFileSync(file);
  } catch {
    return undefined;
  }
  const newline = content.indexOf(10);
  if (newline === -1 || newline > 4096) return undefined;
  let header: EspeakStateHeader;
  try {
    header = JSON.parse(content.subarray(0, newline).toString('utf8')) as EspeakStateHeader;
  } catch {
    return undefined;
  }
  const memory = content.subarray(newline + 1);
  if (header.format !== ESPEAK_STATE_FORMAT || typeof header.package !== 'object' || header.package === null || !samePackage(header.package, stamp) || header.lang !== lang) return undefined;
  if (!Number.isSafeInteger(header.heapBytes) || !Number.isSafeInteger(header.pointer) || header.pointer <= 0 || header.pointer >= memory.length) return undefined;
  if (header.bytes !== memory.length || memory.length > header.heapBytes) return undefined;
  if (createHash('sha256').update(memory).digest('hex') !== header.sha256) return undefined;
  return { heapBytes: header.heapBytes, pointer: header.pointer, memory };
}
