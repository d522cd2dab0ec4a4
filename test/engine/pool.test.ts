/**
 * The engine as the service uses it (src/engine/engine.ts + worker.ts): streaming, chunk shapes
 * and exact lengths, cancellation, queueing, crashes, close, and not keeping Node alive.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { bytesPerSample } from '../../src/dsp/encoding.js';
import { createEngine, EngineError, type EspeakEngine } from '../../src/engine/index.js';
import { collect, job } from '../helpers/engine-audio.js';

const PARAGRAPH =
  'Speech synthesis is the artificial production of human speech. A computer system used for this purpose is called a ' +
  'speech synthesizer, and can be implemented in software or hardware products. ';
/** About a minute of speech: long enough that synthesizing all of it takes a clear while. */
const LONG_TEXT = PARAGRAPH.repeat(6);

let engine: EspeakEngine;

before(async () => {
  engine = createEngine();
  // Start the worker and eSpeak, so that timings below measure synthesis, not start-up.
  await collect(engine, job({ text: 'Warm up.' }));
});

after(async () => {
  await engine.close();
});

/** The whole of LONG_TEXT, made once for the two tests that compare a stopped job with it. */
let fullLong: Promise<{ samples: number; totalMs: number }> | undefined;
/** {@link fullLong}: input samples (16 kHz, Flite's) and milliseconds of the whole job. */
function fullLongText(): Promise<{ samples: number; totalMs: number }> {
  fullLong ??= collect(engine, job({ text: LONG_TEXT })).then((full) => ({ samples: engine.stats().lastReport!.inputSamples, totalMs: full.totalMs }));
  return fullLong;
}

test('chunks are whole frames of at most 100 ms and the total is exact, at 8000–48000 Hz, 1 and 2 channels, every format', async () => {
  const text = 'The quick brown fox jumps over the lazy dog.';
  // en-man-1 is Flite (16000 Hz): at that rate nothing is resampled, so this is the sample count n Flite made.
  const reference = await collect(engine, job({ text, sampleRate: 16000 }));
  const n = reference.audio.length / 2;
  assert.ok(n > 16000, `expected over a second of audio, got ${n} samples`);
  const cases = [
    { sampleRate: 8000, channels: 1, format: 'pcm16' },
    { sampleRate: 16000, channels: 1, format: 'mulaw' },
    { sampleRate: 24000, channels: 1, format: 'pcm16' },
    { sampleRate: 48000, channels: 1, format: 'float32' },
    { sampleRate: 8000, channels: 2, format: 'mulaw' },
    { sampleRate: 16000, channels: 2, format: 'pcm16' },
    { sampleRate: 24000, channels: 2, format: 'float32' },
    { sampleRate: 48000, channels: 2, format: 'pcm16' },
  ] as const;
  for (const c of cases) {
    const { chunks, audio } = await collect(engine, job({ text, ...c }));
    const frameBytes = bytesPerSample(c.format) * c.channels;
    const label = `${c.sampleRate} Hz × ${c.channels} ${c.format}`;
    assert.equal(audio.length % frameBytes, 0, label);
    assert.equal(audio.length / frameBytes, Math.round((n * c.sampleRate) / 16000), `${label}: total frames`);
    for (const chunk of chunks) {
      assert.equal(chunk.length % frameBytes, 0, `${label}: chunk of ${chunk.length} bytes is not whole frames`);
      assert.ok(chunk.length / frameBytes <= c.sampleRate / 10, `${label}: chunk of ${chunk.length / frameBytes} frames > 100 ms`);
    }
    assert.ok(chunks.length >= 10, `${label}: expected a stream of chunks, got ${chunks.length}`);
  }
});

test('the first chunk arrives while a long text is still being made, and the event loop runs meanwhile', async (t) => {
  // Orders, not times: how long the first chunk and the whole text take is `npm run bench`'s.
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const completedBefore = engine.stats().completed;
  let atFirst: { completed: number; busy: number; ticks: number } | undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of engine.synthesize(job({ text: LONG_TEXT }))) {
    atFirst ??= { completed: engine.stats().completed, busy: engine.stats().busy, ticks };
    chunks.push(chunk);
  }
  clearInterval(timer);
  const seconds = Buffer.concat(chunks).length / 2 / 24000;
  t.diagnostic(`${seconds.toFixed(1)} s of audio in ${chunks.length} chunks; ${ticks - atFirst!.ticks} timer turns while they came`);
  assert.ok(seconds > 30, `expected over half a minute of audio, got ${seconds.toFixed(1)} s`);
  assert.equal(atFirst!.completed, completedBefore, 'the first chunk came before the job was done');
  assert.equal(atFirst!.busy, 1, 'the worker was still making the rest');
  // Synthesis on the main thread would leave the timer no turn between the chunks.
  assert.ok(ticks - atFirst!.ticks >= chunks.length / 10, `the timer ran ${ticks - atFirst!.ticks} times during ${chunks.length} chunks`);
});

test('aborting stops the synthesis promptly; the worker is clean for the next job', async (t) => {
  const probe = job({ text: 'Again, the same sentence.' });
  const before = (await collect(engine, probe)).audio;
  const full = await fullLongText();
  const fullSamples = full.samples;
  const abortedBefore = engine.stats().aborted;

  const controller = new AbortController();
  let received = 0;
  let afterAbort = 0;
  await assert.rejects(
    (async () => {
      for await (const chunk of engine.synthesize(job({ text: LONG_TEXT }), controller.signal)) {
        if (controller.signal.aborted) afterAbort++;
        received += chunk.length;
        if (received > 24000 * 2) controller.abort();
      }
    })(),
    { name: 'AbortError' },
  );
  assert.equal(afterAbort, 0, 'the loop ends at once on abort: no chunk after it');
  // The worker acknowledges the stop with its report: it stopped the job early, rather than
  // finishing it first (how soon is `npm run bench`'s figure).
  const deadline = performance.now() + 5000;
  while (engine.stats().aborted === abortedBefore && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const stopped = engine.stats().lastReport!;
  assert.equal(stopped.aborted, true);
  t.diagnostic(`the aborted job made ${(stopped.inputSamples / 16000).toFixed(1)} s of ${(fullSamples / 16000).toFixed(1)} s (full run ${full.totalMs.toFixed(0)} ms)`);
  assert.ok(stopped.inputSamples < fullSamples / 2, `the aborted job still made ${(stopped.inputSamples / 16000).toFixed(1)} s`);
  const next = await collect(engine, probe);
  assert.ok(next.audio.equals(before), 'the next job sounds exactly as it did before the abort');
  const stats = engine.stats();
  assert.equal(stats.aborted, abortedBefore + 1);
  assert.equal(stats.busy, 0);
  assert.equal(stats.workers, 1);
  assert.ok(fullSamples > 30 * 16000);
});

test('leaving the loop early stops the job too, and the aborted job made only a part of its audio', async (t) => {
  const full = await fullLongText();
  const fullSamples = full.samples;
  const abortedBefore = engine.stats().aborted;
  let chunks = 0;
  for await (const _ of engine.synthesize(job({ text: LONG_TEXT }))) {
    if (++chunks === 3) break;
  }
  // The worker acknowledges the stop with its report; wait for it.
  const deadline = performance.now() + 5000;
  while (engine.stats().aborted === abortedBefore && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const report = engine.stats().lastReport!;
  assert.equal(report.aborted, true);
  t.diagnostic(`the stopped job made ${(report.inputSamples / 16000).toFixed(1)} s of ${(fullSamples / 16000).toFixed(1)} s (full run ${full.totalMs.toFixed(0)} ms)`);
  assert.ok(report.inputSamples < fullSamples / 2, `the stopped job still made ${(report.inputSamples / 16000).toFixed(1)} s of ${(fullSamples / 16000).toFixed(1)} s`);
  assert.ok((await collect(engine, job({ text: 'Still working.' }))).audio.length > 0);
});

test('an already aborted signal throws before any work', async () => {
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(collect(engine, job({ text: 'Never.' }), controller.signal), { name: 'AbortError' });
});

test('jobs queue when every worker is busy, and each gets its own complete audio', async () => {
  const texts = ['First sentence.', 'Second one, a little longer.', 'Third.'];
  const alone = await Promise.all(texts.map(async (text) => (await collect(engine, job({ text }))).audio));
  const together = await Promise.all(texts.map((text) => collect(engine, job({ text }))));
  together.forEach((r, i) => assert.ok(r.audio.equals(alone[i]!), texts[i]));
  assert.equal(engine.stats().workers, 1);
});

test('a pool of two runs two jobs at once in two workers', async () => {
  const pool = createEngine({ workers: 2 });
  try {
    await Promise.all([collect(pool, job({ text: 'One.' })), collect(pool, job({ text: 'Two.' }))]);
    assert.equal(pool.stats().workers, 2);
    assert.equal(pool.stats().completed, 2);
  } finally {
    await pool.close();
  }
});

test('warmUp() starts every worker and eSpeak in each before the first job', async () => {
  const pool = createEngine({ workers: 2 });
  try {
    await pool.warmUp();
    assert.equal(pool.stats().workers, 2);
    assert.equal(pool.stats().kuromojiLoaded, false);
    await collect(pool, job({ text: 'Ready.' }));
    const report = pool.stats().lastReport!;
    assert.equal(report.espeakInitMs, undefined, 'eSpeak was already running');
    assert.ok(report.firstChunkMs !== undefined);
  } finally {
    await pool.close();
  }
});

test("a worker's eSpeak NG restores the initialized state the build wrote (espeak-state.ts) instead of running espeak_Initialize", async () => {
  const pool = createEngine();
  try {
    const spoken = await collect(pool, job({ text: 'こんにちは。', voice: 'ja-man-1', language: 'ja' }));
    assert.ok(spoken.audio.length > 0);
    const report = pool.stats().lastReport!;
    assert.ok(report.espeakInitMs !== undefined, 'the first job reports how eSpeak NG started');
    assert.equal(report.espeakInitialState, 'restored');
  } finally {
    await pool.close();
  }
});

test('eSpeak NG starts for a Japanese voice\'s digits, not for its English alone (found in issue 20\'s fifth round: the default voice is ja-man-1, and `tts say "Build finished"` started it, 250–400 ms of the worker)', async () => {
  const pool = createEngine();
  try {
    const english = await collect(pool, job({ text: 'The build finished without errors.', voice: 'ja-man-1', language: 'ja' }));
    assert.ok(english.audio.length > 0);
    assert.equal(pool.stats().lastReport!.espeakStarted, undefined);
    assert.deepEqual(pool.stats().lastReport!.segments.map((s) => s.engine), ['flite']);
    // Digits in a Japanese voice's text are read in Japanese: eSpeak NG, started by the segments.
    // (Not after a Latin word: `Build 42` is a name with its number, read whole in English.)
    await collect(pool, job({ text: '42 builds.', voice: 'ja-man-1', language: 'ja' }));
    assert.equal(pool.stats().lastReport!.espeakStarted, true);
  } finally {
    await pool.close();
  }
});

test('kuromoji is loaded for kanji only, never for kana or English', async () => {
  const pool = createEngine();
  try {
    await collect(pool, job({ text: 'Plain English.', voice: 'en-woman-1' }));
    await collect(pool, job({ text: 'ひらがなとカタカナだけ。', voice: 'ja-man-1', language: 'ja' }));
    await collect(pool, job({ text: 'Latinもまぜる', voice: 'ja-man-1', language: 'ja' }));
    assert.equal(pool.stats().kuromojiLoaded, false);
    await collect(pool, job({ text: '漢字です。', voice: 'ja-man-1', language: 'ja' }));
    assert.equal(pool.stats().kuromojiLoaded, true);
    assert.equal(pool.stats().lastReport!.segments.map((s) => s.text).join(''), 'カンジデス。');
  } finally {
    await pool.close();
  }
});

test('several workers share one kuromoji dictionary from the pool; one worker reads its own; same bytes', async () => {
  const texts = ['漢字の読みを共有します。', '東京駅から歩いて行きます。'];
  const single = createEngine({ workers: 1 });
  const pair = createEngine({ workers: 2 });
  try {
    const alone: Buffer[] = [];
    for (const text of texts) alone.push((await collect(single, job({ text, voice: 'ja-man-1', language: 'ja' }))).audio);
    assert.notEqual(single.stats().lastReport?.dictionarySource, 'shared');
    // Both at once: each worker takes one, and each asks the pool for the dictionary.
    const both = await Promise.all(texts.map((text) => collect(pair, job({ text, voice: 'ja-man-1', language: 'ja' }))));
    assert.equal(pair.stats().workers, 2);
    assert.equal(pair.stats().lastReport?.dictionarySource, 'shared');
    both.forEach((r, i) => assert.ok(r.audio.equals(alone[i]!), texts[i]));
  } finally {
    await Promise.all([single.close(), pair.close()]);
  }
});

test('several workers run one Flite module compiled by the pool; one worker compiles its own; same bytes', async () => {
  const texts = ['The pool compiles Flite once.', 'Every worker runs the same module.'];
  const single = createEngine({ workers: 1 });
  const pair = createEngine({ workers: 2 });
  try {
    const alone: Buffer[] = [];
    for (const text of texts) alone.push((await collect(single, job({ text, voice: 'en-man-1', language: 'en' }))).audio);
    assert.equal(single.stats().lastReport?.fliteSource, 'own');
    // Flite spoke (not eSpeak NG standing in): so the pair's bytes, equal to these, are Flite's too.
    assert.deepEqual(single.stats().lastReport!.segments.map((s) => s.engine), ['flite']);
    const both = await Promise.all(texts.map((text) => collect(pair, job({ text, voice: 'en-man-1', language: 'en' }))));
    assert.equal(pair.stats().workers, 2);
    assert.equal(pair.stats().lastReport?.fliteSource, 'shared');
    both.forEach((r, i) => assert.ok(r.audio.equals(alone[i]!), texts[i]));
  } finally {
    await Promise.all([single.close(), pair.close()]);
  }
});

test('a crashed worker fails its job with EngineError and is replaced for the next job', async () => {
  const pool = createEngine({ workerUrl: new URL('../helpers/engine-crash-worker.js', import.meta.url) });
  try {
    assert.ok((await collect(pool, job({ text: 'Before the crash.' }))).audio.length > 0);
    await assert.rejects(collect(pool, job({ text: 'please crash the worker now' })), (err: unknown) => {
      assert.ok(err instanceof EngineError, String(err));
      assert.match(err.message, /crashed/);
      return true;
    });
    assert.equal(pool.stats().crashes, 1);
    assert.ok((await collect(pool, job({ text: 'After the crash.' }))).audio.length > 0);
    assert.equal(pool.stats().workers, 1);
  } finally {
    await pool.close();
  }
});

test('close() fails the running and queued jobs with EngineError, and later jobs too', async () => {
  const pool = createEngine();
  // Handlers are attached now: the rejections happen during close().
  const running = assert.rejects(collect(pool, job({ text: LONG_TEXT })), EngineError);
  const queued = assert.rejects(collect(pool, job({ text: 'Queued.' })), EngineError);
  // The running job has the only worker; the other waits for it.
  const deadline = performance.now() + 10_000;
  while (pool.stats().busy === 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.equal(pool.stats().queued, 1);
  await pool.close();
  await running;
  await queued;
  assert.equal(pool.stats().workers, 0);
  await assert.rejects(collect(pool, job({ text: 'Too late.' })), EngineError);
});

test('invalid jobs are refused with EngineError', async () => {
  await assert.rejects(collect(engine, job({ text: '   ' })), EngineError);
  await assert.rejects(collect(engine, job({ text: 'x', voice: 'nobody-1' })), EngineError);
  await assert.rejects(collect(engine, job({ text: 'x', channels: 3 })), EngineError);
  await assert.rejects(collect(engine, job({ text: 'x', sampleRate: 123.4 })), EngineError);
  assert.throws(() => createEngine({ workers: 0 }), RangeError);
});

test('an engine that is never closed does not keep Node running, but a pending job does', async () => {
  const index = new URL('../../src/engine/index.js', import.meta.url).href;
  const script = `
    import { createEngine } from ${JSON.stringify(index)};
    const engine = createEngine();
    let bytes = 0;
    for await (const chunk of engine.synthesize({ text: 'Goodbye.', voice: 'en-man-1', language: 'en', format: 'pcm16', sampleRate: 24000, channels: 1 })) bytes += chunk.length;
    console.log('bytes', bytes);
  `;
  // execFile's 20 s timeout catches a hang; no wall-clock bound beside it.
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
  assert.match(stdout, /^bytes [1-9]\d+$/m);
});

test('prestarted workers that never got a job do not keep Node running either (one worker or two, sharing the dictionary or not)', async () => {
  const index = new URL('../../src/engine/index.js', import.meta.url).href;
  for (const options of ['{}', '{ shareDictionary: true }', '{ workers: 2 }']) {
    const script = `
      import { createEngine } from ${JSON.stringify(index)};
      const engine = createEngine(${options});
      engine.prestart({ text: 'Hello 東京', japanese: true });
      console.log('workers', engine.stats().workers);
    `;
    // execFile's 20 s timeout catches a hang (before the fix, an idle prestarted worker's port kept Node alive).
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
    assert.match(stdout, /^workers [12]$/m, options);
  }
});

test('workers prestarted for kana never ask the pool for Flite (it is compiled when English needs it)', async () => {
  const pair = createEngine({ workers: 2 });
  try {
    pair.prestart({ text: 'こんにちは。', japanese: true });
    await collect(pair, job({ text: 'こんにちは。', voice: 'ja-man-1', language: 'ja' }));
    assert.equal(pair.stats().lastReport?.fliteSource, undefined);
  } finally {
    await pair.close();
  }
});

/** This process's open descriptors of kuromoji's tid_pos.dat (Linux /proc). */
function openFeatureFiles(): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).endsWith('/tid_pos.dat')) n++;
    } catch {
      // closed while listed (readdir's own descriptor)
    }
  }
  return n;
}

test('a pool sharing the dictionary reads features from tid_pos.dat on disk: the same audio as a worker reading it whole, and the file closed with the pool', async () => {
  const text = '今日は良い天気なので、東京駅から歩いて行きます。';
  const own = createEngine();
  const shared = createEngine({ shareDictionary: true });
  try {
    const before = openFeatureFiles();
    const mine = await collect(own, job({ text, voice: 'ja-man-1', language: 'ja' }));
    assert.equal(own.stats().lastReport?.dictionarySource, 'unpacked');
    assert.equal(openFeatureFiles(), before, 'a worker reading the dictionary itself keeps no file open');
    const theirs = await collect(shared, job({ text, voice: 'ja-man-1', language: 'ja' }));
    assert.equal(shared.stats().lastReport?.dictionarySource, 'shared');
    assert.equal(openFeatureFiles(), before + 1, 'the shared dictionary holds tid_pos.dat open');
    assert.ok(theirs.audio.length > 0);
    assert.ok(theirs.audio.equals(mine.audio), 'the same bytes from features read on demand');
    await shared.close();
    assert.equal(openFeatureFiles(), before, 'closed with the pool');
  } finally {
    await own.close();
    await shared.close();
  }
});

test('close() called again while the first close() waits for the threads resolves with it: tid_pos.dat stays open until they have exited', async () => {
  const engine = createEngine({ shareDictionary: true });
  const before = openFeatureFiles();
  await collect(engine, job({ text: '東京駅から歩いて行きます。', voice: 'ja-man-1', language: 'ja' }));
  assert.equal(openFeatureFiles(), before + 1);
  let firstDone = false;
  const first = engine.close().then(() => (firstDone = true));
  // A second close (a signal handler and a finally, say) found no thread left to wait for and
  // closed the descriptor while the first close's threads could still read it.
  await engine.close();
  assert.ok(firstDone, 'the second close() resolved before the threads had exited');
  await first;
  assert.equal(openFeatureFiles(), before);
});
