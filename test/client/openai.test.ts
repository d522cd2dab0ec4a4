/**
 * The OpenAI dialect's client (src/client/openai.ts; docs/protocol.md §10) against `tts serve`'s own
 * OpenAI route — the same bytes as the native route — and against OpenAI-shaped loopback servers
 * that misbehave on purpose.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { streamOpenAi } from '../../src/client/openai.js';
import { streamSse } from '../../src/client/sse.js';
import { TtsError } from '../../src/errors.js';
import { createEngine } from '../../src/engine/index.js';
import type { SpeechEngine } from '../../src/engine/types.js';
import { startService, type TestService } from '../helpers/serve-http.js';
import { patternBytes, startEventStream, withServer } from '../helpers/servers.js';

const KEY = 'test-key-openai-client';

async function collect(chunks: AsyncIterable<{ data: Buffer }>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c.data);
  return Buffer.concat(parts);
}

async function failure(chunks: AsyncIterable<unknown>): Promise<TtsError> {
  try {
    for await (const _ of chunks) void _;
  } catch (error) {
    assert.ok(error instanceof TtsError, String(error));
    return error;
  }
  assert.fail('the stream completed');
}

const options = (baseUrl: string, extra: Partial<Parameters<typeof streamOpenAi>[0]> = {}): Parameters<typeof streamOpenAi>[0] => ({
  baseUrl,
  apiKey: KEY,
  model: 'tts-1',
  input: 'Hello there, this is a test.',
  voice: 'en-woman-1',
  timeoutMs: 10_000,
  sse: { supported: true },
  ...extra,
});

describe('streamOpenAi against tts serve\'s OpenAI route', () => {
  let engine: SpeechEngine;
  let service: TestService;
  before(async () => {
    engine = createEngine({ workers: 1 });
    service = await startService({ apiKeys: [KEY], engine });
  });
  after(async () => {
    await service.close();
    await engine.close();
  });

  it('gets byte for byte the audio the native route gives for the same voice and text', async () => {
    const text = 'Hello there, this is a test.';
    const openai = await collect(streamOpenAi(options(service.base, { input: text })));
    const native = await collect(streamSse({ baseUrl: service.base, apiKey: KEY, body: { input: text, voice: 'en-woman-1', response_format: 'pcm16', language: 'en' }, timeoutMs: 10_000 }));
    assert.ok(openai.length > 24000, `${openai.length} bytes`);
    assert.ok(openai.equals(native), `openai ${openai.length} bytes vs native ${native.length} bytes`);
    const [sseLine] = service.log.filter((l) => l.includes('/v1/audio/speech'));
    assert.match(sseLine ?? '', / POST \/v1\/audio\/speech 200 \d+ms model=tts-1$/);
  });

  it('a wrong key is invalid_api_key (exit 3), not retried', async () => {
    const error = await failure(streamOpenAi(options(service.base, { apiKey: 'nope' })));
    assert.equal(error.code, 'invalid_api_key');
    assert.equal(error.retriable, false);
  });

  it('an unknown voice is voice_not_found', async () => {
    const error = await failure(streamOpenAi(options(service.base, { voice: 'robot' })));
    assert.equal(error.code, 'voice_not_found');
  });
});

describe('streamOpenAi against misbehaving OpenAI-shaped servers', () => {
  const audio = patternBytes(9600, 7);
  const delta = (bytes: Buffer): string => `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: bytes.toString('base64') })}\n\n`;

  it('an SSE stream cut mid-stream (no speech.audio.done) is stream_ended_early, after the audio that came', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.write(delta(audio));
        res.end();
      },
      async (server) => {
        const got: Buffer[] = [];
        const error = await failure(
          (async function* () {
            for await (const c of streamOpenAi(options(server.url))) {
              got.push(c.data);
              yield c;
            }
          })(),
        );
        assert.equal(error.code, 'stream_ended_early');
        assert.equal(error.retriable, true);
        assert.ok(Buffer.concat(got).equals(audio), 'the audio before the cut was delivered');
        const body = JSON.parse(server.requests[0]!.body) as Record<string, unknown>;
        assert.deepEqual(body, { model: 'tts-1', input: 'Hello there, this is a test.', voice: 'en-woman-1', response_format: 'pcm', stream_format: 'sse' });
        assert.equal(server.requests[0]!.url, '/v1/audio/speech');
        assert.equal(server.requests[0]!.headers.authorization, `Bearer ${KEY}`);
      },
    );
  });

  it('a raw pcm body without length (chunked) is the audio, its end the end', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'audio/pcm' });
        res.write(audio.subarray(0, 5000));
        res.end(audio.subarray(5000));
      },
      async (server) => {
        assert.ok((await collect(streamOpenAi(options(server.url)))).equals(audio));
      },
    );
  });

  it('a raw pcm body cut short of its Content-Length is an error, never a short success', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(audio.length) });
        res.write(audio.subarray(0, 5000));
        res.socket?.destroy();
      },
      async (server) => {
        const error = await failure(streamOpenAi(options(server.url)));
        assert.equal(error.retriable, true, `${error.code}: ${error.message}`);
      },
    );
  });

  it('a server that refuses stream_format sse is asked again with audio, and the run remembers it', async () => {
    await withServer(
      (_req, res, body) => {
        if ((JSON.parse(body) as { stream_format: string }).stream_format === 'sse') {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: "stream_format 'sse' is not supported for this model", type: 'invalid_request_error', param: 'stream_format', code: 'unsupported_value' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'audio/pcm' });
        res.end(audio);
      },
      async (server) => {
        const sse = { supported: true };
        assert.ok((await collect(streamOpenAi(options(server.url, { sse })))).equals(audio));
        assert.ok((await collect(streamOpenAi(options(server.url, { sse })))).equals(audio));
        assert.deepEqual(
          server.requests.map((r) => (JSON.parse(r.body) as { stream_format: string }).stream_format),
          ['sse', 'audio', 'audio'],
        );
      },
    );
  });

  it('429 with retry-after is rate_limit_exceeded, retriable, with the wait the server asked for', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
        res.end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }));
      },
      async (server) => {
        const error = await failure(streamOpenAi(options(server.url)));
        assert.equal(error.code, 'rate_limit_exceeded');
        assert.equal(error.retriable, true);
        assert.equal(error.retryAfterSeconds, 2);
      },
    );
  });

  it('429 insufficient_quota is quota_exceeded, not retried', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'You exceeded your current quota', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } }));
      },
      async (server) => {
        const error = await failure(streamOpenAi(options(server.url)));
        assert.equal(error.code, 'quota_exceeded');
        assert.equal(error.retriable, false);
      },
    );
  });

  it('a 400 with a code of its own (not in our table) is invalid_parameters (exit 4), as protocol.md §10 says of "other 400s"', async () => {
    // Found by review1: code "invalid_type" (or any other server's own) was an unknown code, exit 6 (transport).
    await withServer(
      (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'input must be shorter', type: 'invalid_request_error', param: 'input', code: 'invalid_type' } }));
      },
      async (server) => {
        const error = await failure(streamOpenAi(options(server.url)));
        assert.equal(error.code, 'invalid_parameters');
        assert.equal(error.exitCode, 4);
        assert.equal(error.retriable, false);
      },
    );
  });

  it('a wrong content type (mp3 from a server that ignored response_format) is protocol_error', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        res.end(Buffer.from('ID3fake'));
      },
      async (server) => {
        const error = await failure(streamOpenAi(options(server.url)));
        assert.equal(error.code, 'protocol_error');
        assert.match(error.message, /audio\/mpeg/);
      },
    );
  });

  it('a redirect is not followed (the key goes nowhere else)', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(307, { location: 'http://127.0.0.2:9/v1/audio/speech' });
        res.end();
      },
      async (server) => {
        const error = await failure(streamOpenAi(options(server.url)));
        assert.equal(error.code, 'protocol_error');
        assert.match(error.message, /not followed/);
        assert.equal(server.requests.length, 1);
      },
    );
  });

  it('refuses to send the key over plain http to a non-loopback host', async () => {
    const error = await failure(streamOpenAi(options('http://example.com')));
    assert.equal(error.code, 'insecure_transport');
    assert.ok(!error.message.includes(KEY));
  });
});
