/**
 * Loaded with `node --import` before bin/tts.js (test/wire/node-http.test.ts): registers an ES
 * module resolve hook (node:module `register`, Node ≥ 20.6) that writes a line
 * `ESM-IMPORT <specifier> <importer URL>` to stderr for every `import` or `import()` of
 * `node:http`, and, when the process exits, one line `LOADED <id>` for each built-in module
 * Node loaded (`process.moduleLoadList`, e.g. `NativeModule internal/deps/undici/undici`).
 * CommonJS `require` of a built-in does not pass through the hook.
 */
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (specifier === 'node:http' || specifier === 'http') process.stderr.write('ESM-IMPORT ' + specifier + ' ' + context.parentURL + '\\n');
  return next(specifier, context);
}`)}`,
);

process.on('exit', () => {
  const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
  process.stderr.write(loaded.map((id) => `LOADED ${id}\n`).join(''));
});
