/**
 * A client you can trust in scripts (docs/cli.md §1–3): one loopback server per fault.
 * Retries are decided by the service's code; nothing is written twice; a broken piece is
 * requested again into a file; long text is split and joined in order; --lines speaks as lines
 * arrive; Ctrl-C leaves nothing behind; the key never shows.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, TTS_BIN } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, sse as sseEvent, startEventStream, withServer, type TestServer } from '../helpers/servers.js';

const KEY = 'sk-live-SENTINEL-0123456789abcdef';

/** Deterministic audio for a text: what a fake service "speaks" for it (even length, ≥ 200 bytes). */
function audioFor(text: string): Buffer {
  const seed = createHash('sha256').update(text).digest();
  const n = 200 + 2 * [...text].length * 8;
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = seed[i % 32]! ^ (i & 0xff);
  return out;
}

/** Streams `audio` as deltas of at most `size` bytes, then done. */
async function speak(res: ServerResponse, audio: Buffer, size = 500, opts: { stopAfter?: number | undefined; delayMs?: number | undefined } = {}): Promise<void> {
  startEventStream(res);
  let sent = 0;
  for (let off = 0; off < audio.length; off += size) {
    if (opts.stopAfter !== undefined && sent === opts.stopAfter) {
      res.destroy();
      return;
    }
    // Wait for each write to reach the socket, so a destroy afterwards cannot discard it.
    await new Promise<void>((resolve) => res.write(deltaEvent(audio.subarray(off, off + size)), () => resolve()));
    sent++;
    if (opts.delayMs !== undefined) await new Promise((r) => setTimeout(r, opts.delayMs));
  }
  res.end(doneEvent());
}

function refuse(res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { code, message: `refused: ${code}` } }));
}

const env = (server: TestServer): Record<string, string> => ({ TTS_BASE_URL: server.url, TTS_API_KEY: KEY });

/**
 * Resolves once `dir` holds the temporary file of `name` (`.<name>.tts-<pid>-<hex>.tmp`,
 * docs/cli.md §2): the run is writing its audio. Polls the folder (the event has no other
 * sign outside the process); bounded at 30 s.
 */
async function tempFileOf(dir: string, name: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await readdir(dir)).some((f) => f.startsWith(`.${name}.tts-`) && f.endsWith('.tmp'))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no temporary file of ${name} appeared in 30 s`);
}

describe('retries, recovery, long text, lines and interrupts', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-resilience-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });


  const retriable: [string, (res: ServerResponse) => void][] = [
    ['429 rate_limit_exceeded', (res) => refuse(res, 429, 'rate_limit_exceeded', { 'retry-after-ms': '20' })],
    ['429 too_many_concurrent_requests', (res) => refuse(res, 429, 'too_many_concurrent_requests', { 'retry-after': '0' })],
    ['408 without a code', (res) => {
      res.writeHead(408);
      res.end();
    }],
    ['500 with an HTML body', (res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<h1>oops</h1>');
    }],
    ['503 server_error', (res) => refuse(res, 503, 'server_error')],
    ['a reset connection', (res) => res.socket?.destroy()],
  ];
  for (const [label, fault] of retriable) {
    it(`retries ${label} once, then succeeds (2 requests)`, async () => {
      const audio = audioFor('Hello');
      let n = 0;
      await withServer(
        async (_req, res) => {
          if (n++ === 0) fault(res);
          else await speak(res, audio);
        },
        async (server) => {
          const r = await runTtsInProcess(['stream', '--verbose', 'Hello'], { env: env(server) });
          assert.equal(r.code, 0, r.stderr);
          assert.deepEqual(r.stdout, audio);
          assert.equal(server.requests.length, 2);
          assert.match(r.stderr, /retrying in/);
          assert.ok(!r.stderr.includes(KEY));
        },
      );
    });
  }

  const fatal: [number, string, number][] = [
    [401, 'invalid_api_key', 3],
    [400, 'invalid_parameters', 4],
    [400, 'bad_request', 4],
    [422, 'text_string_required', 4],
    [400, 'voice_not_found', 4],
    [400, 'audio_format_not_found', 4],
    [400, 'language_not_found', 4],
    [402, 'quota_exceeded', 5],
    [429, 'quota_exceeded', 5],
  ];
  for (const [status, code, exit] of fatal) {
    it(`never retries ${code} (HTTP ${status}): 1 request, exit ${exit}`, async () => {
      await withServer(
        (_req, res) => refuse(res, status, code, { 'retry-after': '0' }),
        async (server) => {
          const r = await runTtsInProcess(['stream', 'Hello'], { env: env(server) });
          assert.equal(r.code, exit, r.stderr);
          assert.match(r.stderr, new RegExp(code));
          assert.equal(server.requests.length, 1);
        },
      );
    });
  }

  it('honours Retry-After in seconds', async () => {
    let n = 0;
    await withServer(
      async (_req, res) => {
        if (n++ === 0) refuse(res, 429, 'rate_limit_exceeded', { 'retry-after': '1' });
        else await speak(res, audioFor('x'));
      },
      async (server) => {
        const t0 = performance.now();
        const r = await runTtsInProcess(['stream', 'x'], { env: env(server) });
        assert.equal(r.code, 0, r.stderr);
        assert.ok(performance.now() - t0 >= 1000, 'waited at least the second the service asked for');
      },
    );
  });

  it('gives up after --retries with exit 5 on limits (retries + 1 requests)', async () => {
    await withServer(
      (_req, res) => refuse(res, 429, 'rate_limit_exceeded', { 'retry-after-ms': '10' }),
      async (server) => {
        const r = await runTtsInProcess(['stream', '--retries', '3', 'x'], { env: env(server) });
        assert.equal(r.code, 5, r.stderr);
        assert.equal(server.requests.length, 4);
      },
    );
  });

  it('exits 6 when the socket dies after two deltas into a pipe, and says how much audio was delivered (1 request)', async () => {
    await withServer(
      (_req, res) => speak(res, audioFor('Hello there'), 100, { stopAfter: 2 }),
      async (server) => {
        const r = await runTtsInProcess(['stream', 'Hello there'], { env: env(server) });
        assert.equal(r.code, 6, r.stderr);
        assert.equal(server.requests.length, 1);
        assert.equal(r.stdout.length, 200);
        assert.match(r.stderr, /delivered/);
      },
    );
  });

  it('into a file, cuts back and requests a broken piece again: the result is byte-exact', async () => {
    const text = 'First sentence here. Second sentence there. Third one to finish.';
    let broken = false;
    const out = join(dir, 'recovered.raw');
    await withServer(
      async (_req, res, body) => {
        const input = (JSON.parse(body) as { input: string }).input;
        if (!broken && input.startsWith('Second')) {
          broken = true;
          await speak(res, audioFor(input), 100, { stopAfter: 3 });
        } else {
          await speak(res, audioFor(input), 300);
        }
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--max-chars', '23', '--concurrency', '1', '-o', out, text], { env: env(server) });
        assert.equal(r.code, 0, r.stderr);
        const inputs = server.requests.map((q) => (JSON.parse(q.body) as { input: string }).input);
        assert.equal(inputs.length, 4);
        const unique = [...new Set(inputs)];
        assert.equal(unique.join(''), text);
        assert.deepEqual(await readFile(out), Buffer.concat(unique.map(audioFor)));
      },
    );
  });

  it('exits 6 when the stream stalls after the first delta (--timeout 2)', async () => {
    await withServer(
      (_req, res) => {
        startEventStream(res);
        res.write(deltaEvent(audioFor('a').subarray(0, 100)));
      },
      async (server) => {
        const t0 = performance.now();
        const r = await runTtsInProcess(['stream', '--timeout', '2', 'a'], { env: env(server) });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /timeout/);
        assert.ok(performance.now() - t0 >= 2000);
      },
    );
  });

  it('splits long text within the limit and joins the audio in text order, whatever order requests finish in', async () => {
    const sentences = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} is here${i % 3 === 0 ? ', with a clause' : ''}.`);
    const text = sentences.join(' ');
    const max = 60;
    await withServer(
      async (_req, res, body) => {
        const input = (JSON.parse(body) as { input: string }).input;
        await new Promise((r) => setTimeout(r, Math.random() * 60));
        await speak(res, audioFor(input), 128, { delayMs: Math.random() < 0.3 ? 5 : undefined });
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--max-chars', String(max), '--concurrency', '4', text], { env: env(server) });
        assert.equal(r.code, 0, r.stderr);
        const inputs = server.requests.map((q) => (JSON.parse(q.body) as { input: string }).input);
        for (const input of inputs) assert.ok([...input].length <= max, `${input.length}: ${input}`);
        const ordered = inputs.slice().sort((a, b) => text.indexOf(a) - text.indexOf(b));
        assert.equal(ordered.join(''), text);
        assert.deepEqual(r.stdout, Buffer.concat(ordered.map(audioFor)));
      },
    );
  });

  it('halves its limit when the service answers max_character_length_exceeded, and redoes the piece', async () => {
    const text = 'Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa lambda mu. Nu xi omicron pi.';
    await withServer(
      async (_req, res, body) => {
        const input = (JSON.parse(body) as { input: string }).input;
        if ([...input].length > 30) refuse(res, 422, 'max_character_length_exceeded');
        else await speak(res, audioFor(input));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--max-chars', '100', '--concurrency', '1', text], { env: env(server) });
        assert.equal(r.code, 0, r.stderr);
        const accepted = server.requests.map((q) => (JSON.parse(q.body) as { input: string }).input).filter((i) => [...i].length <= 30);
        assert.equal(accepted.join(''), text);
        assert.deepEqual(r.stdout, Buffer.concat(accepted.map(audioFor)));
      },
    );
  });

  it('--lines: speaks the first line before the second arrives', async () => {
    await withServer(
      async (_req, res, body) => speak(res, audioFor((JSON.parse(body) as { input: string }).input)),
      async (server) => {
        const child = spawn(process.execPath, [TTS_BIN, 'stream', '--lines'], { env: cleanEnv(env(server)), stdio: ['pipe', 'pipe', 'pipe'] });
        const out: Buffer[] = [];
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const firstAudio = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
        child.stdout.on('data', (d: Buffer) => out.push(d));
        child.stdin.write('first line\n');
        const winner = await Promise.race([firstAudio.then(() => 'audio'), new Promise((r) => setTimeout(() => r('timeout'), 10_000))]);
        assert.equal(winner, 'audio', 'audio of the first line came out while stdin stayed open');
        assert.equal(server.requests.length, 1);
        // Each line is written once the audio of the one before has come out: no timed gaps.
        const audioUpTo = (bytes: number): Promise<void> =>
          new Promise((resolve) => {
            const check = (): void => {
              if (Buffer.concat(out).length < bytes) return;
              child.stdout.off('data', check);
              resolve();
            };
            child.stdout.on('data', check);
            check();
          });
        await audioUpTo(audioFor('first line').length);
        child.stdin.write('\n   \nsecond line\n');
        await audioUpTo(audioFor('first line').length + audioFor('second line').length);
        child.stdin.end('third');
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        assert.equal(code, 0, stderr);
        assert.deepEqual(Buffer.concat(out), Buffer.concat(['first line', 'second line', 'third'].map(audioFor)));
      },
    );
  });

  it('Ctrl-C during a write: exit 130, existing file untouched, no temp file', async () => {
    const target = join(dir, 'sigint.wav');
    await writeFile(target, 'old');
    await withServer(
      (_req, res) => speak(res, audioFor('slow'.repeat(50)), 100, { delayMs: 50 }),
      async (server) => {
        const child = spawn(process.execPath, [TTS_BIN, 'stream', '-o', target, 'slow'], { env: cleanEnv(env(server)), stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        // Interrupt once the audio is being written: its temporary file exists.
        await tempFileOf(dir, 'sigint.wav');
        child.kill('SIGINT');
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        assert.equal(code, 130, stderr);
        assert.equal(await readFile(target, 'utf8'), 'old');
        assert.deepEqual((await readdir(dir)).filter((f) => f.includes('sigint')), ['sigint.wav']);
      },
    );
  });

  /** A service that speaks 'x' for KEY and refuses any other key (401 invalid_api_key). */
  const speaksForKey = async (req: { headers: { authorization?: string | undefined } }, res: ServerResponse): Promise<void> => {
    if (req.headers.authorization !== `Bearer ${KEY}`) refuse(res, 401, 'invalid_api_key');
    else await speak(res, audioFor('x'));
  };

  it('warns about a key file others can read, and never prints the key', async () => {
    const keyFile = join(dir, 'key');
    await writeFile(keyFile, `${KEY}\n`);
    await chmod(keyFile, 0o644);
    await withServer(
      speaksForKey,
      async (server) => {
        const r = await runTtsInProcess(['stream', '--verbose', '--json', '--api-key-file', keyFile, 'x'], { env: { TTS_BASE_URL: server.url } });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /readable by others/);
        assert.ok(!r.stderr.includes(KEY) && !r.stdout.includes(Buffer.from(KEY)));
        await chmod(keyFile, 0o600);
        const quiet = await runTtsInProcess(['stream', '--api-key-file', keyFile, 'x'], { env: { TTS_BASE_URL: server.url } });
        assert.doesNotMatch(quiet.stderr, /readable by others/);
      },
    );
  });

  it('a key file is read to its first line only: /dev/zero is refused at once (exit 2), the rest of a file is not read as text', async () => {
    const zero = await runTtsInProcess(['stream', '--api-key-file', '/dev/zero', 'x'], { env: { TTS_BASE_URL: 'http://127.0.0.1:9' } });
    assert.equal(zero.code, 2, zero.stderr);
    assert.match(zero.stderr, /the API key file \/dev\/zero is not text: it has a NUL byte at offset 0/);
    const keyFile = join(dir, 'key-then-bytes');
    await writeFile(keyFile, Buffer.concat([Buffer.from(`${KEY}\r\n`), Buffer.from([0xff, 0x00, 0x0a])]));
    await chmod(keyFile, 0o600);
    await withServer(
      speaksForKey,
      async (server) => {
        const r = await runTtsInProcess(['stream', '--api-key-file', keyFile, 'x'], { env: { TTS_BASE_URL: server.url } });
        assert.equal(r.code, 0, r.stderr);
      },
    );
  });

  it('a key that cannot go in an HTTP header (a control character, beyond Latin-1): exit 2 at once naming where it came from, no request, never the key', async () => {
    const keyFile = join(dir, 'key-with-escape');
    await writeFile(keyFile, `${KEY}\u001bmore\n`);
    await chmod(keyFile, 0o600);
    await withServer(
      speaksForKey,
      async (server) => {
        const runs = [
          { args: ['--api-key-file', keyFile], env: { TTS_BASE_URL: server.url }, source: `the API key in ${keyFile}` },
          { args: [], env: { TTS_BASE_URL: server.url, TTS_API_KEY: `${KEY}\u0001` }, source: 'the API key in TTS_API_KEY' },
          { args: [], env: { TTS_BASE_URL: server.url, TTS_API_KEY: `${KEY}\u{1f600}` }, source: 'the API key in TTS_API_KEY' },
        ];
        for (const run of runs) {
          for (const command of ['stream', 'realtime']) {
            const r = await runTtsInProcess([command, ...run.args, '-o', '-', 'x'], { env: run.env });
            assert.equal(r.code, 2, r.stderr);
            assert.ok(r.stderr.includes(`${run.source} holds a character that cannot be sent in an HTTP header`), r.stderr);
            assert.ok(!r.stderr.includes(KEY), r.stderr);
          }
        }
        assert.equal(server.requests.length, 0);
      },
    );
  });

  it('Ctrl-C while the key file is a FIFO nobody writes to: exit 130', { timeout: 30_000 }, async () => {
    const { execFileSync } = await import('node:child_process');
    const fifo = join(dir, 'key.fifo');
    execFileSync('mkfifo', ['-m', '644', fifo]);
    const child = spawn(process.execPath, [TTS_BIN, 'stream', '--api-key-file', fifo, 'x'], { env: cleanEnv({ TTS_BASE_URL: 'http://127.0.0.1:9' }), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    // The warning about its mode comes just before the read: interrupt once it is there.
    const warned = new Promise<void>((resolve) =>
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes('readable by others')) resolve();
      }),
    );
    const code = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await warned;
      child.kill('SIGINT');
      assert.equal(await code, 130, stderr);
    } finally {
      // A run that ignored the signal is not left behind (the test's timeout fails it).
      child.kill('SIGKILL');
    }
  });

  it('keeps text order after halving with several requests in flight', async () => {
    const text = 'Aaaa aaaa aaaa. Bbbbbbb bbb. Ccccccc ccc. Ddddddd ddd. Eeeeeee eee. Fffffff fff.';
    await withServer(
      async (_req, res, body) => {
        const input = (JSON.parse(body) as { input: string }).input;
        if ([...input].length > 14) refuse(res, 422, 'max_character_length_exceeded');
        else await speak(res, audioFor(input), 64, { delayMs: Math.random() * 5 });
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--max-chars', '30', '--concurrency', '4', text], { env: env(server) });
        assert.equal(r.code, 0, r.stderr);
        const accepted = server.requests.map((q) => (JSON.parse(q.body) as { input: string }).input).filter((i) => [...i].length <= 14);
        const ordered = [...new Set(accepted)].sort((a, b) => text.indexOf(a) - text.indexOf(b));
        assert.equal(ordered.join(''), text);
        assert.deepEqual(r.stdout, Buffer.concat(ordered.map(audioFor)));
      },
    );
  });

  it('sends a grapheme longer than --max-chars as it is instead of looping', async () => {
    await withServer(
      async (_req, res, body) => speak(res, audioFor((JSON.parse(body) as { input: string }).input)),
      async (server) => {
        const r = await runTtsInProcess(['stream', '--max-chars', '1', 'a👍🏽e\u0301'], { env: env(server), timeoutMs: 15_000 });
        assert.equal(r.code, 0, r.stderr);
        const inputs = server.requests.map((q) => (JSON.parse(q.body) as { input: string }).input);
        // e + U+0301 (2 code points) goes whole; the emoji with its skin tone is a piece with
        // nothing to speak, which is never sent (docs/cli.md §1 --max-chars).
        assert.deepEqual(inputs, ['a', 'e\u0301']);
      },
    );
  });

  it('retries a retriable error that follows an empty delta (no audio yet)', async () => {
    let n = 0;
    await withServer(
      async (_req, res) => {
        if (n++ === 0) {
          startEventStream(res);
          res.write(sseEvent('delta', { type: 'speech.audio.delta', delta: '' }));
          res.end(sseEvent('error', { type: 'error', error: { code: 'rate_limit_exceeded', message: 'slow down' } }));
        } else await speak(res, audioFor('x'));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', 'x'], { env: env(server) });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(server.requests.length, 2);
        assert.deepEqual(r.stdout, audioFor('x'));
      },
    );
  });

  it('requests again a piece that broke while it waited behind the head, even into a pipe', async () => {
    const text = 'First sentence here. Second sentence there.';
    let broken = false;
    await withServer(
      async (_req, res, body) => {
        const input = (JSON.parse(body) as { input: string }).input;
        if (input.startsWith('First')) {
          await speak(res, audioFor(input), 64, { delayMs: 20 });
        } else if (!broken) {
          broken = true;
          await speak(res, audioFor(input), 64, { stopAfter: 1 });
        } else {
          await speak(res, audioFor(input), 64);
        }
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--max-chars', '22', '--concurrency', '2', text], { env: env(server) });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(server.requests.length, 3);
        assert.deepEqual(r.stdout, Buffer.concat(['First sentence here. ', 'Second sentence there.'].map(audioFor)));
      },
    );
  });

  it('--lines: a fatal error ends the command at once, though stdin stays open', async () => {
    await withServer(
      (_req, res) => refuse(res, 401, 'invalid_api_key'),
      async (server) => {
        const child = spawn(process.execPath, [TTS_BIN, 'stream', '--lines'], { env: cleanEnv(env(server)), stdio: ['pipe', 'pipe', 'pipe'] });
        child.stdin.write('hello\n');
        // stdin is never closed before the process ends: it ended on its own, not at EOF.
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        assert.equal(code, 3);
        child.stdin.destroy();
      },
    );
  });

  it('--lines: Ctrl-C ends the command at once with 130, though stdin stays open', async () => {
    await withServer(
      async (_req, res, body) => speak(res, audioFor((JSON.parse(body) as { input: string }).input)),
      async (server) => {
        const child = spawn(process.execPath, [TTS_BIN, 'stream', '--lines'], { env: cleanEnv(env(server)), stdio: ['pipe', 'pipe', 'pipe'] });
        const firstAudio = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
        child.stdin.write('hello\n');
        await firstAudio;
        child.kill('SIGINT');
        // stdin stays open: ending with 130 proves the signal, not EOF, ended it.
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        assert.equal(code, 130);
        child.stdin.destroy();
      },
    );
  });

  it('SIGTERM during a write: exit 143, existing file untouched, no temp file', async () => {
    const target = join(dir, 'sigterm.wav');
    await writeFile(target, 'old');
    await withServer(
      (_req, res) => speak(res, audioFor('slow'.repeat(50)), 100, { delayMs: 50 }),
      async (server) => {
        const child = spawn(process.execPath, [TTS_BIN, 'stream', '-o', target, 'slow'], { env: cleanEnv(env(server)), stdio: ['ignore', 'pipe', 'pipe'] });
        await tempFileOf(dir, 'sigterm.wav');
        child.kill('SIGTERM');
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        assert.equal(code, 143);
        assert.equal(await readFile(target, 'utf8'), 'old');
        assert.deepEqual((await readdir(dir)).filter((f) => f.includes('sigterm')), ['sigterm.wav']);
      },
    );
  });
});
