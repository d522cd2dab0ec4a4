/**
 * `node --import dist/bench/no-flite-hook.js bin/tts.js …` runs tts with Flite unable to start, so
 * English is spoken by eSpeak NG as before Flite (the fallback): the baseline of bench/voices.ts.
 * The engine passes `--import` on to its worker threads, where Flite runs; on the main thread
 * this only sets a path nobody reads.
 */
import { setFliteWasmPath } from '../src/engine/flite.js';

setFliteWasmPath('/nonexistent/flite.wasm');
