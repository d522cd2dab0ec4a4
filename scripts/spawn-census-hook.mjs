/**
 * Preloaded (through NODE_OPTIONS) by scripts/count-spawning-tests.mjs into every test file the
 * runner starts: records each test (file, suite path, name) and each child process started
 * (child_process spawn/exec/execFile/fork, sync or not) with the test or hook it ran under, found
 * through AsyncLocalStorage. On exit it appends one JSON line per file to
 * `$TTS_SPAWN_CENSUS_DIR/census.jsonl`. Does nothing outside a test file.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';

const dir = process.env.TTS_SPAWN_CENSUS_DIR;
if (dir !== undefined && process.env.NODE_TEST_CONTEXT !== undefined && process.argv[1] !== undefined) {
  // Children of this test file (bin/tts.js, sox…) are not test files: don't preload them.
  delete process.env.NODE_OPTIONS;
  const require = createRequire(import.meta.url);
  const file = process.argv[1];
  const als = new AsyncLocalStorage();
  /** Every test declared: its key is "suite > … > name". */
  const tests = [];
  /** Every child process: the key of the test it ran in, or of the suite whose hook started it. */
  const spawns = [];
  const path = () => als.getStore()?.path ?? [];

  /** The function among a test API's arguments, wrapped to run under `store`. */
  const wrapFn = (args, store) => {
    const i = args.findLastIndex((a) => typeof a === 'function');
    if (i < 0) return args;
    const fn = args[i];
    const wrapped = function (...a) {
      return als.run(store, () => fn.apply(this, a));
    };
    // node:test reads fn.length to tell a `done` callback test from a promise one.
    Object.defineProperty(wrapped, 'length', { value: fn.length });
    const copy = [...args];
    copy[i] = wrapped;
    return copy;
  };
  const nameOf = (args) => (typeof args[0] === 'string' ? args[0] : typeof args[0] === 'function' ? args[0].name : '<anonymous>');

  const testApi = require('node:test');
  // TTS_SPAWN_CENSUS_LIST=1: declare every test but run none (to count a file's tests cheaply).
  const listOnly = process.env.TTS_SPAWN_CENSUS_LIST === '1';
  const noop = () => {};
  const wrapTest = (orig) => {
    const w = function (...args) {
      const p = [...path(), nameOf(args)];
      tests.push(p.join(' > '));
      if (listOnly) return orig.call(this, p.at(-1), noop);
      return orig.apply(this, wrapFn(args, { path: p, kind: 'test' }));
    };
    for (const k of ['skip', 'todo', 'only']) if (typeof orig[k] === 'function') w[k] = orig[k];
    return w;
  };
  const wrapSuite = (orig) => {
    const w = function (...args) {
      return orig.apply(this, wrapFn(args, { path: [...path(), nameOf(args)], kind: 'suite' }));
    };
    for (const k of ['skip', 'todo', 'only']) if (typeof orig[k] === 'function') w[k] = orig[k];
    return w;
  };
  const wrapHook = (orig) =>
    function (...args) {
      if (listOnly) return orig.call(this, noop);
      return orig.apply(this, wrapFn(args, { path: path(), kind: 'hook' }));
    };
  testApi.test = wrapTest(testApi.test);
  testApi.it = wrapTest(testApi.it);
  testApi.describe = wrapSuite(testApi.describe);
  testApi.suite = testApi.describe;
  for (const h of ['before', 'after', 'beforeEach', 'afterEach']) testApi[h] = wrapHook(testApi[h]);

  const cp = require('node:child_process');
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    const orig = cp[name];
    let inside = false;
    cp[name] = function (...args) {
      if (!inside) {
        const store = als.getStore();
        spawns.push({ key: (store?.path ?? []).join(' > '), kind: store?.kind ?? 'top', command: String(args[0]).split('/').pop() });
      }
      inside = true;
      try {
        return orig.apply(this, args);
      } finally {
        inside = false;
      }
    };
  }
  syncBuiltinESMExports();
  process.on('exit', () => {
    appendFileSync(join(dir, 'census.jsonl'), JSON.stringify({ file, tests, spawns }) + '\n');
  });
}
