/**
 * The worker threads and the CLI bundled as CommonJS (scripts/bundle.js, issue 20; the CLI since
 * its tenth round) keep the strict mode of the ES modules they were written as. A statement before
 * esbuild's "use strict" (the banner that defines import.meta.url) ended the directive prologue,
 * and every thread ran in sloppy mode:
 * assignments to read-only properties or undeclared names silently ignored or made globals, `this`
 * the global object in plain calls — not the code the in-process tests run (dist/src, strict).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Script } from 'node:vm';

const bundle = new URL('../../bundle/', import.meta.url);

test('every file of the bundle a run executes is CommonJS, and strict code', () => {
  const names = readdirSync(bundle);
  // engine-units.js is never run: the piece cache hashes it (src/engine/worker-url.ts).
  assert.deepEqual(names.filter((name) => name.endsWith('.js')), ['engine-units.js']);
  const files = names.filter((name) => name.endsWith('.cjs'));
  for (const name of ['align-worker.cjs', 'engine-worker.cjs', 'markdown-worker.cjs', 'tts.cjs']) assert.ok(files.includes(name), name);
  assert.ok(files.filter((name) => name.startsWith('chunk-')).length >= 50, `${files.length} files`);
  for (const name of files) {
    const source = readFileSync(new URL(name, bundle), 'utf8');
    // Compiled (not run) as Node wraps a CommonJS file; a `with` statement is a SyntaxError only
    // in strict code (ECMA-262 §15.2.1 / B.1).
    const wrapped = (body: string): string => `(function (exports, require, module, __filename, __dirname) {${body}\n})`;
    assert.doesNotThrow(() => new Script(wrapped(source), { filename: name }), name);
    assert.throws(() => new Script(wrapped(`${source}\nwith ({}) {}`), { filename: name }), /strict mode/i, `${name} is not strict code`);
  }
});
