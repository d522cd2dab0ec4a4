/**
 * `bin/tts.js` against small loopback servers that speak docs/protocol.md's SSE in unusual but legal
 * ways, or break it on purpose: exit codes of docs/cli.md §3, byte-exact output, files untouched.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, patternBytes, sse, startEventStream, startServer, withServer } from '../helpers/servers.js';

const KEY = 'sk-test-SENTINEL-6f1e2d3c4b5a';

describe('tts stream against a hand-written SSE server', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-e2e-'));
  });


  it('writes every delta to stdout byte for byte, with CRLF events split across writes', async () => {
    const audio = [patternBytes(4800, 1), patternBytes(1, 2), patternBytes(9601, 3)];
    await withServer(
      async (_req, res) => {
        startEventStream(res, 'text/event-stream; charset=utf-8');
        res.write(': comment first\r\n\r\n');
        for (const a of audio) {
          const ev = deltaEvent(a, 'item_1', '\r\n');
          const mid = Math.floor(ev.length / 2);
          res.write(ev.slice(0, mid));
          await new Promise((r) => setTimeout(r, 5));
          res.write(ev.slice(mid));
        }
        res.end(doneEvent('item_1', '\r\n'));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--voice', 'en-man-1', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(r.stdout, Buffer.concat(audio));
        const req = server.requests[0]!;
        assert.equal(req.url, '/v1/tts/sse');
        assert.equal(req.headers.authorization, `Bearer ${KEY}`);
        assert.deepEqual(JSON.parse(req.body), { input: 'Hello', voice: 'en-man-1', response_format: 'pcm16', language: 'en' });
      },
    );
  });

  it('dispatches unnamed events on data.type', async () => {
    const audio = patternBytes(1000, 7);
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.write(sse(undefined, { type: 'speech.audio.delta', item_id: 'i', delta: audio.toString('base64') }));
        res.end(sse(undefined, { type: 'speech.audio.done', item_id: 'i' }));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', 'x'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(r.stdout, audio);
      },
    );
  });

  it('exits 6 when the stream ends without done, leaving an existing output file untouched and no temp file', async () => {
    const target = join(dir, 'keep.wav');
    await writeFile(target, 'precious old content');
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.write(deltaEvent(patternBytes(4800)));
        res.end();
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '-o', target, 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /stream_ended_early/);
        assert.equal(await readFile(target, 'utf8'), 'precious old content');
        assert.deepEqual(await readdir(dir), ['keep.wav']);
      },
    );
  });

  it('exits 3 on a refused key, and the key appears in no output even when the server echoes it', async () => {
    await withServer(
      (req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'invalid_api_key', message: `key ${String(req.headers.authorization)} is wrong` } }));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--verbose', '--json', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 3);
        assert.match(r.stderr, /invalid_api_key/);
        assert.ok(!r.stderr.includes(KEY) && !r.stdout.toString('latin1').includes(KEY), r.stderr);
        assert.ok(!r.stderr.includes('SENTINEL'));
        assert.match(r.stderr, /Bearer \*\*\*/);
      },
    );
  });

  it('maps service codes to exit codes (4 rejected, 5 limits) and names the code', async () => {
    for (const [status, code, exit] of [
      [400, 'voice_not_found', 4],
      [422, 'text_string_required', 4],
      [402, 'quota_exceeded', 5],
    ] as const) {
      await withServer(
        (_req, res) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code, message: 'nope' } }));
        },
        async (server) => {
          const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
          assert.equal(r.code, exit, `${code}: ${r.stderr}`);
          assert.match(r.stderr, new RegExp(code));
          assert.equal(r.stdout.length, 0);
        },
      );
    }
  });

  it('exits 6 when the server goes silent past --timeout', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.write(deltaEvent(patternBytes(100)));
        // …and nothing more.
      },
      async (server) => {
        // Exit 6 and the message prove --timeout fired; how fast belongs in `npm run bench`.
        const r = await runTtsInProcess(['stream', '--timeout', '1', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /timeout/);
      },
    );
  });

  it('exits 6 on an error event after audio began', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.write(deltaEvent(patternBytes(100)));
        res.end(sse('error', { type: 'error', error: { code: 'server_error', message: 'engine died' } }));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /engine died/);
      },
    );
  });

  it('exits 3 with no key configured, before any request', async () => {
    await withServer(
      (_req, res) => {
        res.end();
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: server.url } });
        assert.equal(r.code, 3, r.stderr);
        assert.equal(server.requests.length, 0);
      },
    );
  });

  it('refuses to send the key over plain http to a non-loopback host (exit 2)', async () => {
    const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: 'http://192.0.2.1:9', TTS_API_KEY: KEY } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--allow-insecure/);
  });

  after(async () => {
    const { rm } = await import('node:fs/promises');
    await rm(dir, { recursive: true, force: true });
  });
});

describe('tts stream: redirects and pipes', () => {
  it('does not follow a redirect with the key attached', async () => {
    const elsewhere = await startServer((_req, res) => {
      res.end();
    });
    const redirecting = await startServer((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/v1/tts/sse?token=abc` });
      res.end();
    });
    try {
      const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: redirecting.url, TTS_API_KEY: KEY } });
      assert.equal(r.code, 6, r.stderr);
      assert.match(r.stderr, /redirect/);
      assert.doesNotMatch(r.stderr, /token=abc/);
      assert.equal(redirecting.requests.length, 1, 'a redirect is not retried');
      assert.equal(elsewhere.requests.length, 0);
    } finally {
      await redirecting.close();
      await elsewhere.close();
    }
  });

  it('ends quietly with exit 0 when the reader of stdout goes away', async () => {
    const server = await startServer(async (_req, res) => {
      startEventStream(res);
      for (let i = 0; i < 200; i++) {
        if (!res.write(deltaEvent(patternBytes(4800, i)))) await new Promise((r) => res.once('drain', r));
      }
      res.end(doneEvent());
    });
    try {
      const { spawn } = await import('node:child_process');
      const { TTS_BIN, cleanEnv } = await import('../helpers/cli.js');
      const child = spawn(process.execPath, [TTS_BIN, 'stream', 'Hello'], { env: cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: KEY }), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      // Read 1000 bytes, then close our end of the pipe, as `| head -c 1000` does.
      await new Promise<void>((resolve) => {
        let got = 0;
        child.stdout.on('data', (d: Buffer) => {
          got += d.length;
          if (got >= 1000) {
            child.stdout.destroy();
            resolve();
          }
        });
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, stderr);
      assert.equal(stderr, '');
    } finally {
      await server.close();
    }
  });
});

describe('tts stream -o: what is already at the path', () => {
  const audio = patternBytes(9000, 5);
  const handler = (_req: unknown, res: import('node:http').ServerResponse): void => {
    startEventStream(res);
    res.write(deltaEvent(audio.subarray(0, 4000)));
    res.write(deltaEvent(audio.subarray(4000)));
    res.end(doneEvent());
  };

  it('writes through a FIFO in place instead of replacing it', async () => {
    const { execFileSync, spawn } = await import('node:child_process');
    const { lstat, mkdtemp: mk, rm: rmr } = await import('node:fs/promises');
    const dir = await mk(join(tmpdir(), 'tts-fifo-'));
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const server = await startServer(handler);
    try {
      const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
      const got: Buffer[] = [];
      reader.stdout.on('data', (d: Buffer) => got.push(d));
      const readerDone = new Promise((r) => reader.on('close', r));
      const r = await runTtsInProcess(['stream', '-o', fifo, 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
      await readerDone;
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(Buffer.concat(got), audio);
      assert.ok((await lstat(fifo)).isFIFO(), 'still a FIFO');
    } finally {
      await server.close();
      await rmr(dir, { recursive: true, force: true });
    }
  });

  it('keeps the permissions of a file it replaces', async () => {
    const { chmod, mkdtemp: mk, readFile: rf, rm: rmr, stat: st } = await import('node:fs/promises');
    const dir = await mk(join(tmpdir(), 'tts-mode-'));
    const target = join(dir, 'private.raw');
    await writeFile(target, 'old');
    await chmod(target, 0o600);
    const server = await startServer(handler);
    try {
      const r = await runTtsInProcess(['stream', '-o', target, 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await rf(target), audio);
      assert.equal((await st(target)).mode & 0o777, 0o600);
    } finally {
      await server.close();
      await rmr(dir, { recursive: true, force: true });
    }
  });
});
