/**
 * The engine worker thread that bin/tts.js starts as the process starts (issue 20, twelfth round),
 * before the bundle loads, for a run that will likely speak through the built-in engine. Booting a
 * worker thread (a second V8 isolate and Node's start in it) takes 35–55 ms, which then overlaps
 * the CLI's own start (commander, the configuration, the run's code) instead of following it.
 *
 * The thread only loads engine-worker.cjs and waits for its {@link InitMessage} (worker.ts): it
 * guesses nothing and does nothing until the pool says what to serve with, and it posts nothing
 * before that, so no message of its own can be lost. The first pool of the process that starts a
 * worker of the same file takes it ({@link adoptEarlyWorker}); a run that will not use it (a remote
 * service after all, or an error first) stops it ({@link discardEarlyWorker}). A thread nobody
 * takes never keeps the process running: bin/tts.js unrefs it.
 */
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { InitMessage } from './messages.js';

/** Where bin/tts.js keeps its thread: on `globalThis`, under this registered symbol. */
export const EARLY_ENGINE_WORKER: unique symbol = Symbol.for('tts.early-engine-worker') as never;

/** What bin/tts.js keeps under {@link EARLY_ENGINE_WORKER}. */
export interface EarlyEngineWorker {
  /** The thread, unref'd, started with `execArgv: []` and no `workerData`. */
  worker: Worker;
  /** Absolute path of the file it runs (dist/bundle/engine-worker.cjs, symbolic links resolved as Node resolves the main script's). */
  file: string;
  /** Set by bin/tts.js's listeners once it failed ('error') or ended ('exit'): then it is not taken. */
  stopped: boolean;
}

/** The early thread, removed from `globalThis`: whoever gets it owns it. Undefined when there is none. */
function takeEarlyWorker(): EarlyEngineWorker | undefined {
  const holder = globalThis as { [EARLY_ENGINE_WORKER]?: EarlyEngineWorker | undefined };
  const early = holder[EARLY_ENGINE_WORKER];
  delete holder[EARLY_ENGINE_WORKER];
  return early;
}

/**
 * The early thread for a pool about to start a worker running `url` with `execArgv`, once per
 * process: the first caller gets it when it runs the same file, with no Node options (what
 * bin/tts.js started it with), and is still alive; it is then the caller's, still unref'd, and
 * waits for the caller's {@link InitMessage}. Otherwise the thread is stopped (no later pool could
 * use it either) and the caller starts its own.
 * @returns the thread, or undefined (none, or not one this caller can use). Never throws.
 */
export function adoptEarlyWorker(url: URL, execArgv: readonly string[]): Worker | undefined {
  const early = takeEarlyWorker();
  if (early === undefined) return undefined;
  if (!early.stopped && execArgv.length === 0 && url.protocol === 'file:' && fileURLToPath(url) === early.file) return early.worker;
  void early.worker.terminate().catch(() => undefined);
  return undefined;
}

/**
 * Stops the early thread if no pool took it: the run talks to a remote service, or ended before
 * it started an engine. Returns at once (the thread ends on its own time). Never throws.
 */
export function discardEarlyWorker(): void {
  const early = takeEarlyWorker();
  if (early !== undefined) void early.worker.terminate().catch(() => undefined);
}
