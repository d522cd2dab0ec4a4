/**
 * Every error code of docs/protocol.md §7, produced by `tts serve`'s service on each channel
 * (docs/cli.md §4): on SSE the HTTP status and the body `{"error":{"code","message"}}`; on the
 * WebSocket a refused handshake (status + JSON body) for the key, rate and concurrency, an
 * `error` event then close 1008 for everything an update can get wrong, quota included. The
 * per-key limits of docs/protocol.md §8 are checked with a fake clock: exact Retry-After and the IETF
 * draft RateLimit / RateLimit-Policy headers, concurrency counted across both channels, and a
 * character quota spent by both.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { SERVICE_ERROR_CODES } from '../../src/errors.js';
import { allEvents, audioOf, errorBody, postSse, startService, waitFor, type TestService } from '../helpers/serve-http.js';
import { scriptedEngine, type FakeEngine } from '../helpers/fake-engine.js';
import { connect, handshake, refused, update, type WsSession } from '../helpers/serve-ws.js';

/** The statuses docs/cli.md §4 decides, written out here so a wrong table in src/ fails. */
const STATUS: Record<string, number> = {
  invalid_api_key: 401,
  rate_limit_exceeded: 429,
  too_many_concurrent_requests: 429,
  quota_exceeded: 402,
  invalid_parameters: 400,
  bad_request: 400,
  text_string_required: 422,
  max_character_length_exceeded: 422,
  voice_not_found: 400,
  audio_format_not_found: 400,
  language_not_found: 400,
};

/** Codes each channel produced in this file; the last test checks that all of §7 is there. */
const seen = { sse: new Set<string>(), ws: new Set<string>() };

/** Sends an SSE request that must be refused with `code`; returns the response headers. */
async function expectSseRefusal(svc: TestService, key: string | undefined, body: unknown, code: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await postSse(svc.base, body, key, headers);
  const text = await res.text();
  assert.equal(res.status, STATUS[code], `${code}: ${text}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(errorBody(text).code, code);
  seen.sse.add(code);
  return res.headers;
}

/** Opens a handshake that must be refused with `code`; returns the response headers. */
async function expectWsHandshakeRefusal(svc: TestService, key: string | undefined, code: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const r = await refused(svc.wsUrl, key, headers);
  assert.equal(r.status, STATUS[code], `${code}: ${r.body}`);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.equal(errorBody(r.body).code, code);
  seen.ws.add(code);
  return r.headers;
}

/** Sends one update (or raw frame) that must be answered by an error event `code`, then close 1008. */
async function expectWsUpdateRefusal(svc: TestService, key: string, frame: string, code: string): Promise<void> {
  const s = await connect(svc.wsUrl, key);
  await s.next('tts_session.created');
  s.ws.send(frame);
  const closed = await s.closed;
  assert.equal(closed.code, 1008, `${code}: closed ${closed.code}`);
  const last = s.events.at(-1)!;
  assert.equal(last.type, 'error');
  assert.deepEqual(Object.keys(last).sort(), ['error', 'type']);
  assert.equal(errorBody(JSON.stringify({ error: last['error'] })).code, code);
  assert.ok(!s.events.some((e) => e.type === 'tts.output_audio.delta'), 'no audio after a refusal');
  seen.ws.add(code);
}

/** Runs a WebSocket session to completion; returns its audio. */
async function wsSynthesize(s: WsSession, text: string): Promise<Buffer> {
  await s.next('tts_session.created');
  s.ws.send(update({ input_text: text }));
  const closed = await s.closed;
  assert.equal(closed.code, 1000, JSON.stringify(s.events.at(-1)));
  assert.equal(s.events.at(-1)?.type, 'tts.output.completed');
  return Buffer.concat(s.events.filter((e) => e.type === 'tts.output_audio.delta').map((e) => Buffer.from(String(e['delta']), 'base64')));
}

describe('tts serve: every error code on both channels (docs/protocol.md §7)', () => {
  let engine: FakeEngine;
  let svc: TestService;
  // One key per case, so the limits of one case never leak into another.
  let n = 0;
  const freshKey = (): string => `key-${++n}-0123456789`;
  const keys = Array.from({ length: 40 }, (_, i) => `key-${i + 1}-0123456789`);
  before(async () => {
    engine = scriptedEngine();
    svc = await startService({ apiKeys: keys, engine, maxChars: 40, maxConcurrent: 1, quotaChars: 100, rateLimit: { limit: 1000, windowSeconds: 60 } });
  });
  after(async () => {
    await svc.close();
  });

  it('invalid_api_key: a missing, malformed or unknown key is 401 on SSE and on the handshake', async () => {
    const h = await expectSseRefusal(svc, undefined, { input: 'hi' }, 'invalid_api_key');
    assert.equal(h['www-authenticate'], 'Bearer');
    for (const authorization of ['Basic a2V5LTEtMDEyMzQ1Njc4OQ==', 'Bearer', 'Bearer ', 'Bearer  two words', 'key-1-0123456789', 'Token key-1-0123456789']) {
      await expectSseRefusal(svc, undefined, { input: 'hi' }, 'invalid_api_key', { authorization });
      await expectWsHandshakeRefusal(svc, undefined, 'invalid_api_key', { authorization });
    }
    // A prefix, an extension and a case change of a real key are other keys.
    for (const wrong of ['key-1-012345678', 'key-1-01234567890', 'KEY-1-0123456789', 'nope']) {
      await expectSseRefusal(svc, wrong, { input: 'hi' }, 'invalid_api_key');
      await expectWsHandshakeRefusal(svc, wrong, 'invalid_api_key');
    }
    await expectWsHandshakeRefusal(svc, undefined, 'invalid_api_key');
    assert.equal(engine.records.length, 0);
  });

  it('invalid_api_key, never 500: any Authorization header a client can send is 401 or accepted', async () => {
    // Header values node:http lets a client send: tab, visible ASCII, space and obs-text (0x80–0xFF).
    const headerChar = fc.oneof(fc.constantFrom('\t', ' ', 'B', 'e', 'a', 'r', 'Bearer '), fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)));
    const value = fc.array(headerChar, { maxLength: 60 }).map((a) => a.join('').trim());
    await fc.assert(
      fc.asyncProperty(value, async (authorization) => {
        const status = await new Promise<number>((resolve, reject) => {
          const req = request(`${svc.base}/v1/tts/sse`, { method: 'POST', agent: false, headers: { authorization, 'content-type': 'application/json' } });
          req.on('error', reject);
          req.on('response', (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.end('{"input":"hi"}');
        });
        assert.equal(status, 401, `Authorization: ${JSON.stringify(authorization)}`);
      }),
      { numRuns: 150 },
    );
    await fc.assert(
      fc.asyncProperty(value, async (authorization) => {
        const r = await refused(svc.wsUrl, undefined, { authorization });
        assert.equal(r.status, 401, `Authorization: ${JSON.stringify(authorization)}`);
      }),
      { numRuns: 40 },
    );
  });

  it('too_many_concurrent_requests: one slot per key, counted across SSE and the WebSocket', async () => {
    const key = freshKey();
    const stream = await postSse(svc.base, { input: 'slow stream' }, key);
    assert.equal(stream.status, 200);
    const events = stream.events[Symbol.asyncIterator]();
    assert.equal((await events.next()).value?.event, 'delta');
    const h = await expectSseRefusal(svc, key, { input: 'hi' }, 'too_many_concurrent_requests');
    assert.equal(h['retry-after'], '1');
    const wh = await expectWsHandshakeRefusal(svc, key, 'too_many_concurrent_requests');
    assert.equal(wh['retry-after'], '1');
    // Another key is not affected.
    assert.equal((await postSse(svc.base, { input: 'hi' }, freshKey())).status, 200);
    stream.destroy();
    assert.ok(await waitFor(() => engine.running() === 0), 'the slow job stopped when its client left');
    // The slot is free again: a WebSocket session takes it, and then SSE is refused.
    const s = await connect(svc.wsUrl, key);
    await s.next('tts_session.created');
    s.ws.send(update({ input_text: 'slow session' }));
    await s.next('tts.output_audio.delta');
    await expectSseRefusal(svc, key, { input: 'hi' }, 'too_many_concurrent_requests');
    s.ws.terminate();
    await s.closed;
    assert.ok(await waitFor(() => engine.running() === 0));
    const ok = await postSse(svc.base, { input: 'hi' }, key);
    assert.equal(ok.status, 200);
    assert.equal((await allEvents(ok)).at(-1)?.event, 'done');
  });

  it('quota_exceeded: 402 on SSE, an error event and close 1008 on the WebSocket; one allowance for both', async () => {
    const key = freshKey();
    const forty = 'a'.repeat(40);
    for (let i = 0; i < 2; i++) {
      const res = await postSse(svc.base, { input: forty }, key);
      assert.equal(res.status, 200);
      await allEvents(res);
    }
    // 20 characters are left: 21 is refused on both channels and spends nothing.
    await expectSseRefusal(svc, key, { input: 'b'.repeat(21) }, 'quota_exceeded');
    await expectWsUpdateRefusal(svc, key, update({ input_text: 'c'.repeat(21) }), 'quota_exceeded');
    assert.ok((await wsSynthesize(await connect(svc.wsUrl, key), 'd'.repeat(20))).length > 0);
    await expectSseRefusal(svc, key, { input: 'e' }, 'quota_exceeded');
    await expectWsUpdateRefusal(svc, key, update({ input_text: 'f' }), 'quota_exceeded');
    // Characters are code points: one astral character (𠮷, a surrogate pair in UTF-16) is one character.
    const other = freshKey();
    const res = await postSse(svc.base, { input: '𠮷'.repeat(40) }, other);
    assert.equal(res.status, 200);
    await allEvents(res);
    const res2 = await postSse(svc.base, { input: '𠮷'.repeat(40) }, other);
    assert.equal(res2.status, 200);
    await allEvents(res2);
    await expectSseRefusal(svc, other, { input: '𠮷'.repeat(21) }, 'quota_exceeded');
  });

  it('max_character_length_exceeded: 422 over 40 code points, the limit itself is accepted', async () => {
    const key = freshKey();
    const ok = await postSse(svc.base, { input: '𠮷'.repeat(40) }, key);
    assert.equal(ok.status, 200);
    await allEvents(ok);
    await expectSseRefusal(svc, key, { input: 'a'.repeat(41) }, 'max_character_length_exceeded');
    await expectWsUpdateRefusal(svc, key, update({ input_text: 'a'.repeat(41) }), 'max_character_length_exceeded');
  });

  const requestCases: [code: string, sse: unknown, ws: string][] = [
    ['bad_request', '{"input":', '{"type":"tts_session.update","session":'],
    ['bad_request', '[1,2]', JSON.stringify({ type: 'tts_session.update', session: 'hi' })],
    ['invalid_parameters', { input: 5 }, update({ input_text: 5 })],
    ['invalid_parameters', { input: 'hi', language: 3 }, update({ input_text: 'hi', output_audio_sample_rate: 12345 })],
    ['invalid_parameters', { input: 'hi', voice: ['en-man-1'] }, update({ input_text: 'hi', output_audio_number_of_channels: 3 })],
    ['text_string_required', { input: '' }, update({ input_text: '' })],
    ['text_string_required', { voice: 'en-man-1' }, update({ input_text: ' \n\t' })],
    ['voice_not_found', { input: 'hi', voice: 'xx-robot-9' }, update({ input_text: 'hi', preset_voice: 'xx_robot_9' })],
    ['audio_format_not_found', { input: 'hi', response_format: 'mp3' }, update({ input_text: 'hi', output_audio_format: 'mp3' })],
    ['language_not_found', { input: 'hi', language: 'fr' }, update({ input_text: 'hi', language: 'fr' })],
  ];
  for (const [code, sse, ws] of requestCases) {
    it(`${code}: ${STATUS[code]} on SSE for ${typeof sse === 'string' ? sse : JSON.stringify(sse)}; error event + 1008 on the WebSocket`, async () => {
      const key = freshKey();
      const before = engine.records.length;
      await expectSseRefusal(svc, key, sse, code);
      await expectWsUpdateRefusal(svc, key, ws, code);
      assert.equal(engine.records.length, before, 'a refused request never reaches the engine');
    });
  }

  it('a valid request on a fresh key streams audio and carries the RateLimit headers', async () => {
    const res = await postSse(svc.base, { input: 'hello', voice: 'en-woman-1', response_format: 'mulaw' }, freshKey());
    assert.equal(res.status, 200);
    assert.equal(res.headers['ratelimit-policy'], '"per-key";q=1000;w=60');
    assert.match(String(res.headers['ratelimit']), /^"per-key";r=999;t=1$/);
    const events = await allEvents(res);
    assert.deepEqual(events.map((e) => e.event), ['delta', 'delta', 'delta', 'done']);
    assert.equal(audioOf(events).length, 3 * 2400);
    assert.deepEqual(engine.records.at(-1)!.job, { text: 'hello', voice: 'en-woman-1', language: 'en', format: 'mulaw', sampleRate: 24000, channels: 1 });
  });
});

describe('tts serve: the per-key rate limit (GCRA, fake clock)', () => {
  let now = 1_000_000;
  let svc: TestService;
  const KEY = 'rate-key-0123456789';
  const OTHER = 'rate-other-0123456789';
  before(async () => {
    svc = await startService({ apiKeys: [KEY, OTHER], engine: scriptedEngine(), rateLimit: { limit: 2, windowSeconds: 60 }, clock: () => now });
  });
  after(async () => {
    await svc.close();
  });

  it('allows a burst of 2 across both channels, then 429 rate_limit_exceeded with exact Retry-After and RateLimit headers', async () => {
    const first = await postSse(svc.base, { input: 'hi' }, KEY);
    assert.equal(first.status, 200);
    assert.equal(first.headers['ratelimit-policy'], '"per-key";q=2;w=60');
    assert.equal(first.headers['ratelimit'], '"per-key";r=1;t=30');
    await allEvents(first);
    // The WebSocket spends the same allowance.
    assert.ok((await wsSynthesize(await connect(svc.wsUrl, KEY), 'hi')).length > 0);

    const h = await expectSseRefusal(svc, KEY, { input: 'hi' }, 'rate_limit_exceeded');
    assert.equal(h['retry-after'], '30');
    assert.equal(h['ratelimit-policy'], '"per-key";q=2;w=60');
    assert.equal(h['ratelimit'], '"per-key";r=0;t=60');
    const wh = await expectWsHandshakeRefusal(svc, KEY, 'rate_limit_exceeded');
    assert.equal(wh['retry-after'], '30');
    assert.equal(wh['ratelimit-policy'], '"per-key";q=2;w=60');
    assert.equal(wh['ratelimit'], '"per-key";r=0;t=60');
    // Another key has its own allowance.
    assert.equal((await postSse(svc.base, { input: 'hi' }, OTHER)).status, 200);

    now += 29_000;
    const still = await expectSseRefusal(svc, KEY, { input: 'hi' }, 'rate_limit_exceeded');
    assert.equal(still['retry-after'], '1');
    now += 1_000;
    const again = await handshake(svc.wsUrl, KEY);
    assert.ok(again.ok, 'one request is allowed again after one interval');
    again.session.ws.terminate();
    await expectSseRefusal(svc, KEY, { input: 'hi' }, 'rate_limit_exceeded');
    now += 60_000;
    for (let i = 0; i < 2; i++) {
      const res = await postSse(svc.base, { input: 'hi' }, KEY);
      assert.equal(res.status, 200);
      await allEvents(res);
    }
  });

  it('is not consulted before the key: an unknown key is 401, not 429', async () => {
    now += 120_000;
    for (let i = 0; i < 5; i++) await expectSseRefusal(svc, 'unknown-key', { input: 'hi' }, 'invalid_api_key');
    assert.equal((await postSse(svc.base, { input: 'hi' }, KEY)).status, 200);
  });
});

describe('tts serve: coverage of docs/protocol.md §7', () => {
  it('produced every code of the table on SSE and on the WebSocket', () => {
    assert.deepEqual([...seen.sse].sort(), [...SERVICE_ERROR_CODES].sort());
    assert.deepEqual([...seen.ws].sort(), [...SERVICE_ERROR_CODES].sort());
  });
});
