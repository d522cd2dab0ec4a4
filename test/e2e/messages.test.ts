/**
 * Messages that say the right thing (issue 12 §9) and error events that are final (§11):
 * `bin/tts.js` against small misbehaving servers on loopback, counting the requests they get.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, patternBytes, sse, startEventStream, withServer } from '../helpers/servers.js';

const KEY = 'sk-test-SENTINEL-messages-1234';

describe('error events whose code is missing or unknown are final (docs/cli.md §4)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-msg-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a plain-text error event into a file is requested once, not three times (exit 6, no file)', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.end('event: error\ndata: the engine fell over\n\n');
      },
      async (server) => {
        const out = join(dir, 'plain.wav');
        const r = await runTtsInProcess(['stream', '--retries', '2', '-o', out, 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.equal(server.requests.length, 1, r.stderr);
        assert.match(r.stderr, /an error with no code on the SSE stream: the engine fell over/);
        assert.deepEqual(await readdir(dir), []);
      },
    );
  });

  it('an unknown code after audio began is not recovered by requesting the piece again', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.write(deltaEvent(patternBytes(4800)));
        res.end(sse('error', { type: 'error', error: { code: 'engine_exploded', message: 'boom' } }));
      },
      async (server) => {
        const out = join(dir, 'unknown.wav');
        const r = await runTtsInProcess(['stream', '--retries', '2', '-o', out, 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.equal(server.requests.length, 1, r.stderr);
        assert.match(r.stderr, /engine_exploded/);
        assert.doesNotMatch(r.stderr, /requesting it again/);
        assert.deepEqual(await readdir(dir), []);
      },
    );
  });

  it('a known retriable code in an error event is still retried', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.end(sse('error', { type: 'error', error: { code: 'rate_limit_exceeded', message: 'slow down' } }));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--retries', '1', '-o', join(dir, 'limit.raw'), 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 5, r.stderr);
        assert.equal(server.requests.length, 2);
      },
    );
  });
});

describe('messages that say the right thing', () => {
  it('-o /proc/x.wav says the folder takes no new files, not that it does not exist (exit 7)', async () => {
    const r = await runTtsInProcess(['say', '-o', '/proc/x.wav', 'Hello']);
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /\/proc does not allow new files/);
    assert.doesNotMatch(r.stderr, /does not exist/);
  });

  it('-o into a folder that really does not exist still says so', async () => {
    const r = await runTtsInProcess(['say', '-o', '/tmp/tts-no-such-folder-xyz/x.wav', 'Hello']);
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /the folder \/tmp\/tts-no-such-folder-xyz does not exist/);
  });

  it('no API key is a sentence naming what to set (exit 3)', async () => {
    const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: 'http://127.0.0.1:9' } });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /a service is configured \(http:\/\/127\.0\.0\.1:9\), but no API key was given for it \[no_api_key\]/);
    assert.match(r.stderr, /TTS_API_KEY/);
  });

  it('a base URL that is no URL is a bad value (exit 2) also without a key, not a missing key', async () => {
    for (const url of ['notaurl', 'ftp://example.com']) {
      const r = await runTtsInProcess(['stream', '-o', '/dev/null', 'Hello'], { env: { TTS_BASE_URL: url } });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /invalid base URL|unsupported URL scheme/);
      assert.doesNotMatch(r.stderr, /no_api_key/);
    }
  });

  it('after retried timeouts the message says how many tries over how long', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res); // …and nothing more
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--timeout', '0.5', '--retries', '2', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.equal(server.requests.length, 3);
        assert.match(r.stderr, /no audio from the service for 0\.5 s \(--timeout\) \(after 3 tries over \d+\.\d s\) \[timeout\]/);
      },
    );
  });

  it('a gzip-encoded event stream is named as such, not stream_ended_early', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        res.end(gzipSync(deltaEvent(patternBytes(100)) + 'event: done\ndata: {"type":"speech.audio.done"}\n\n'));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /gzip-encoded \(compressed\) response/);
        assert.doesNotMatch(r.stderr, /stream_ended_early/);
        assert.equal(r.stdout.length, 0);
        assert.equal(server.requests[0]!.headers['accept-encoding'], 'identity');
      },
    );
  });

  it('a gzip-encoded error body is named, not printed as gibberish', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync('{"error":{"code":"server_error","message":"x"}}'));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--retries', '0', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /a gzip-encoded body, which tts does not decode/);
      },
    );
  });
});
