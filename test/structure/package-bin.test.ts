/**
 * What npm ships in bin/ (package.json "files" has the whole folder): the entry points that
 * package.json "bin" names, and bin/package.json (which makes them CommonJS). A file left there
 * besides them (a copy of bin/tts.js made for a measurement) would be installed with tts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { test } from 'node:test';

const root = new URL('../../../', import.meta.url);

test("bin/ holds package.json's entry points and bin/package.json, nothing else", () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { bin: Record<string, string>; files: string[] };
  assert.ok(pkg.files.includes('bin'), 'npm pack ships bin/');
  const entries = Object.values(pkg.bin).map((file) => posix.normalize(file));
  const shipped = readdirSync(new URL('bin/', root)).map((name) => `bin/${name}`);
  assert.deepEqual(shipped.sort(), [...entries, 'bin/package.json'].sort());
});
