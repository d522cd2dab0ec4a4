/**
 * `tts serve` against clients that misbehave (docs/cli.md §5, docs/protocol.md §8): bodies over 64 KiB
 * are refused before more is buffered; headers or bodies dribbled byte by byte are cut off within
 * the server's bounds; WebSocket frames are capped at 1 MiB; a client that leaves mid-stream stops
 * its synthesis and frees its concurrency slot at once; the access log has one line per request
 * and never a key or a text; shutdown ends running streams with an `error` event (SSE) or an
 * error event and close 1001 (WebSocket, RFC 6455 §7.4.1 "going away") instead of hanging.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { MAX_BODY_BYTES } from '../../src/server/http-util.js';
import { MAX_CLIENT_FRAME_BYTES } from '../../src/server/realtime-route.js';
import { allEvents, errorBody, postSse, rawConnect, startService, waitFor, type TestService } from '../helpers/serve-http.js';
import { scriptedEngine, type FakeEngine } from '../helpers/fake-engine.js';
import { connect, refused, update } from '../helpers/serve-ws.js';

const KEY = 'hardening-key-0123456789';

/** The head of a POST to the SSE route, without the blank line that ends it. */
function head(extra: string[]): string {
  return ['POST /v1/tts/sse HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${KEY}`, 'Content-Type: application/json', ...extra].join('\r\n');
}

/** Writes `text` one byte every `everyMs` until the socket closes; returns a stopper. */
function dribble(socket: import('node:net').Socket, text: string, everyMs: number): () => void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) {
      clearInterval(timer);
      return;
    }
    socket.write(text[i % text.length]!);
    i++;
  }, everyMs);
  return () => clearInterval(timer);
}

describe('tts serve hardening: request bodies', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ apiKeys: [KEY], engine: scriptedEngine(), maxChars: 100_000 });
  });
  after(async () => {
    await svc.close();
  });

  it('refuses a declared Content-Length over 64 KiB with bad_request before the body is sent, and closes', async () => {
    const c = await rawConnect(svc.base);
    c.socket.write(`${head([`Content-Length: ${MAX_BODY_BYTES + 1}`])}\r\n\r\n`);
    await c.waitFor(/\r\n\r\n\{.*\}$/s);
    const text = c.received();
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.equal(errorBody(text.slice(text.indexOf('\r\n\r\n') + 4)).code, 'bad_request');
    await c.closed;
  });

  it('refuses a chunked body as soon as it passes 64 KiB, while the client is still sending', async () => {
    const c = await rawConnect(svc.base);
    c.socket.write(`${head(['Transfer-Encoding: chunked'])}\r\n\r\n`);
    const chunk = Buffer.alloc(8 * 1024, 'a');
    let sent = 0;
    // Never ends the body: a server that waited for all of it would never answer.
    const timer = setInterval(() => {
      if (c.socket.destroyed || sent > 16 * MAX_BODY_BYTES) return;
      c.socket.write(`${chunk.length.toString(16)}\r\n`);
      c.socket.write(chunk);
      c.socket.write('\r\n');
      sent += chunk.length;
    }, 5);
    try {
      const answered = await c.waitFor(/\r\n\r\n\{.*\}$/s).then(
        () => true,
        () => false,
      );
      assert.ok(sent < 4 * MAX_BODY_BYTES, `answered or closed only after ${sent} bytes`);
      // The refusal is sent, then the connection closed with the client's bytes still arriving:
      // the kernel answers those with a reset, which may discard the refusal before a slow
      // client read it. Then the close alone, early, is what shows the body was not waited for.
      if (!answered) return;
      const text = c.received();
      assert.match(text, /^HTTP\/1\.1 400 /);
      assert.equal(errorBody(text.slice(text.indexOf('\r\n\r\n') + 4)).code, 'bad_request');
      const closed = await Promise.race([c.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000))]);
      assert.ok(closed !== undefined, 'the connection is closed after the refusal');
    } finally {
      clearInterval(timer);
      c.socket.destroy();
    }
  });

  it('reads a body of exactly 64 KiB (then validates it), and refuses one byte more', async () => {
    const bodyOf = (bytes: number): string => {
      const prefix = '{"input":"';
      return `${prefix}${'a'.repeat(bytes - prefix.length - 2)}"}`;
    };
    assert.equal(bodyOf(MAX_BODY_BYTES).length, MAX_BODY_BYTES);
    const exact = await postSse(svc.base, bodyOf(MAX_BODY_BYTES), KEY);
    assert.equal(exact.status, 200, await exact.text());
    const over = await postSse(svc.base, bodyOf(MAX_BODY_BYTES + 1), KEY);
    assert.equal(over.status, 400);
    assert.equal(errorBody(await over.text()).code, 'bad_request');
  });
});

describe('tts serve hardening: slow clients', () => {
  it('cuts off a client dribbling its headers one byte every 500 ms within an injected 1 s headers timeout', async () => {
    const svc = await startService({ apiKeys: [KEY], engine: scriptedEngine(), headersTimeoutMs: 1000, requestTimeoutMs: 5000 });
    try {
      const c = await rawConnect(svc.base);
      const t0 = performance.now();
      const stop = dribble(c.socket, `${head(['X-Padding: '.padEnd(400, 'p')])}\r\n\r\n`, 500);
      const closed = await c.closed;
      stop();
      const ms = closed.at - t0;
      assert.ok(ms > 900 && ms < 2500, `cut off after ${ms.toFixed(0)} ms`);
      assert.match(closed.data, /^(HTTP\/1\.1 408 |$)/);
    } finally {
      await svc.close();
    }
  });

  it('cuts off a header dribbler within the default bound of tts serve (10 s headers timeout, checked every second)', async () => {
    const svc = await startService({ apiKeys: [KEY], engine: scriptedEngine() });
    try {
      const c = await rawConnect(svc.base);
      const t0 = performance.now();
      const stop = dribble(c.socket, `${head(['X-Padding: '.padEnd(400, 'p')])}\r\n\r\n`, 500);
      const closed = await Promise.race([c.closed, new Promise<{ at: number; data: string }>((r) => setTimeout(() => r({ at: Number.NaN, data: 'still open' }), 14_000))]);
      stop();
      c.socket.destroy();
      const ms = closed.at - t0;
      assert.ok(ms > 9500 && ms < 12_500, `cut off after ${ms.toFixed(0)} ms (${closed.data})`);
    } finally {
      await svc.close();
    }
  });

  it('cuts off a client dribbling its body within the injected request timeout', async () => {
    const svc = await startService({ apiKeys: [KEY], engine: scriptedEngine(), headersTimeoutMs: 500, requestTimeoutMs: 1500 });
    try {
      const c = await rawConnect(svc.base);
      const t0 = performance.now();
      c.socket.write(`${head(['Content-Length: 200'])}\r\n\r\n{"input":"`);
      const stop = dribble(c.socket, 'a', 200);
      const closed = await c.closed;
      stop();
      const ms = closed.at - t0;
      assert.ok(ms > 1400 && ms < 3000, `cut off after ${ms.toFixed(0)} ms`);
      assert.match(closed.data, /^(HTTP\/1\.1 408 |$)/);
      assert.ok(await waitFor(() => svc.log.length === 1), 'the request is logged once');
      // The service never answered it: the log must not claim a status it did not send.
      assert.match(svc.log[0]!, / key#1 POST \/v1\/tts\/sse - \d+ms$/);
    } finally {
      await svc.close();
    }
  });

  it('does not cut off an SSE response that outlasts the request timeout (the bound is on the request only)', async () => {
    const svc = await startService({ apiKeys: [KEY], engine: scriptedEngine(2500), headersTimeoutMs: 500, requestTimeoutMs: 1000 });
    try {
      const t0 = performance.now();
      const res = await postSse(svc.base, { input: 'slow but steady' }, KEY);
      const events = await allEvents(res);
      assert.ok(performance.now() - t0 > 2000);
      assert.equal(events.at(-1)?.event, 'done');
      assert.equal(events.length, 126);
    } finally {
      await svc.close();
    }
  });
});

describe('tts serve hardening: WebSocket frames', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ apiKeys: [KEY], engine: scriptedEngine(), maxChars: 5000 });
  });
  after(async () => {
    await svc.close();
  });

  it('accepts a frame of exactly 1 MiB (and refuses its text as too long), closes 1009 on one byte more', async () => {
    const frameOf = (bytes: number): string => {
      const shell = update({ input_text: '' });
      return update({ input_text: 'a'.repeat(bytes - shell.length) });
    };
    assert.equal(frameOf(MAX_CLIENT_FRAME_BYTES).length, 1024 * 1024);
    const s = await connect(svc.wsUrl, KEY);
    await s.next('tts_session.created');
    s.ws.send(frameOf(MAX_CLIENT_FRAME_BYTES));
    assert.equal((await s.closed).code, 1008);
    assert.equal((s.events.at(-1)!['error'] as { code: string }).code, 'max_character_length_exceeded');
    const big = await connect(svc.wsUrl, KEY);
    await big.next('tts_session.created');
    big.ws.send(frameOf(MAX_CLIENT_FRAME_BYTES + 1));
    assert.equal((await big.closed).code, 1009);
  });
});

describe('tts serve hardening: a client that leaves mid-stream (real engine)', () => {
  let engine: EspeakEngine;
  let svc: TestService;
  const long = 'This sentence is part of a very long text that keeps the engine busy for many seconds. '.repeat(40);
  before(async () => {
    engine = createEngine({ workers: 1 });
    await engine.warmUp();
    svc = await startService({ apiKeys: [KEY], engine, maxConcurrent: 1, maxChars: 5000 });
  });
  after(async () => {
    await svc.close();
    await engine.close();
  });

  it('SSE: stops the synthesis at once and frees the only slot; the next request is admitted and streams promptly', async () => {
    const before = engine.stats();
    const res = await postSse(svc.base, { input: long, voice: 'en-man-1' }, KEY);
    assert.equal(res.status, 200);
    for await (const e of res.events) {
      assert.equal(e.event, 'delta');
      break;
    }
    res.destroy();
    const t0 = performance.now();
    const next = await postSse(svc.base, { input: 'Next.', voice: 'en-man-1' }, KEY);
    assert.equal(next.status, 200);
    const events = await allEvents(next);
    const firstDelta = events.find((e) => e.event === 'delta');
    assert.ok(firstDelta !== undefined && firstDelta.at - t0 < 1500, `first delta after ${firstDelta === undefined ? '∞' : (firstDelta.at - t0).toFixed(0)} ms`);
    assert.equal(events.at(-1)?.event, 'done');
    const after = engine.stats();
    assert.equal(after.aborted, before.aborted + 1, 'the long job was aborted, not finished');
    assert.equal(after.completed, before.completed + 1);
    assert.equal(after.busy, 0);
    assert.ok(svc.log.some((l) => / POST \/v1\/tts\/sse 200 /.test(l)));
  });

  it('WebSocket: a client that drops mid-stream frees the slot and the engine too', async () => {
    const before = engine.stats();
    const s = await connect(svc.wsUrl, KEY);
    await s.next('tts_session.created');
    s.ws.send(update({ input_text: long, preset_voice: 'en_woman_1' }));
    await s.next('tts.output_audio.delta');
    // While the session runs, its key has no slot left on either channel.
    assert.equal((await refused(svc.wsUrl, KEY)).status, 429);
    s.ws.terminate();
    await s.closed;
    const t0 = performance.now();
    const next = await postSse(svc.base, { input: 'Next.', voice: 'en-man-1' }, KEY);
    assert.equal(next.status, 200);
    const events = await allEvents(next);
    assert.ok(events[0]!.at - t0 < 1500, `first delta after ${(events[0]!.at - t0).toFixed(0)} ms`);
    assert.equal(engine.stats().aborted, before.aborted + 1);
  });
});

describe('tts serve hardening: the access log', () => {
  it('has one line per request and never a key or a text', async () => {
    const secretKey = 'sk-SENTINEL-KEY-7f3a9c0e2b';
    const wrongKey = 'sk-WRONG-SENTINEL-KEY-55d1';
    const secretText = 'SENTINELTEXT secret words';
    const engine: FakeEngine = scriptedEngine();
    const svc = await startService({ apiKeys: [secretKey], engine, maxChars: 100 });
    try {
      let requests = 0;
      const ok = await postSse(svc.base, { input: secretText, voice: 'en-man-1' }, secretKey);
      await allEvents(ok);
      requests++;
      await (await postSse(svc.base, { input: secretText }, wrongKey)).text();
      requests++;
      await (await postSse(svc.base, { input: secretText, voice: `voice-${secretText}` }, secretKey)).text();
      requests++;
      await (await postSse(svc.base, { input: secretText }, secretKey, { 'x-extra': secretKey })).text();
      requests++;
      const s = await connect(svc.wsUrl, secretKey);
      await s.next('tts_session.created');
      s.ws.send(update({ input_text: secretText }));
      assert.equal((await s.closed).code, 1000);
      requests++;
      await refused(svc.wsUrl, wrongKey);
      requests++;
      // The session's line is written when it closes on the server too.
      assert.ok(await waitFor(() => svc.log.length >= requests), `${svc.log.length} lines for ${requests} requests`);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(svc.log.length, requests, svc.log.join('\n'));
      for (const line of svc.log) {
        assert.doesNotMatch(line, /SENTINEL/, line);
        assert.doesNotMatch(line, /\n/);
      }
      assert.match(svc.log[0]!, /POST \/v1\/tts\/sse 200 /);
      assert.match(svc.log[1]!, /POST \/v1\/tts\/sse 401 /);
      assert.match(svc.log[2]!, /POST \/v1\/tts\/sse 400 /);
      assert.ok(svc.log.some((l) => /GET \/v1\/realtime_tts 101 /.test(l)));
      assert.ok(svc.log.some((l) => /GET \/v1\/realtime_tts 401 /.test(l)));
    } finally {
      await svc.close();
    }
  });
});

describe('tts serve hardening: shutdown', () => {
  it('ends a running SSE stream with an error event and a WebSocket session with an error event and close 1001, promptly', async () => {
    const engine = scriptedEngine(60_000);
    const svc = await startService({ apiKeys: [KEY], engine });
    const res = await postSse(svc.base, { input: 'slow stream' }, KEY);
    const sseEvents = allEvents(res);
    const s = await connect(svc.wsUrl, KEY);
    await s.next('tts_session.created');
    s.ws.send(update({ input_text: 'slow session' }));
    await s.next('tts.output_audio.delta');
    const waiting = await connect(svc.wsUrl, KEY);
    await waiting.next('tts_session.created');
    await waitFor(() => engine.records.length === 2 && engine.records[0]!.yielded > 0);

    const t0 = performance.now();
    await svc.close();
    const ms = performance.now() - t0;

    const events = await sseEvents;
    const last = events.at(-1)!;
    assert.equal(last.event, 'error');
    assert.equal((last.data['error'] as { code: string }).code, 'server_error');
    assert.ok(events.slice(0, -1).every((e) => e.event === 'delta'));
    for (const session of [s, waiting]) {
      const closed = await session.closed;
      assert.equal(closed.code, 1001, `closed ${closed.code} ${closed.reason}`);
      const lastEvent = session.events.at(-1)!;
      assert.equal(lastEvent.type, 'error');
      assert.equal((lastEvent['error'] as { code: string }).code, 'server_error');
    }
    assert.ok(ms < 1500, `closeService took ${ms.toFixed(0)} ms`);
    assert.ok(await waitFor(() => engine.running() === 0), 'every synthesis stopped');
    assert.ok(engine.records.every((j) => j.aborted));
  });

  it('ends a stream on a keep-alive connection (as fetch and the tts client use) without waiting for the grace period', async () => {
    const engine = scriptedEngine(60_000);
    const svc = await startService({ apiKeys: [KEY], engine });
    const res = await fetch(`${svc.base}/v1/tts/sse`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: '{"input":"slow stream"}' });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const t0 = performance.now();
    await svc.close();
    const ms = performance.now() - t0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    assert.match(text, /event: error\ndata: \{"type":"error","error":\{"code":"server_error","message":"[^"]+"\}\}\n\n$/);
    assert.ok(ms < 1000, `closeService took ${ms.toFixed(0)} ms`);
  });

  it('still ends within the grace period when a WebSocket client never answers the close', async () => {
    const engine = scriptedEngine(60_000);
    const svc = await startService({ apiKeys: [KEY], engine });
    const s = await connect(svc.wsUrl, KEY);
    await s.next('tts_session.created');
    s.ws.send(update({ input_text: 'slow session' }));
    await s.next('tts.output_audio.delta');
    // A client that stops reading and never sends its close frame.
    s.ws.pause();
    s.ws.close = () => {};
    const t0 = performance.now();
    await svc.close();
    const ms = performance.now() - t0;
    assert.ok(ms < 4000, `closeService took ${ms.toFixed(0)} ms`);
    assert.ok(await waitFor(() => engine.running() === 0));
    s.ws.terminate();
  });
});
