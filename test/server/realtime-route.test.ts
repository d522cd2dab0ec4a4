/**
 * The built-in service's WebSocket route (src/server/realtime-route.ts) over real loopback
 * sockets with the real `ws` client (docs/protocol.md §2.4, §3, §4.2, §5, §6.2, §7; docs/cli.md §4):
 * event shapes, every refusal as an error event then close 1008, the handshake's 401/404, one
 * update per session, size limits, and aborts. The engine is a deterministic fake
 * (test/helpers/fake-engine.ts), so what reaches the engine and what leaves the socket can
 * be compared byte for byte.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect as connectTcp, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Admission, ServiceLimits, type AdmissionLimits } from '../../src/server/admission.js';
import { KeyRing } from '../../src/server/keys.js';
import { attachRealtime } from '../../src/server/realtime-route.js';
import { SEND_HIGH_WATER_BYTES } from '../../src/server/realtime-session.js';
import { createService, listen } from '../../src/server/builtin-server.js';
import { connect as connectWs, handshake, type WsSession } from '../helpers/serve-ws.js';
import { fakeAudio, fakeEngine, type FakeEngine } from '../helpers/fake-engine.js';

const KEY = 'test-key-ws-123456';

/** Opens a session with the test key; fails the test when the handshake is refused. */
function connect(url: string): Promise<WsSession> {
  return connectWs(url, KEY);
}

/** Reads a refused handshake: status, content type and the JSON body. */
async function refusedHandshake(url: string, headers: Record<string, string>): Promise<{ status: number; contentType: string; body: { error: { code: string; message: string } } }> {
  const h = await handshake(url, undefined, headers);
  if (h.ok) {
    h.session.ws.terminate();
    throw new Error('the handshake was accepted');
  }
  return { status: h.status, contentType: String(h.headers['content-type']), body: JSON.parse(h.body) as { error: { code: string; message: string } } };
}

function update(session: Record<string, unknown>): string {
  return JSON.stringify({ type: 'tts_session.update', session });
}

async function startService(engine: FakeEngine, maxChars = 200): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createService({ apiKeys: [KEY], engine, maxChars });
  const base = await listen(server, '127.0.0.1', 0);
  return {
    server,
    url: `${base.replace(/^http/, 'ws')}/v1/realtime_tts`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('/v1/realtime_tts (built-in service)', () => {
  let engine: FakeEngine;
  let svc: Awaited<ReturnType<typeof startService>>;
  before(async () => {
    engine = fakeEngine({ chunks: 5 });
    svc = await startService(engine);
  });
  after(async () => {
    await svc.close();
  });

  it('sends created with an id and the defaults, then updated, deltas of the engine audio, completed, and closes 1000', async () => {
    const s = await connect(svc.url);
    const created = await s.next('tts_session.created');
    assert.deepEqual(Object.keys(created).sort(), ['session', 'type']);
    const session = created['session'] as Record<string, unknown>;
    assert.match(String(session['id']), /^sess_[0-9a-f]{24}$/);
    assert.deepEqual(
      { ...session, id: undefined },
      { id: undefined, preset_voice: 'ja_man_1', output_audio_format: 'pcm16', output_audio_sample_rate: 24000, output_audio_number_of_channels: 1, language: 'ja', word_timings: false },
    );
    s.ws.send(update({ input_text: 'Hello there.', preset_voice: 'en_woman_1', output_audio_format: 'float32', output_audio_sample_rate: 16000, output_audio_number_of_channels: 1, language: 'en' }));
    const closed = await s.closed;
    assert.equal(closed.code, 1000);
    const types = s.events.map((e) => e.type);
    assert.deepEqual(types, ['tts_session.created', 'tts_session.updated', ...Array(5).fill('tts.output_audio.delta'), 'tts.output.completed']);
    assert.deepEqual(s.events[1], {
      type: 'tts_session.updated',
      session: { id: session['id'], preset_voice: 'en_woman_1', output_audio_format: 'float32', output_audio_sample_rate: 16000, output_audio_number_of_channels: 1, language: 'en', word_timings: false },
    });
    assert.equal(engine.records.at(-1)!.wordTimings, false, 'no word timings unless asked');
    const job = engine.records.at(-1)!.job;
    assert.deepEqual(job, { text: 'Hello there.', voice: 'en-woman-1', language: 'en', format: 'float32', sampleRate: 16000, channels: 1 });
    const deltas = s.events.filter((e) => e.type === 'tts.output_audio.delta');
    for (const d of deltas) assert.deepEqual(Object.keys(d).sort(), ['delta', 'type']);
    const audio = Buffer.concat(deltas.map((d) => Buffer.from(String(d['delta']), 'base64')));
    assert.deepEqual(audio, fakeAudio(job, 5));
    assert.deepEqual(s.events.at(-1), { type: 'tts.output.completed', session_id: session['id'], audio_seconds: 0.5 });
  });

  it('asks the engine for word timings only with word_timings: true (docs/protocol.md §2.4), and refuses one that is not a boolean', async () => {
    const s = await connect(svc.url);
    s.ws.send(update({ input_text: 'Hello there.', preset_voice: 'en_woman_1', word_timings: true }));
    assert.equal((await s.closed).code, 1000);
    assert.equal(engine.records.at(-1)!.wordTimings, true);
    assert.equal((s.events[1]!['session'] as Record<string, unknown>)['word_timings'], true);
    const bad = await connect(svc.url);
    const before = engine.records.length;
    bad.ws.send(update({ input_text: 'Hello there.', word_timings: 1 }));
    assert.equal((await bad.closed).code, 1008);
    const error = bad.events.find((e) => e.type === 'error') as { error: { code: string } } | undefined;
    assert.equal(error?.error.code, 'invalid_parameters');
    assert.equal(engine.records.length, before, 'nothing synthesized');
  });

  it('applies the defaults when only input_text is given (language from the voice)', async () => {
    const s = await connect(svc.url);
    s.ws.send(update({ input_text: 'こんにちは' }));
    await s.closed;
    assert.deepEqual(engine.records.at(-1)!.job, { text: 'こんにちは', voice: 'ja-man-1', language: 'ja', format: 'pcm16', sampleRate: 24000, channels: 1 });
    const s2 = await connect(svc.url);
    s2.ws.send(update({ input_text: 'hi', preset_voice: 'en_man_1' }));
    await s2.closed;
    assert.equal(engine.records.at(-1)!.job.language, 'en');
  });

  for (const [rate, channels, format] of [
    [8000, 1, 'mulaw'],
    [48000, 2, 'pcm16'],
    [8000, 2, 'float32'],
    [48000, 1, 'float32'],
    [22050, 2, 'pcm16'],
    [44100, 1, 'mulaw'],
  ] as const) {
    it(`passes ${rate} Hz, ${channels} channel(s), ${format} through to the engine job and the deltas`, async () => {
      const s = await connect(svc.url);
      s.ws.send(update({ input_text: 'x', output_audio_sample_rate: rate, output_audio_number_of_channels: channels, output_audio_format: format }));
      assert.equal((await s.closed).code, 1000);
      const job = engine.records.at(-1)!.job;
      assert.equal(job.sampleRate, rate);
      assert.equal(job.channels, channels);
      assert.equal(job.format, format);
      const audio = Buffer.concat(s.events.filter((e) => e.type === 'tts.output_audio.delta').map((d) => Buffer.from(String(d['delta']), 'base64')));
      assert.deepEqual(audio, fakeAudio(job, 5));
      assert.equal(s.events.at(-1)!['audio_seconds'], 0.5);
    });
  }

  const refusals: [string, unknown, string][] = [
    ['no input_text', {}, 'text_string_required'],
    ['empty input_text', { input_text: '   ' }, 'text_string_required'],
    ['input_text of the wrong type', { input_text: 5 }, 'invalid_parameters'],
    ['a lone surrogate', { input_text: 'a\ud800b' }, 'text_string_required'],
    ['too long an input', { input_text: 'あ'.repeat(201) }, 'max_character_length_exceeded'],
    ['an unknown voice', { input_text: 'hi', preset_voice: 'xx_robot_9' }, 'voice_not_found'],
    ['a voice of the wrong type', { input_text: 'hi', preset_voice: 7 }, 'invalid_parameters'],
    ['an unknown format', { input_text: 'hi', output_audio_format: 'mp3' }, 'audio_format_not_found'],
    ['an unknown language', { input_text: 'hi', language: 'fr' }, 'language_not_found'],
    ['an unlisted sample rate', { input_text: 'hi', output_audio_sample_rate: 11025 }, 'invalid_parameters'],
    ['a fractional sample rate', { input_text: 'hi', output_audio_sample_rate: 24000.5 }, 'invalid_parameters'],
    ['a sample rate as a string', { input_text: 'hi', output_audio_sample_rate: '24000' }, 'invalid_parameters'],
    ['three channels', { input_text: 'hi', output_audio_number_of_channels: 3 }, 'invalid_parameters'],
    ['zero channels', { input_text: 'hi', output_audio_number_of_channels: 0 }, 'invalid_parameters'],
    ['1.5 channels', { input_text: 'hi', output_audio_number_of_channels: 1.5 }, 'invalid_parameters'],
    ['channels as a string', { input_text: 'hi', output_audio_number_of_channels: '2' }, 'invalid_parameters'],
    ['no session', undefined, 'bad_request'],
    ['a session that is an array', ['hi'], 'bad_request'],
  ];
  for (const [label, session, code] of refusals) {
    it(`refuses ${label} with an error event ${code}, then close 1008`, async () => {
      const jobs = engine.records.length;
      const s = await connect(svc.url);
      await s.next('tts_session.created');
      s.ws.send(JSON.stringify(session === undefined ? { type: 'tts_session.update' } : { type: 'tts_session.update', session }));
      const closed = await s.closed;
      assert.equal(closed.code, 1008);
      assert.equal(closed.reason, code);
      const last = s.events.at(-1)!;
      assert.equal(last.type, 'error');
      const error = last['error'] as { code: string; message: string };
      assert.equal(error.code, code);
      assert.ok(error.message.length > 0);
      assert.equal(engine.records.length, jobs, 'no engine job started');
    });
  }

  it('names voices with underscores in voice_not_found', async () => {
    const s = await connect(svc.url);
    s.ws.send(update({ input_text: 'hi', preset_voice: 'nope' }));
    await s.closed;
    const error = s.events.at(-1)!['error'] as { message: string };
    assert.match(error.message, /ja_man_1/);
    assert.doesNotMatch(error.message, /ja-man-1/);
  });

  it('accepts a hyphenated voice id too (a tolerant reading of docs/protocol.md §2.4)', async () => {
    const s = await connect(svc.url);
    s.ws.send(update({ input_text: 'hi', preset_voice: 'en-man-1' }));
    assert.equal((await s.closed).code, 1000);
    assert.equal(engine.records.at(-1)!.job.voice, 'en-man-1');
  });

  it('refuses malformed JSON with bad_request, then close 1008', async () => {
    const s = await connect(svc.url);
    s.ws.send('{"type":"tts_session.update",');
    const closed = await s.closed;
    assert.equal(closed.code, 1008);
    assert.equal((s.events.at(-1)!['error'] as { code: string }).code, 'bad_request');
  });

  it('refuses JSON that is not an object with a string type, then close 1008', async () => {
    for (const frame of ['[1]', '"x"', '{"session":{}}', '{"type":5}']) {
      const s = await connect(svc.url);
      s.ws.send(frame);
      assert.equal((await s.closed).code, 1008, frame);
      assert.equal((s.events.at(-1)!['error'] as { code: string }).code, 'bad_request');
    }
  });

  it('refuses a binary frame with bad_request, then close 1008', async () => {
    const s = await connect(svc.url);
    s.ws.send(Buffer.from(update({ input_text: 'hi' })), { binary: true });
    assert.equal((await s.closed).code, 1008);
    assert.equal((s.events.at(-1)!['error'] as { code: string }).code, 'bad_request');
  });

  it('closes with 1009 on a frame over 1 MiB', async () => {
    const s = await connect(svc.url);
    s.ws.send(update({ input_text: 'a'.repeat(2 * 1024 * 1024) }));
    assert.equal((await s.closed).code, 1009);
  });

  it('answers a message of another type with bad_request and keeps the session open', async () => {
    const s = await connect(svc.url);
    s.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: '' }));
    await s.next('error');
    assert.equal((s.events.at(-1)!['error'] as { code: string }).code, 'bad_request');
    s.ws.send(update({ input_text: 'still here' }));
    assert.equal((await s.closed).code, 1000);
    assert.equal(s.events.at(-1)!.type, 'tts.output.completed');
  });

  it('refuses the handshake without a key: HTTP 401 with the JSON error body', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-key' }, { authorization: `Basic ${KEY}` }, { authorization: KEY }]) {
      const r = await refusedHandshake(svc.url, headers);
      assert.equal(r.status, 401);
      assert.match(r.contentType, /^application\/json/);
      assert.equal(r.body.error.code, 'invalid_api_key');
      assert.ok(r.body.error.message.length > 0);
    }
  });

  it('ignores a key in the URL: the header is the only way (docs/cli.md §4)', async () => {
    for (const q of [`?api_key=${KEY}`, `?key=${KEY}`, `?authorization=Bearer%20${KEY}`]) {
      const r = await refusedHandshake(svc.url + q, {});
      assert.equal(r.status, 401);
    }
  });

  it('answers 404 with a JSON body for another path', async () => {
    const r = await refusedHandshake(svc.url.replace('/v1/realtime_tts', '/v1/realtime'), { authorization: `Bearer ${KEY}` });
    assert.equal(r.status, 404);
    assert.ok(r.body.error.code);
  });
});

describe('/v1/realtime_tts sessions over time', () => {
  it('answers a second update with bad_request while the audio continues to completed', async () => {
    const engine = fakeEngine({ chunks: 10, delayMs: 20 });
    const svc = await startService(engine);
    try {
      const s = await connect(svc.url);
      s.ws.send(update({ input_text: 'one' }));
      await s.next('tts.output_audio.delta');
      s.ws.send(update({ input_text: 'two', preset_voice: 'en_man_1' }));
      const closed = await s.closed;
      assert.equal(closed.code, 1000);
      const types = s.events.map((e) => e.type);
      const errorAt = types.indexOf('error');
      assert.ok(errorAt > types.indexOf('tts.output_audio.delta'), types.join());
      assert.ok(errorAt < types.lastIndexOf('tts.output_audio.delta'), 'audio went on after the error');
      assert.equal((s.events[errorAt]!['error'] as { code: string }).code, 'bad_request');
      assert.equal(types.filter((t) => t === 'tts.output_audio.delta').length, 10);
      assert.equal(types.at(-1), 'tts.output.completed');
      assert.equal(engine.records.length, 1, 'the second update started nothing');
      assert.equal(engine.records[0]!.job.text, 'one');
    } finally {
      await svc.close();
    }
  });

  it('aborts the engine job at once when the client disconnects mid-stream', async () => {
    const engine = fakeEngine({ chunks: 500, delayMs: 10 });
    const svc = await startService(engine);
    try {
      const s = await connect(svc.url);
      s.ws.send(update({ input_text: 'long' }));
      await s.next('tts.output_audio.delta');
      const t = performance.now();
      s.ws.terminate();
      const record = engine.records[0]!;
      for (let i = 0; i < 100 && !record.ended; i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(record.aborted, 'the job saw the abort');
      assert.ok(record.ended, 'the job ended');
      assert.ok(record.abortedAt! - t < 200, `abort after ${record.abortedAt! - t} ms`);
      assert.ok(record.yielded < 50, `${record.yielded} chunks made`);
    } finally {
      await svc.close();
    }
  });

  it('aborts the engine job when the client closes politely mid-stream', async () => {
    const engine = fakeEngine({ chunks: 500, delayMs: 10 });
    const svc = await startService(engine);
    try {
      const s = await connect(svc.url);
      s.ws.send(update({ input_text: 'long' }));
      await s.next('tts.output_audio.delta');
      s.ws.close(1000);
      await s.closed;
      const record = engine.records[0]!;
      for (let i = 0; i < 100 && !record.ended; i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(record.aborted && record.ended);
    } finally {
      await svc.close();
    }
  });

  it('sends server_error and closes 1011 when the engine fails', async () => {
    const engine = fakeEngine({ chunks: 5, failAfter: 2 });
    const svc = await startService(engine);
    try {
      const s = await connect(svc.url);
      s.ws.send(update({ input_text: 'x' }));
      const closed = await s.closed;
      assert.equal(closed.code, 1011);
      assert.equal(s.events.filter((e) => e.type === 'tts.output_audio.delta').length, 2);
      const last = s.events.at(-1)!;
      assert.equal(last.type, 'error');
      assert.equal((last['error'] as { code: string }).code, 'server_error');
    } finally {
      await svc.close();
    }
  });

  it('stops pulling audio from the engine while the client does not read (backpressure)', async () => {
    // 48 kHz stereo float32: 38400 bytes (51 KiB of base64) per 100 ms chunk, as fast as pulled.
    const engine = fakeEngine({ chunks: 3000 });
    const svc = await startService(engine);
    // The server's end of the connection: what it holds in user space, waiting for the kernel.
    let serverSocket: Socket | undefined;
    svc.server.on('connection', (socket: Socket) => (serverSocket = socket));
    // At every chunk the session takes from the engine, what it queued must be under the high-water
    // mark plus the delta just sent: a session that ran ahead would queue megabytes here.
    const queuedAtPull: number[] = [];
    const synthesize = engine.synthesize.bind(engine);
    engine.synthesize = (...args) => {
      const inner = synthesize(...args)[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]: () => ({
          next: () => {
            queuedAtPull.push(serverSocket?.writableLength ?? 0);
            return inner.next();
          },
          return: async () => (await inner.return?.()) ?? { done: true, value: undefined },
        }),
      };
    };
    try {
      const s = await connect(svc.url);
      s.ws.send(update({ input_text: 'x', output_audio_format: 'float32', output_audio_sample_rate: 48000, output_audio_number_of_channels: 2 }));
      await s.next('tts.output_audio.delta');
      s.ws.pause();
      // Wait for the event: the kernel's buffers are full and the server holds more than the
      // high-water mark. From then on the session waits for a write that cannot happen.
      while ((serverSocket?.writableLength ?? 0) <= SEND_HIGH_WATER_BYTES) await sleep(5);
      const record = engine.records[0]!;
      const oneDelta = 64 * 1024;
      const worst = Math.max(...queuedAtPull);
      assert.ok(worst <= SEND_HIGH_WATER_BYTES + oneDelta, `${worst} bytes were queued when a chunk was pulled`);
      assert.ok(record.yielded < 3000 && !record.ended, `${record.yielded} chunks made while nobody read`);
      s.ws.terminate();
    } finally {
      await svc.close();
    }
  });

  it('closeAllConnections ends open sessions so server.close() returns', async () => {
    const engine = fakeEngine({ chunks: 1000, delayMs: 20 });
    const svc = await startService(engine);
    const s = await connect(svc.url);
    s.ws.send(update({ input_text: 'x' }));
    await s.next('tts.output_audio.delta');
    // A close that did not end the session would hang here (caught by the test's timeout).
    await svc.close();
    await s.closed;
    for (let i = 0; i < 100 && !engine.records[0]!.ended; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(engine.records[0]!.aborted);
  });

  it('asks the limits hooks: admit at the handshake (429 + Retry-After), release at close, charge at update', async () => {
    const engine = fakeEngine({ chunks: 2 });
    const server = createServer();
    const log: string[] = [];
    let active = 0;
    const limits: AdmissionLimits = {
      admit: (keyIndex) => {
        log.push(`admit ${keyIndex}`);
        if (active >= 1) return { code: 'too_many_concurrent_requests', message: 'one at a time', headers: { 'Retry-After': '2' } };
        active++;
        return {
          release: () => {
            active--;
            log.push('release');
          },
        };
      },
      charge: (keyIndex, characters) => {
        log.push(`charge ${keyIndex} ${characters}`);
        return characters > 5 ? { code: 'quota_exceeded', message: 'out of characters' } : undefined;
      },
    };
    attachRealtime(server, { engine, admission: new Admission(new KeyRing(['other', KEY]), limits, () => false), maxChars: 100, writeTimeoutMs: 30_000 });
    const base = await listen(server, '127.0.0.1', 0);
    const url = `${base.replace(/^http/, 'ws')}/v1/realtime_tts`;
    try {
      const first = await connect(url);
      const refused = await refusedHandshake(url, { authorization: `Bearer ${KEY}` });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error.code, 'too_many_concurrent_requests');
      first.ws.send(update({ input_text: 'あいう' }));
      assert.equal((await first.closed).code, 1000);
      for (let i = 0; i < 50 && active > 0; i++) await new Promise((r) => setTimeout(r, 10));
      const second = await connect(url);
      second.ws.send(update({ input_text: 'too many characters' }));
      assert.equal((await second.closed).code, 1008);
      assert.equal((second.events.at(-1)!['error'] as { code: string }).code, 'quota_exceeded');
      for (let i = 0; i < 50 && active > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(log, ['admit 1', 'admit 1', 'charge 1 3', 'release', 'admit 1', 'charge 1 19', 'release']);
      assert.equal(engine.records.length, 1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('closes a session that sends no update in time with bad_request and 1008', async () => {
    const engine = fakeEngine();
    const server = createServer();
    attachRealtime(server, { engine, admission: new Admission(new KeyRing([KEY]), undefined, () => false), maxChars: 100, idleMs: 200, writeTimeoutMs: 30_000 });
    const base = await listen(server, '127.0.0.1', 0);
    try {
      const s = await connect(`${base.replace(/^http/, 'ws')}/v1/realtime_tts`);
      // 1008 and bad_request prove the idle timer fired; a hang is caught by the test's timeout.
      const closed = await s.closed;
      assert.equal(closed.code, 1008);
      assert.equal((s.events.at(-1)!['error'] as { code: string }).code, 'bad_request');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('a session refused for sending no update frees its concurrency slot at once, though its client never answers the close', async () => {
    const engine = fakeEngine();
    const server = createServer();
    // One session at a time for the key; a short idle timeout stands in for the 60 s one.
    const admission = new Admission(new KeyRing([KEY]), new ServiceLimits({ maxConcurrent: 1 }), () => false);
    attachRealtime(server, { engine, admission, maxChars: 100, idleMs: 100, writeTimeoutMs: 30_000 });
    const base = await listen(server, '127.0.0.1', 0);
    const { port } = new URL(base);
    // A raw client: it completes the handshake, then reads everything and answers nothing, not
    // even the close (ws would keep such a socket for its 30 s close timeout).
    const silent = connectTcp(Number(port), '127.0.0.1');
    try {
      silent.write(
        ['GET /v1/realtime_tts HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', `Authorization: Bearer ${KEY}`, '', ''].join('\r\n'),
      );
      let seen = '';
      await new Promise<void>((resolve, reject) => {
        silent.on('error', reject);
        silent.on('data', (d: Buffer) => {
          seen += d.toString('latin1');
          // The error event, then the close frame (opcode 0x88) that ends the session.
          if (seen.includes('no tts_session.update') && seen.includes('\x88')) resolve();
        });
      });
      assert.match(seen, /^HTTP\/1\.1 101 /);
      assert.equal(silent.destroyed, false, 'the silent client still holds its socket');
      const next = await handshake(`${base.replace(/^http/, 'ws')}/v1/realtime_tts`, KEY);
      if (!next.ok) assert.fail(`the key's next session was refused: ${next.status} ${next.body}`);
      next.session.ws.terminate();
    } finally {
      silent.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
