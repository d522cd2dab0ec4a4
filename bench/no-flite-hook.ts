/**
 * `node --import dist/bench/no-flite-hook.js bin/tts.js …` runs tts with Flite unable to start, so
 * English is spoken by eSpeak NG as before Flite (the fallback): the baseline of bench/voices.ts,
 * and test/e2e/cache-identity.test.ts's broken engine. Opening or reading any `flite.wasm` fails
 * with ENOENT, as if the file were missing: on the main thread (where the pool compiles Flite for
 * its workers) and in each worker thread (the engine passes `--import` on to them). It patches
 * `node:fs` (`openSync`, with which the engine reads Flite without its data since issue 20's eighth
 * round, and the promise API's `readFile`, with which it reads a binary whole) rather than the
 * engine's own module state, because bin/tts.js runs the bundle (dist/bundle/), whose modules are
 * not the dist/src ones this file could import.
 */
import fs, { promises } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';

/**
 * The error opening `file` fails with when it is a `flite.wasm` (ENOENT, as Node's own for a
 * missing file); undefined for any other file, which opens as usual.
 */
function missingFlite(file: unknown): NodeJS.ErrnoException | undefined {
  const name = typeof file === 'string' || file instanceof URL ? basename(file instanceof URL ? file.pathname : file) : '';
  if (name !== 'flite.wasm') return undefined;
  return Object.assign(new Error(`ENOENT: no such file or directory, open '${String(file)}'`), { code: 'ENOENT', errno: -2, syscall: 'open', path: String(file) });
}

const readFile = promises.readFile;
promises.readFile = ((file: Parameters<typeof readFile>[0], ...rest: unknown[]) => {
  const error = missingFlite(file);
  if (error !== undefined) return Promise.reject(error);
  return (readFile as (...args: unknown[]) => ReturnType<typeof readFile>)(file, ...rest);
}) as typeof readFile;
const openSync = fs.openSync;
fs.openSync = ((file: Parameters<typeof openSync>[0], ...rest: unknown[]) => {
  const error = missingFlite(file);
  if (error !== undefined) throw error;
  return (openSync as (...args: unknown[]) => number)(file, ...rest);
}) as typeof openSync;
// `import { readFile } from 'node:fs/promises'` and `import { openSync } from 'node:fs'` are live
// bindings of the same functions: update them.
syncBuiltinESMExports();
