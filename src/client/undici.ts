/**
 * The undici functions the channels use (Node's own HTTP client: `stream` for SSE, `request` for
 * the OpenAI voice list), re-exported statically so that their callers can load undici lazily,
 * `await import('./undici.js')`, and get them by name both under tsc and in the bundle: esbuild's
 * code splitting gives a dynamically imported CommonJS package (undici is one) only its
 * `default` export (evanw/esbuild#3245), and scripts/bundle.js fails the build on such a chunk.
 */
export { request, stream } from 'undici';
