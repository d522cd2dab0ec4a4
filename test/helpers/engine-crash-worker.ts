/**
 * The real engine worker plus a way to crash it, for the pool's crash test (test/engine/pool.test.ts).
 * Static imports run in order, so the crash hook's message listener is registered before the real
 * worker's and sees each job first; see engine-crash-hook.ts.
 */
import './engine-crash-hook.js';
import '../../src/engine/worker.js';
