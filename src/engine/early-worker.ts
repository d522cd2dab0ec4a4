/**
 * The engine worker thread that bin/tts.js starts as the process starts (issue 20, twelfth round),
 * before the bundle loads, for a run that will likely speak through the built-in engine. Booting a
 * worker thread (a second V8 isolate and Node's start in it) takes 35–55 ms, which then overlaps
 * the CLI's own start (commander, the configuration, the run's code) instead of following it.
 *
 * The thread only loads engine-worker.cjs and waits for its {@link InitMessage} (worker.ts): it
 * guesses nothing and does nothing until the pool says what to serve with, and it posts nothing
 * before that, so no message of its own can be lost. The first pool of the process that starts a
 * worker of the same file with the same Node options takes it ({@link adoptEarlyWorker}); a run that
 * talks to a remote service, and will not time words with the built-in engine, stops it
 * ({@link discardEarlyWorker}, from resolveService). Any other thread nobody takes (a run that
 * ends in an error first) is left to Node's exit: bin/tts.js unrefs it, so it never keeps the
 * process running.
 */
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { InitMessage } from './messages.js';

/** Where bin/tts.js keeps its thread: on `globalThis`, under this registered symbol. */
export const EARLY_ENGINE_WORKER: unique symbol = Symbol.for('tts.early-engine-worker') as never;

/** What bin/tts.js keeps under {@link EARLY_ENGINE_WORKER}. */
export interface EarlyEngineWorker {
  /** The thread, unref'd, started with {@link execArgv} and no `workerData`. */
  worker: Worker;
  /** Absolute path of the file it runs (dist/bundle/engine-worker.cjs, symbolic links resolved as Node resolves the main script's). */
  file: string;
  /** The Node options it was started with (`new Worker`'s `execArgv`; bin/tts.js: none). */
  execArgv: readonly string[];
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
 * process: the first caller gets it when it runs the same file with the same Node options and is
 * still alive; it is then the caller's, still unref'd, and waits for the caller's
 * {@link InitMessage}. Otherwise the thread is stopped (no later pool could use it either) and the
 * caller starts its own.
 * @returns the thread, or undefined (none, or not one this caller can use). Never throws.
 */
export function adoptEarlyWorker(url: URL, execArgv: readonly string[]): Worker | undefined {
  const early = takeEarlyWorker();
  if (early === undefined) return undefined;
  const sameOptions = execArgv.length === early.execArgv.length && execArgv.every((arg, i) => arg === early.execArgv[i]);
  if (!early.stopped && sameOptions && url.href === pathToFileURL(early.file).href) return early.worker;
  void early.worker.terminate().catch(() => undefined);
  return undefined;
}

/**
 * Stops the early thread if no pool took it: for a run that talks to a remote service and will not
 * time words with the built-in engine (resolveService). Returns at once (the thread ends on its own
 * time). Never throws.
 */
export function discardEarlyWorker(): void {
  const early = takeEarlyWorker();
  if (early !== undefined) void early.worker.terminate().catch(() => undefined);
}
