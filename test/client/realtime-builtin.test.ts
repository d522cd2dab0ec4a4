/**
 * The WebSocket client against the built-in service's WebSocket route, both ours, over loopback
 * (docs/cli.md §1: the embedded default talks through exactly the same client code): the audio
 * arrives byte for byte, and the service's refusals become the right codes and exit codes.
 * The engine is the deterministic fake, so the bytes can be compared.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TtsError } from '../../src/errors.js';
import { streamRealtime, type RealtimeStreamOptions } from '../../src/client/realtime.js';
import { createService, listen } from '../../src/server/builtin-server.js';
import { fakeAudio, fakeEngine, type FakeEngine } from '../helpers/fake-engine.js';

const KEY = 'tts_builtin-test-key-000111';

describe('streamRealtime ↔ the built-in service', () => {
  let engine: FakeEngine;
  let server: Server;
  let wsBase: string;
  before(async () => {
    engine = fakeEngine({ chunks: 7, delayMs: 2 });
    server = createService({ apiKeys: [KEY], engine, maxChars: 100 });
    wsBase = (await listen(server, '127.0.0.1', 0)).replace(/^http/, 'ws');
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const session: RealtimeStreamOptions['session'] = {
    input_text: 'Good morning.',
    voice: 'en-man-1',
    output_audio_format: 'pcm16',
    output_audio_sample_rate: 8000,
    output_audio_number_of_channels: 2,
    language: 'en',
  };

  async function collect(extra: Partial<RealtimeStreamOptions> = {}): Promise<{ audio: Buffer; error?: TtsError }> {
    const parts: Buffer[] = [];
    try {
      for await (const c of streamRealtime({ wsBaseUrl: wsBase, apiKey: KEY, session, timeoutMs: 5000, ...extra })) parts.push(c.data);
    } catch (e) {
      assert.ok(e instanceof TtsError, String(e));
      return { audio: Buffer.concat(parts), error: e };
    }
    return { audio: Buffer.concat(parts) };
  }

  it('streams the engine audio byte for byte with the session the user asked for', async () => {
    const r = await collect();
    assert.equal(r.error, undefined);
    const job = engine.records.at(-1)!.job;
    assert.deepEqual(job, { text: 'Good morning.', voice: 'en-man-1', language: 'en', format: 'pcm16', sampleRate: 8000, channels: 2 });
    assert.deepEqual(r.audio, fakeAudio(job, 7));
  });

  it('a wrong key is invalid_api_key, exit 3, before any engine job', async () => {
    const jobs = engine.records.length;
    const r = await collect({ apiKey: 'wrong' });
    assert.equal(r.error?.code, 'invalid_api_key');
    assert.equal(r.error?.exitCode, 3);
    assert.equal(r.error?.status, 401);
    assert.equal(engine.records.length, jobs);
  });

  for (const [label, change, code] of [
    ['an unknown voice', { voice: 'xx-robot-9' }, 'voice_not_found'],
    ['an unsupported rate', { output_audio_sample_rate: 96000 }, 'invalid_parameters'],
    ['three channels', { output_audio_number_of_channels: 3 }, 'invalid_parameters'],
    ['too long a text', { input_text: 'a'.repeat(101) }, 'max_character_length_exceeded'],
    ['empty text', { input_text: ' ' }, 'text_string_required'],
  ] as const) {
    it(`${label} is ${code}, exit 4`, async () => {
      const r = await collect({ session: { ...session, ...change } });
      assert.equal(r.error?.code, code);
      assert.equal(r.error?.exitCode, 4);
      assert.equal(r.audio.length, 0);
    });
  }

  it('leaving early aborts the engine job on the service', async () => {
    const slow = fakeEngine({ chunks: 1000, delayMs: 5 });
    const s = createService({ apiKeys: [KEY], engine: slow });
    const base = (await listen(s, '127.0.0.1', 0)).replace(/^http/, 'ws');
    try {
      let n = 0;
      for await (const _ of streamRealtime({ wsBaseUrl: base, apiKey: KEY, session, timeoutMs: 5000 })) if (++n === 2) break;
      const rec = slow.records[0]!;
      for (let i = 0; i < 100 && !rec.ended; i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(rec.aborted && rec.ended);
      assert.ok(rec.yielded < 100);
    } finally {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });
});
