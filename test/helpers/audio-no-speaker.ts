/**
 * Loaded with `node --import` before bin/tts.js: makes the `speaker` package unresolvable, as on
 * a machine where npm could not build it (no ALSA headers, no compiler), without touching
 * node_modules. createRequire().resolve goes through Module._resolveFilename, patched here.
 */
import Module from 'node:module';

type Resolve = (request: string, ...rest: unknown[]) => string;
const patched = Module as unknown as { _resolveFilename: Resolve };
const original = patched._resolveFilename;
patched._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  if (request === 'speaker' || request.startsWith('speaker/')) {
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
  }
  return original.call(this, request, ...rest);
};
