// Helpers of scripts/bundle.js for the CLI's CommonJS files (issue 20's tenth round), in a module
// of their own so that test/cli/commonjs-bundle.test.ts can run them.
//
// esbuild's metafile (https://esbuild.github.io/api/#metafile), as these helpers read it:
// `{ outputs: { [file]: { imports: [{ path, kind, external? }] } } }`, `file` relative to the
// build's working folder, `kind` one of 'import-statement', 'require-call', 'dynamic-import',
// 'require-resolve' (and others for CSS, never in this build).
import { readFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { basename, dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The `import("…")` expressions in `code` (an ES module esbuild wrote) whose specifier is a string
 * naming another chunk (`./chunk-HASH.js`) or one of Node's own modules (`node:fs`, `fs`), found
 * by parsing (acorn, ECMAScript's latest edition), so that the same text in a comment or a string
 * is left as it is.
 * @returns the expressions' `{ start, end }` offsets (UTF-16 code units, as String.prototype.slice
 *   counts) and specifiers, last first.
 * @throws SyntaxError from acorn when `code` does not parse.
 */
export function localImportExpressions(code) {
  const found = [];
  const visit = (node) => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object' || typeof node.type !== 'string') return;
    const source = node.type === 'ImportExpression' ? node.source : undefined;
    if (source?.type === 'Literal' && typeof source.value === 'string' && (source.value.startsWith('./') || isBuiltin(source.value))) {
      found.push({ start: node.start, end: node.end, specifier: source.value });
    }
    for (const key of Object.keys(node)) if (key !== 'loc') visit(node[key]);
  };
  visit(parse(code, { ecmaVersion: 'latest', sourceType: 'module' }));
  return found.sort((a, b) => b.start - a.start);
}

/**
 * Fails the build when a CommonJS file of `metafile` (esbuild's, above) loads with `require` a
 * package Node would load otherwise than an ES module's `import` did (Node's resolution of
 * "exports" conditions and of a package's "type"): one that Node before 20.19 cannot `require`
 * (an ES module, such as libopus-wasm or sonic-wasm), or one whose exports give `require` another
 * file (wasm-media-encoders' CommonJS build). Such a package is to be reached through `import()`,
 * which the check leaves alone, as it does `require.resolve` of a package (only resolved: it must
 * resolve) and Node's own modules. It sees the imports of our code and of ES module packages; a
 * CommonJS package bundled with them calls `require` through esbuild's own wrapper, which the
 * metafile does not list.
 * @throws Error naming the file and the package.
 */
export function checkRequiredPackages(metafile) {
  // Both resolved from this script's folder, which finds the same node_modules as dist/bundle/.
  const required = createRequire(import.meta.url);
  for (const [output, { imports }] of Object.entries(metafile.outputs)) {
    for (const { path: name, kind, external } of imports) {
      if (!external || kind === 'dynamic-import' || name.startsWith('.') || isBuiltin(name)) continue;
      const file = basename(output);
      let byRequire;
      try {
        byRequire = required.resolve(name);
      } catch (error) {
        throw new Error(`dist/bundle/${file} requires '${name}', which Node cannot resolve for require (${error.message.split('\n')[0]}); reach it through import()`);
      }
      if (kind === 'require-resolve') continue;
      let byImport = byRequire;
      // import.meta.resolve is Node 20.6's: on an older Node 20 only the file require loads is checked.
      if (typeof import.meta.resolve === 'function') {
        try {
          byImport = fileURLToPath(import.meta.resolve(name));
        } catch (error) {
          throw new Error(`dist/bundle/${file} requires '${name}', which an ES module's import cannot resolve (${error.message.split('\n')[0]}): check the package`);
        }
      }
      if (byRequire !== byImport) {
        throw new Error(`dist/bundle/${file} requires '${name}', which an ES module's import loads from ${relative(root, byImport)}; reach it through import()`);
      }
      if (isEsModule(byRequire)) {
        throw new Error(`dist/bundle/${file} requires '${name}', an ES module (${relative(root, byRequire)}), which Node before 20.19 cannot require; reach it through import()`);
      }
    }
  }
}

/**
 * Whether Node loads `file` as an ES module: by its extension (`.mjs` yes; `.cjs`, `.json`,
 * `.node` no), else by the "type" of the package.json nearest above it.
 * @throws Error when a package.json on the way cannot be read for another reason than its absence,
 *   or does not parse.
 */
function isEsModule(file) {
  const extension = extname(file);
  if (extension === '.mjs') return true;
  if (extension !== '.js' && extension !== '') return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type === 'module';
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    if (dirname(dir) === dir) return false;
  }
}

/**
 * Fails the build when the CLI's ES module chunks (`metafile`, esbuild's, above, of the split
 * build) import each other statically in a cycle. As ES modules a cycle is safe (live bindings);
 * made CommonJS, a chunk in a cycle would get another's exports before they are set. esbuild
 * writes none today; this keeps it so.
 * @throws Error naming the chunks of one cycle.
 */
export function checkNoStaticCycles(metafile) {
  // An import of another output names it by its path, as the outputs' keys do.
  const edges = new Map();
  for (const [output, { imports }] of Object.entries(metafile.outputs)) {
    edges.set(output, imports.filter((i) => i.kind === 'import-statement' && Object.hasOwn(metafile.outputs, i.path)).map((i) => i.path));
  }
  const state = new Map(); // name → 'open' while on the path, 'done' after
  const path = [];
  const visit = (name) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'open') {
      throw new Error(`the CLI's chunks import each other in a cycle, which CommonJS does not keep: ${[...path.slice(path.indexOf(name)), name].map((p) => basename(p)).join(' → ')}`);
    }
    state.set(name, 'open');
    path.push(name);
    for (const next of edges.get(name) ?? []) visit(next);
    path.pop();
    state.set(name, 'done');
  };
  for (const name of edges.keys()) visit(name);
}
