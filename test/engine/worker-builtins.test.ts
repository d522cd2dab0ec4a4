/**
 * What the engine worker thread loads of Node for an English one-shot (issue 20, sixteenth round):
 * the bundled engine-worker.cjs, as bin/tts.js runs it, serving one English job from its init to
 * its end, never loads node:crypto — hashing is only for voice packages and eSpeak NG's data and
 * state (src/engine/sha256.ts), and loading it cost the thread's start 3–5 ms of CPU before Flite
 * could run — nor node:zlib, which only a gzipped kuromoji dictionary needs (seventeenth round). The thread's own `process.moduleLoadList` is read inside it, after the job.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { InitMessage, JobRequest, WorkerReply } from '../../src/engine/messages.js';

const BUNDLED_WORKER = fileURLToPath(new URL('../../bundle/engine-worker.cjs', import.meta.url));

/**
 * Runs the bundled worker in a thread whose parentPort it serves, plus a listener of this test's
 * own that answers `{ type: 'loaded' }` with the thread's loaded built-in modules.
 */
function bundledWorker(): Worker {
  const code = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => { if (m.type === 'loaded') parentPort.postMessage({ type: 'loaded', list: process.moduleLoadList }); });
require(${JSON.stringify(BUNDLED_WORKER)});`;
  return new Worker(code, { eval: true });
}

test('the bundled engine worker speaks an English job without loading node:crypto or node:zlib', async () => {
  const worker = bundledWorker();
  try {
    const replies: WorkerReply[] = [];
    let ended: (reply: WorkerReply) => void = () => undefined;
    const end = new Promise<WorkerReply>((resolve) => (ended = resolve));
    let listed: (list: string[]) => void = () => undefined;
    const loaded = new Promise<string[]>((resolve) => (listed = resolve));
    worker.on('message', (m: WorkerReply | { type: 'loaded'; list: string[] }) => {
      if (m.type === 'loaded') return listed(m.list);
      replies.push(m);
      if (m.type === 'end' || m.type === 'error') ended(m);
    });
    const init: InitMessage = { type: 'init', data: { abortFlag: new SharedArrayBuffer(4), expect: { flite: true, espeak: false } } };
    worker.postMessage(init);
    const job: JobRequest = {
      type: 'job',
      id: 1,
      job: { text: 'The build finished without errors.', voice: 'en-man-1', language: 'en', format: 'pcm16', sampleRate: 24000, channels: 1 },
      wordTimings: false,
    };
    worker.postMessage(job);
    const last = await end;
    assert.equal(last.type, 'end', JSON.stringify(last));
    const audioBytes = replies.reduce((n, r) => n + (r.type === 'chunk' ? r.data.byteLength : 0), 0);
    assert.ok(audioBytes > 24000 * 2 * 0.5, `spoke at least half a second: ${audioBytes} bytes`);
    worker.postMessage({ type: 'loaded' });
    const list = await loaded;
    assert.ok(list.includes('NativeModule internal/worker/io'), 'the list is the thread\'s own');
    assert.deepEqual(
      list.filter((id) => /^NativeModule (crypto|internal\/crypto\/)/.test(id)),
      [],
      'node:crypto is not loaded',
    );
    // Nor node:zlib: only a gzipped kuromoji dictionary needs it (seventeenth round).
    assert.deepEqual(
      list.filter((id) => /^NativeModule (zlib|internal\/zlib)/.test(id)),
      [],
      'node:zlib is not loaded',
    );
  } finally {
    await worker.terminate();
  }
});
