/**
 * The WebSocket route with the real offline engine (eSpeak NG + kuromoji), through our own
 * client: the session's sample rate and channels reach the engine, which resamples and
 * interleaves (docs/cli.md §4, §5), and audio streams before the whole text is synthesized.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { streamRealtime } from '../../src/client/realtime.js';
import { createEngine } from '../../src/engine/index.js';
import type { SpeechEngine } from '../../src/engine/types.js';
import { createService, listen } from '../../src/server/builtin-server.js';

const KEY = 'tts_engine-test-key-42';

describe('/v1/realtime_tts with the real engine', () => {
  let engine: SpeechEngine;
  let server: Server;
  let wsBase: string;
  before(async () => {
    engine = createEngine({ workers: 1 });
    server = createService({ apiKeys: [KEY], engine });
    wsBase = (await listen(server, '127.0.0.1', 0)).replace(/^http/, 'ws');
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await engine.close();
  });

  async function speak(text: string, voice: string, language: 'ja' | 'en', sampleRate: number, channels: number): Promise<{ bytes: Buffer; chunks: number; firstMs: number; totalMs: number }> {
    const t0 = performance.now();
    let firstMs = 0;
    const parts: Buffer[] = [];
    for await (const c of streamRealtime({
      wsBaseUrl: wsBase,
      apiKey: KEY,
      session: { input_text: text, voice, language, output_audio_format: 'pcm16', output_audio_sample_rate: sampleRate, output_audio_number_of_channels: channels },
      timeoutMs: 30_000,
    })) {
      if (parts.length === 0) firstMs = performance.now() - t0;
      parts.push(c.data);
    }
    return { bytes: Buffer.concat(parts), chunks: parts.length, firstMs, totalMs: performance.now() - t0 };
  }

  it('speaks at 8000 Hz mono and 48000 Hz stereo: the same duration, whole frames, identical channels', async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const low = await speak(text, 'en-man-1', 'en', 8000, 1);
    const high = await speak(text, 'en-man-1', 'en', 48000, 2);
    assert.equal(low.bytes.length % 2, 0);
    assert.equal(high.bytes.length % 4, 0);
    const lowSeconds = low.bytes.length / 2 / 8000;
    const highSeconds = high.bytes.length / 4 / 48000;
    assert.ok(lowSeconds > 1, `only ${lowSeconds} s`);
    assert.ok(Math.abs(lowSeconds - highSeconds) < 0.05, `${lowSeconds} s at 8 kHz vs ${highSeconds} s at 48 kHz`);
    // Stereo is the mono signal duplicated (src/engine/types.ts).
    for (let i = 0; i < high.bytes.length; i += 4) {
      if (high.bytes.readInt16LE(i) !== high.bytes.readInt16LE(i + 2)) assert.fail(`channels differ at frame ${i / 4}`);
    }
    assert.ok(high.bytes.some((b) => b !== 0), 'not silence');
  });

  it('streams: the first delta leaves well before the last', async () => {
    const r = await speak('This is a sentence that goes on for a while. '.repeat(30), 'en-woman-1', 'en', 24000, 1);
    assert.ok(r.chunks >= 5, `${r.chunks} deltas`);
    assert.ok(r.firstMs < r.totalMs / 2, `first delta after ${r.firstMs.toFixed(0)} of ${r.totalMs.toFixed(0)} ms`);
  });

  it('speaks Japanese at 16000 Hz', async () => {
    const r = await speak('今日は良い天気です。', 'ja-woman-1', 'ja', 16000, 1);
    assert.ok(r.bytes.length / 2 / 16000 > 0.5, `only ${r.bytes.length} bytes`);
    assert.equal(r.bytes.length % 2, 0);
  });
});
