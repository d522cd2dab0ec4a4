/**
 * The embedded service's engine and its early start (src/server/embedded-engine.ts, issue 20):
 * who owns an engine started before its service exists, and that one started early speaks the
 * same bytes as one started by the service.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEngine, EngineError, type EspeakEngine } from '../../src/engine/index.js';
import { createEmbeddedEngine, EarlyEngine } from '../../src/server/embedded-engine.js';
import { startEmbeddedService } from '../../src/server/embedded.js';
import { collect, job } from '../helpers/engine-audio.js';

test('an early engine that nobody took is closed by release(): later syntheses are refused', async () => {
  let engine: EspeakEngine | undefined;
  const early = new EarlyEngine('Hello there.', (options) => (engine = createEmbeddedEngine(options)));
  assert.ok(engine !== undefined);
  assert.equal(engine.stats().workers, 1, 'the worker starts at once');
  await early.release();
  assert.equal(engine.stats().workers, 0);
  await assert.rejects(collect(engine, job({ text: 'Hello there.' })), (e: unknown) => e instanceof EngineError && /closed/.test(e.message));
  assert.equal(early.take(), undefined, 'nothing left to take');
});

test('an early engine taken by the service is the service’s: release() leaves it running, the service closes it', async () => {
  const early = new EarlyEngine('Taken by the service.');
  const engine = early.take();
  assert.ok(engine !== undefined);
  assert.equal(early.take(), undefined, 'taken once');
  await early.release();
  const service = await startEmbeddedService({ text: 'Taken by the service.', engine });
  try {
    const heard = await collect(engine, job({ text: 'Taken by the service.' }));
    assert.ok(heard.audio.length > 24000, `${heard.audio.length} bytes`);
  } finally {
    await service.close();
  }
  assert.equal(engine.stats().workers, 0, 'closed with its service');
});

test('the early engine (one worker, kuromoji’s dictionary from the pool’s thread) speaks the bytes of a worker that loads its own', async () => {
  const texts = [
    ['The early engine speaks these words.', 'en-man-1', 'en'],
    ['東京駅から歩いて行きます。', 'ja-man-1', 'ja'],
    ['Flite と漢字を一緒に読みます。', 'ja-woman-1', 'ja'],
  ] as const;
  const early = new EarlyEngine(texts.map((t) => t[0]).join(' ')).take()!;
  const own = createEngine({ workers: 1 });
  try {
    for (const [text, voice, language] of texts) {
      const a = await collect(early, job({ text, voice, language }));
      const b = await collect(own, job({ text, voice, language }));
      assert.ok(a.audio.length > 0 && a.audio.equals(b.audio), text);
    }
    assert.equal(early.stats().lastReport?.dictionarySource, 'shared');
    assert.notEqual(own.stats().lastReport?.dictionarySource, 'shared');
  } finally {
    await Promise.all([early.close(), own.close()]);
  }
});
