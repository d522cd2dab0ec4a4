/**
 * Where the engine's worker thread is (worker.ts, compiled beside this file; in the bundle,
 * dist/bundle/engine-worker.js, which scripts/bundle.js puts in place of this URL). Its own
 * module, with no imports, so that the cache (cache/identity.ts, which hashes the worker's code)
 * can name it without loading the engine.
 */
export const ENGINE_WORKER_URL: URL = new URL('./worker.js', import.meta.url);
