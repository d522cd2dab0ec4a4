/**
 * Loaded by engine-crash-worker.ts before the real worker, so that this message listener runs
 * first: a job whose text is `please crash the worker now` ends the thread at once with
 * process.exit(1) (inside a worker that stops the thread, not the process), before the real
 * worker sees the job. The pool must treat that like any other crash.
 */
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', (message: { type?: string; job?: { text?: string } }) => {
  if (message.type === 'job' && message.job?.text === 'please crash the worker now') process.exit(1);
});
