/**
 * The pipeline (src/speak/pipeline.ts) alone, with a fake stream opener instead of a service:
 * text order under random delays, halving on max_character_length_exceeded, back-off on
 * too_many_concurrent_requests, rewind of a broken piece, and retries timed by a fake clock.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { TtsError } from '../../src/errors.js';
import { isPieceEnd, isPieceStart, audioInOrderMarked, audioInOrder, type OpenStream, type PipelineOptions } from '../../src/speak/pipeline.js';
import type { AudioChunk } from '../../src/wire/delta.js';

/** A seeded pseudo-random generator (mulberry32), so a failing order can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Audio for a piece: its text's UTF-8 bytes, so the output can be read back as text. */
function audioOf(text: string): Buffer {
  return Buffer.from(text, 'utf8');
}

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

function options(open: OpenStream, extra: Partial<PipelineOptions> = {}): PipelineOptions & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    open,
    maxChars: 40,
    concurrency: 3,
    retries: 2,
    signal: new AbortController().signal,
    stats: { requests: 0 },
    bytesPerSecond: 48_000,
    verbose: () => {},
    warn: (l) => warnings.push(l),
    warnings,
    ...extra,
  };
}

async function collect(chunks: AsyncIterable<AudioChunk>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c.data);
  return Buffer.concat(parts).toString('utf8');
}

const BOOK = Array.from({ length: 30 }, (_, i) => `Sentence number ${i + 1} is here.`).join(' ');

describe('audioInOrder', () => {
  it('keeps text order whatever the delays of the requests (3 in flight)', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rnd = random(seed);
      let inFlight = 0;
      let most = 0;
      const open: OpenStream = async function* (text) {
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          const bytes = audioOf(text);
          // Each piece arrives in a few chunks, each after a random delay.
          for (let o = 0; o < bytes.length; o += 7) {
            await delay(Math.floor(rnd() * 8));
            yield { data: bytes.subarray(o, o + 7), itemId: undefined };
          }
        } finally {
          inFlight--;
        }
      };
      const opts = options(open);
      assert.equal(await collect(audioInOrder(once(BOOK), opts)), BOOK, `seed ${seed}`);
      assert.equal(most, 3, 'requests overlap up to --concurrency');
      assert.ok(opts.stats.requests >= 30);
    }
  });

  it('halves the limit on max_character_length_exceeded and redoes the piece, keeping order', async () => {
    const seen: string[] = [];
    const open: OpenStream = async function* (text) {
      seen.push(text);
      if ([...text].length > 12) throw new TtsError('max_character_length_exceeded', 'too long');
      yield { data: audioOf(text), itemId: undefined };
    };
    const opts = options(open, { maxChars: 40 });
    const text = 'One two three. Four five six seven. Eight nine ten eleven twelve.';
    // A piece over the limit by its trailing space alone is sent without it (requestText), so
    // the audio is compared without white space.
    const words = (s: string): string => s.replace(/\s+/g, '');
    assert.equal(words(await collect(audioInOrder(once(text), opts))), words(text));
    assert.ok(seen.some((t) => [...t].length > 12), 'the first pieces were too long');
    assert.ok(opts.warnings.some((w) => /splitting at \d+ from now on/.test(w)), opts.warnings.join('\n'));
    // Once halved to 7, every later request fits the service's limit of 12.
    const last = seen.slice(seen.findLastIndex((t) => [...t].length > 12) + 1);
    assert.ok(last.length > 0 && last.every((t) => [...t].length <= 7), JSON.stringify(last));
  });

  it('never sends a piece with nothing to speak (a sentence\'s final "." cut off at --max-chars, emoji)', async () => {
    // Found by review1: `tts stream --max-chars 8 "abcdefgh."` sent "." alone, which the service
    // refuses (text_string_required, docs/protocol.md §7): exit 4 for a valid text.
    const seen: string[] = [];
    const open: OpenStream = async function* (text) {
      seen.push(text);
      if (!/[\p{L}\p{N}]/u.test(text)) throw new TtsError('text_string_required', 'nothing to speak');
      yield { data: audioOf(text), itemId: undefined };
    };
    const letters = (s: string): string => s.replace(/[^\p{L}]/gu, '');
    assert.equal(letters(await collect(audioInOrder(once('abcdefgh.'), options(open, { maxChars: 8 })))), 'abcdefgh');
    assert.equal(letters(await collect(audioInOrder(once('Hello, world!'), options(open, { maxChars: 5 })))), 'Helloworld');
    assert.equal(letters(await collect(audioInOrder(once('Nice 👍👍👍👍👍👍 indeed.'), options(open, { maxChars: 5 })))), 'Niceindeed');
    // The same as pieces already cut by the splitter (splitStream gives "abcdefgh" then ".").
    async function* pieces(...list: string[]): AsyncGenerator<string> {
      yield* list;
    }
    assert.equal(letters(await collect(audioInOrder(pieces('abcdefgh', '.', ' Next', ' 👍👍'), options(open, { maxChars: 8 })))), 'abcdefghNext');
    assert.ok(seen.every((t) => /[\p{L}\p{N}]/u.test(t)), JSON.stringify(seen));
  });

  it('runs fewer requests at once after too_many_concurrent_requests, without spending retries', async () => {
    let inFlight = 0;
    let refused = 0;
    let mostAccepted = 0;
    const open: OpenStream = async function* (text) {
      if (inFlight >= 2) {
        refused++;
        throw new TtsError('too_many_concurrent_requests', 'busy', { retriable: true, retryAfterSeconds: 0.01 });
      }
      inFlight++;
      mostAccepted = Math.max(mostAccepted, inFlight);
      try {
        await delay(5);
        yield { data: audioOf(text), itemId: undefined };
      } finally {
        inFlight--;
      }
    };
    const opts = options(open, { concurrency: 4, retries: 0 });
    assert.equal(await collect(audioInOrder(once(BOOK), opts)), BOOK);
    assert.ok(refused >= 1, 'the service refused at least once');
    // After the first refusal only 2 run at once, so the service has no reason to refuse again.
    assert.ok(refused <= 2, `refused ${refused} times`);
    assert.ok(mostAccepted <= 2);
  });

  it('cuts the output back and requests a piece again when its stream breaks mid-way', async () => {
    const attempts = new Map<string, number>();
    const open: OpenStream = async function* (text) {
      const n = (attempts.get(text) ?? 0) + 1;
      attempts.set(text, n);
      const bytes = audioOf(text);
      yield { data: bytes.subarray(0, 5), itemId: undefined };
      if (text.startsWith('Sentence number 2 ') && n === 1) {
        throw new TtsError('connection_failed', 'the connection broke', { retriable: true });
      }
      yield { data: bytes.subarray(5), itemId: undefined };
    };
    let written = Buffer.alloc(0);
    const rewinds: number[] = [];
    const opts = options(open, {
      maxChars: 30,
      concurrency: 1,
      rewind: async (bytes) => {
        rewinds.push(bytes);
        written = written.subarray(0, bytes);
      },
    });
    for await (const c of audioInOrder(once(BOOK), opts)) written = Buffer.concat([written, c.data]);
    assert.equal(written.toString('utf8'), BOOK);
    assert.equal(rewinds.length, 1);
    assert.equal(rewinds[0], Buffer.byteLength('Sentence number 1 is here. '));
  });

  it('a piece that breaks after its audio began, every try, names what to do for the output it has', async () => {
    const open: OpenStream = async function* (text) {
      yield { data: audioOf(text).subarray(0, 4), itemId: undefined };
      throw new TtsError('stream_ended_early', 'the service closed the stream before `done`', { retriable: true });
    };
    const failure = async (extra: Partial<PipelineOptions>): Promise<TtsError> => {
      try {
        for await (const _ of audioInOrder(once('Short text.'), options(open, { retries: 1, ...extra }))) void _;
      } catch (error) {
        return error as TtsError;
      }
      throw new Error('no failure');
    };
    // A file that can be cut back was cut back and asked again already: the hint must not say
    // "with -o FILE, tts requests a broken piece again instead".
    const file = await failure({ rewind: async () => {} });
    assert.equal(file.code, 'stream_ended_early');
    assert.doesNotMatch(file.hint ?? '', /instead/);
    assert.match(file.hint ?? '', /untouched/);
    const pipe = await failure({});
    assert.match(pipe.hint ?? '', /incomplete/);
  });

  it('marks where each piece ends, in order, and a rewind goes back to just after the last mark', async () => {
    let broke = false;
    const open: OpenStream = async function* (text) {
      const bytes = audioOf(text);
      await delay(text.length % 5);
      yield { data: bytes.subarray(0, 4), itemId: undefined };
      if (text.startsWith('Sentence number 3 ') && !broke) {
        broke = true;
        throw new TtsError('connection_failed', 'the connection broke', { retriable: true });
      }
      yield { data: bytes.subarray(4), itemId: undefined };
    };
    let piece = '';
    let written = '';
    const ends: string[] = [];
    const opts = options(open, {
      maxChars: 30,
      concurrency: 3,
      rewind: async (bytes) => {
        // Only audio of the piece under way is taken back.
        assert.equal(bytes, Buffer.byteLength(ends.join('')));
        piece = '';
      },
    });
    for await (const item of audioInOrderMarked(once(BOOK), opts)) {
      if (isPieceEnd(item)) {
        assert.equal(piece, item.pieceEnd, 'the mark follows all of its piece');
        ends.push(item.pieceEnd);
        written += piece;
        piece = '';
      } else if (!isPieceStart(item)) piece += item.data.toString('utf8');
    }
    assert.ok(broke);
    assert.equal(written, BOOK);
    assert.equal(ends.length, 30);
    assert.equal(piece, '', 'nothing after the last mark');
  });

  it('fails saying how much audio was delivered when a piece breaks and the output cannot rewind', async () => {
    const open: OpenStream = async function* (text) {
      yield { data: Buffer.alloc(4800), itemId: undefined };
      if (text.startsWith('Sentence number 3 ')) throw new TtsError('stream_ended_early', 'cut', { retriable: true });
    };
    await assert.rejects(
      collect(audioInOrder(once(BOOK), options(open, { maxChars: 30, concurrency: 1 }))),
      (e: unknown) => e instanceof TtsError && e.code === 'stream_ended_early' && /after 0\.30 s of audio had been delivered/.test(e.message),
    );
  });

  it('waits out Retry-After before retrying a refused request (fake clock)', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let calls = 0;
    const open: OpenStream = async function* (text) {
      calls++;
      if (calls === 1) throw new TtsError('rate_limit_exceeded', 'slow down', { retriable: true, retryAfterSeconds: 5 });
      yield { data: audioOf(text), itemId: undefined };
    };
    const opts = options(open, { retries: 1 });
    const done = collect(audioInOrder(once('Hello there.'), opts));
    let finished = false;
    void done.then(() => (finished = true));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    assert.equal(calls, 1);
    t.mock.timers.tick(4_999);
    for (let i = 0; i < 20; i++) await Promise.resolve();
    assert.equal(calls, 1, 'no retry before 5 s');
    assert.equal(finished, false);
    t.mock.timers.tick(1);
    assert.equal(await done, 'Hello there.');
    assert.equal(calls, 2);
    assert.equal(opts.stats.requests, 2);
  });

  it('gives up after --retries and throws the last refusal', async () => {
    const open: OpenStream = async function* () {
      throw new TtsError('server_error', 'down', { retriable: true, retryAfterSeconds: 0 });
    };
    const opts = options(open, { retries: 2 });
    await assert.rejects(collect(audioInOrder(once('Hello.'), opts)), (e: unknown) => e instanceof TtsError && e.code === 'server_error');
    assert.equal(opts.stats.requests, 3);
  });

  it('stops every request at once when the run is aborted', async () => {
    const controller = new AbortController();
    let aborted = 0;
    const open: OpenStream = async function* (_text, signal) {
      yield { data: Buffer.from('x'), itemId: undefined };
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted++;
      throw signal.reason;
    };
    const reason = new TtsError('interrupted', 'interrupted');
    const run = collect(audioInOrder(once(BOOK), options(open, { signal: controller.signal })));
    await delay(20);
    controller.abort(reason);
    await assert.rejects(run, (e: unknown) => e === reason);
    await delay(5);
    assert.equal(aborted, 3, 'every request in flight saw the abort');
  });
  it('keeps one abort listener on the run\'s signal however many requests are in flight (no MaxListenersExceededWarning)', async () => {
    const inFlight = 32;
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      let open = 0;
      let listenersWhenFull = -1;
      let allOpen!: () => void;
      const full = new Promise<void>((resolve) => (allOpen = resolve));
      const opener: OpenStream = async function* (text) {
        // Every request waits until all of them are in flight, so all their listeners coexist.
        if (++open === inFlight) {
          listenersWhenFull = getEventListeners(controller.signal, 'abort').length;
          allOpen();
        }
        await full;
        yield { data: audioOf(text), itemId: undefined };
      };
      const sentences = Array.from({ length: inFlight }, (_, i) => `Sentence ${i + 1}. `);
      const pieces = async function* (): AsyncGenerator<string> {
        yield* sentences;
      };
      const got = await collect(audioInOrder(pieces(), options(opener, { concurrency: inFlight, maxChars: 20, signal: controller.signal })));
      assert.equal(got, sentences.join(''));
      // process.emitWarning reports on the next tick: let it.
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(listenersWhenFull >= 0 && listenersWhenFull <= 2, `${listenersWhenFull} abort listeners with ${inFlight} requests in flight`);
      assert.deepEqual(warnings.map((w) => w.name), []);
      assert.equal(getEventListeners(controller.signal, 'abort').length, 0, 'listeners left on the signal after the run');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
