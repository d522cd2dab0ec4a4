/**
 * Loaded with `node --import` before bin/tts.js (test/cli/commonjs-bundle.test.ts): registers an
 * ES module resolve hook (node:module `register`, Node ≥ 20.6) that writes a line
 * `ESM-RESOLVE <specifier> <resolved URL> <importer URL>` to stderr for every `import` and
 * `import()` Node's ES module loader resolves from then on (the importer `-` for an entry point).
 * CommonJS `require` does not pass through it.
 */
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  process.stderr.write('ESM-RESOLVE ' + specifier + ' ' + resolved.url + ' ' + (context.parentURL ?? '-') + '\\n');
  return resolved;
}`)}`,
);
