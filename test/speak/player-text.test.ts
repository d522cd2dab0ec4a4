/**
 * What the interactive player is told of each piece (docs/cli.md §12.2; SpeakOptions.player in
 * src/speak/run.ts): the text and the words as the user wrote them, before the pronunciation
 * lexicon (§11.3) — the same text and words as the subtitle cues of the run (§12.1) — in-process
 * against a fake SSE service that times each word of what it was asked to say.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AudioSpec } from '../../src/dsp/spec.js';
import type { Cue } from '../../src/speak/audio-stage.js';
import { deliverSpeech, type RunStats } from '../../src/speak/run.js';
import { compileMappedLexicon, parseLexicon, rewritePieces } from '../../src/text/lexicon.js';
import type { TextPiece } from '../../src/text/source.js';
import { deltaEvent, sse, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

/** Frames the fake service answers per word: 0.1 s at 24000 Hz. */
const WORD_FRAMES = 2400;

const SPEC: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };

describe('the interactive player is told the text as written', () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-player-text-'));
    // Each word of the input (a run of non-space characters) gets WORD_FRAMES of audio, timed in the `done`.
    server = await startServer((_req, res, body) => {
      const input = (JSON.parse(body) as { input: string }).input;
      const words = [...input.matchAll(/\S+/gu)].map((m, i) => ({ text: m[0], start: i * WORD_FRAMES, end: (i + 1) * WORD_FRAMES, charStart: m.index, charEnd: m.index + m[0].length }));
      startEventStream(res);
      const pcm = Buffer.alloc(words.length * WORD_FRAMES * 2);
      for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(1000 + (i % 100), i * 2);
      res.write(deltaEvent(pcm));
      res.end(sse('done', { type: 'speech.audio.done', item_id: 'item_test', words }));
    });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `pieces` with a player that records what it is told, and SubRip subtitles beside it. */
  const run = async (name: string, pieces: AsyncIterable<TextPiece>): Promise<{ starts: string[]; ends: (Cue | undefined)[]; srt: string; asked: string[] }> => {
    const first = server.requests.length;
    const starts: string[] = [];
    const ends: (Cue | undefined)[] = [];
    const stats: RunStats = { requests: 0, bytes: 0, itemIds: new Set(), firstAudioAt: undefined };
    await deliverSpeech({
      channel: 'sse',
      pieces,
      voice: 'en-woman-1',
      language: 'en',
      spec: SPEC,
      plan: { file: { path: join(dir, `${name}.raw`), container: 'raw' }, stdout: undefined, play: false },
      maxChars: 200,
      concurrency: 2,
      retries: 0,
      timeoutMs: 10_000,
      allowInsecure: true,
      target: { baseUrl: server.url, wsBaseUrl: server.url, apiKey: 'sk-test-player-text', embedded: false, close: async () => {} },
      stdout: process.stdout,
      signal: new AbortController().signal,
      log: { verbose: () => {}, warn: () => {} },
      stats,
      subtitles: join(dir, `${name}.srt`),
      effects: { speed: 1, volume: 1, pauseMs: 0 },
      // A player that passes the audio on and keeps what it is told (player/interactive.ts is the real one).
      player: (sink) => ({
        write: (c) => sink.write(c),
        finish: () => sink.finish(),
        abort: () => sink.abort(),
        pieceStart: (text) => void starts.push(text),
        pieceEnd: (cue) => void ends.push(cue),
      }),
    });
    const asked = server.requests.slice(first).map((r) => (JSON.parse(r.body) as { input: string }).input);
    return { starts, ends, srt: await readFile(join(dir, `${name}.srt`), 'utf8'), asked };
  };
  async function* of(...texts: string[]): AsyncIterable<string> {
    yield* texts;
  }

  it('a piece the lexicon rewrote: the line shows what was written ("SQL"), its words too, as the cues do', async () => {
    const rewrite = compileMappedLexicon(await parseLexicon('[en]\n"SQL" = "structured query language"\n', 'lexicon.toml'));
    const { starts, ends, srt, asked } = await run('lexicon', rewritePieces(of('We use SQL every day. ', 'SQL is fast.'), rewrite, 'en', 200));
    // What was sent is the replacement…
    assert.deepEqual(asked, ['We use structured query language every day. ', 'structured query language is fast.']);
    // …what the player shows is what the user wrote, word by word, as in the subtitle cues.
    assert.deepEqual(starts, ['We use SQL every day. ', 'SQL is fast.']);
    assert.deepEqual(
      ends.map((c) => c?.text),
      ['We use SQL every day. ', 'SQL is fast.'],
    );
    assert.deepEqual(
      ends.map((c) => c?.words?.map((w) => [w.text, w.charStart, w.charEnd])),
      [
        [['We', 0, 2], ['use', 3, 6], ['SQL', 7, 10], ['every', 11, 16], ['day.', 17, 21]],
        [['SQL', 0, 3], ['is', 4, 6], ['fast.', 7, 12]],
      ],
    );
    // SQL is one word from the start of "structured" to the end of "language".
    assert.equal(ends[0]!.words![2]!.start, 0.2);
    assert.equal(ends[0]!.words![2]!.end, 0.5);
    const cueTexts = srt.split('\n\n').filter((c) => c.trim() !== '').map((c) => c.split('\n').slice(2).join('\n'));
    assert.deepEqual(cueTexts, starts.map((t) => t.trim()));
  });

  it('text the lexicon left alone is shown as sent, as before', async () => {
    const { starts, ends } = await run('plain', of('Good morning. ', 'Good night.'));
    assert.deepEqual(starts, ['Good morning. ', 'Good night.']);
    assert.deepEqual(
      ends.map((c) => c?.words?.map((w) => w.text)),
      [['Good', 'morning.'], ['Good', 'night.']],
    );
  });
});
