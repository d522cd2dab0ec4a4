/**
 * The CLI's bundle is CommonJS (scripts/bundle.js, issue 20's tenth round): Node's ES module
 * loader cost an English one-shot 30–45 ms to resolve, read and link its 75 files. Real
 * `bin/tts.js` runs under a resolve hook (test/helpers/esm-resolve-hook.ts) that reports what
 * the ES module loader resolves: none of the bundle's files, while the packages left out of the
 * bundle that are ES modules, or give `require` another file, are still reached through
 * `import()`, as from the ES module bundle before (an Opus file, `--speed`, an MP3 file). And the
 * build's two rules, run in-process (scripts/commonjs-bundle.js): which `import()` expressions
 * become `require`, found by parsing, and which packages may be required.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';

const hook = fileURLToPath(new URL('../helpers/esm-resolve-hook.js', import.meta.url));
const bundle = pathToFileURL(fileURLToPath(new URL('../../bundle/', import.meta.url))).href;
const { checkRequiredPackages, localImportExpressions } = await import(new URL('../../../scripts/commonjs-bundle.js', import.meta.url).href);

const dir = mkdtempSync(join(tmpdir(), 'tts-cjs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs tts with `args` under the hook: its exit code and each ES resolution as [specifier, URL].
 * Left out: entry points, named by an absolute file URL (bin/tts.js, each worker thread's file),
 * which Node runs through its ES module loader only because `--import` is given.
 */
async function resolved(args: string[]): Promise<{ code: number | null; stderr: string; resolutions: [string, string][] }> {
  const run = await runTts(args, { nodeArgs: ['--import', hook] });
  const resolutions = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('ESM-RESOLVE '))
    .map((line) => line.split(' ').slice(1, 3) as [string, string])
    .filter(([specifier]) => !specifier.startsWith('file:'));
  return { code: run.code, stderr: run.stderr, resolutions };
}

describe('the CLI as CommonJS', () => {
  it('a one-shot to Opus with --speed loads no file of the bundle through the ES module loader; libopus-wasm and sonic-wasm go through it', async () => {
    const out = join(dir, 'out.opus');
    const run = await resolved(['stream', '--no-cache', '-q', '--speed', '1.2', '-o', out, 'Hello there.']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(out).subarray(0, 4).toString('latin1'), 'OggS');
    assert.deepEqual(run.resolutions.filter(([, url]) => url.startsWith(bundle)), [], 'files of dist/bundle/ resolved as ES modules');
    const packages = new Map(run.resolutions);
    assert.match(packages.get('libopus-wasm') ?? '', /\/node_modules\/libopus-wasm\/dist\/index\.js$/);
    assert.match(packages.get('@echogarden/sonic-wasm') ?? '', /\/node_modules\/@echogarden\/sonic-wasm\//);
  });

  it('a one-shot to MP3 reaches wasm-media-encoders through import(): its ES module build, not the one require would load', async () => {
    const out = join(dir, 'out.mp3');
    const run = await resolved(['stream', '--no-cache', '-q', '-o', out, 'Hello there.']);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(readFileSync(out).length > 1000);
    assert.deepEqual(run.resolutions.filter(([, url]) => url.startsWith(bundle)), []);
    assert.match(new Map(run.resolutions).get('wasm-media-encoders') ?? '', /\/wasm-media-encoders\/dist\/es\/index\.mjs$/);
  });
});

describe("the build's rules for CommonJS (scripts/commonjs-bundle.js)", () => {
  it("finds the import() of chunks and of Node's modules by parsing: not the same text in comments or strings, nor packages", () => {
    const code = [
      "/** @type {import('node:sqlite').DatabaseSync} */",
      'let db;',
      "const text = \"import('./chunk-A.js')\";",
      'export const load = () => import("./chunk-B.js");',
      "export const fs = async () => (await import('node:fs')).readFileSync;",
      "export const opus = () => import('libopus-wasm');",
      '// import("./chunk-C.js")',
    ].join('\n');
    const found = localImportExpressions(code) as { start: number; end: number; specifier: string }[];
    assert.deepEqual(found.map((f) => f.specifier), ['node:fs', './chunk-B.js']);
    for (const { start, end, specifier } of found) assert.equal(code.slice(start, end), code.includes(`import("${specifier}")`) ? `import("${specifier}")` : `import('${specifier}')`);
  });

  it('refuses a require of a package that is an ES module, or whose exports give require another file; allows the rest', () => {
    const meta = (path: string, kind = 'require-call') => ({ outputs: { 'dist/bundle/chunk-X.cjs': { imports: [{ path, kind, external: true }] } } });
    assert.throws(() => checkRequiredPackages(meta('libopus-wasm')), /chunk-X\.cjs requires 'libopus-wasm'.*import\(\)/);
    assert.throws(() => checkRequiredPackages(meta('@echogarden/sonic-wasm')), /requires '@echogarden\/sonic-wasm', an ES module \(\S*node_modules\/@echogarden\/sonic-wasm\/sonic\.js\), which Node 20 cannot require/);
    assert.throws(() => checkRequiredPackages(meta('wasm-media-encoders')), /requires 'wasm-media-encoders', which an ES module's import loads from \S*node_modules\/wasm-media-encoders\/dist\/es\/index\.mjs/);
    for (const path of ['kuromoji', 'meyda', 'node:fs', './chunk-Y.cjs']) checkRequiredPackages(meta(path));
    for (const path of ['libopus-wasm', '@echogarden/sonic-wasm', 'wasm-media-encoders']) checkRequiredPackages(meta(path, 'dynamic-import'));
  });
});
