/**
 * The real engine worker with Flite unable to start (its WebAssembly pointed at a file that does
 * not exist), for the fallback test (test/engine/voices.test.ts): English must then be spoken by
 * eSpeak NG. Static imports run in order, so the path is set before the worker serves a job.
 */
import { setFliteWasmPath } from '../../src/engine/flite.js';

setFliteWasmPath('/nonexistent/flite.wasm');
await import('../../src/engine/worker.js');
