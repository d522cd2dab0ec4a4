/**
 * A run of speech spans (docs/cli.md §11; SpeakOptions.spans in src/speak/run.ts), in-process
 * against a fake SSE service that records every request: each span is its own request in its own
 * voice and language, in order; breaks are exact silence at the output rate; marks are timed at
 * the span's start after its break; a span's gain is applied after the service; the cache keys
 * follow the piece's voice.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PieceCache } from '../../src/cache/store.js';
import { TtsError } from '../../src/errors.js';
import { audioInOrderMarked, isPieceStart, type OpenStream } from '../../src/speak/pipeline.js';
import { spanPieces } from '../../src/text/span-pieces.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { deliverSpeech, type RunStats } from '../../src/speak/run.js';
import type { SpeechSpan } from '../../src/text/spans.js';
import { deltaEvent, doneEvent, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

/** Samples the fake service answers per request: 0.1 s at 24000 Hz. */
const SAMPLES = 2400;
/** Every sample the fake service sends: a constant, so a gain shows as an exact ratio. */
const LEVEL = 8000;

const SPEC: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };

describe('deliverSpeech with spans', () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-spans-'));
    server = await startServer((_req, res) => {
      startEventStream(res);
      const pcm = Buffer.alloc(SAMPLES * 2);
      for (let i = 0; i < SAMPLES; i++) pcm.writeInt16LE(LEVEL, i * 2);
      res.write(deltaEvent(pcm));
      res.end(doneEvent());
    });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `spans` into a raw file; returns its samples, the requests' bodies and the stats. */
  const run = async (name: string, spans: SpeechSpan[], extra: { cache?: PieceCache; pauseMs?: number; player?: boolean } = {}) => {
    const first = server.requests.length;
    const stats: RunStats = { requests: 0, bytes: 0, itemIds: new Set(), firstAudioAt: undefined };
    const path = join(dir, name);
    await deliverSpeech({
      channel: 'sse',
      spans,
      voice: 'en-woman-1',
      language: 'en',
      spec: SPEC,
      plan: { file: { path, container: 'raw' }, stdout: undefined, play: false },
      maxChars: 200,
      concurrency: 2,
      retries: 0,
      timeoutMs: 10_000,
      allowInsecure: true,
      target: { baseUrl: server.url, wsBaseUrl: server.url, apiKey: 'sk-test-spans', embedded: false, close: async () => {} },
      stdout: process.stdout,
      signal: new AbortController().signal,
      log: { verbose: () => {}, warn: () => {} },
      stats,
      cache: extra.cache,
      effects: { speed: 1, volume: 1, pauseMs: extra.pauseMs ?? 0 },
      // A player that only passes the audio on (player/interactive.ts is the real one).
      player: extra.player === true ? (sink) => ({ write: (c) => sink.write(c), finish: () => sink.finish(), abort: () => sink.abort(), pieceStart: () => {}, pieceEnd: () => {} }) : undefined,
    });
    const bytes = await readFile(path);
    const samples = Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2));
    const bodies = server.requests.slice(first).map((r) => JSON.parse(r.body) as { input: string; voice: string; language: string; word_timings?: unknown });
    return { samples, bodies: bodies.map((b) => ({ input: b.input, voice: b.voice, language: b.language })), wordTimings: bodies.map((b) => b.word_timings), stats };
  };

  it('two spans in two voices: two requests with those voices and languages, in order', async () => {
    const { bodies, samples } = await run('two.raw', [
      { text: 'Good morning.', voice: 'en-man-1' },
      { text: 'おはようございます。', voice: 'ja-woman-1', language: 'ja' },
    ]);
    assert.deepEqual(bodies, [
      { input: 'Good morning.', voice: 'en-man-1', language: 'en' },
      { input: 'おはようございます。', voice: 'ja-woman-1', language: 'ja' },
    ]);
    assert.equal(samples.length, 2 * SAMPLES);
  });

  it('asks for word timings (docs/protocol.md §2.1) only in a run that uses them: here the interactive player', async () => {
    const spans = [{ text: 'Good morning.' }, { text: 'Good night.' }];
    assert.deepEqual((await run('plain.raw', spans)).wordTimings, [undefined, undefined]);
    assert.deepEqual((await run('player.raw', spans, { player: true })).wordTimings, [true, true]);
  });

  it('a break is that many frames of silence, replacing --pause; a mark is timed after it', async () => {
    const { samples, stats } = await run(
      'break.raw',
      [{ text: 'One.' }, { text: 'Two.', breakBeforeMs: 250, marks: ['second'] }, { text: 'Three.', marks: ['third'] }],
      { pauseMs: 100 },
    );
    // One, 250 ms break (not the 100 ms pause as well), Two, 100 ms pause, Three.
    const breakFrames = 6000;
    const pauseFrames = 2400;
    assert.equal(samples.length, 3 * SAMPLES + breakFrames + pauseFrames);
    assert.ok(samples.slice(SAMPLES, SAMPLES + breakFrames).every((s) => s === 0));
    assert.equal(samples[SAMPLES + breakFrames], LEVEL);
    assert.deepEqual(stats.marks, [
      { name: 'second', time: (SAMPLES + breakFrames) / 24000 },
      { name: 'third', time: (2 * SAMPLES + breakFrames + pauseFrames) / 24000 },
    ]);
  });

  it('a span with a break and a mark but no text is no request: its silence is heard, no pause on top', async () => {
    const { samples, bodies, stats } = await run('silent.raw', [{ text: 'One.' }, { text: '', breakBeforeMs: 500, marks: ['gap'] }, { text: 'Two.' }], { pauseMs: 100 });
    assert.equal(bodies.length, 2);
    assert.equal(samples.length, 2 * SAMPLES + 12_000);
    assert.deepEqual(stats.marks, [{ name: 'gap', time: (SAMPLES + 12_000) / 24000 }]);
  });

  it("a span's gain (dB) is applied to its audio alone", async () => {
    const { samples } = await run('gain.raw', [{ text: 'Loud.' }, { text: 'Soft.', gainDb: -20 * Math.log10(2) }, { text: 'Silent.', gainDb: -Infinity }]);
    assert.equal(samples[0], LEVEL);
    assert.equal(samples[SAMPLES + 10], LEVEL / 2);
    assert.equal(samples[2 * SAMPLES + 10], 0);
  });

  it('the cache key is per voice: the same text in two voices is two requests, then two hits', async () => {
    const cache = new PieceCache(join(dir, 'cache'), 64 * 1024 * 1024, () => {});
    const spans: SpeechSpan[] = [
      { text: 'Same words.', voice: 'en-man-1' },
      { text: 'Same words.', voice: 'en-woman-2' },
    ];
    const fresh = await run('cache1.raw', spans, { cache });
    assert.equal(fresh.bodies.length, 2);
    await cache.settle();
    const again = await run('cache2.raw', spans, { cache });
    assert.equal(again.bodies.length, 0);
    assert.equal(again.stats.cacheHits, 2);
  });
});

describe('the pipeline with span pieces', () => {
  it('a span piece halved after max_character_length_exceeded keeps its voice; only its first part carries the break', async () => {
    const asked: [string, string | undefined][] = [];
    const open: OpenStream = async function* (text, _signal, piece) {
      asked.push([text, piece?.voice]);
      if ([...text].length > 12) throw new TtsError('max_character_length_exceeded', 'too long');
      yield { data: Buffer.from(text), itemId: undefined };
    };
    const spans: SpeechSpan[] = [{ text: 'Plain.' }, { text: 'A much longer span here.', voice: 'en-man-1', breakBeforeMs: 300 }];
    const starts: [string, boolean, number | undefined][] = [];
    for await (const item of audioInOrderMarked(spanPieces(spans, 100), {
      open,
      maxChars: 100,
      concurrency: 1,
      retries: 0,
      signal: new AbortController().signal,
      stats: { requests: 0 },
      bytesPerSecond: 48_000,
      verbose: () => {},
      warn: () => {},
    })) {
      if (isPieceStart(item)) starts.push([item.pieceStart, item.opensSpan === true, item.span?.breakBeforeMs]);
    }
    assert.ok(asked.slice(1).every(([, voice]) => voice === 'en-man-1'), JSON.stringify(asked));
    assert.deepEqual(asked[0], ['Plain.', undefined]);
    const parts = starts.filter(([text]) => text !== 'Plain.' && [...text].length <= 12);
    assert.ok(parts.length >= 2);
    assert.deepEqual(
      parts.map(([, opens]) => opens),
      [true, ...parts.slice(1).map(() => false)],
    );
  });
});
