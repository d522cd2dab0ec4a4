/**
 * The built-in service's SSE route over real HTTP on loopback (docs/protocol.md §2.1–2.3, §4.1, §5,
 * §6.1, §7; docs/cli.md §4): every refusal's status and body, and a well-formed event stream.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../src/engine/index.js';
import type { SpeechEngine } from '../../src/engine/types.js';
import { createService, listen } from '../../src/server/builtin-server.js';
import { endWithin } from '../../src/server/sse-route.js';
import type { SseOutcome } from '../../src/client/sse-events.js';
import { decodeEventStream } from '../helpers/sse-decode.js';

const KEY = 'test-key-123456';

describe('POST /v1/tts/sse (built-in service)', () => {
  let engine: SpeechEngine;
  let base: string;
  let server: ReturnType<typeof createService>;
  before(async () => {
    engine = createEngine({ workers: 1 });
    server = createService({ apiKeys: [KEY], engine, maxChars: 200 });
    base = await listen(server, '127.0.0.1', 0);
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await engine.close();
  });

  const post = (body: string, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): Promise<Response> =>
    fetch(`${base}/v1/tts/sse`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  const refusals: [string, string, Record<string, string> | undefined, number, string][] = [
    ['no key', '{"input":"hi"}', {}, 401, 'invalid_api_key'],
    ['a wrong key', '{"input":"hi"}', { authorization: 'Bearer nope' }, 401, 'invalid_api_key'],
    ['a malformed Authorization header', '{"input":"hi"}', { authorization: 'Basic abc' }, 401, 'invalid_api_key'],
    ['malformed JSON', '{"input":', undefined, 400, 'bad_request'],
    ['a JSON array', '[1]', undefined, 400, 'bad_request'],
    ['input of the wrong type', '{"input":5}', undefined, 400, 'invalid_parameters'],
    ['voice of the wrong type', '{"input":"hi","voice":5}', undefined, 400, 'invalid_parameters'],
    ['no input', '{}', undefined, 422, 'text_string_required'],
    ['empty input', '{"input":"  "}', undefined, 422, 'text_string_required'],
    ['a lone surrogate', '{"input":"a\\ud800b"}', undefined, 422, 'text_string_required'],
    ['an unknown voice', '{"input":"hi","voice":"xx-robot-9"}', undefined, 400, 'voice_not_found'],
    ['an unknown format', '{"input":"hi","response_format":"mp3"}', undefined, 400, 'audio_format_not_found'],
    ['an unknown language', '{"input":"hi","language":"fr"}', undefined, 400, 'language_not_found'],
    ['word_timings that is not a boolean', '{"input":"hi","word_timings":"yes"}', undefined, 400, 'invalid_parameters'],
    ['too long an input', JSON.stringify({ input: 'あ'.repeat(201) }), undefined, 422, 'max_character_length_exceeded'],
  ];
  for (const [label, body, headers, status, code] of refusals) {
    it(`answers ${status} ${code} for ${label}`, async () => {
      const res = await post(body, headers);
      assert.equal(res.status, status);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const json = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(json.error.code, code);
      assert.equal(typeof json.error.message, 'string');
      assert.ok(json.error.message.length > 0);
    });
  }

  it('quotes at most the first 60 characters of an unknown voice, format or language, then …', async () => {
    for (const [field, code] of [['voice', 'voice_not_found'], ['response_format', 'audio_format_not_found'], ['language', 'language_not_found']] as const) {
      const res = await post(JSON.stringify({ input: 'hi', [field]: `\u202e${'v'.repeat(60_000)}` }));
      assert.equal(res.status, 400);
      const json = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(json.error.code, code);
      assert.ok(json.error.message.includes(`\`\\u202e${'v'.repeat(59)}…\``), json.error.message.slice(0, 200));
      assert.ok(json.error.message.length < 200, `${json.error.message.length} characters`);
    }
  });

  it('refuses a body too large for its character limit with max_character_length_exceeded, so that a client halves its pieces (docs/protocol.md §7)', async () => {
    const res = await post(JSON.stringify({ input: 'a'.repeat(70 * 1024) }));
    assert.equal(res.status, 422);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'max_character_length_exceeded');
  });

  it('reads a body as large as its character limit can need: every character JSON-escaped as \\uXXXX', async () => {
    const wide = createService({ apiKeys: [KEY], engine, maxChars: 12_000 });
    const wideBase = await listen(wide, '127.0.0.1', 0);
    try {
      const postWide = (chars: number): Promise<Response> =>
        fetch(`${wideBase}/v1/tts/sse`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: `{"input":"${'\\u3042'.repeat(chars)}","voice":"ja-woman-1"}` });
      // 12,000 characters as \u3042: 72,000 bytes, over 64 KiB, within the limit.
      const within = await postWide(12_000);
      assert.equal(within.status, 200, within.status === 200 ? '' : await within.text());
      await within.body?.cancel();
      const over = await postWide(12_001);
      assert.equal(over.status, 422);
      assert.equal(((await over.json()) as { error: { code: string } }).error.code, 'max_character_length_exceeded');
    } finally {
      wide.closeAllConnections();
      await new Promise<void>((r) => wide.close(() => r()));
    }
  });

  it('streams deltas of at most 100 ms, then done, all with one item_id', async () => {
    const res = await post(JSON.stringify({ input: 'Hello there. This sentence is long enough to need several deltas.', voice: 'en-woman-1', word_timings: true }));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const outcomes: SseOutcome[] = [];
    const raw: string[] = [];
    const body = res.body as unknown as AsyncIterable<Uint8Array>;
    async function* tap(): AsyncGenerator<Uint8Array> {
      for await (const c of body) {
        raw.push(Buffer.from(c).toString('utf8'));
        yield c;
      }
    }
    for await (const o of decodeEventStream(tap())) outcomes.push(o);
    const text = raw.join('');
    // The service always names its events (docs/cli.md §4).
    assert.match(text, /^event: delta\ndata: \{"type":"speech\.audio\.delta","item_id":"item_[0-9a-f]+","delta":"/);
    // `engine` is the built-in extension (docs/protocol.md §2.3): who spoke, here the voice's own engines.
    // `words` is the word timings extension (§2.3), asked for with `word_timings` (§2.1): one per
    // word of `input`, in the frames sent.
    assert.match(text, /event: done\ndata: \{"type":"speech\.audio\.done","item_id":"item_[0-9a-f]+","engine":"builtin","words":\[\{"text":"Hello","start":\d+,"end":\d+,"charStart":0,"charEnd":5\},.*\]\}\n\n$/);
    const audio = outcomes.filter((o) => o.kind === 'audio');
    const done = outcomes.at(-1);
    const frames = audio.reduce((n, o) => n + (o.kind === 'audio' ? o.chunk.data.length / 2 : 0), 0);
    assert.ok(done?.kind === 'done' && done.words !== undefined);
    assert.equal(done.words.length, 11);
    assert.equal(done.words.at(-1)?.text, 'deltas.');
    assert.ok(done.words.at(-1)!.end <= frames, `${done.words.at(-1)!.end} ≤ ${frames} frames`);
    assert.ok(audio.length >= 5, `only ${audio.length} deltas`);
    assert.equal(outcomes.at(-1)?.kind, 'done');
    const ids = new Set(audio.map((o) => (o.kind === 'audio' ? o.chunk.itemId : '')));
    assert.equal(ids.size, 1);
    for (const o of audio) {
      if (o.kind !== 'audio') continue;
      assert.ok(o.chunk.data.length <= 4800, `delta of ${o.chunk.data.length} bytes is over 100 ms of 24 kHz pcm16`);
      assert.equal(o.chunk.data.length % 2, 0);
    }
    const total = audio.reduce((n, o) => n + (o.kind === 'audio' ? o.chunk.data.length : 0), 0);
    assert.ok(total / 2 / 24000 > 2, `only ${total / 48000} s of audio`);
  });

  it('sends no words without word_timings, and ignores fields it does not know', async () => {
    const res = await post(JSON.stringify({ input: 'Hello there.', voice: 'en-woman-1', some_future_field: { x: 1 } }));
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /event: done\ndata: \{"type":"speech\.audio\.done","item_id":"item_[0-9a-f]+","engine":"builtin"\}\n\n$/);
  });

  it('sends the first delta before the whole of a long text is synthesized', async () => {
    const long = 'This is a sentence that goes on for a while. '.repeat(4);
    const t0 = performance.now();
    const res = await post(JSON.stringify({ input: long, voice: 'en-man-1' }));
    let first = 0;
    let bytes = 0;
    for await (const o of decodeEventStream(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (o.kind === 'audio' && first === 0) first = performance.now() - t0;
      if (o.kind === 'audio') bytes += o.chunk.data.length;
    }
    const total = performance.now() - t0;
    assert.ok(bytes > 0);
    assert.ok(first < total / 3, `first delta after ${first.toFixed(0)} ms of ${total.toFixed(0)} ms`);
  });

  it('answers 404 with a JSON body for an unknown path', async () => {
    const res = await fetch(`${base}/v1/nope`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(res.status, 404);
    assert.ok(((await res.json()) as { error: { code: string } }).error.code);
  });
});

describe('endWithin: the last event gets the write timeout too', () => {
  /** A response whose client takes nothing: no write ever completes. */
  const stuck = (): Writable => new Writable({ write: () => undefined });
  /** A response whose client takes everything at once. */
  const reading = (): Writable => new Writable({ autoDestroy: false, write: (_c, _e, cb) => cb() });

  it('a client that stops reading before the end is cut off after --write-timeout (its slot freed on close), not before', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const res = stuck();
    let timeouts = 0;
    let closed = false;
    res.on('close', () => (closed = true));
    endWithin(res, 'event: done\ndata: {}\n\n', 5_000, () => timeouts++);
    t.mock.timers.tick(4_999);
    assert.equal(res.destroyed, false);
    t.mock.timers.tick(1);
    assert.equal(timeouts, 1);
    assert.equal(res.destroyed, true);
    return new Promise<void>((resolve) => setImmediate(() => {
      assert.equal(closed, true);
      resolve();
    }));
  });

  it('a response that finished is left alone; no limit with Infinity (the embedded service)', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const res = reading();
    let timeouts = 0;
    const finished = new Promise((resolve) => res.once('finish', resolve));
    endWithin(res, 'event: done\ndata: {}\n\n', 5_000, () => timeouts++);
    await finished;
    t.mock.timers.tick(10_000);
    assert.equal(timeouts, 0);
    assert.equal(res.destroyed, false);
    const unlimited = stuck();
    endWithin(unlimited, 'x', Infinity, () => timeouts++);
    t.mock.timers.tick(1e9);
    assert.equal(timeouts, 0);
    assert.equal(unlimited.destroyed, false);
    unlimited.destroy();
  });
});
