// Helpers of scripts/bundle.js for the CLI's CommonJS files (issue 20's tenth round), in a module
// of their own so that test/cli/commonjs-bundle.test.ts can run them.
import { readFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The `import("…")` expressions in `code` (an ES module esbuild wrote) whose specifier is a string
 * naming another chunk (`./chunk-HASH.js`) or one of Node's own modules (`node:fs`), found by
 * parsing (acorn), so that the same text in a comment or a string is left as it is.
 * @returns the expressions' `{ start, end }` offsets (UTF-16 code units) and specifiers, last first.
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
    if (source?.type === 'Literal' && typeof source.value === 'string' && /^(\.\/|node:)/.test(source.value)) {
      found.push({ start: node.start, end: node.end, specifier: source.value });
    }
    for (const key of Object.keys(node)) if (key !== 'loc') visit(node[key]);
  };
  visit(parse(code, { ecmaVersion: 'latest', sourceType: 'module' }));
  return found.sort((a, b) => b.start - a.start);
}

/**
 * Fails the build when a CommonJS file of `metafile` (esbuild's account of a build) requires a
 * package that Node would load otherwise than an ES module's `import` did: one Node 20 cannot
 * `require` (an ES module, such as libopus-wasm), or one whose exports give `require` another
 * file (wasm-media-encoders' other build). Such a package is reached through `import()`.
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
      let byImport;
      try {
        byRequire = required.resolve(name);
        // import.meta.resolve is Node 20.6's: on an older Node 20 only the file require loads is checked.
        byImport = typeof import.meta.resolve === 'function' ? fileURLToPath(import.meta.resolve(name)) : byRequire;
      } catch (error) {
        throw new Error(`dist/bundle/${file} requires '${name}', which Node cannot resolve (${error.message.split('\n')[0]}); reach it through import()`);
      }
      if (byRequire !== byImport) {
        throw new Error(`dist/bundle/${file} requires '${name}', which an ES module's import loads from ${relative(root, byImport)}; reach it through import()`);
      }
      if (byRequire.endsWith('.mjs') || packageType(byRequire) === 'module') {
        throw new Error(`dist/bundle/${file} requires '${name}', an ES module (${relative(root, byRequire)}), which Node 20 cannot require; reach it through import()`);
      }
    }
  }
}

/** The "type" of the package.json nearest above `file` ("module", "commonjs" or undefined). */
function packageType(file) {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type;
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    if (dirname(dir) === dir) return undefined;
  }
}
