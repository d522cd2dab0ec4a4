/**
 * The engine thread bin/tts.js starts ahead of the pool (src/engine/early-worker.ts; issue 20,
 * twelfth round): the first pool that starts a worker of the same file takes it and it serves
 * exactly as a thread the pool starts itself, with the same bytes; any other pool, a thread that
 * already failed, and a run that discards it leave it stopped, and the pool starts its own.
 * bin/tts.js's side (when it starts one, and that a run takes it) is test/cli/early-worker.test.ts.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createEngine } from '../../src/engine/index.js';
import { adoptEarlyWorker, discardEarlyWorker, EARLY_ENGINE_WORKER, type EarlyEngineWorker } from '../../src/engine/early-worker.js';
import { workerExecArgv } from '../../src/engine/job.js';
import { ENGINE_WORKER_URL } from '../../src/engine/worker-url.js';
import { collect, job } from '../helpers/engine-audio.js';

const holder = globalThis as { [EARLY_ENGINE_WORKER]?: EarlyEngineWorker | undefined };

/**
 * Starts a thread as bin/tts.js does (the engine worker's file, unref'd, marked stopped by its own
 * 'error' and 'exit'; with the Node options a pool of this process gives its threads, which are
 * none under `npm test`, as for bin/tts.js) and leaves it where the pool looks. Also counts the
 * messages it posts, which only a pool that took it can have asked for.
 */
function startEarly(file = fileURLToPath(ENGINE_WORKER_URL), execArgv = workerExecArgv()): { early: EarlyEngineWorker; posted: () => number; exited: Promise<unknown[]> } {
  const early: EarlyEngineWorker = { worker: new Worker(file, { execArgv }), file, execArgv, stopped: false };
  early.worker.on('error', () => (early.stopped = true));
  const exited = once(early.worker, 'exit');
  void exited.then(() => (early.stopped = true));
  let posted = 0;
  early.worker.on('message', () => posted++);
  early.worker.unref();
  holder[EARLY_ENGINE_WORKER] = early;
  return { early, posted: () => posted, exited };
}

test('the pool takes the early thread, which serves the same bytes as a thread the pool starts', async () => {
  const english = job({ text: 'The early thread speaks this sentence.', sampleRate: 24000 });
  const japanese = job({ text: '今日は東京で会議があります。', voice: 'ja-man-1', language: 'ja', sampleRate: 24000 });
  const own = createEngine({ shareDictionary: true });
  let expected: Buffer[];
  try {
    expected = [(await collect(own, english)).audio, (await collect(own, japanese)).audio];
  } finally {
    await own.close();
  }

  const { posted, exited } = startEarly();
  const engine = createEngine({ shareDictionary: true });
  try {
    engine.prestart({ text: english.text });
    assert.equal(holder[EARLY_ENGINE_WORKER], undefined, 'the pool took the thread from globalThis');
    assert.deepEqual([(await collect(engine, english)).audio, (await collect(engine, japanese)).audio], expected);
    assert.equal(engine.stats().workers, 1);
    // The chunks came from the early thread: nothing else would post to it.
    assert.ok(posted() > 10, `${posted()} messages from the early thread`);
  } finally {
    await engine.close();
  }
  // Closing the pool ends the thread it took.
  await exited;
});

test('a pool of another worker file, or a thread that already ended, is not given it: it is stopped and the pool starts its own', async () => {
  // Another file than the pool's: stopped, never asked anything.
  const other = startEarly(fileURLToPath(new URL('../helpers/engine-crash-worker.js', import.meta.url)));
  const engine = createEngine();
  try {
    const { audio } = await collect(engine, job({ text: 'Spoken by the pool\'s own thread.' }));
    assert.ok(audio.length > 16000);
    assert.equal(holder[EARLY_ENGINE_WORKER], undefined);
    await other.exited;
    assert.equal(other.posted(), 0);
  } finally {
    await engine.close();
  }

  // The right file, but ended before the pool asked: not taken.
  const ended = startEarly();
  await ended.early.worker.terminate();
  await ended.exited;
  const second = createEngine();
  try {
    const { audio } = await collect(second, job({ text: 'Spoken by a new thread.' }));
    assert.ok(audio.length > 16000);
    assert.equal(second.stats().crashes, 0, 'the ended thread was not taken');
    assert.equal(ended.posted(), 0);
  } finally {
    await second.close();
  }
});

test('adoptEarlyWorker gives the thread once, and only with the same Node options; discardEarlyWorker stops it', async () => {
  assert.equal(adoptEarlyWorker(ENGINE_WORKER_URL, []), undefined, 'none started');

  const withOptions = startEarly(undefined, []);
  assert.equal(adoptEarlyWorker(ENGINE_WORKER_URL, ['--no-warnings']), undefined);
  assert.equal(holder[EARLY_ENGINE_WORKER], undefined);
  await withOptions.exited;

  // A URL Node cannot turn into a path (a host) is another file, not an error.
  const hosted = startEarly(undefined, []);
  assert.equal(adoptEarlyWorker(new URL('file://elsewhere/engine-worker.cjs'), []), undefined);
  await hosted.exited;

  const taken = startEarly(undefined, ['--no-warnings']);
  assert.equal(adoptEarlyWorker(ENGINE_WORKER_URL, ['--no-warnings']), taken.early.worker);
  assert.equal(adoptEarlyWorker(ENGINE_WORKER_URL, ['--no-warnings']), undefined, 'once');
  await taken.early.worker.terminate();

  const discarded = startEarly();
  discardEarlyWorker();
  assert.equal(holder[EARLY_ENGINE_WORKER], undefined);
  await discarded.exited;
  discardEarlyWorker();
});

