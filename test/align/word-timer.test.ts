/**
 * Word timings for another service's audio (src/align/word-timer.ts): the built-in engine stands
 * in for the service (en-man-1 at 24 kHz, its exact words kept aside), the timer renders the
 * reference and aligns in its thread. The words keep the protocol's rules, come out the same
 * twice, and the work waiting is bounded: a piece over the bound gets none, with one notice.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createPieceAligner } from '../../src/align/piece-aligner.js';
import { MAX_PIECE_SECONDS, MAX_PREPARED, WordTimer } from '../../src/align/word-timer.js';
import { decodeToFloat, encodeFloat } from '../../src/dsp/encoding.js';
import { mixChannels } from '../../src/dsp/mix.js';
import { createEngine, type SpeechEngine } from '../../src/engine/index.js';
import { parseWordTimings, type WordTiming } from '../../src/protocol/words.js';

const TEXT = 'Please turn off the lights before you leave the room.';

describe('WordTimer', () => {
  const engine = createEngine();
  after(() => engine.close());

  /** The engine, counting the renderings asked of it. */
  function countingEngine(): { engine: SpeechEngine; renders: number } {
    const counter = { engine: engine as SpeechEngine, renders: 0 };
    counter.engine = Object.assign(Object.create(engine) as SpeechEngine, {
      synthesize: (...args: Parameters<SpeechEngine['synthesize']>) => {
        counter.renders++;
        return engine.synthesize(...args);
      },
    });
    return counter;
  }

  /** The "service": en-man-1 at 24 kHz, with its exact words. */
  async function serve(text: string): Promise<{ samples: Float32Array; words: WordTiming[] }> {
    const chunks: Buffer[] = [];
    let words: WordTiming[] = [];
    const job = { text, voice: 'en-man-1', language: 'en' as const, format: 'pcm16' as const, sampleRate: 24000, channels: 1 };
    for await (const c of engine.synthesize(job, undefined, { wordTimings: true, onReport: (r) => (words = r.words ?? []) })) chunks.push(c);
    return { samples: decodeToFloat(Buffer.concat(chunks), 'pcm16'), words };
  }

  it('times every word of the piece, in its frames, by the protocol\'s rules, the same twice, near the truth', async () => {
    const served = await serve(TEXT);
    const counting = countingEngine();
    const timer = new WordTimer({ engine: counting.engine });
    const renders = (): number => counting.renders;
    try {
      const piece = { text: TEXT, language: 'en' as const, audio: { samples: served.samples, sampleRate: 24000 } };
      const words = await timer.time(piece);
      assert.ok(words !== undefined);
      assert.deepEqual(parseWordTimings(words), words, 'valid WordTimings');
      assert.deepEqual(words.map((w) => w.text), TEXT.split(' '));
      for (const w of words) assert.equal(TEXT.slice(w.charStart, w.charEnd), w.text);
      assert.ok(words.at(-1)!.end <= served.samples.length);
      assert.deepEqual(await timer.time(piece), words, 'deterministic');
      assert.equal(renders(), 2);
      timer.prepare(TEXT, 'en');
      timer.prepare(TEXT, 'en');
      assert.equal(renders(), 3, 'prepared once for two pieces');
      assert.deepEqual(await timer.time(piece), words, 'the same from a reference rendered ahead');
      assert.deepEqual(await timer.time(piece), words, 'a reference prepared twice serves two pieces');
      assert.equal(renders(), 3, 'no new rendering for prepared pieces');
      assert.deepEqual(await timer.time(piece), words);
      assert.equal(renders(), 4, 'used up: rendered again');
      const errors = words.flatMap((w, i) => [Math.abs(w.start - served.words[i]!.start), Math.abs(w.end - served.words[i]!.end)]);
      const meanMs = (errors.reduce((s, e) => s + e, 0) / errors.length / 24000) * 1000;
      assert.ok(meanMs < 80, `mean boundary error ${meanMs.toFixed(1)} ms`);
    } finally {
      await timer.close();
    }
  });

  it(`keeps at most ${MAX_PREPARED} prepared references, dropping the oldest`, async () => {
    const counting = countingEngine();
    const timer = new WordTimer({ engine: counting.engine });
    try {
      const texts = Array.from({ length: MAX_PREPARED + 1 }, (_, i) => `Word number ${i}.`);
      for (const text of texts) timer.prepare(text, 'en');
      assert.equal(counting.renders, MAX_PREPARED + 1);
      const audio = { samples: (await serve('Word number.')).samples, sampleRate: 24000 };
      await timer.time({ text: texts.at(-1)!, language: 'en', audio });
      assert.equal(counting.renders, MAX_PREPARED + 1, 'the newest was kept');
      await timer.time({ text: texts[0]!, language: 'en', audio });
      assert.equal(counting.renders, MAX_PREPARED + 2, 'the oldest was dropped: rendered again');
    } finally {
      await timer.close();
    }
  });

  it('leaves a piece without timings (undefined) when the audio waiting would pass the bound, with one notice', async () => {
    const served = await serve(TEXT); // ~3 s
    const notices: string[] = [];
    const timer = new WordTimer({ engine, maxPendingSeconds: 4, warn: (line) => notices.push(line) });
    try {
      const piece = { text: TEXT, language: 'en' as const, audio: { samples: served.samples, sampleRate: 24000 } };
      const results = await Promise.all([timer.time(piece), timer.time(piece), timer.time(piece)]);
      assert.ok(results[0] !== undefined && results[0].length > 0);
      assert.deepEqual(results.slice(1), [undefined, undefined]);
      assert.equal(timer.skipped, 2);
      assert.equal(notices.length, 1);
      assert.match(notices[0]!, /cannot keep up/);
      assert.ok((await timer.time(piece)) !== undefined, 'takes pieces again once the queue drained');
      const long = { ...piece, audio: { samples: new Float32Array(24000 * (MAX_PIECE_SECONDS + 1)), sampleRate: 24000 } };
      assert.equal(await timer.time(long), undefined, 'a piece over the longest aligned');
      assert.equal(await timer.time(long), undefined);
      assert.equal(notices.length, 2);
      assert.match(notices[1]!, /too long to align/);
      const unlike = { ...piece, audio: { samples: served.samples.subarray(0, Math.round(served.samples.length / 3)), sampleRate: 24000 } };
      assert.equal(await timer.time(unlike), undefined, 'a third of the audio cannot be the text');
      assert.equal(notices.length, 3);
      assert.match(notices[2]!, /far from its text's length/);
    } finally {
      await timer.close();
    }
    await assert.rejects(timer.time({ text: TEXT, language: 'en', audio: { samples: served.samples, sampleRate: 24000 } }), /closed/);
  });

  it('as the run\'s PieceAligner: times stereo bytes as they arrived; a failure gives undefined and one notice, never a throw', async () => {
    const served = await serve(TEXT);
    const notices: string[] = [];
    const handle = createPieceAligner({ engine, warn: (line) => notices.push(line) });
    const spec = { format: 'pcm16' as const, sampleRate: 24000, channels: 2 };
    const piece = { text: TEXT, language: 'en' as const, audio: encodeFloat(mixChannels(served.samples, 1, 2), 'pcm16'), spec };
    const words = await handle.align(piece, new AbortController().signal);
    assert.ok(words !== undefined);
    assert.equal(words.length, served.words.length);
    assert.ok(words.at(-1)!.end <= served.samples.length, 'frames of the stereo stream, not samples');
    await handle.close();
    assert.equal(await handle.align(piece, new AbortController().signal), undefined);
    assert.equal(await handle.align(piece, new AbortController().signal), undefined);
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /aligner failed .*closed/);
  });
});
