/**
 * The CLI's bundle is CommonJS (scripts/bundle.js, issue 20's tenth round): Node's ES module
 * loader took about 50 ms of an English one-shot's main thread to resolve, read and link its 76
 * files. Real `bin/tts.js` runs under a resolve hook (test/helpers/esm-resolve-hook.ts) that
 * reports what the ES module loader resolves: none of the bundle's files and none of Node's own
 * modules, while the packages left out of the bundle that are ES modules, or give `require`
 * another file, are still reached through `import()`, as from the ES module bundle before (an Opus
 * file, `--speed`, an MP3 file). And the build's rules, run in-process
 * (scripts/commonjs-bundle.js): which `import()` expressions become `require`, found by parsing;
 * which packages may be required; no cycle among the chunks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { runTts, TTS_BIN } from '../helpers/cli.js';

const hook = fileURLToPath(new URL('../helpers/esm-resolve-hook.js', import.meta.url));
const bundle = pathToFileURL(fileURLToPath(new URL('../../bundle/', import.meta.url))).href;
const { checkNoStaticCycles, checkRequiredPackages, localImportExpressions } = await import(new URL('../../../scripts/commonjs-bundle.js', import.meta.url).href);

const dir = mkdtempSync(join(tmpdir(), 'tts-cjs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** One resolution by Node's ES module loader: what was asked, what it resolved to, who asked ('-' for an entry point). */
interface Resolution {
  specifier: string;
  url: string;
  importer: string;
}

/**
 * Runs tts with `args` under the hook: its exit code, the entry points Node ran through its ES
 * module loader (bin/tts.js and each worker thread's file, only because `--import` is given), and
 * every other resolution.
 */
async function resolved(args: string[]): Promise<{ code: number | null; stderr: string; entries: string[]; resolutions: Resolution[] }> {
  const run = await runTts(args, { nodeArgs: ['--import', hook] });
  const all = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('ESM-RESOLVE '))
    .map((line) => {
      const [specifier, url, importer] = line.split(' ').slice(1, 4) as [string, string, string];
      return { specifier, url, importer };
    });
  return { code: run.code, stderr: run.stderr, entries: all.filter((r) => r.importer === '-').map((r) => r.url), resolutions: all.filter((r) => r.importer !== '-') };
}

/** What the bundle's own files asked the ES module loader for: packages only, each once, sorted. */
function askedByBundle(resolutions: Resolution[]): string[] {
  return [...new Set(resolutions.filter((r) => r.importer.startsWith(bundle)).map((r) => r.specifier))].sort();
}

describe('the CLI as CommonJS', () => {
  it('a one-shot to Opus with --speed loads no file of the bundle and none of Node\'s modules through the ES module loader; libopus-wasm and sonic-wasm go through it', async () => {
    const out = join(dir, 'out.opus');
    const run = await resolved(['stream', '--no-cache', '-q', '--speed', '1.2', '-o', out, 'Hello there.']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(out).subarray(0, 4).toString('latin1'), 'OggS');
    assert.deepEqual(run.entries.sort(), [pathToFileURL(TTS_BIN).href, `${bundle}engine-worker.cjs`].sort());
    assert.deepEqual(run.resolutions.filter((r) => r.url.startsWith(bundle)), [], 'files of dist/bundle/ resolved as ES modules');
    assert.deepEqual(askedByBundle(run.resolutions), ['@echogarden/sonic-wasm', 'libopus-wasm']);
    const packages = new Map(run.resolutions.map((r) => [r.specifier, r.url]));
    assert.match(packages.get('libopus-wasm') ?? '', /\/node_modules\/libopus-wasm\/dist\/index\.js$/);
    assert.match(packages.get('@echogarden/sonic-wasm') ?? '', /\/node_modules\/@echogarden\/sonic-wasm\//);
  });

  it('a one-shot to MP3 reaches wasm-media-encoders through import(): its ES module build, not the one require would load', async () => {
    const out = join(dir, 'out.mp3');
    const run = await resolved(['stream', '--no-cache', '-q', '-o', out, 'Hello there.']);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(readFileSync(out).length > 1000);
    assert.deepEqual(run.resolutions.filter((r) => r.url.startsWith(bundle)), []);
    assert.deepEqual(askedByBundle(run.resolutions), ['wasm-media-encoders']);
    assert.match(new Map(run.resolutions.map((r) => [r.specifier, r.url])).get('wasm-media-encoders') ?? '', /\/wasm-media-encoders\/dist\/es\/index\.mjs$/);
  });
});

describe("the build's rules for CommonJS (scripts/commonjs-bundle.js)", () => {
  it("finds the import() of chunks and of Node's modules by parsing: not the same text in comments or strings, nor packages", () => {
    const code = [
      "/** @type {import('node:sqlite').DatabaseSync} */",
      'let db;',
      "const text = \"import('./chunk-A.js')\";",
      "const label = 'café ☕ 東京 🎉';",
      'export const load = () => import("./chunk-B.js");',
      "export const fs = async () => (await import('node:fs')).readFileSync;",
      "export const path = () => import('path');",
      "export const opus = () => import('libopus-wasm');",
      '// import("./chunk-C.js")',
    ].join('\n');
    const found = localImportExpressions(code) as { start: number; end: number; specifier: string }[];
    assert.deepEqual(found.map((f) => f.specifier), ['path', 'node:fs', './chunk-B.js']);
    // Offsets in UTF-16 code units, as slice counts them, after text outside the Basic Multilingual Plane.
    assert.deepEqual(found.map((f) => code.slice(f.start, f.end)), ["import('path')", "import('node:fs')", 'import("./chunk-B.js")']);
  });

  it('refuses a require of a package that is an ES module, or whose exports give require another file; allows the rest', () => {
    const meta = (path: string, kind = 'require-call') => ({ outputs: { 'dist/bundle/chunk-X.cjs': { imports: [{ path, kind, external: true }] } } });
    for (const kind of ['require-call', 'import-statement']) {
      assert.throws(() => checkRequiredPackages(meta('libopus-wasm', kind)), /chunk-X\.cjs requires 'libopus-wasm'.*import\(\)/);
      assert.throws(() => checkRequiredPackages(meta('@echogarden/sonic-wasm', kind)), /requires '@echogarden\/sonic-wasm', an ES module \(\S*node_modules\/@echogarden\/sonic-wasm\/sonic\.js\), which Node before 20\.19 cannot require/);
      assert.throws(() => checkRequiredPackages(meta('wasm-media-encoders', kind)), /requires 'wasm-media-encoders', which an ES module's import loads from \S*node_modules\/wasm-media-encoders\/dist\/es\/index\.mjs/);
      for (const path of ['kuromoji', 'meyda', 'node:fs', 'fs', './chunk-Y.cjs']) checkRequiredPackages(meta(path, kind));
    }
    for (const path of ['libopus-wasm', '@echogarden/sonic-wasm', 'wasm-media-encoders']) checkRequiredPackages(meta(path, 'dynamic-import'));
    // require.resolve only resolves: a package whose main is an ES module may be resolved.
    checkRequiredPackages(meta('@echogarden/sonic-wasm', 'require-resolve'));
    assert.throws(() => checkRequiredPackages(meta('no-such-package-tts', 'require-resolve')), /cannot resolve/);
  });

  it('refuses chunks that import each other statically in a cycle; a cycle through import() is allowed', () => {
    const chunk = (...imports: [string, string][]) => ({ imports: imports.map(([path, kind]) => ({ path, kind })) });
    const outputs = {
      'dist/s/tts.js': chunk(['dist/s/chunk-A.js', 'import-statement'], ['node:fs', 'import-statement']),
      'dist/s/chunk-A.js': chunk(['dist/s/chunk-B.js', 'import-statement']),
      'dist/s/chunk-B.js': chunk(['dist/s/chunk-A.js', 'dynamic-import']),
    };
    checkNoStaticCycles({ outputs });
    outputs['dist/s/chunk-B.js'] = chunk(['dist/s/chunk-A.js', 'import-statement']);
    assert.throws(() => checkNoStaticCycles({ outputs }), /in a cycle, which CommonJS does not keep: chunk-A\.js → chunk-B\.js → chunk-A\.js/);
  });
});
