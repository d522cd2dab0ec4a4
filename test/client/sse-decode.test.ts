/**
 * SSE decoding at chunk boundaries (docs/style.md §7): every event split at random byte offsets,
 * CRLF/CR/LF line ends, comments, unnamed events, multi-byte characters split mid-sequence.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { SseOutcome } from '../../src/client/sse-events.js';
import { decodeBase64 } from '../../src/wire/delta.js';
import { decodeEventStream } from '../helpers/sse-decode.js';
import { TtsError } from '../../src/errors.js';

async function* chunksOf(bytes: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let start = 0;
  for (const p of points) {
    if (p > start) yield bytes.subarray(start, p);
    start = Math.max(start, p);
  }
  if (start < bytes.length) yield bytes.subarray(start);
}

async function decodeAll(bytes: Buffer, cuts: number[] = []): Promise<SseOutcome[]> {
  const out: SseOutcome[] = [];
  for await (const o of decodeEventStream(chunksOf(bytes, cuts))) out.push(o);
  return out;
}

function errorOf(o: SseOutcome | undefined): TtsError {
  assert.ok(o !== undefined && o.kind === 'error', `expected an error outcome, got ${o?.kind}`);
  return (o as Extract<SseOutcome, { kind: 'error' }>).error;
}

function audioOf(outcomes: SseOutcome[]): Buffer {
  return Buffer.concat(outcomes.flatMap((o) => (o.kind === 'audio' ? [o.chunk.data] : [])));
}

const eols = ['\n', '\r\n', '\r'] as const;

function streamText(chunks: Buffer[], eol: string, opts: { named: boolean; comments: boolean }): string {
  let s = opts.comments ? `: hello 日本語 comment${eol}${eol}` : '';
  for (const c of chunks) {
    if (opts.named) s += `event: delta${eol}`;
    s += `data: ${JSON.stringify({ type: 'speech.audio.delta', item_id: 'item_é', delta: c.toString('base64') })}${eol}${eol}`;
    if (opts.comments) s += `:keep-alive${eol}`;
  }
  if (opts.named) s += `event: done${eol}`;
  s += `data: {"type":"speech.audio.done","item_id":"item_é"}${eol}${eol}`;
  return s;
}

describe('decodeEventStream', () => {
  it('yields the same audio whatever byte offsets the stream is split at, for every line ending and shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ minLength: 0, maxLength: 300 }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...eols),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(20_000), { maxLength: 40 }),
        async (arrays, eol, named, comments, cuts) => {
          const chunks = arrays.map((a) => Buffer.from(a));
          const bytes = Buffer.from(streamText(chunks, eol, { named, comments }), 'utf8');
          const outcomes = await decodeAll(bytes, cuts);
          assert.deepEqual(audioOf(outcomes), Buffer.concat(chunks));
          assert.equal(outcomes.filter((o) => o.kind === 'audio').length, chunks.length);
          assert.equal(outcomes.at(-1)?.kind, 'done');
          for (const o of outcomes) if (o.kind === 'audio') assert.equal(o.chunk.itemId, 'item_é');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('survives a CRLF split between its CR and LF', async () => {
    const text = `event: delta\r\ndata: {"type":"speech.audio.delta","item_id":"a","delta":"AAEC"}\r\n\r\nevent: done\r\ndata: {}\r\n\r\n`;
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 0x0d) continue;
      const outcomes = await decodeAll(bytes, [i + 1]);
      assert.deepEqual(audioOf(outcomes), Buffer.from([0, 1, 2]), `split after CR at ${i}`);
      assert.deepEqual(outcomes.map((o) => o.kind), ['audio', 'done']);
    }
  });

  it('dispatches unnamed events on data.type', async () => {
    const text = `data: {"type":"speech.audio.delta","delta":"AQI="}\n\ndata: {"type":"speech.audio.done"}\n\n`;
    const outcomes = await decodeAll(Buffer.from(text));
    assert.deepEqual(outcomes.map((o) => o.kind), ['audio', 'done']);
    assert.deepEqual(audioOf(outcomes), Buffer.from([1, 2]));
  });

  it('joins multi-line data fields and ignores id, retry and unknown events', async () => {
    const text = 'id: 7\nretry: 100\nevent: ping\ndata: {}\n\nevent: delta\ndata: {"type":"speech.audio.delta",\ndata: "delta":"AAA="}\n\nevent: done\ndata: {}\n\n';
    const outcomes = await decodeAll(Buffer.from(text));
    assert.deepEqual(outcomes.map((o) => o.kind), ['ignored', 'audio', 'done']);
  });

  for (const [label, data] of [
    ['{"type":"error","error":{"code","message"}}', '{"type":"error","error":{"code":"quota_exceeded","message":"no credits"}}'],
    ['{"code","message"}', '{"code":"quota_exceeded","message":"no credits"}'],
    ['{"error":"code"}', '{"error":"quota_exceeded"}'],
  ] as const) {
    it(`reads the code of an error event shaped ${label}`, async () => {
      const outcomes = await decodeAll(Buffer.from(`event: error\ndata: ${data}\n\n`));
      const error = errorOf(outcomes[0]);
      assert.equal(error.code, 'quota_exceeded');
      assert.equal(error.exitCode, 5);
    });
  }

  it('treats a plain-text error event as a server error (exit 6) with its text', async () => {
    const [o] = await decodeAll(Buffer.from('event: error\ndata: synthesis exploded\n\n'));
    const error = errorOf(o);
    assert.equal(error.code, 'server_error');
    assert.equal(error.exitCode, 6);
    assert.match(error.message, /synthesis exploded/);
  });

  it('treats an unnamed event whose type contains "error" as fatal', async () => {
    const [o] = await decodeAll(Buffer.from('data: {"type":"response.error","error":{"code":"voice_not_found","message":"x"}}\n\n'));
    assert.equal(errorOf(o).code, 'voice_not_found');
  });

  it('refuses malformed base64 or JSON in a delta instead of dropping audio', async () => {
    for (const data of ['{"type":"speech.audio.delta","delta":"!!notbase64"}', 'not json', '{"type":"speech.audio.delta"}', '{"type":"speech.audio.delta","delta":"AAAAA"}']) {
      const [o] = await decodeAll(Buffer.from(`event: delta\ndata: ${data}\n\n`));
      assert.equal(errorOf(o).code, 'protocol_error', data);
    }
  });

  it('fails with a protocol error, not out of memory, on an endless line', async () => {
    async function* endless(): AsyncGenerator<Uint8Array> {
      const block = Buffer.alloc(1 << 20, 0x61);
      yield Buffer.from('data: ');
      for (let i = 0; i < 40; i++) yield block;
    }
    await assert.rejects(
      async () => {
        for await (const _ of decodeEventStream(endless())) void _;
      },
      (e: unknown) => e instanceof TtsError && e.code === 'protocol_error',
    );
  });
});

describe('decodeBase64', () => {
  it('round-trips any bytes and accepts line-broken base64', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 500 }), (a) => {
        const b = Buffer.from(a);
        const s = b.toString('base64');
        assert.deepEqual(decodeBase64(s), b);
        assert.deepEqual(decodeBase64(s.replace(/(.{76})/g, '$1\r\n')), b);
      }),
    );
  });
  it('rejects characters outside the alphabet and impossible lengths', () => {
    assert.equal(decodeBase64('AB$D'), undefined);
    assert.equal(decodeBase64('A'), undefined);
    assert.equal(decodeBase64('AAA=='), undefined);
  });
});

describe('decodeBase64 and non-ASCII', () => {
  it('rejects letters outside ASCII that Node would read as base64 (Ł as A)', () => {
    assert.equal(decodeBase64('ŁŁŁŁ'), undefined);
    assert.equal(decodeBase64('AAAа'), undefined);
  });
});
