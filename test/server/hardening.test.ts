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
import { bodyCapFor } from '../../src/server/http-util.js';
import { MAX_CLIENT_FRAME_BYTES } from '../../src/server/realtime-route.js';
import { allEvents, errorBody, postSse, rawConnect, startService, waitFor, type TestService } from '../helpers/serve-http.js';
import { scriptedEngine, type FakeEngine } from '../helpers/fake-engine.js';
import { connect, refused, update } from '../helpers/serve-ws.js';

/** The service's character limit, and the largest body it reads for it. */
const MAX_CHARS = 100_000;
const BODY_CAP = bodyCapFor(MAX_CHARS);
const KEY = 'hardening-key-0123456789';

/** The head of a POST to the SSE route, without the blank line that ends it. */
function head(extra: string[]): string {
  return ['POST /v1/tts/sse HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${KEY}`, 'Content-Type: application/json', ...extra].join('\r\n');
}

/** Writes `text` one byte every `everyMs` (calling `onByte` after each) until the socket closes; returns a stopper. */
function dribble(socket: import('node:net').Socket, text: string, everyMs: number, onByte: () => void = () => {}): () => void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) {
      clearInterval(timer);
      return;
    }
    socket.write(text[i % text.length]!);
    onByte();
    i++;
  }, everyMs);
  return () => clearInterval(timer);
}

/**
 * Watches `svc`'s server for closeService's fallback (closeAllConnections, 2 s after the streams
 * were told to end); the returned function says whether it was used.
 */
function forcedClose(svc: TestService): () => boolean {
  let forced = false;
  const all = svc.server.closeAllConnections.bind(svc.server);
  svc.server.closeAllConnections = () => {
    forced = true;
    all();
  };
  return () => forced;
}

describe('tts serve hardening: request bodies', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ apiKeys: [KEY], engine: scriptedEngine(), maxChars: MAX_CHARS });
  });
  after(async () => {
    await svc.close();
  });

  it('refuses a declared Content-Length over what its character limit needs with max_character_length_exceeded before the body is sent, and closes', async () => {
    const c = await rawConnect(svc.base);
    c.socket.write(`${head([`Content-Length: ${BODY_CAP + 1}`])}\r\n\r\n`);
    await c.waitFor(/\r\n\r\n\{.*\}$/s);
    const text = c.received();
    assert.match(text, /^HTTP\/1\.1 422 /);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.equal(errorBody(text.slice(text.indexOf('\r\n\r\n') + 4)).code, 'max_character_length_exceeded');
    await c.closed;
  });

  it('refuses a chunked body as soon as it passes the cap, while the client is still sending', { timeout: 20_000 }, async (t) => {
    const c = await rawConnect(svc.base);
    c.socket.write(`${head(['Transfer-Encoding: chunked'])}\r\n\r\n`);
    const chunk = Buffer.alloc(8 * 1024, 'a');
    let sent = 0;
    // Never ends the body: a server that waited for all of it would never answer.
    const timer = setInterval(() => {
      if (c.socket.destroyed || sent > 16 * BODY_CAP) return;
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
      assert.ok(sent < 4 * BODY_CAP, `answered or closed only after ${sent} bytes`);
      // The refusal is sent, then the connection closed with the client's bytes still arriving:
      // the kernel answers those with a reset, which may discard the refusal before a slow
      // client read it. Then the close alone, early (above), shows the body was not waited for.
      if (answered) {
        const text = c.received();
        assert.match(text, /^HTTP\/1\.1 422 /);
        assert.equal(errorBody(text.slice(text.indexOf('\r\n\r\n') + 4)).code, 'max_character_length_exceeded');
      } else {
        t.diagnostic('a reset discarded the refusal before it was read; the early close is what was checked');
      }
      // Closed after the refusal either way (the test's timeout bounds the wait).
      await c.closed;
    } finally {
      clearInterval(timer);
      c.socket.destroy();
    }
  });

  it('reads a body of exactly the cap (every character escaped as two \\uXXXX, then validates it), and refuses one byte more', async () => {
    // MAX_CHARS characters of U+2000B, each written as its escaped surrogate pair (12 bytes), padded with JSON white space.
    const bodyOf = (bytes: number): string => {
      const json = `{"input":"${'\\ud840\\udc0b'.repeat(MAX_CHARS)}"}`;
      return json + ' '.repeat(bytes - json.length);
    };
    assert.equal(bodyOf(BODY_CAP).length, BODY_CAP);
    const exact = await postSse(svc.base, bodyOf(BODY_CAP), KEY);
    assert.equal(exact.status, 200, await exact.text());
    const over = await postSse(svc.base, bodyOf(BODY_CAP + 1), KEY);
    assert.equal(over.status, 422);
    assert.equal(errorBody(await over.text()).code, 'max_character_length_exceeded');
  });
});

describe('tts serve hardening: slow clients', () => {
  it('cuts off a client dribbling its headers one byte every 500 ms within an injected 1 s headers timeout', async () => {
    const svc = await startService({ apiKeys: [KEY], engine: scriptedEngine(), headersTimeoutMs: 1000, requestTimeoutMs: 5000 });
    try {
      const c = await rawConnect(svc.base);
      const t0 = performance.now();
      const header = `${head(['X-Padding: '.padEnd(400, 'p')])}\r\n\r\n`;
      let sent = 0;
      const stop = dribble(c.socket, header, 500, () => sent++);
      const closed = await c.closed;
      stop();
      // Cut off long before the head was complete (one byte every 500 ms: ~440 s), and never
      // before the timeout (a timer does not fire early); how soon after is the bench's.
      assert.ok(sent < header.length / 10, `cut off after ${sent} of ${header.length} bytes`);
      assert.ok(closed.at - t0 >= 1000 - 50, `cut off after ${(closed.at - t0).toFixed(0)} ms, before the 1 s timeout`);
      assert.match(closed.data, /^(HTTP\/1\.1 408 |$)/);
    } finally {
      await svc.close();
    }
  });

  it('the default bounds of tts serve: 10 s for the headers, 30 s for the request, checked every second', async () => {
    // The cut-off itself is shown above with an injected timeout; waiting 10 s here would only
    // show that Node keeps its own settings.
    const svc = await startService({ apiKeys: [KEY], engine: scriptedEngine() });
    try {
      assert.equal(svc.server.headersTimeout, 10_000);
      assert.equal(svc.server.requestTimeout, 30_000);
      // Node's checking interval is not exposed; the service sets it from the headers timeout.
      const c = await rawConnect(svc.base);
      c.socket.destroy();
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
      let sent = 0;
      const stop = dribble(c.socket, 'a', 200, () => sent++);
      const closed = await c.closed;
      stop();
      // Cut off long before the 200-byte body was complete (one byte every 200 ms: 40 s), and
      // not before the request timeout.
      assert.ok(sent < 100, `cut off after ${sent} bytes of the body`);
      assert.ok(closed.at - t0 >= 1500 - 50, `cut off after ${(closed.at - t0).toFixed(0)} ms, before the 1.5 s timeout`);
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
      // The premise: the response lasted longer than the request timeout (a lower bound on an
      // injected delay, never flaky).
      assert.ok(performance.now() - t0 > 1000);
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

  it('SSE: stops the synthesis and frees the only slot; the next request is admitted and streams (the long job aborted, not finished)', async (t) => {
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
    t.diagnostic(`next request's first delta after ${firstDelta === undefined ? '∞' : (firstDelta.at - t0).toFixed(0)} ms`);
    assert.ok(firstDelta !== undefined);
    assert.equal(events.at(-1)?.event, 'done');
    const after = engine.stats();
    assert.equal(after.aborted, before.aborted + 1, 'the long job was aborted, not finished');
    assert.equal(after.completed, before.completed + 1);
    assert.equal(after.busy, 0);
    assert.ok(svc.log.some((l) => / POST \/v1\/tts\/sse 200 /.test(l)));
  });

  it('WebSocket: a client that drops mid-stream frees the slot and the engine too', async (t) => {
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
    t.diagnostic(`next request's first delta after ${(events[0]!.at - t0).toFixed(0)} ms`);
    assert.equal(events.at(-1)?.event, 'done');
    assert.equal(engine.stats().aborted, before.aborted + 1, 'the dropped session was aborted, not finished');
    assert.equal(engine.stats().completed, before.completed + 1);
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
      // A last request on a new connection: its line comes after any late one of those above.
      await (await fetch(`${svc.base}/barrier`)).arrayBuffer();
      assert.ok(await waitFor(() => svc.log.some((l) => / GET \/barrier /.test(l))));
      assert.equal(svc.log.length, requests + 1, svc.log.join('\n'));
      assert.match(svc.log.at(-1)!, / GET \/barrier /);
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
  it('ends a running SSE stream with an error event and a WebSocket session with an error event and close 1001, without the fallback', { timeout: 20_000 }, async () => {
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

    const forced = forcedClose(svc);
    await svc.close();

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
    assert.equal(forced(), false, 'the connections had to be cut after 2 s: the streams did not end by themselves');
    assert.ok(await waitFor(() => engine.running() === 0), 'every synthesis stopped');
    assert.ok(engine.records.every((j) => j.aborted));
  });

  it('ends a stream on a keep-alive connection (as fetch and the tts client use) without waiting for the fallback', { timeout: 20_000 }, async () => {
    const engine = scriptedEngine(60_000);
    const svc = await startService({ apiKeys: [KEY], engine });
    const res = await fetch(`${svc.base}/v1/tts/sse`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: '{"input":"slow stream"}' });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const forced = forcedClose(svc);
    await svc.close();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    assert.match(text, /event: error\ndata: \{"type":"error","error":\{"code":"server_error","message":"[^"]+"\}\}\n\n$/);
    assert.equal(forced(), false, 'the keep-alive connection was cut only by the 2 s fallback');
  });

  it('still ends (the connections cut after 2 s) when a WebSocket client never answers the close', { timeout: 20_000 }, async () => {
    const engine = scriptedEngine(60_000);
    const svc = await startService({ apiKeys: [KEY], engine });
    const s = await connect(svc.wsUrl, KEY);
    await s.next('tts_session.created');
    s.ws.send(update({ input_text: 'slow session' }));
    await s.next('tts.output_audio.delta');
    // A client that stops reading and never sends its close frame.
    s.ws.pause();
    s.ws.close = () => {};
    const forced = forcedClose(svc);
    await svc.close();
    assert.equal(forced(), true, 'a client that never answers the close is cut by the fallback');
    assert.ok(await waitFor(() => engine.running() === 0));
    s.ws.terminate();
  });
});
