/**
 * Where the engine's worker thread is (worker.ts, compiled beside this file; in the bundle,
 * dist/bundle/engine-worker.cjs, which scripts/bundle.js puts in place of this URL). Its own
 * module, with no imports, so that the cache (cache/identity.ts, which hashes the worker's code)
 * can name it without loading the engine.
 */
export const ENGINE_WORKER_URL: URL = new URL('./worker.js', import.meta.url);

/**
 * The engine's cutting of a stream's text into the units its workers synthesize one by one
 * (units.ts, with text/split.ts): it runs in the pool's thread, not the worker's, yet where it
 * cuts decides the audio bytes, so the cache's engine identity hashes its code too. Under tsc,
 * units.js beside this file; in the bundle, dist/bundle/engine-units.js, a file of its own that
 * scripts/bundle.js builds from the same source for that purpose.
 */
export const ENGINE_UNITS_URL: URL = new URL('./units.js', import.meta.url);
