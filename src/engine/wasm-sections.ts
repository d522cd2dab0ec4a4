/**
 * Reads the few things the engine needs from a WebAssembly binary's sections (WebAssembly Core
 * Specification 2.0, §5.5 "Modules"; the `name` custom section, Appendix §7.4, with the extended
 * name subsection 9 "data segment names" that LLVM's wasm-ld writes), without compiling it:
 * - {@link readOnlyDataRanges}: where the `.rodata` data segments sit in linear memory, so
 *   flite.ts restores only the rest between runs;
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
 * The functions `bytes` imports, in import order (so entry i is function index i), each with its
 * module and field name and its type index (spec §5.5.5).
 * @throws RangeError when the binary is malformed or imports something of an unknown kind.
 */
export function importedFunctions(bytes: Uint8Array, sections = wasmSections(bytes)): { module: string; name: string; type: number }[] {
  const section = sections.find((s) => s.id === 2);
  if (section === undefined) return [];
  const functions: { module: string; name: string; type: number }[] = [];
  const r = new Reader(bytes, section.start);
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
    const type = bytes[r.at++];
    if (type === 0x63 || type === 0x64) r.skipLeb(); // heap type (signed LEB)
  };
  for (let count = r.u32(); count > 0; count--) {
    const module = r.name();
    const name = r.name();
    const kind = bytes[r.at++];
    if (kind === 0) functions.push({ module, name, type: r.u32() });
    else if (kind === 1) {
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
  }
  return functions;
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
 * Linear-memory ranges of the active data segments that the `name` section calls `.rodata`
 * (constant data: C `const` objects, string literals), sorted. A program never writes there
 * (C forbids it; WebAssembly does not enforce it, which test/engine/voices.test.ts checks for
 * Flite). Empty when the binary has no data segment names (e.g. a build with names stripped) or
 * a segment's offset is not a plain `i32.const`: then nothing is known to be read-only.
 * @throws RangeError when the binary is malformed.
 */
export function readOnlyDataRanges(bytes: Uint8Array): MemoryRange[] {
  const sections = wasmSections(bytes);
  const names = wasmNames(bytes, NAME_SUBSECTION.dataSegments, sections);
  const data = sections.find((s) => s.id === 11);
  if (data === undefined || names.size === 0) return [];
  const ranges: MemoryRange[] = [];
  const r = new Reader(bytes, data.start);
  for (let count = r.u32(), index = 0; index < count; index++) {
    const flags = r.u32();
    let offset: number | undefined;
    if (flags === 0 || flags === 2) {
      if (flags === 2) r.u32(); // memory index
      // Offset expression: i32.const N end (anything else leaves the offset unknown).
      const op = bytes[r.at++];
      if (op === 0x41) {
        offset = r.i32() >>> 0;
        if (bytes[r.at++] !== 0x0b) return [];
      } else {
        return [];
      }
    }
    const length = r.u32();
    r.at += length;
    if (offset !== undefined && names.get(index) === '.rodata') ranges.push({ start: offset, end: offset + length });
  }
  return ranges.sort((a, b) => a.start - b.start);
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
