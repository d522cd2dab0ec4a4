/**
 * Reads the few things the engine needs from a WebAssembly binary's sections (WebAssembly Core
 * Specification 2.0, §5.5 "Modules"; the `name` custom section, Appendix §7.4, with the extended
 * name subsection 9 "data segment names" that LLVM's wasm-ld writes), without compiling it:
 * - {@link readOnlyDataRanges} / {@link readOnlyRanges}: where the `.rodata` data segments sit in
 *   linear memory, so flite.ts restores only the rest between runs;
 * - {@link dataSplit}: the binary without its data section, read from a file in small pieces, and
 *   its data segments, which flite.ts copies into each instance's memory itself (issue 20);
 * - {@link withoutDebugSections}: the binary without its DWARF (`.debug_*` custom sections),
 *   which scripts/strip-flite.js writes at install time;
 * - {@link wasmNameIndex}, {@link importedFunctions} and {@link functionBody}: what
 *   flite-streaming.ts needs to find the one function it replaces.
 */

/** One section: its id (0 = custom), its custom name, and where its payload is in the bytes. */
export interface WasmSection {
  id: number;
  /** The custom section's name (id 0 only). */
  name?: string;
  /** Byte offset of the section's first byte (its id) in the binary. */
  sectionStart: number;
  /** Byte offsets of the payload (after the size; for a custom section, after the name). */
  start: number;
  end: number;
}

/** A half-open byte range [start, end) of linear memory. */
export interface MemoryRange {
  start: number;
  end: number;
}

/** A cursor over the binary that reads LEB128 integers and names (spec §5.2.2, §5.2.4). */
class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public at: number,
  ) {}

  u32(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.at >= this.bytes.length) throw new RangeError('WebAssembly binary ends inside an integer');
      const byte = this.bytes[this.at++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
    }
    throw new RangeError('WebAssembly binary has an overlong integer');
  }

  /** A signed LEB128 of at most 32 bits (i32.const operands). */
  i32(): number {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      if (this.at >= this.bytes.length || shift >= 35) throw new RangeError('WebAssembly binary has a bad signed integer');
      byte = this.bytes[this.at++]!;
      result |= (byte & 0x7f) << shift;
      shift += 7;
    } while ((byte & 0x80) !== 0);
    return shift < 32 && (byte & 0x40) !== 0 ? result | (-1 << shift) : result;
  }

  /** Skips one LEB128 integer of any width (memory64 limits, signed heap types). */
  skipLeb(): void {
    for (let n = 0; n < 10; n++) {
      if (this.at >= this.bytes.length) throw new RangeError('WebAssembly binary ends inside an integer');
      if ((this.bytes[this.at++]! & 0x80) === 0) return;
    }
    throw new RangeError('WebAssembly binary has an overlong integer');
  }

  name(): string {
    const length = this.u32();
    if (this.at + length > this.bytes.length) throw new RangeError('WebAssembly binary ends inside a name');
    const text = new TextDecoder().decode(this.bytes.subarray(this.at, this.at + length));
    this.at += length;
    return text;
  }
}

/**
 * The sections of a WebAssembly binary, in order.
 * @throws RangeError when the magic number or version is wrong or a section runs past the end.
 */
export function wasmSections(bytes: Uint8Array): WasmSection[] {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d || bytes[4] !== 1) {
    throw new RangeError('not a WebAssembly binary (version 1)');
  }
  const sections: WasmSection[] = [];
  const r = new Reader(bytes, 8);
  while (r.at < bytes.length) {
    const sectionStart = r.at;
    const id = bytes[r.at++]!;
    const size = r.u32();
    const end = r.at + size;
    if (end > bytes.length) throw new RangeError(`WebAssembly section ${id} runs past the end`);
    if (id === 0) {
      const name = r.name();
      sections.push({ id, name, sectionStart, start: r.at, end });
    } else {
      sections.push({ id, sectionStart, start: r.at, end });
    }
    r.at = end;
  }
  return sections;
}

/** Subsections of the `name` custom section (Appendix §7.4; 7 and 9 are LLVM's extended ones). */
export const NAME_SUBSECTION = { functions: 1, globals: 7, dataSegments: 9 } as const;

/**
 * Calls `visit(index, at, end)` for each entry of subsection `subsection` of `bytes`' `name`
 * section, where [at, end) are the UTF-8 bytes of the entry's name; stops when `visit` returns
 * true. Nothing is decoded that is not asked for (issue 20: decoding Flite's 643 function names
 * took 3–4 ms of a cold worker's critical path).
 */
function visitNames(bytes: Uint8Array, sections: readonly WasmSection[], subsection: number, visit: (index: number, at: number, end: number) => boolean | void): void {
  const nameSection = sections.find((s) => s.id === 0 && s.name === 'name');
  if (nameSection === undefined) return;
  const r = new Reader(bytes, nameSection.start);
  while (r.at < nameSection.end) {
    const sub = bytes[r.at++]!;
    const subEnd = r.u32() + r.at;
    if (sub === subsection) {
      for (let n = r.u32(); n > 0; n--) {
        const index = r.u32();
        const length = r.u32();
        if (r.at + length > subEnd) throw new RangeError('WebAssembly name runs past its subsection');
        if (visit(index, r.at, r.at + length) === true) return;
        r.at += length;
      }
      return;
    }
    r.at = subEnd;
  }
}

/**
 * The names one subsection of `bytes`' `name` section gives ({@link NAME_SUBSECTION}), by index;
 * empty when there is no name section or no such subsection.
 * @throws RangeError when the binary is malformed.
 */
export function wasmNames(bytes: Uint8Array, subsection: number, sections = wasmSections(bytes)): Map<number, string> {
  const names = new Map<number, string>();
  const decoder = new TextDecoder();
  visitNames(bytes, sections, subsection, (index, at, end) => {
    names.set(index, decoder.decode(bytes.subarray(at, end)));
  });
  return names;
}

/**
 * The index of the first entry named `name` in one subsection of `bytes`' `name` section
 * ({@link NAME_SUBSECTION}), found by comparing UTF-8 bytes; undefined when there is none.
 * @throws RangeError when the binary is malformed.
 */
export function wasmNameIndex(bytes: Uint8Array, subsection: number, name: string, sections = wasmSections(bytes)): number | undefined {
  const wanted = new TextEncoder().encode(name);
  let found: number | undefined;
  visitNames(bytes, sections, subsection, (index, at, end) => {
    if (end - at !== wanted.length) return false;
    for (let i = 0; i < wanted.length; i++) if (bytes[at + i] !== wanted[i]) return false;
    found = index;
    return true;
  });
  return found;
}

/**
 * One import (spec §5.5.5): module and field name, kind (0 function, 1 table, 2 memory, 3 global,
 * 4 tag), and a function's type index.
 */
interface WasmImport {
  module: string;
  name: string;
  kind: number;
  type?: number;
}

/**
 * The imports of an import section whose payload is `bytes`[start, end), in order.
 * @throws RangeError when the section is malformed or imports something of an unknown kind.
 */
function importsIn(bytes: Uint8Array, start: number, end: number): WasmImport[] {
  const imports: WasmImport[] = [];
  const r = new Reader(bytes.subarray(0, end), start);
  const next = (): number => {
    if (r.at >= end) throw new RangeError('WebAssembly import section ends early');
    return r.bytes[r.at++]!;
  };
  // Limits (spec §5.3.7): flags, then min and, with bit 0, max; memory64 (bit 2) makes them
  // 64-bit, and the custom-page-sizes proposal (bit 3) adds a page size.
  const limits = (): void => {
    const flags = r.u32();
    r.skipLeb();
    if ((flags & 1) !== 0) r.skipLeb();
    if ((flags & 8) !== 0) r.u32();
  };
  // A value or reference type: one byte, or a (ref null? heaptype) of the GC proposal.
  const valueType = (): void => {
    const type = next();
    if (type === 0x63 || type === 0x64) r.skipLeb(); // heap type (signed LEB)
  };
  for (let count = r.u32(); count > 0; count--) {
    const module = r.name();
    const name = r.name();
    const kind = next();
    if (kind === 0) {
      imports.push({ module, name, kind, type: r.u32() });
      continue;
    }
    if (kind === 1) {
      valueType();
      limits();
    } else if (kind === 2) limits();
    else if (kind === 3) {
      valueType();
      r.at++; // mutability
    } else if (kind === 4) {
      r.at++; // tag attribute (exception handling)
      r.u32();
    } else throw new RangeError(`WebAssembly import of unknown kind ${kind}`);
    imports.push({ module, name, kind });
  }
  return imports;
}

/**
 * The functions `bytes` imports, in import order (so entry i is function index i), each with its
 * module and field name and its type index (spec §5.5.5).
 * @throws RangeError when the binary is malformed or imports something of an unknown kind.
 */
export function importedFunctions(bytes: Uint8Array, sections = wasmSections(bytes)): { module: string; name: string; type: number }[] {
  const section = sections.find((s) => s.id === 2);
  if (section === undefined) return [];
  return importsIn(bytes, section.start, section.end).flatMap((i) => (i.kind === 0 ? [{ module: i.module, name: i.name, type: i.type! }] : []));
}

/**
 * Where the body of function `index` (a defined function: index ≥ the imported functions'
 * count) is in `bytes`: the byte range of its locals and expression in the code section (spec
 * §5.5.13), after its size. Bytes may be overwritten in place within that range, as long as what
 * is written is a valid body of exactly that length.
 * @throws RangeError when the binary is malformed or has no such function.
 */
export function functionBody(bytes: Uint8Array, index: number, sections = wasmSections(bytes)): { start: number; end: number } {
  const defined = index - importedFunctions(bytes, sections).length;
  const code = sections.find((s) => s.id === 10);
  if (code === undefined || defined < 0) throw new RangeError(`WebAssembly binary defines no function ${index}`);
  const r = new Reader(bytes, code.start);
  const count = r.u32();
  if (defined >= count) throw new RangeError(`WebAssembly binary defines no function ${index}`);
  for (let i = 0; ; i++) {
    const size = r.u32();
    if (r.at + size > code.end) throw new RangeError('WebAssembly function body runs past its section');
    if (i === defined) return { start: r.at, end: r.at + size };
    r.at += size;
  }
}

/**
 * An active data segment of memory 0 whose offset is a constant (spec §5.5.14: flags 0, or 2 with
 * memory index 0, and an offset expression `i32.const N end`): where its bytes are in the binary,
 * and where instantiation copies them in linear memory.
 */
export interface DataSegment {
  /** Its index in the data section (what the `name` section's data segment names refer to). */
  index: number;
  /** Byte offset in linear memory its first byte goes to. */
  memoryOffset: number;
  /** Byte offset of its first byte in the binary. */
  start: number;
  /** Byte offset just past its last byte in the binary (its length is end − start bytes). */
  end: number;
}

/** Bytes a data segment's header takes at most: flags, memory index, `i32.const N end`, length. */
const SEGMENT_HEADER_MAX = 5 + 5 + 1 + 5 + 1 + 5;

/**
 * Reads one data segment's header at `r` (left after its length, before its bytes).
 * @returns its offset in memory (undefined for a passive segment, flags 1) and length (bytes);
 *   undefined for anything else than a passive segment or an active one of memory 0 at a
 *   constant offset.
 * @throws RangeError when the header runs past the bytes.
 */
function segmentHeader(r: Reader): { memoryOffset?: number; length: number } | undefined {
  const flags = r.u32();
  if (flags === 1) return { length: r.u32() };
  if (flags !== 0 && flags !== 2) return undefined;
  if (flags === 2 && r.u32() !== 0) return undefined;
  if (r.bytes[r.at++] !== 0x41) return undefined;
  const memoryOffset = r.i32() >>> 0;
  if (r.bytes[r.at++] !== 0x0b) return undefined;
  return { memoryOffset, length: r.u32() };
}

/**
 * The active data segments of `bytes`, in order (passive ones left out); undefined when an active
 * one is not of memory 0 at a constant offset ({@link DataSegment}); empty when there is no data
 * section.
 * @throws RangeError when the binary is malformed.
 */
export function activeDataSegments(bytes: Uint8Array, sections = wasmSections(bytes)): DataSegment[] | undefined {
  const data = sections.find((s) => s.id === 11);
  if (data === undefined) return [];
  const segments: DataSegment[] = [];
  const r = new Reader(bytes, data.start);
  for (let count = r.u32(), index = 0; index < count; index++) {
    const header = segmentHeader(r);
    if (header === undefined) return undefined;
    if (r.at + header.length > data.end) throw new RangeError('WebAssembly data segment runs past its section');
    if (header.memoryOffset !== undefined) segments.push({ index, memoryOffset: header.memoryOffset, start: r.at, end: r.at + header.length });
    r.at += header.length;
  }
  return segments;
}

/**
 * Linear-memory ranges of the `segments` that `names` (the `name` section's data segment names,
 * {@link NAME_SUBSECTION}) calls `.rodata` (constant data: C `const` objects, string literals),
 * sorted. A program never writes there (C forbids it; WebAssembly does not enforce it, which
 * test/engine/voices.test.ts checks for Flite).
 */
export function readOnlyRanges(segments: readonly DataSegment[], names: ReadonlyMap<number, string>): MemoryRange[] {
  return segments
    .filter((s) => names.get(s.index) === '.rodata')
    .map((s) => ({ start: s.memoryOffset, end: s.memoryOffset + (s.end - s.start) }))
    .sort((a, b) => a.start - b.start);
}

/**
 * {@link readOnlyRanges} of `bytes`' own active data segments. Empty when the binary has no data
 * segment names (e.g. a build with names stripped) or an active segment's offset is not a
 * constant: then nothing is known to be read-only.
 * @throws RangeError when the binary is malformed.
 */
export function readOnlyDataRanges(bytes: Uint8Array): MemoryRange[] {
  const sections = wasmSections(bytes);
  const names = wasmNames(bytes, NAME_SUBSECTION.dataSegments, sections);
  const segments = activeDataSegments(bytes, sections);
  if (segments === undefined || names.size === 0) return [];
  return readOnlyRanges(segments, names);
}

/**
 * Reads up to `length` bytes of a binary at byte `position` (fewer only at its end); what it
 * throws (a failed read) passes through {@link dataSplit}.
 */
export type ReadAt = (position: number, length: number) => Uint8Array;

/**
 * A binary taken apart for loading without its data section: {@link dataSplit}.
 */
export interface DataSplit {
  /** The binary without its data section (every other section byte for byte, in order). */
  module: Uint8Array;
  /** The data segments, their `start`/`end` being byte offsets in the whole binary. */
  segments: DataSegment[];
}

/**
 * Reads the WebAssembly binary of `size` bytes that `read` gives with a few small reads — the
 * section headers and the data segments' headers — and all of it but its data section's segment
 * bytes (issue 20: Flite's 17.3 MB binary is 209 KB of code, tables and names, and 17.1 MB of
 * data): the module WebAssembly.compile() gets, and the segments the caller copies into the
 * instance's memory itself, as instantiation would have (spec §4.5.4 "Instantiation": each active
 * segment, in order, to its memory at its offset). That is the same memory only when instantiation
 * runs no code (no start section) and no instruction refers to a data segment (no data count
 * section, which `memory.init` and `data.drop` need), each segment is active in memory 0 at a
 * constant offset, and the one memory is the module's own (none imported; not shared, not 64-bit, of 64 KiB
 * pages) and holds every segment at its initial size; undefined otherwise (no memory section, a
 * passive segment…), and when there is no data section.
 * @throws RangeError when the binary is malformed: not WebAssembly, cut short, a section or
 *   segment past its end, a second data section or a section after it, an import of an unknown
 *   kind; whatever `read` throws.
 */
export function dataSplit(read: ReadAt, size: number): DataSplit | undefined {
  const exactly = (position: number, length: number): Uint8Array => {
    const bytes = read(position, length);
    if (bytes.length < length) throw new RangeError('WebAssembly binary ends early');
    return bytes;
  };
  const header = exactly(0, 8);
  if (header[0] !== 0 || header[1] !== 0x61 || header[2] !== 0x73 || header[3] !== 0x6d || header[4] !== 1) {
    throw new RangeError('not a WebAssembly binary (version 1)');
  }
  // Section headers only: id and size (custom sections' names are not needed here).
  const sections: { id: number; sectionStart: number; start: number; end: number }[] = [];
  for (let at = 8; at < size; ) {
    const r = new Reader(read(at, 6), 0);
    const id = r.bytes[r.at++];
    if (id === undefined) throw new RangeError('WebAssembly binary ends early');
    const payloadBytes = r.u32();
    const start = at + r.at;
    const end = start + payloadBytes;
    if (end > size) throw new RangeError(`WebAssembly section ${id} runs past the end`);
    // The data section comes last of the sections that are not custom (spec §5.5.2), once.
    if (id !== 0 && sections.some((s) => s.id === 11)) throw new RangeError(`WebAssembly section ${id} after the data section`);
    sections.push({ id, sectionStart: at, start, end });
    at = end;
  }
  const data = sections.find((s) => s.id === 11);
  if (data === undefined || sections.some((s) => s.id === 8 || s.id === 12)) return undefined;
  const imports = sections.find((s) => s.id === 2);
  if (imports !== undefined && importsIn(exactly(imports.start, imports.end - imports.start), 0, imports.end - imports.start).some((i) => i.kind === 2)) return undefined;
  const memories = sections.find((s) => s.id === 5);
  if (memories === undefined) return undefined;
  const m = new Reader(exactly(memories.start, memories.end - memories.start), 0);
  if (m.u32() !== 1) return undefined;
  const limits = m.u32();
  // Only bit 0 (a maximum): not shared (bit 1), 64-bit (bit 2) or of custom page sizes (bit 3).
  if ((limits & ~1) !== 0) return undefined;
  const memoryBytes = m.u32() * 65536;
  const segments: DataSegment[] = [];
  let at = data.start;
  const countReader = new Reader(read(at, 5), 0);
  const count = countReader.u32();
  at += countReader.at;
  for (let index = 0; index < count; index++) {
    const r = new Reader(read(at, SEGMENT_HEADER_MAX), 0);
    const segment = segmentHeader(r);
    if (segment?.memoryOffset === undefined) return undefined;
    const start = at + r.at;
    const end = start + segment.length;
    if (end > data.end) throw new RangeError('WebAssembly data segment runs past its section');
    if (segment.memoryOffset + segment.length > memoryBytes) return undefined;
    segments.push({ index, memoryOffset: segment.memoryOffset, start, end });
    at = end;
  }
  if (at !== data.end) throw new RangeError('WebAssembly data section has bytes after its segments');
  const module = new Uint8Array(size - (data.end - data.sectionStart));
  module.set(exactly(0, data.sectionStart), 0);
  module.set(exactly(data.end, size - data.end), data.sectionStart);
  return { module, segments };
}

/**
 * The binary without its `.debug_*` custom sections (DWARF), every other byte kept in order;
 * returns `bytes` itself when it has none.
 * @throws RangeError when the binary is malformed.
 */
export function withoutDebugSections(bytes: Uint8Array): Uint8Array {
  const debug = wasmSections(bytes).filter((s) => s.id === 0 && s.name !== undefined && s.name.startsWith('.debug_'));
  if (debug.length === 0) return bytes;
  const kept: Uint8Array[] = [];
  let at = 0;
  for (const s of debug) {
    kept.push(bytes.subarray(at, s.sectionStart));
    at = s.end;
  }
  kept.push(bytes.subarray(at));
  const out = new Uint8Array(kept.reduce((n, part) => n + part.length, 0));
  let written = 0;
  for (const part of kept) {
    out.set(part, written);
    written += part.length;
  }
  return out;
}

/**
 * The name of V8's first compilation-hints custom section, which V8 11 to 13 (Node 20 to 24) read
 * under `--experimental-wasm-compilation-hints`: one byte per defined function, in order.
 */
export const COMPILATION_HINTS_SECTION = 'compilationHints';

/**
 * The name of the code-metadata custom section of the WebAssembly compilation-hints proposal
 * (github.com/WebAssembly/compilation-hints, "compilation priority"), which V8 14 (Node 26) reads
 * under the same flag in place of {@link COMPILATION_HINTS_SECTION}.
 */
export const COMPILATION_PRIORITY_SECTION = 'metadata.code.compilation_priority';

/**
 * The byte {@link COMPILATION_HINTS_SECTION} gives a function whose optimized code should be made
 * as soon as the module compiles: bits 0–1 the strategy (3, "lazy baseline, eager top tier"),
 * bits 2–3 the baseline tier (1, Liftoff), bits 4–5 the top tier (2, TurboFan). V8's
 * `DecodeCompilationHintsSection` (src/wasm/module-decoder-impl.h, V8 11–13).
 */
const EAGER_TOP_TIER_HINT = 3 | (1 << 2) | (2 << 4);

/**
 * Whether a binary, by its `sections` ({@link wasmSections}), carries either compilation-hints
 * section ({@link COMPILATION_HINTS_SECTION}, {@link COMPILATION_PRIORITY_SECTION}).
 */
export function hasCompilationHints(sections: readonly WasmSection[]): boolean {
  return sections.some((s) => s.id === 0 && (s.name === COMPILATION_HINTS_SECTION || s.name === COMPILATION_PRIORITY_SECTION));
}

/**
 * An unsigned integer (at most 2⁵³ − 1) as unsigned LEB128 bytes (spec §5.2.2): what this file
 * writes into custom sections, and flite-streaming.ts into the body it replaces.
 */
export function uleb128(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

/**
 * The binary with a custom section named `name` holding `payload` added at its end, every other
 * byte kept in order (spec §5.5.3: custom sections may follow any section and never change what
 * the code does).
 * @throws RangeError when the binary is malformed or already has a custom section of that name.
 */
export function withCustomSection(bytes: Uint8Array, name: string, payload: Uint8Array): Uint8Array {
  if (wasmSections(bytes).some((s) => s.id === 0 && s.name === name)) throw new RangeError(`WebAssembly binary has a ${name} section already`);
  const section = customSection(name, Array.from(payload));
  const out = new Uint8Array(bytes.length + section.length);
  out.set(bytes, 0);
  out.set(section, bytes.length);
  return out;
}

/**
 * The payload of the first custom section named `name`, a view into `bytes`; undefined when there
 * is none.
 * @throws RangeError when the binary is malformed.
 */
export function customSectionPayload(bytes: Uint8Array, name: string, sections: readonly WasmSection[] = wasmSections(bytes)): Uint8Array | undefined {
  const section = sections.find((s) => s.id === 0 && s.name === name);
  return section === undefined ? undefined : bytes.subarray(section.start, section.end);
}

/** A custom section (spec §5.5.3): id 0, its size, its name, then `payload`. */
function customSection(name: string, payload: readonly number[]): Uint8Array {
  const nameBytes = new TextEncoder().encode(name);
  const body = [...uleb128(nameBytes.length), ...nameBytes, ...payload];
  return new Uint8Array([0, ...uleb128(body.length), ...body]);
}

/**
 * The binary with two custom sections added just before its code section, both asking V8 to
 * compile `functions` (function indices, defined functions only) with its optimizing compiler
 * (TurboFan) in the background as soon as the module compiles, rather than after each has run a
 * while in baseline code (issue 20, fifteenth round): {@link COMPILATION_HINTS_SECTION} for V8 11
 * to 13 (a hint byte per defined function: {@link EAGER_TOP_TIER_HINT} for those, 0 "default" for
 * the rest) and {@link COMPILATION_PRIORITY_SECTION} for V8 14 (for each of those, in index order:
 * the index, byte offset 0, hint length 2, compilation priority 0 and optimization priority 0, the
 * highest). Every other byte is kept in order. Custom sections never change what the code does
 * (spec §5.5.3); V8 reads these only under `--experimental-wasm-compilation-hints` (flite.ts
 * `compileHinted`), and ignores them otherwise.
 * @throws RangeError when the binary is malformed, has no code section, has either section already,
 *   or `functions` names an imported or missing function.
 */
export function withCompilationHints(bytes: Uint8Array, functions: readonly number[]): Uint8Array {
  const sections = wasmSections(bytes);
  if (hasCompilationHints(sections)) throw new RangeError('WebAssembly binary has compilation hints already');
  const functionSection = sections.find((s) => s.id === 3);
  const code = sections.find((s) => s.id === 10);
  if (functionSection === undefined || code === undefined) throw new RangeError('WebAssembly binary has no functions to hint');
  const imported = importedFunctions(bytes, sections).length;
  const defined = new Reader(bytes, functionSection.start).u32();
  const indices = [...new Set(functions)].sort((a, b) => a - b);
  for (const index of indices) {
    if (!Number.isInteger(index) || index < imported || index >= imported + defined) throw new RangeError(`WebAssembly binary defines no function ${index} to hint`);
  }
  const perFunction = new Array<number>(defined).fill(0);
  for (const index of indices) perFunction[index - imported] = EAGER_TOP_TIER_HINT;
  const hints = customSection(COMPILATION_HINTS_SECTION, [...uleb128(defined), ...perFunction]);
  const priorities = customSection(COMPILATION_PRIORITY_SECTION, [...uleb128(indices.length), ...indices.flatMap((index) => [...uleb128(index), 0, 2, 0, 0])]);
  const out = new Uint8Array(bytes.length + hints.length + priorities.length);
  out.set(bytes.subarray(0, code.sectionStart), 0);
  out.set(hints, code.sectionStart);
  out.set(priorities, code.sectionStart + hints.length);
  out.set(bytes.subarray(code.sectionStart), code.sectionStart + hints.length + priorities.length);
  return out;
}

/**
 * The functions each compilation-hints section of `bytes` asks to optimize eagerly (see
 * {@link withCompilationHints}), as function indices in order; empty lists when a section is absent.
 * @throws RangeError when the binary or a hints section is malformed.
 */
export function compilationHints(bytes: Uint8Array, sections = wasmSections(bytes)): { hints: number[]; priorities: number[] } {
  const hints: number[] = [];
  const priorities: number[] = [];
  const imported = importedFunctions(bytes, sections).length;
  for (const s of sections) {
    if (s.id !== 0) continue;
    const r = new Reader(bytes.subarray(0, s.end), s.start);
    if (s.name === COMPILATION_HINTS_SECTION) {
      const count = r.u32();
      if (r.at + count !== s.end) throw new RangeError('WebAssembly compilation hints section has the wrong length');
      for (let i = 0; i < count; i++) if (bytes[r.at + i] === EAGER_TOP_TIER_HINT) hints.push(imported + i);
    } else if (s.name === COMPILATION_PRIORITY_SECTION) {
      for (let count = r.u32(); count > 0; count--) {
        const index = r.u32();
        r.u32(); // byte offset (0: the whole function)
        const length = r.u32();
        const end = r.at + length;
        r.u32(); // compilation priority
        if (r.at < end) priorities.push(index);
        r.at = end;
      }
    }
  }
  return { hints, priorities };
}
