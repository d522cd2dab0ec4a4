/**
 * The built-in service's OpenAI dialect (docs/protocol.md §10) driven by a client no one here
 * wrote: the official `openai` npm package. Every `response_format` on both `stream_format`s,
 * judged by ffprobe; errors as the SDK's typed errors; the same admission as the native route.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { createEngine } from '../../src/engine/index.js';
import type { SpeechEngine } from '../../src/engine/types.js';
import { decodedSeconds, haveFfmpeg, probe } from '../helpers/ffprobe.js';
import { parseWavHeader } from '../helpers/wav-reader.js';
import { WAVE_FORMAT } from '../../src/audio/wav.js';
import { fakeEngine, scriptedEngine } from '../helpers/fake-engine.js';
import { startService, type TestService } from '../helpers/serve-http.js';
import { stalledSse } from '../helpers/stalled-clients.js';
import { createService, closeService, listen } from '../../src/server/builtin-server.js';

const KEY = 'test-key-openai-1';
const TEXT = 'Hello there, this is a test.';

/** The response body, read as a stream (the SDK hands back a fetch Response). */
async function bodyBytes(res: Response): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

/** The events of an SSE body: each `data:` line's JSON. */
async function sseEvents(res: Response): Promise<Record<string, unknown>[]> {
  const text = (await bodyBytes(res)).toString('utf8');
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const data = block.split('\n').find((l) => l.startsWith('data: '));
      assert.ok(data !== undefined, `an event without data: ${block}`);
      return JSON.parse(data.slice(6)) as Record<string, unknown>;
    });
}

describe('POST /v1/audio/speech with the openai SDK (built-in engine)', () => {
  let engine: SpeechEngine;
  let service: TestService;
  let client: OpenAI;
  before(async () => {
    engine = createEngine({ workers: 1 });
    service = await startService({ apiKeys: [KEY], engine, maxChars: 300 });
    client = new OpenAI({ apiKey: KEY, baseURL: `${service.base}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await service.close();
    await engine.close();
  });

  const expected: Record<string, { codec: string; format: RegExp }> = {
    mp3: { codec: 'mp3', format: /mp3/ },
    opus: { codec: 'opus', format: /ogg/ },
    flac: { codec: 'flac', format: /flac/ },
    wav: { codec: 'pcm_s16le', format: /wav/ },
  };
  for (const [format, want] of Object.entries(expected)) {
    for (const streamFormat of ['audio', 'sse'] as const) {
      // WAV is read in-process (test/helpers/wav-reader.ts); ffprobe judges the compressed containers.
      const judge = format === 'wav' ? 'the WAV reader' : 'ffprobe';
      it(`${format} over stream_format ${streamFormat} is a file ${judge} reads as ${want.codec}`, async (t) => {
        if (format !== 'wav' && !haveFfmpeg) return t.skip('ffprobe/ffmpeg are not installed');
        const res = await client.audio.speech.create({ model: 'tts-1', input: TEXT, voice: 'alloy', response_format: format as 'mp3', stream_format: streamFormat });
        let bytes: Buffer;
        if (streamFormat === 'sse') {
          assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
          const events = await sseEvents(res);
          const done = events.at(-1)!;
          assert.equal(done['type'], 'speech.audio.done');
          const usage = done['usage'] as { input_tokens: number; output_tokens: number; total_tokens: number };
          assert.equal(usage.input_tokens, [...TEXT].length);
          assert.ok(usage.output_tokens > 0);
          assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens);
          const deltas = events.slice(0, -1);
          assert.ok(deltas.length > 1, 'the audio comes in several deltas');
          for (const d of deltas) assert.equal(d['type'], 'speech.audio.delta');
          bytes = Buffer.concat(deltas.map((d) => Buffer.from(d['audio'] as string, 'base64')));
        } else {
          assert.equal(res.headers.get('content-length'), null, 'streamed (chunked), not sized in advance');
          bytes = await bodyBytes(res);
        }
        if (format === 'wav') {
          const h = parseWavHeader(bytes);
          assert.equal(h.formatTag, WAVE_FORMAT.PCM);
          assert.equal(h.bitsPerSample, 16);
          assert.equal(h.channels, 1);
          assert.equal(h.sampleRate, 24000);
          const audioBytes = bytes.length - h.dataOffset;
          if (h.dataBytes !== 0xffffffff) assert.ok(h.dataBytes <= audioBytes, `data size ${h.dataBytes} within the ${audioBytes} bytes sent`);
          const seconds = Math.min(h.dataBytes, audioBytes) / h.blockAlign / h.sampleRate;
          assert.ok(seconds > 0.8 && seconds < 5, `${seconds} s of audio`);
          return;
        }
        const p = probe(bytes);
        assert.equal(p.codec, want.codec);
        assert.match(p.format, want.format);
        assert.equal(p.channels, 1);
        if (format !== 'opus') assert.equal(p.sampleRate, 24000);
        const decoded = decodedSeconds(bytes);
        assert.equal(decoded.errors, '');
        assert.ok(decoded.seconds > 0.8 && decoded.seconds < 5, `${decoded.seconds} s of audio`);
      });
    }
  }

  it('pcm is the native route\'s pcm16 byte for byte (same engine, voice and text)', async () => {
    const res = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', input: TEXT, voice: 'en-man-1', response_format: 'pcm' });
    assert.match(res.headers.get('content-type') ?? '', /^audio\/pcm/);
    const pcm = await bodyBytes(res);
    const native = await fetch(`${service.base}/v1/tts/sse`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: TEXT, voice: 'en-man-1', response_format: 'pcm16', language: 'en' }),
    });
    const text = await native.text();
    const nativePcm = Buffer.concat(
      [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { delta?: string }).filter((d) => d.delta !== undefined).map((d) => Buffer.from(d.delta!, 'base64')),
    );
    assert.ok(pcm.length > 24000, `${pcm.length} bytes`);
    assert.ok(pcm.equals(nativePcm), `openai ${pcm.length} bytes vs native ${nativePcm.length} bytes`);
  });

  it('speed 2 halves the audio and 0.25 … 4 are accepted (our tempo stage)', async () => {
    const seconds = async (speed: number): Promise<number> => {
      const res = await client.audio.speech.create({ model: 'tts-1', input: TEXT, voice: 'echo', response_format: 'pcm', speed });
      return (await bodyBytes(res)).length / 2 / 24000;
    };
    const normal = await seconds(1);
    const fast = await seconds(2);
    assert.ok(fast / normal > 0.45 && fast / normal < 0.55, `${fast} s at speed 2 vs ${normal} s`);
    assert.ok((await seconds(4)) < fast);
    assert.ok((await seconds(0.25)) > normal * 3);
  });

  it('maps OpenAI voices by the script of the input, says which voice it used, and that instructions are ignored', async () => {
    const english = await client.audio.speech.create({ model: 'tts-1', input: 'Hello.', voice: 'onyx', response_format: 'pcm', instructions: 'Speak cheerfully.' });
    assert.equal(english.headers.get('x-tts-voice'), 'en-man-1');
    assert.equal(english.headers.get('x-tts-instructions'), 'ignored');
    await bodyBytes(english);
    const japanese = await client.audio.speech.create({ model: 'tts-1', input: 'こんにちは。', voice: 'Nova', response_format: 'pcm' });
    assert.equal(japanese.headers.get('x-tts-voice'), 'ja-woman-1');
    assert.equal(japanese.headers.get('x-tts-instructions'), null);
    await bodyBytes(japanese);
  });

  it('lists the built-in engine in GET /v1/models', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids, ['tts-builtin', 'tts-1', 'tts-1-hd', 'gpt-4o-mini-tts']);
  });

  it('answers a wrong key with the SDK\'s AuthenticationError (401)', async () => {
    const wrong = new OpenAI({ apiKey: 'nope', baseURL: `${service.base}/v1`, maxRetries: 0 });
    const error = await wrong.audio.speech.create({ model: 'tts-1', input: 'hi', voice: 'alloy' }).then(
      () => assert.fail('accepted a wrong key'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof OpenAI.AuthenticationError, String(error));
    assert.equal(error.status, 401);
    assert.equal(error.code, 'invalid_api_key');
    assert.equal(error.type, 'invalid_request_error');
  });

  const badRequests: [string, Record<string, unknown>, string, string][] = [
    ['aac (no encoder under a compatible licence)', { response_format: 'aac' }, 'response_format', 'unsupported_value'],
    ['an unknown format', { response_format: 'ogg' }, 'response_format', 'invalid_value'],
    ['speed 4.5', { speed: 4.5 }, 'speed', 'invalid_value'],
    ['speed 0.2', { speed: 0.2 }, 'speed', 'invalid_value'],
    ['an unknown voice', { voice: 'robot' }, 'voice', 'invalid_value'],
    ['input of nothing to speak', { input: '!!!' }, 'input', 'invalid_value'],
    ['input over --max-chars', { input: 'a'.repeat(301) }, 'input', 'string_above_max_length'],
    ['an unknown stream_format', { stream_format: 'ws' }, 'stream_format', 'invalid_value'],
    ['no model', { model: undefined }, 'model', 'missing_required_parameter'],
  ];
  for (const [label, change, param, code] of badRequests) {
    it(`refuses ${label} with the SDK's BadRequestError naming \`${param}\``, async () => {
      const body = { model: 'tts-1', input: 'hi', voice: 'alloy', ...change } as unknown as OpenAI.Audio.SpeechCreateParams;
      const error = await client.audio.speech.create(body).then(
        () => assert.fail(`accepted ${label}`),
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.param, param);
      assert.equal(error.code, code);
      assert.ok(error.message.length > 0);
      if (label.startsWith('aac')) assert.match(error.message, /licen[cs]e/);
    });
  }
});

describe('the OpenAI route shares the native route\'s admission', () => {
  it('the rate limit is per key across both dialects: 429 RateLimitError with retry-after', async () => {
    const engine = scriptedEngine();
    const service = await startService({ apiKeys: [KEY], engine, rateLimit: { limit: 1, windowSeconds: 60 } });
    try {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${service.base}/v1`, maxRetries: 0 });
      const native = await fetch(`${service.base}/v1/tts/sse`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: '{"input":"hi"}' });
      assert.equal(native.status, 200);
      await native.text();
      const error = await client.audio.speech.create({ model: 'tts-1', input: 'hi', voice: 'alloy' }).then(
        () => assert.fail('the second request passed the 1/min limit'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenAI.RateLimitError, String(error));
      assert.equal(error.code, 'rate_limit_exceeded');
      assert.ok(Number(error.headers?.get('retry-after')) >= 1);
    } finally {
      await service.close();
    }
  });

  it('a stream in flight on the native route takes the key\'s only slot: 429 too_many_concurrent_requests', async () => {
    const engine = scriptedEngine();
    const service = await startService({ apiKeys: [KEY], engine, maxConcurrent: 1 });
    try {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${service.base}/v1`, maxRetries: 0 });
      const native = await fetch(`${service.base}/v1/tts/sse`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: '{"input":"slow"}' });
      assert.equal(native.status, 200);
      const busy = await client.audio.speech.create({ model: 'tts-1', input: 'hi', voice: 'alloy' }).then(
        () => assert.fail('a second stream passed --max-concurrent 1'),
        (e: unknown) => e,
      );
      assert.ok(busy instanceof OpenAI.RateLimitError, String(busy));
      assert.equal(busy.code, 'too_many_concurrent_requests');
      assert.ok(Number(busy.headers?.get('retry-after')) >= 1);
      await native.body?.cancel();
    } finally {
      await service.close();
    }
  });

  it('the character quota is shared with the native route; spent, it is 429 insufficient_quota', async () => {
    const engine = scriptedEngine();
    const service = await startService({ apiKeys: [KEY], engine, quotaChars: 10 });
    try {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${service.base}/v1`, maxRetries: 0 });
      const native = await fetch(`${service.base}/v1/tts/sse`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: '{"input":"hi there"}' });
      assert.equal(native.status, 200);
      await native.text();
      const spent = await client.audio.speech.create({ model: 'tts-1', input: 'more', voice: 'alloy' }).then(
        () => assert.fail('8 + 4 characters passed a quota of 10'),
        (e: unknown) => e,
      );
      assert.ok(spent instanceof OpenAI.RateLimitError, String(spent));
      assert.equal(spent.code, 'insufficient_quota');
      assert.equal(spent.type, 'insufficient_quota');
      const fits = await client.audio.speech.create({ model: 'tts-1', input: 'ok', voice: 'alloy', response_format: 'pcm' });
      assert.ok((await bodyBytes(fits)).length > 0);
    } finally {
      await service.close();
    }
  });

  it('stream_format audio starts before synthesis ends, and the client leaving stops it', async () => {
    const engine = scriptedEngine();
    const service = await startService({ apiKeys: [KEY], engine });
    try {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${service.base}/v1`, maxRetries: 0 });
      const res = await client.audio.speech.create({ model: 'tts-1', input: 'slow text', voice: 'alloy', response_format: 'wav' });
      const reader = res.body!.getReader();
      const first = await reader.read();
      assert.equal(first.done, false);
      assert.equal(Buffer.from(first.value!).subarray(0, 4).toString('latin1'), 'RIFF');
      const record = engine.records[0]!;
      assert.equal(record.ended, false, 'the first bytes arrived while the engine was still synthesizing');
      assert.ok(record.yielded < 250, `${record.yielded} of 250 chunks made`);
      await reader.cancel();
    } finally {
      await service.close();
    }
  });

  for (const streamFormat of ['audio', 'sse'] as const) {
    it(`a ${streamFormat} stream that accepts nothing for the write timeout is closed and its slot freed`, { timeout: 20_000 }, async () => {
      // Endless audio, as fast as it is taken: only backpressure and the write timeout stop it.
      const engine = fakeEngine({ chunks: 1_000_000 });
      let cut: (line: string) => void = () => {};
      const timedOut = new Promise<string>((resolve) => (cut = resolve));
      const server = createService({
        apiKeys: [KEY],
        engine,
        maxConcurrent: 1,
        writeTimeoutMs: 300,
        accessLog: (line) => {
          if (line.endsWith(' write-timeout')) cut(line);
        },
      });
      const base = await listen(server, '127.0.0.1', 0);
      const stalled = await stalledSse(base, KEY, { model: 'tts-1', input: 'endless', voice: 'alloy', response_format: 'pcm', stream_format: streamFormat }, '/v1/audio/speech');
      try {
        const line = await timedOut;
        assert.match(line, /^127\.0\.0\.1 key#1 POST \/v1\/audio\/speech 200 \d+ms model=tts-1 write-timeout$/);
        assert.ok(engine.records[0]!.yielded < 1000, `the engine paused with the socket: ${engine.records[0]!.yielded} chunks made`);
        const client = new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 0 });
        const next = await client.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'alloy', response_format: 'pcm' });
        assert.equal(next.headers.get('x-tts-voice'), 'en-woman-1', 'the slot is free again');
        await next.body?.cancel();
      } finally {
        stalled.socket.destroy();
        await closeService(server);
      }
    });
  }

  it('a synthesis that fails mid-stream cuts an audio transfer (never a short file that looks whole) and ends an SSE stream with an error event', async () => {
    const engine = fakeEngine({ chunks: 10, failAfter: 3 });
    const service = await startService({ apiKeys: [KEY], engine });
    try {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${service.base}/v1`, maxRetries: 0 });
      const audio = await client.audio.speech.create({ model: 'tts-1', input: 'breaks', voice: 'alloy', response_format: 'wav' });
      assert.equal(audio.status, 200);
      await assert.rejects(bodyBytes(audio), 'the truncated chunked body is an error to the client');
      const sse = await client.audio.speech.create({ model: 'tts-1', input: 'breaks', voice: 'alloy', response_format: 'pcm', stream_format: 'sse' });
      const events = await sseEvents(sse);
      assert.deepEqual(events.map((e) => e['type']), ['speech.audio.delta', 'speech.audio.delta', 'speech.audio.delta', 'error']);
      const error = events.at(-1)!['error'] as { type: string; message: string };
      assert.equal(error.type, 'server_error');
      assert.match(error.message, /synthesis failed/);
    } finally {
      await service.close();
    }
  });
});
