/**
 * The WebSocket client (src/client/realtime.ts) against small loopback servers that follow the
 * protocol in unusual but legal ways, or break it on purpose (docs/protocol.md §3, §4.2, §6.2;
 * docs/cli.md §3, §4): byte-exact audio, one update only after `created`, the right code and exit
 * code for every failure, and a socket that is always cleaned up.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { TtsError } from '../../src/errors.js';
import { streamRealtime, type RealtimeStreamOptions } from '../../src/client/realtime.js';
import type { AudioChunk } from '../../src/wire/delta.js';
import { patternBytes } from '../helpers/servers.js';
import { delay, nextFrame, sendJson, startCloseIgnoringServer, startWsServer, wsDelta, type WsConnection, type WsTestServer } from '../helpers/ws-servers.js';
import { runTtsInProcess } from '../helpers/in-process.js';

const KEY = 'sk-test-SENTINEL-ws-0a1b2c3d';

const SESSION: RealtimeStreamOptions['session'] = {
  input_text: 'こんにちは',
  voice: 'ja-woman-1',
  output_audio_format: 'pcm16',
  output_audio_sample_rate: 48000,
  output_audio_number_of_channels: 2,
  language: 'ja',
};

function options(url: string, extra: Partial<RealtimeStreamOptions> = {}): RealtimeStreamOptions {
  return { wsBaseUrl: url, apiKey: KEY, session: SESSION, timeoutMs: 5000, ...extra };
}

/** Runs the client to the end: the chunks it yielded and the error it threw, if any. */
async function run(opts: RealtimeStreamOptions): Promise<{ chunks: AudioChunk[]; audio: Buffer; error: TtsError | undefined; ms: number }> {
  const t0 = performance.now();
  const chunks: AudioChunk[] = [];
  let error: TtsError | undefined;
  try {
    for await (const c of streamRealtime(opts)) chunks.push(c);
  } catch (e) {
    assert.ok(e instanceof TtsError, `expected a TtsError, got ${String(e)}`);
    error = e;
  }
  return { chunks, audio: Buffer.concat(chunks.map((c) => c.data)), error, ms: performance.now() - t0 };
}

/** The usual server side: created, wait for the update, then `after(update)`. */
function afterUpdate(after: (c: WsConnection, update: Record<string, unknown>) => void | Promise<void>): (c: WsConnection) => Promise<void> {
  return async (c) => {
    sendJson(c.ws, { type: 'tts_session.created', session: { id: 'sess_test' } });
    const f = await nextFrame(c);
    await after(c, JSON.parse(f.text) as Record<string, unknown>);
  };
}

const servers: WsTestServer[] = [];
async function serve(...args: Parameters<typeof startWsServer>): Promise<WsTestServer> {
  const s = await startWsServer(...args);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('streamRealtime', () => {
  it('sends nothing before a delayed tts_session.created, then exactly one update carrying every field', async () => {
    let createdAt = 0;
    const audio = [patternBytes(9600, 1), patternBytes(3, 2), patternBytes(19200, 3)];
    const server = await serve(async (c) => {
      await delay(300);
      createdAt = performance.now();
      sendJson(c.ws, { type: 'tts_session.created', session: { id: 'sess_1' } });
      await nextFrame(c);
      sendJson(c.ws, { type: 'tts_session.updated', session: { id: 'sess_1' } });
      for (const a of audio) sendJson(c.ws, wsDelta(a));
      sendJson(c.ws, { type: 'tts.output.completed', session_id: 'sess_1', audio_seconds: 0.3 });
      await delay(200);
      c.ws.close(1000);
    });
    const r = await run(options(server.url));
    assert.equal(r.error, undefined);
    assert.deepEqual(r.audio, Buffer.concat(audio));
    assert.deepEqual(r.chunks.map((c) => c.itemId), [undefined, undefined, undefined]);
    const conn = server.connections[0]!;
    await conn.closed;
    assert.equal(conn.frames.length, 1, 'exactly one frame: the update');
    const frame = conn.frames[0]!;
    assert.ok(frame.at >= createdAt, 'the update came after created was sent');
    assert.equal(frame.binary, false);
    assert.deepEqual(JSON.parse(frame.text), {
      type: 'tts_session.update',
      session: {
        input_text: 'こんにちは',
        preset_voice: 'ja_woman_1',
        output_audio_format: 'pcm16',
        output_audio_sample_rate: 48000,
        output_audio_number_of_channels: 2,
        language: 'ja',
      },
    });
  });

  it('sends the key as Authorization: Bearer only, on the endpoint path under the base prefix', async () => {
    const server = await serve(afterUpdate((c) => sendJson(c.ws, { type: 'tts.output.completed' })));
    const r = await run(options(`${server.url}/prefix/`));
    assert.equal(r.error, undefined);
    const conn = server.connections[0]!;
    assert.equal(conn.url, '/prefix/v1/realtime_tts');
    assert.equal(conn.headers.authorization, `Bearer ${KEY}`);
    assert.ok(!conn.url.includes('SENTINEL'));
  });

  it('closes with 1000 itself after tts.output.completed when the server does not', async () => {
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(patternBytes(10)));
      sendJson(c.ws, { type: 'tts.output.completed' });
    }));
    const r = await run(options(server.url));
    assert.equal(r.error, undefined);
    const closed = await server.connections[0]!.closed;
    assert.equal(closed.code, 1000);
  });

  it('never sends a second update, even when created is repeated', async () => {
    const server = await serve(async (c) => {
      sendJson(c.ws, { type: 'tts_session.created' });
      sendJson(c.ws, { type: 'tts_session.created' });
      await nextFrame(c);
      await delay(100);
      sendJson(c.ws, { type: 'tts_session.created' });
      await delay(100);
      sendJson(c.ws, { type: 'tts.output.completed' });
    });
    const r = await run(options(server.url));
    assert.equal(r.error, undefined);
    await server.connections[0]!.closed;
    assert.equal(server.connections[0]!.frames.length, 1);
  });

  it('ignores unknown fields and unknown event types; audio is byte-exact and item_id is kept', async () => {
    const a = patternBytes(4801, 5);
    const b = patternBytes(7, 6);
    const server = await serve(async (c) => {
      sendJson(c.ws, { type: 'tts_session.created', session: { id: 's', extra: [1, 2] }, wat: true });
      await nextFrame(c);
      sendJson(c.ws, { type: 'tts_session.updated', session: { whatever: null } });
      sendJson(c.ws, { type: 'tts.rate_limits.updated', limits: [] });
      sendJson(c.ws, { type: 'tts.output_audio.delta', delta: a.toString('base64'), item_id: 'item_9', seq: 0, extra: { x: 1 } });
      sendJson(c.ws, { type: 'tts.output_audio.delta', delta: '' });
      sendJson(c.ws, { type: 'tts.output_audio.done', item_id: 'item_9' });
      // MIME-style line breaks inside base64 are tolerated.
      sendJson(c.ws, { type: 'tts.output_audio.delta', delta: b.toString('base64').replace(/(.{4})/, '$1\r\n') });
      sendJson(c.ws, { type: 'tts.output.completed', session_id: 's', audio_seconds: 1, more: 'x' });
      sendJson(c.ws, { type: 'error', error: { code: 'server_error', message: 'after completion: ignored' } });
    });
    const r = await run(options(server.url));
    assert.equal(r.error, undefined);
    assert.deepEqual(r.audio, Buffer.concat([a, b]));
    assert.equal(r.chunks[0]!.itemId, 'item_9');
  });

  for (const [code, exit] of [
    ['voice_not_found', 4],
    ['invalid_parameters', 4],
    ['bad_request', 4],
    ['rate_limit_exceeded', 5],
    ['quota_exceeded', 5],
    ['invalid_api_key', 3],
    ['server_error', 6],
    ['some_future_code', 6],
  ] as const) {
    it(`an error event with ${code}, then close 1008, fails with that code (exit ${exit})`, async () => {
      const server = await serve(afterUpdate((c) => {
        sendJson(c.ws, { type: 'error', error: { code, message: 'the service says no' } });
        c.ws.close(1008, code);
      }));
      const r = await run(options(server.url));
      assert.ok(r.error);
      assert.equal(r.error.code, code);
      assert.equal(r.error.exitCode, exit);
      assert.match(r.error.message, /the service says no/);
    });
  }

  it('delivers audio sent before an error event, then fails', async () => {
    const a = patternBytes(100, 9);
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(a));
      sendJson(c.ws, { type: 'tts.error', code: 'server_error', message: 'engine died' });
    }));
    const r = await run(options(server.url));
    assert.deepEqual(r.audio, a);
    assert.equal(r.error?.code, 'server_error');
    assert.match(r.error?.message ?? '', /engine died/);
  });

  it('a close 1011 mid-stream is server_error (exit 6), naming the code and reason', async () => {
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(patternBytes(100)));
      c.ws.close(1011, 'engine crashed');
    }));
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'server_error');
    assert.equal(r.error?.exitCode, 6);
    assert.match(r.error?.message ?? '', /1011/);
    assert.match(r.error?.message ?? '', /engine crashed/);
    assert.equal(r.audio.length, 100);
  });

  it('a close 1000 before tts.output.completed is stream_ended_early (exit 6)', async () => {
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(patternBytes(100)));
      c.ws.close(1000, 'bye');
    }));
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'stream_ended_early');
    assert.equal(r.error?.exitCode, 6);
    assert.match(r.error?.message ?? '', /1000/);
  });

  it('a dropped connection (no close frame) is stream_ended_early', async () => {
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(patternBytes(100)));
      setTimeout(() => c.ws.terminate(), 50);
    }));
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'stream_ended_early');
    assert.match(r.error?.message ?? '', /1006/);
  });

  for (const [label, frame] of [
    ['not JSON', 'hello'],
    ['a JSON array', '[1,2]'],
    ['an object without type', '{"delta":"AAAA"}'],
    ['a delta without delta', '{"type":"tts.output_audio.delta"}'],
    ['a delta with a number', '{"type":"tts.output_audio.delta","delta":5}'],
    ['a delta with bad base64', '{"type":"tts.output_audio.delta","delta":"AA*A"}'],
    ['a delta with a lone base64 character', '{"type":"tts.output_audio.delta","delta":"AAAAA"}'],
  ] as const) {
    it(`a frame that is ${label} is a protocol_error (exit 6)`, async () => {
      const server = await serve(afterUpdate((c) => c.ws.send(frame)));
      const r = await run(options(server.url));
      assert.equal(r.error?.code, 'protocol_error');
      assert.equal(r.error?.exitCode, 6);
    });
  }

  it('a binary frame is a protocol_error', async () => {
    const server = await serve(afterUpdate((c) => c.ws.send(patternBytes(10), { binary: true })));
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'protocol_error');
    assert.match(r.error?.message ?? '', /binary/);
  });

  it('a refused handshake (401 with a JSON body) is invalid_api_key, exit 3', async () => {
    const server = await serve(() => {}, {
      refuse: () => ({ status: 401, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ error: { code: 'invalid_api_key', message: 'unknown key' } }) }),
    });
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'invalid_api_key');
    assert.equal(r.error?.exitCode, 3);
    assert.equal(r.error?.status, 401);
    assert.match(r.error?.message ?? '', /unknown key/);
    assert.equal(server.refused[0]?.headers.authorization, `Bearer ${KEY}`);
  });

  it('a 429 handshake keeps the code and Retry-After', async () => {
    const server = await serve(() => {}, {
      refuse: () => ({ status: 429, headers: { 'Retry-After': '3' }, body: '{"code":"too_many_concurrent_requests","message":"slow down"}' }),
    });
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'too_many_concurrent_requests');
    assert.equal(r.error?.exitCode, 5);
    assert.equal(r.error?.retryAfterSeconds, 3);
    assert.equal(r.error?.retriable, true);
  });

  it('a 401 with a plain-text body is still invalid_api_key', async () => {
    const server = await serve(() => {}, { refuse: () => ({ status: 401, body: 'nope' }) });
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'invalid_api_key');
  });

  it('an HTTP 200 instead of an upgrade is a protocol_error', async () => {
    const server = await serve(() => {}, { refuse: () => ({ status: 200, headers: { 'Content-Type': 'text/html' }, body: '<html></html>' }) });
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'protocol_error');
    assert.match(r.error?.message ?? '', /101/);
  });

  it('times out (code timeout, retriable, exit 6) when the server goes silent mid-stream, within the bound', async () => {
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(patternBytes(100)));
      // …and nothing more.
    }));
    const r = await run(options(server.url, { timeoutMs: 400 }));
    const failedAt = performance.now();
    assert.equal(r.error?.code, 'timeout');
    assert.equal(r.error?.exitCode, 6);
    assert.equal(r.error?.retriable, true);
    assert.ok(r.ms >= 380 && r.ms < 2000, `took ${r.ms} ms`);
    const closed = await server.connections[0]!.closed;
    assert.ok(closed.at - failedAt < 500, 'the socket was dropped, not left open');
  });

  it('resets the silence timer on every event: slow but steady servers are fine', async () => {
    const server = await serve(afterUpdate(async (c) => {
      for (let i = 0; i < 6; i++) {
        await delay(150);
        sendJson(c.ws, wsDelta(patternBytes(10, i)));
      }
      sendJson(c.ws, { type: 'tts.output.completed' });
    }));
    const r = await run(options(server.url, { timeoutMs: 400 }));
    assert.equal(r.error, undefined);
    assert.equal(r.chunks.length, 6);
  });

  it('times out when tts_session.created never comes', async () => {
    const server = await serve(() => {});
    const r = await run(options(server.url, { timeoutMs: 300 }));
    assert.equal(r.error?.code, 'timeout');
    assert.ok(r.ms < 2000);
    assert.equal(server.connections[0]!.frames.length, 0);
  });

  it('times out when the handshake is never answered', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const tcp: Server = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    try {
      const { port } = tcp.address() as AddressInfo;
      const r = await run(options(`ws://127.0.0.1:${port}`, { timeoutMs: 300 }));
      assert.equal(r.error?.code, 'timeout');
      assert.equal(r.error?.exitCode, 6);
      assert.ok(r.ms < 2000, `took ${r.ms} ms`);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => tcp.close(() => r()));
    }
  });

  it('a refused connection is connection_failed (exit 6)', async () => {
    const tcp = createServer();
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const { port } = tcp.address() as AddressInfo;
    await new Promise<void>((r) => tcp.close(() => r()));
    const r = await run(options(`ws://127.0.0.1:${port}`));
    assert.equal(r.error?.code, 'connection_failed');
    assert.equal(r.error?.exitCode, 6);
  });

  it('refuses ws:// to a non-loopback host before connecting (exit 2)', async () => {
    const r = await run(options('ws://192.0.2.1:9'));
    assert.equal(r.error?.code, 'insecure_transport');
    assert.equal(r.error?.exitCode, 2);
    assert.ok(r.ms < 500);
  });

  it('leaving the loop early closes the socket', async () => {
    const server = await serve(afterUpdate(async (c) => {
      for (let i = 0; i < 1000 && c.ws.readyState === c.ws.OPEN; i++) {
        sendJson(c.ws, wsDelta(patternBytes(100, i)));
        await delay(5);
      }
    }));
    let n = 0;
    for await (const _ of streamRealtime(options(server.url))) {
      if (++n === 3) break;
    }
    const t = performance.now();
    const closed = await server.connections[0]!.closed;
    assert.ok(closed.at - t < 500, 'the server saw the connection end promptly');
  });

  it('an abort ends the iterator with the signal reason at once and drops the socket', async () => {
    const server = await serve(afterUpdate(async (c) => {
      sendJson(c.ws, wsDelta(patternBytes(100)));
      // Then silence, so only the abort can end it.
    }));
    const controller = new AbortController();
    const reason = new TtsError('interrupted', 'interrupted');
    const chunks: AudioChunk[] = [];
    // Rejecting with `reason` (not the 10 s timeout's error) proves the abort stopped it.
    await assert.rejects(async () => {
      for await (const c of streamRealtime(options(server.url, { signal: controller.signal, timeoutMs: 10_000 }))) {
        chunks.push(c);
        setTimeout(() => controller.abort(reason), 50);
      }
    }, (e) => e === reason);
    assert.equal(chunks.length, 1);
    await server.connections[0]!.closed;
  });

  it('an already aborted signal throws before connecting', async () => {
    const server = await serve(() => {});
    const controller = new AbortController();
    controller.abort(new TtsError('interrupted', 'interrupted'));
    const r = await run(options(server.url, { signal: controller.signal }));
    assert.equal(r.error?.code, 'interrupted');
    assert.equal(server.connections.length, 0);
  });

  it('stops reading when the consumer lags, so the server cannot flush (backpressure), and loses nothing', async () => {
    const piece = patternBytes(48 * 1024, 11);
    const count = 600; // 28.8 MiB of audio, ~38 MiB of frames
    let lateBuffered = -1;
    const server = await serve(afterUpdate(async (c) => {
      for (let i = 0; i < count; i++) sendJson(c.ws, wsDelta(piece));
      sendJson(c.ws, { type: 'tts.output.completed' });
      await delay(500);
      lateBuffered = c.ws.bufferedAmount;
    }));
    const it = streamRealtime(options(server.url))[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(first.done, false);
    await delay(700); // the consumer is busy
    // Had the client kept reading, everything would sit in its memory by now and the server's
    // send buffer would be empty.
    assert.ok(lateBuffered > 10 * 1024 * 1024, `after 500 ms the server still holds only ${lateBuffered} bytes`);
    let n = 1;
    let bytes = first.value?.data.length ?? 0;
    for (;;) {
      const r = await it.next();
      if (r.done === true) break;
      assert.deepEqual(r.value.data, piece);
      n++;
      bytes += r.value.data.length;
    }
    assert.equal(n, count);
    assert.equal(bytes, count * piece.length);
  });

  it('a frame over the 16 MiB cap is a protocol_error', async () => {
    const server = await serve(afterUpdate((c) => sendJson(c.ws, wsDelta(Buffer.alloc(13 * 1024 * 1024)))));
    const r = await run(options(server.url));
    assert.equal(r.error?.code, 'protocol_error');
    assert.match(r.error?.message ?? '', /16 MiB/);
  });

  it('verbose lines show protocol detail but never the key or the text', async () => {
    const lines: string[] = [];
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(patternBytes(10)));
      sendJson(c.ws, { type: 'tts.output.completed' });
    }));
    const r = await run(options(server.url, { verbose: (l) => lines.push(l) }));
    assert.equal(r.error, undefined);
    const all = lines.join('\n');
    assert.match(all, /Bearer \*\*\*/);
    assert.match(all, /tts_session\.update/);
    assert.match(all, /ja_woman_1/);
    assert.ok(!all.includes(KEY));
    assert.ok(!all.includes('こんにちは'));
  });

  it('the verbose connect line names the endpoint without a user name or password in the base URL', async () => {
    const lines: string[] = [];
    const server = await serve(afterUpdate((c) => {
      sendJson(c.ws, wsDelta(patternBytes(10)));
      sendJson(c.ws, { type: 'tts.output.completed' });
    }));
    await run(options(server.url.replace('ws://', 'ws://user:PASSW0RD-SENTINEL@'), { verbose: (l) => lines.push(l) }));
    assert.ok(lines.some((l) => l.startsWith(`WebSocket ${server.url}`)), lines.join('\n'));
    assert.doesNotMatch(lines.join('\n'), /SENTINEL|user:/);
  });
});

describe('tts realtime against a service that never answers our close frame (docs/cli.md §4)', () => {
  it('the run’s end cuts the connection itself: the audio is whole, exit 0, and nothing waits for the answer', async () => {
    const audio = patternBytes(4800, 5);
    const server = await startCloseIgnoringServer(audio);
    try {
      const r = await runTtsInProcess(['realtime', '--no-cache', '-o', '-', 'Hello'], { env: { TTS_BASE_URL: 'http://127.0.0.1:9', TTS_WS_BASE_URL: server.url, TTS_API_KEY: KEY } });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout, audio);
      const c = server.connections[0]!;
      assert.equal(await c.closeFrame, 1000, 'the client closed the session normally');
      // Destroyed when the run ended (the target's close), not when the close grace (2 s) ran
      // out: the server sees the end within a few turns of the event loop after main returned.
      let ended: 'end' | 'reset' | undefined;
      void c.ended.then((how) => (ended = how));
      for (let turn = 0; turn < 1000 && ended === undefined; turn++) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(ended, 'end', 'the client ended the TCP connection as the run ended');
      assert.equal(c.writtenAfterClose, 0, 'the server never answered');
    } finally {
      await server.close();
    }
  });
});

