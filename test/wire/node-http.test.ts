/**
 * `node:http` is loaded with `require` (src/wire/node-http.ts, issue 20): an ES import of it on
 * Node 22 and later also loads Node's own undici (the module's `WebSocket` getters), about 35 ms
 * of a one-shot's main thread. Real `bin/tts.js` runs with a hook
 * (test/helpers/loaded-builtins-hook.ts) that lists the built-in modules Node loaded: a one-shot
 * on the built-in service (its HTTP server and in-memory client) and `tts serve` answering a
 * request load `node:http` and not Node's undici. (Since issue 20's tenth round the bundle is
 * CommonJS and reaches Node's modules with `require` only: test/cli/commonjs-bundle.test.ts.)
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { nodeHttp } from '../../src/wire/node-http.js';
import { runTts } from '../helpers/cli.js';
import { startServe } from '../helpers/serve-process.js';
import { allEvents, audioOf, postSse } from '../helpers/serve-http.js';

const hook = fileURLToPath(new URL('../helpers/loaded-builtins-hook.js', import.meta.url));
const UNDICI = 'NativeModule internal/deps/undici/undici';

test('nodeHttp() is node:http itself', async () => {
  const http = await import('node:http');
  assert.equal(nodeHttp(), http.default);
  assert.equal(nodeHttp().createServer, http.createServer);
  assert.equal(nodeHttp(), nodeHttp());
});

test('a one-shot on the built-in service loads node:http and not Node\'s undici', async () => {
  const run = await runTts(['stream', '--no-cache', '-o', '-', 'Hello.'], { nodeArgs: ['--import', hook] });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(run.stdout.length > 10_000, 'audio on stdout');
  const lines = run.stderr.split('\n');
  const loaded = lines.filter((l) => l.startsWith('LOADED '));
  // The hook did run: the process loaded node:http (its server and the in-memory client).
  assert.ok(loaded.includes('LOADED NativeModule http'), 'node:http loaded');
  assert.ok(!loaded.includes(`LOADED ${UNDICI}`), "Node's undici loaded");
});

test('`tts serve` answering a request loads node:http and not Node\'s undici', async () => {
  const serve = await startServe(['--port', '0', '--workers', '1', '-q'], { NODE_OPTIONS: `--import=${JSON.stringify(hook)}`, TTS_SERVER_API_KEYS: 'test-key' });
  try {
    const res = await postSse(serve.base, { input: 'Hello.', voice: 'en-man-1' }, 'test-key');
    assert.equal(res.status, 200);
    assert.ok(audioOf(await allEvents(res)).length > 10_000, 'audio');
  } finally {
    serve.child.kill('SIGTERM');
  }
  const { code } = await serve.exited;
  assert.equal(code, 0, serve.stderr());
  const lines = serve.stderr().split('\n');
  const loaded = lines.filter((l) => l.startsWith('LOADED '));
  assert.ok(loaded.includes('LOADED NativeModule http'), 'node:http loaded');
  assert.ok(!loaded.includes(`LOADED ${UNDICI}`), "Node's undici loaded");
});
