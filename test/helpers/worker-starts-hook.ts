/**
 * Loaded through NODE_OPTIONS=--import (which, unlike a flag before bin/tts.js, leaves
 * `process.execArgv` empty, as bin/tts.js needs to start its early engine thread): in the main
 * thread, counts every worker thread the process starts, and when the process exits writes one
 * line `WORKERS <json>` to stderr: for each thread, its file's name, who started it (`bin` when the
 * call came from bin/tts.js, else `pool`), whether the run stopped it (called `terminate()`: Node's
 * own end of a thread at exit does not) and whether it had ended by then. Worker threads load
 * this too (NODE_OPTIONS reaches them) and do nothing. test/cli/early-worker.test.ts.
 */
import { syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';
import workerThreads from 'node:worker_threads';

/** One thread the process started. */
export interface WorkerStart {
  file: string;
  by: 'bin' | 'pool';
  terminated: boolean;
  ended: boolean;
}

if (workerThreads.isMainThread) {
  const starts: WorkerStart[] = [];
  const Original = workerThreads.Worker;
  class Counted extends Original {
    constructor(file: string | URL, options?: import('node:worker_threads').WorkerOptions) {
      super(file, options);
      const start: WorkerStart = { file: basename(file instanceof URL ? file.pathname : file), by: /[/\\]bin[/\\]tts\.js:/.test(new Error().stack ?? '') ? 'bin' : 'pool', terminated: false, ended: false };
      starts.push(start);
      this.once('exit', () => (start.ended = true));
      const terminate = this.terminate.bind(this);
      this.terminate = () => {
        start.terminated = true;
        return terminate();
      };
    }
  }
  (workerThreads as { Worker: typeof Original }).Worker = Counted;
  syncBuiltinESMExports();
  process.on('exit', () => process.stderr.write(`WORKERS ${JSON.stringify(starts)}\n`));
}
