/**
 * What the built-in service refuses that it used to accept (docs/protocol.md §7 and its *Ours:*
 * notes; issue 9 §11), on both channels alike: a body that is not UTF-8 is 400 `bad_request`
 * (never spoken with U+FFFD); two `Authorization` headers are 400 `bad_request` (never "the first
 * wins"); a text with nothing to speak — punctuation, emoji, zero-width or control characters
 * only — is 422 `text_string_required` (an error event then close 1008 on the WebSocket), not
 * 200 with no audio. WebSocket access-log lines begin, like SSE lines, with the remote address
 * and the key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorBody, postSse, rawConnect, startService, waitFor, type TestService } from '../helpers/serve-http.js';
import { scriptedEngine, type FakeEngine } from '../helpers/fake-engine.js';
import { connect, update } from '../helpers/serve-ws.js';

const KEY = 'refusals-key-0123456789';
const OTHER = 'refusals-other-0123456789';

/** Sends `head` (lines without the final blank line) and `body` on a raw socket; returns the status and body. */
async function rawRequest(base: string, head: string[], body: string | Buffer = ''): Promise<{ status: number; text: string }> {
  const c = await rawConnect(base);
  c.socket.write(`${head.join('\r\n')}\r\n\r\n`);
  c.socket.write(body);
  await c.waitFor(/^HTTP\/1\.1 \d{3}[^]*\r\n\r\n\{[^]*\}$/);
  const data = c.received();
  c.socket.destroy();
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)![1]), text: data.slice(data.indexOf('\r\n\r\n') + 4) };
}

describe('the built-in service refuses what it cannot serve faithfully', () => {
  let engine: FakeEngine;
  let svc: TestService;
  before(async () => {
    engine = scriptedEngine();
    svc = await startService({ apiKeys: [KEY, OTHER], engine, maxChars: 100 });
  });
  after(() => svc.close());

  it('a body that is not valid UTF-8 is 400 bad_request, and nothing is synthesized', async () => {
    const jobs = engine.records.length;
    // "h\xffi": JSON.parse of the U+FFFD-decoded text would have succeeded.
    const body = Buffer.concat([Buffer.from('{"input":"h'), Buffer.from([0xff]), Buffer.from('i"}')]);
    const r = await rawRequest(svc.base, ['POST /v1/tts/sse HTTP/1.1', 'Host: x', `Authorization: Bearer ${KEY}`, 'Content-Type: application/json', `Content-Length: ${body.length}`], body);
    assert.equal(r.status, 400);
    const e = errorBody(r.text);
    assert.equal(e.code, 'bad_request');
    assert.match(e.message, /UTF-8/);
    assert.equal(engine.records.length, jobs);
  });

  it('two Authorization headers are 400 bad_request on SSE and on the WebSocket handshake, whatever their keys', async () => {
    for (const second of [KEY, OTHER, 'not-a-key']) {
      const body = '{"input":"hello"}';
      const sse = await rawRequest(svc.base, [
        'POST /v1/tts/sse HTTP/1.1',
        'Host: x',
        `Authorization: Bearer ${KEY}`,
        `Authorization: Bearer ${second}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
      ], body);
      assert.equal(sse.status, 400, second);
      assert.equal(errorBody(sse.text).code, 'bad_request');
      assert.match(errorBody(sse.text).message, /Authorization/);
      const ws = await rawRequest(svc.base, [
        'GET /v1/realtime_tts HTTP/1.1',
        'Host: x',
        'Upgrade: websocket',
        'Connection: Upgrade',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version: 13',
        `Authorization: Bearer ${second}`,
        `Authorization: Bearer ${KEY}`,
      ]);
      assert.equal(ws.status, 400, second);
      assert.equal(errorBody(ws.text).code, 'bad_request');
    }
  });

  for (const [what, text] of [
    ['punctuation', '...!?。、「」'],
    ['emoji', '😀👍🏽🇯🇵❤️'],
    ['zero-width characters', '\u200b\u200c\u200d\u2060\ufeff'],
    ['control characters', '\u0001\u0007\u001b\u007f\u0085\t\r\n'],
  ] as const) {
    it(`a text of only ${what} is 422 text_string_required on SSE and an error event + close 1008 on the WebSocket`, async () => {
      const jobs = engine.records.length;
      const res = await postSse(svc.base, { input: text }, KEY);
      assert.equal(res.status, 422);
      assert.equal(errorBody(await res.text()).code, 'text_string_required');
      const s = await connect(svc.wsUrl, KEY);
      await s.next('tts_session.created');
      s.ws.send(update({ input_text: text }));
      assert.equal((await s.closed).code, 1008);
      assert.equal((s.events.at(-1)!['error'] as { code: string }).code, 'text_string_required');
      assert.equal(engine.records.length, jobs, 'nothing reached the engine');
    });
  }

  it('a text with one speakable character among them is served', async () => {
    const res = await postSse(svc.base, { input: '😀 a 😀' }, KEY);
    assert.equal(res.status, 200);
    await res.text();
  });

  it('WebSocket access-log lines carry the remote address and the key, like SSE lines', async () => {
    const from = svc.log.length;
    const s = await connect(svc.wsUrl, OTHER);
    s.ws.send(update({ input_text: 'hello' }));
    assert.equal((await s.closed).code, 1000);
    const refusedAt = svc.log.length;
    const h = await rawRequest(svc.base, ['GET /v1/realtime_tts HTTP/1.1', 'Host: x', 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13']);
    assert.equal(h.status, 401);
    assert.ok(await waitFor(() => svc.log.length >= from + 2), svc.log.join('\n'));
    const lines = svc.log.slice(from);
    assert.ok(lines.some((l) => /^127\.0\.0\.1 key#2 GET \/v1\/realtime_tts 101 close=1000 \d+ms$/.test(l)), lines.join('\n'));
    assert.ok(svc.log.slice(refusedAt).some((l) => /^127\.0\.0\.1 - GET \/v1\/realtime_tts 401 \d+ms$/.test(l)), lines.join('\n'));
  });
});
