/**
 * streamSse (src/client/sse.ts) in-process against a local node:http server that plays the
 * service (docs/protocol.md §3, §5, §7; docs/cli.md §1 --timeout, §4): what is sent (path,
 * Bearer key, identity encoding, the JSON body), deltas decoded in order up to `done`, and each
 * way a stream can fail — an HTTP refusal with the service's code, the wrong content type, a
 * compressed body, an `error` event, the end before `done`, a broken connection, silence past
 * --timeout, Ctrl-C. Every case runs twice: over TCP through undici (remote services) and over
 * the in-memory connection the embedded service uses (`connect`, wire/duplex-pair.ts, issue 20),
 * which must read the same bytes the same way. No process is spawned.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { streamSse, type SseStreamOptions } from '../../src/client/sse.js';
import { TtsError } from '../../src/errors.js';
import { duplexPair } from '../../src/wire/duplex-pair.js';

const KEY = 'sk-sse-unit-SENTINEL-1234';

/** What the server saw of one request. */
interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Resolves when the client closed the connection or the response ended. */
  closed: Promise<void>;
}

type Handler = (res: ServerResponse) => void;

/** One SSE event, as the service writes it. */
const event = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const delta = (bytes: Buffer): string => event('delta', { type: 'delta', delta: bytes.toString('base64') });
const DONE = event('done', { type: 'done' });
const sseHead = { 'content-type': 'text/event-stream' };

for (const via of ['tcp', 'memory'] as const) describe(`streamSse against a local server, ${via === 'tcp' ? 'over TCP (undici)' : 'over an in-memory connection (the embedded path)'}`, () => {
  let server: Server;
  let base: string;
  let handler: Handler = (res) => res.end();
  const seen: Seen[] = [];
  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      const closed = new Promise<void>((resolve) => res.on('close', resolve));
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), closed });
        handler(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const options = (extra: Partial<SseStreamOptions> = {}): SseStreamOptions => ({
    baseUrl: `${base}/prefix/`,
    apiKey: KEY,
    body: { input: 'Hello.', voice: 'en-man-1', response_format: 'pcm16', language: 'en' } as SseStreamOptions['body'],
    timeoutMs: 30_000,
    ...(via === 'memory'
      ? {
          connect: () => {
            const [client, end] = duplexPair();
            server.emit('connection', end);
            return client;
          },
        }
      : {}),
    ...extra,
  });

  /** Every chunk's bytes, or the error thrown. */
  async function run(opts: SseStreamOptions): Promise<{ chunks: Buffer[]; error?: unknown }> {
    const chunks: Buffer[] = [];
    try {
      for await (const c of streamSse(opts)) chunks.push(Buffer.from(c.data));
      return { chunks };
    } catch (error) {
      return { chunks, error };
    }
  }

  const codeOf = (error: unknown): string => {
    assert.ok(error instanceof TtsError, `expected a TtsError, got ${String(error)}`);
    return error.code;
  };

  it('POSTs the body with the Bearer key to the path under the base, and yields the deltas in order until done', async () => {
    const parts = [Buffer.from([1, 0, 2, 0]), Buffer.from([3, 0]), Buffer.from([4, 0, 5, 0, 6, 0])];
    handler = (res) => {
      res.writeHead(200, sseHead);
      // A comment and an unknown event are skipped (docs/protocol.md §3).
      res.end(`: keep-alive\n\n${delta(parts[0]!)}${event('progress', { n: 1 })}${delta(parts[1]!)}${delta(parts[2]!)}${DONE}`);
    };
    const log: string[] = [];
    const r = await run(options({ verbose: (line) => log.push(line) }));
    assert.equal(r.error, undefined);
    assert.deepEqual(r.chunks, parts);
    const req = seen.at(-1)!;
    assert.equal(req.url, '/prefix/v1/tts/sse');
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
    assert.equal(req.headers['accept-encoding'], 'identity');
    assert.match(String(req.headers.accept), /text\/event-stream/);
    assert.deepEqual(JSON.parse(req.body), options().body);
    assert.ok(log.length > 0 && !log.join('\n').includes(KEY), 'the verbose log never shows the key');
  });

  it('the verbose request line names the endpoint without a user name or password in the base URL', async () => {
    handler = (res) => {
      res.writeHead(200, sseHead);
      res.end(DONE);
    };
    const log: string[] = [];
    await run(options({ baseUrl: `${base.replace('http://', 'http://user:PASSW0RD-SENTINEL@')}/prefix/?token=QUERY-SENTINEL`, verbose: (line) => log.push(line) }));
    assert.ok(log.includes(`POST ${base}/prefix/v1/tts/sse`), log.join('\n'));
    assert.doesNotMatch(log.join('\n'), /SENTINEL|user:/);
  });

  it('an HTTP refusal: the service code, status and Retry-After, from the JSON error body', async () => {
    handler = (res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end(JSON.stringify({ error: { code: 'rate_limit_exceeded', message: 'slow down' } }));
    };
    const { error } = await run(options());
    assert.equal(codeOf(error), 'rate_limit_exceeded');
    assert.equal((error as TtsError).status, 429);
    assert.equal((error as TtsError).retryAfterSeconds, 3);
    assert.equal((error as TtsError).retriable, true);
  });

  it('a refusal whose body never ends: the refusal from its status and first 64 KiB (not a --timeout), and the request is closed', async () => {
    let flood: NodeJS.Timeout | undefined;
    handler = (res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.write('{"error":{"code":"invalid_api_key","message":"');
      // Endless: only the client closing the request ends it.
      flood = setInterval(() => res.write('A'.repeat(16 * 1024)), 1);
      res.on('close', () => clearInterval(flood));
    };
    const { error } = await run(options());
    assert.equal(codeOf(error), 'invalid_api_key');
    assert.equal((error as TtsError).status, 401);
    await seen.at(-1)!.closed;
  });

  it('a 200 that is not an event stream: protocol_error naming the content type', async () => {
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>login</html>');
    };
    const { error } = await run(options());
    assert.equal(codeOf(error), 'protocol_error');
    assert.match((error as Error).message, /text\/html/);
  });

  it('a compressed event stream (asked for identity): protocol_error naming the encoding', async () => {
    handler = (res) => {
      res.writeHead(200, { ...sseHead, 'content-encoding': 'gzip' });
      res.end(Buffer.from([0x1f, 0x8b, 0, 0]));
    };
    const { error } = await run(options());
    assert.equal(codeOf(error), 'protocol_error');
    assert.match((error as Error).message, /gzip/);
  });

  it('an error event after some audio: the audio first, then the service code', async () => {
    handler = (res) => {
      res.writeHead(200, sseHead);
      res.end(`${delta(Buffer.from([9, 0]))}${event('error', { type: 'error', error: { code: 'server_error', message: 'engine failed' } })}`);
    };
    const r = await run(options());
    assert.deepEqual(r.chunks, [Buffer.from([9, 0])]);
    assert.equal(codeOf(r.error), 'server_error');
  });

  it('the stream ends before done: stream_ended_early, retriable, after the audio that came', async () => {
    handler = (res) => {
      res.writeHead(200, sseHead);
      // The last event lacks its blank line: incomplete, not a delta.
      res.end(`${delta(Buffer.from([1, 0]))}${delta(Buffer.from([2, 0])).trimEnd()}`);
    };
    const r = await run(options());
    assert.deepEqual(r.chunks, [Buffer.from([1, 0])]);
    assert.equal(codeOf(r.error), 'stream_ended_early');
    assert.equal((r.error as TtsError).retriable, true);
  });

  it('the connection breaks after some audio: that audio, then connection_failed (retriable)', async () => {
    handler = (res) => {
      res.writeHead(200, sseHead);
      res.write(delta(Buffer.from([7, 0])), () => res.destroy());
    };
    const r = await run(options());
    assert.deepEqual(r.chunks, [Buffer.from([7, 0])]);
    assert.equal(codeOf(r.error), 'connection_failed');
    assert.equal((r.error as TtsError).retriable, true);
  });

  it('a malformed delta: protocol_error', async () => {
    handler = (res) => {
      res.writeHead(200, sseHead);
      res.end(`event: delta\ndata: {"type":"delta","delta":"@@not base64@@"}\n\n${DONE}`);
    };
    assert.equal(codeOf((await run(options())).error), 'protocol_error');
  });

  it('keep-alives only, past --timeout: timeout (retriable), and the request is aborted', { timeout: 10_000 }, async () => {
    let keepAlive: NodeJS.Timeout | undefined;
    handler = (res) => {
      res.writeHead(200, sseHead);
      res.write(': hello\n\n');
      // Comments and unknown events do not reset the timer (docs/cli.md §1): no audio is silence.
      keepAlive = setInterval(() => res.write(`: still here\n\n${event('ping', {})}`), 20);
      res.on('close', () => clearInterval(keepAlive));
    };
    const { error } = await run(options({ timeoutMs: 300 }));
    assert.equal(codeOf(error), 'timeout');
    assert.equal((error as TtsError).retriable, true);
    await seen.at(-1)!.closed;
  });

  it('Ctrl-C (the caller aborts) after the first delta: throws the reason, and the server sees the request closed', async () => {
    handler = (res) => {
      res.writeHead(200, sseHead);
      res.write(delta(Buffer.from([1, 0])));
      // Then nothing: only the abort can end this stream.
    };
    const controller = new AbortController();
    const reason = new TtsError('interrupted', 'interrupted by the test');
    const chunks: Buffer[] = [];
    await assert.rejects(
      (async () => {
        for await (const c of streamSse(options({ signal: controller.signal }))) {
          chunks.push(Buffer.from(c.data));
          controller.abort(reason);
        }
      })(),
      (error) => error === reason,
    );
    assert.equal(chunks.length, 1);
    await seen.at(-1)!.closed;
  });

  it('leaving the loop early closes the request', async () => {
    handler = (res) => {
      res.writeHead(200, sseHead);
      res.write(delta(Buffer.from([1, 0])) + delta(Buffer.from([2, 0])));
    };
    for await (const _ of streamSse(options())) break;
    await seen.at(-1)!.closed;
  });

  it('plain http to a host other than loopback is refused before connecting (docs/cli.md §1)', async () => {
    const before = seen.length;
    const { error } = await run(options({ baseUrl: 'http://tts.example.invalid' }));
    assert.ok(error instanceof TtsError, String(error));
    assert.equal(seen.length, before);
  });
});
