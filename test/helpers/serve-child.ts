/**
 * The built-in service in a child process of its own, so a test can measure the server's memory
 * apart from its clients'. Forked as `node serve-child.js '<json options>'` with an IPC channel
 * (see {@link startChildService}); it answers messages:
 *   `{type:'memory'}` → `{type:'memory', rss, heapUsed, external, arrayBuffers, engine}` after GC
 *   `{type:'close'}`  → closes the service and the engine, then exits.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { EngineStats } from '../../src/engine/index.js';

/** What the child is told to run. */
export interface ChildServiceOptions {
  apiKeys: string[];
  workers: number;
  maxConcurrent?: number;
  maxChars?: number;
}

/** The child's memory, measured after two full GCs. */
export interface ChildMemory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  engine: EngineStats;
}

/** A service running in a child process. */
export interface ChildService {
  base: string;
  child: ChildProcess;
  memory(): Promise<ChildMemory>;
  close(): Promise<void>;
}

/** Forks this file as a child and waits until it listens. */
export async function startChildService(options: ChildServiceOptions): Promise<ChildService> {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(options)], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies: ((m: Record<string, unknown>) => void)[] = [];
  child.on('message', (m: Record<string, unknown>) => replies.shift()?.(m));
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      replies.push(resolve);
      child.once('exit', (code) => reject(new Error(`the service child exited (${code})`)));
    });
  const ready = await next();
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    base: String(ready['base']),
    child,
    memory: async () => {
      const reply = next();
      child.send({ type: 'memory' });
      return (await reply) as unknown as ChildMemory;
    },
    close: async () => {
      if (child.exitCode === null) child.send({ type: 'close' });
      await exited;
    },
  };
}

async function runChild(options: ChildServiceOptions): Promise<void> {
  const [{ createEngine }, { createService, closeService, listen }] = await Promise.all([import('../../src/engine/index.js'), import('../../src/server/builtin-server.js')]);
  const engine = createEngine({ workers: options.workers });
  await engine.warmUp();
  const server = createService({ apiKeys: options.apiKeys, engine, maxConcurrent: options.maxConcurrent, maxChars: options.maxChars });
  const base = await listen(server, '127.0.0.1', 0);
  // `--expose-gc` on the command line would be inherited by the engine's worker threads, which
  // refuse it (ERR_WORKER_INVALID_EXEC_ARGV); setting the flag at run time exposes gc here only.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  process.on('message', (m: { type: string }) => {
    if (m.type === 'memory') {
      void (async () => {
        for (let i = 0; i < 2; i++) {
          gc();
          // One turn of the event loop: finalizers and closed sockets' callbacks run.
          await new Promise((r) => setImmediate(r));
        }
        const u = process.memoryUsage();
        process.send!({ type: 'memory', rss: u.rss, heapUsed: u.heapUsed, external: u.external, arrayBuffers: u.arrayBuffers, engine: engine.stats() });
      })();
    } else if (m.type === 'close') {
      void closeService(server)
        .then(() => engine.close())
        .then(() => process.disconnect());
    }
  });
  process.send!({ type: 'ready', base });
}

// Run only when forked as a script (not when a test imports startChildService).
if (process.argv[1] === fileURLToPath(import.meta.url) && process.send !== undefined) {
  await runChild(JSON.parse(process.argv[2] ?? '{}') as ChildServiceOptions);
}
