/**
 * The client at the extremes (issue "Survive the real extremes"): a 1 MB book, endless or binary
 * input, signals while reading stdin, services that send only keep-alives, text from a service
 * that tries to drive the terminal, the input named as the output, a service that sends no audio,
 * a terminal of zero width, and crashes that must not leave temporary files. Each runs the real
 * `bin/tts.js` against loopback servers that misbehave on purpose; memory is the child's peak
 * RSS from /proc/PID/status.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, runTts, runTtsMeasured, TTS_BIN } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, sse, startEventStream, withServer, type TestServer } from '../helpers/servers.js';
import { startWsServer } from '../helpers/ws-servers.js';

const KEY = 'sk-extreme-0123456789abcdef';
const env = (server: { url: string }): Record<string, string> => ({ TTS_BASE_URL: server.url, TTS_API_KEY: KEY });

/** "Audio" that is the request's own text (padded to whole pcm16 samples), so order can be read back. */
function echoAudio(body: string): Buffer {
  const text = Buffer.from((JSON.parse(body) as { input: string }).input, 'utf8');
  return text.length % 2 === 0 ? text : Buffer.concat([text, Buffer.from(' ')]);
}

/** A fast service: the whole "audio" in one delta, then done. */
function echo(_req: unknown, res: ServerResponse, body: string): void {
  startEventStream(res);
  res.end(deltaEvent(echoAudio(body)) + doneEvent());
}

const words = (s: string): string => s.replace(/\s+/g, '');

describe('the client at the extremes', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-extremes-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('speaks a 1 MB text through a fast service in bounded time, peak RSS under 300 MB, all of it in order', async () => {
    const sentences: string[] = [];
    for (let i = 0, n = 0; n < 1_000_000; i++) {
      const s = `Sentence ${i} of the long book says something quite ordinary about day ${i % 365}. `;
      sentences.push(s);
      n += s.length;
    }
    const book = sentences.join('');
    const path = join(dir, 'book.txt');
    const out = join(dir, 'book.raw');
    await writeFile(path, book);
    await withServer(echo, async (server) => {
      const r = await runTtsMeasured(['stream', '-f', path, '-o', out, '--concurrency', '4', '-q'], { env: env(server), timeoutMs: 180_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.peakRssMb < 300, `peak RSS ${r.peakRssMb.toFixed(0)} MB`);
      assert.ok(server.requests.length >= 1000, `${server.requests.length} requests`);
      const audio = await readFile(out);
      assert.equal(words(audio.toString('utf8')), words(book), 'every piece, once, in text order');
    });
    assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.tmp')), []);
  });

  for (const [what, args, input] of [
    ['-f /dev/zero', ['-f', '/dev/zero'], undefined],
    ['-f /dev/urandom', ['-f', '/dev/urandom'], undefined],
    ['stdin from /dev/zero', [], '/dev/zero'],
  ] as const) {
    it(`refuses ${what} at the first bad byte (exit 2), without reading on`, async () => {
      const out = join(dir, 'zero.raw');
      const r = await runTtsMeasured(['stream', ...args, '-o', out], {
        env: { TTS_BASE_URL: 'http://127.0.0.1:9', TTS_API_KEY: KEY },
        timeoutMs: 20_000,
        ...(input === undefined ? {} : { stdinPath: input }),
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /(NUL byte|not valid UTF-8 text).* at offset \d+/);
      assert.ok(r.peakRssMb < 150, `peak RSS ${r.peakRssMb.toFixed(0)} MB`);
      assert.equal(existsSync(out), false);
    });
  }

  it('refuses a text over --max-input (exit 2): a file before any request, stdin when it gets there', async () => {
    const path = join(dir, 'big.txt');
    await writeFile(path, 'Hello there. '.repeat(200));
    await withServer(echo, async (server) => {
      const file = await runTtsInProcess(['stream', '-f', path, '--max-input', '1K', '-o', join(dir, 'big.raw')], { env: env(server) });
      assert.equal(file.code, 2, file.stderr);
      assert.match(file.stderr, /larger than --max-input \(1 KiB\)/);
      assert.equal(server.requests.length, 0);
      const stdin = await runTtsInProcess(['stream', '--max-input', '1KiB', '-o', join(dir, 'big.raw')], { env: env(server), input: 'Hello there. '.repeat(200) });
      assert.equal(stdin.code, 2, stdin.stderr);
      assert.equal(existsSync(join(dir, 'big.raw')), false);
    });
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} while waiting on stdin stops (exit ${code}), leaving no file`, async () => {
      const out = join(dir, `waiting-${signal}.raw`);
      let signalled = false;
      // Signalled once --verbose says it reads stdin (its stop handlers are in place then); a run
      // that does not stop is killed by the timeout and fails on its exit code.
      const r = await runTts(['stream', '--verbose', '-o', out], {
        env: { TTS_BASE_URL: 'http://127.0.0.1:9', TTS_API_KEY: KEY },
        keepStdinOpen: true,
        timeoutMs: 30_000,
        onSpawn: (child) => {
          let seen = '';
          child.stderr!.on('data', (d: Buffer) => {
            seen += d.toString('utf8');
            if (!signalled && seen.includes('tts: reading the text from standard input\n')) {
              signalled = true;
              child.kill(signal);
            }
          });
        },
      });
      assert.ok(signalled, `never said it reads stdin:\n${r.stderr}`);
      assert.equal(r.signal, null, `ended by ${r.signal ?? ''}, not by its own exit`);
      assert.equal(r.code, code, r.stderr);
      assert.equal(existsSync(out), false);
    });
  }

  /** Each keeps the stream open and sends something that is not audio, `every` ms, forever. */
  const silentServices: [string, (res: ServerResponse, every: (ms: number, send: () => void) => void) => void][] = [
    ['only keep-alive comments', (res, every) => every(200, () => res.write(': keep-alive\n\n'))],
    ['only unknown events', (res, every) => every(200, () => res.write(sse('ping', { type: 'ping' })))],
    ['one byte at a time of an event that never ends', (res, every) => {
      const text = `event: delta\ndata: {"type":"speech.audio.delta","delta":"${'A'.repeat(10_000)}`;
      let i = 0;
      every(300, () => res.write(text[i++ % text.length]!));
    }],
    ['a delta, then only keep-alives', (res, every) => {
      res.write(deltaEvent(Buffer.alloc(480)));
      every(200, () => res.write(': keep-alive\n\n'));
    }],
  ];
  for (const [what, behave] of silentServices) {
    it(`--timeout is about audio: a service sending ${what} times out (exit 6)`, async () => {
      const timers: NodeJS.Timeout[] = [];
      await withServer(
        (_req, res) => {
          startEventStream(res);
          behave(res, (ms, send) => timers.push(setInterval(send, ms)));
        },
        async (server) => {
          const out = join(dir, 'silent.raw');
          // Exit 6 and the message prove the timeout fired; how fast is for `npm run bench`.
          const r = await runTtsInProcess(['stream', '--timeout', '2', '--retries', '0', '-o', out, 'Hello.'], { env: env(server), timeoutMs: 20_000 });
          timers.forEach((t) => clearInterval(t));
          assert.equal(r.code, 6, r.stderr);
          assert.match(r.stderr, /no audio from the service for 2 s \(--timeout\)/);
          assert.equal(existsSync(out), false);
        },
      );
      timers.forEach((t) => clearInterval(t));
    });
  }

  it('--timeout is about audio on the WebSocket too: unknown messages do not reset it (exit 6)', async () => {
    const timers: NodeJS.Timeout[] = [];
    const server = await startWsServer((c) => {
      c.ws.send(JSON.stringify({ type: 'tts_session.created', session: {} }));
      c.ws.once('message', () => {
        c.ws.send(JSON.stringify({ type: 'tts_session.updated', session: {} }));
        timers.push(setInterval(() => c.ws.send(JSON.stringify({ type: 'rate_limits.updated', remaining: 1 })), 200));
      });
    });
    try {
      const r = await runTtsInProcess(['realtime', '--timeout', '2', '--retries', '0', '-o', join(dir, 'ws.raw'), 'Hello.'], {
        env: { TTS_BASE_URL: server.url.replace(/^ws/, 'http'), TTS_API_KEY: KEY },
        timeoutMs: 20_000,
      });
      assert.equal(r.code, 6, r.stderr);
      assert.match(r.stderr, /no audio from the service for 2 s/);
    } finally {
      timers.forEach((t) => clearInterval(t));
      await server.close();
    }
  });

  const hostile = '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\r\nfake line: all good';
  it('prints whatever the service says with control characters escaped (HTTP error, SSE error event, item ids)', async () => {
    const refusal = async (server: TestServer): Promise<void> => {
      const r = await runTtsInProcess(['stream', '-o', join(dir, 'x.raw'), '--verbose', '--json', 'Hello.'], { env: env(server) });
      assert.equal(r.code, 4, r.stderr);
      for (const bad of ['\u001b', '\u0007', '\u009b', '\u202e', '\r']) assert.ok(!r.stderr.includes(bad), `raw ${JSON.stringify(bad)} on stderr`);
      assert.match(r.stderr, /\\x1b\]0;pwned\\x07\\x1b\[2J/);
      assert.ok(!r.stderr.split('\n').some((l) => l.startsWith('fake line')), 'no faked line');
    };
    await withServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'invalid_parameters', message: hostile } }));
    }, refusal);
    await withServer((_req, res) => {
      startEventStream(res);
      res.end(sse('error', { type: 'error', error: { code: 'voice_not_found', message: hostile } }));
    }, refusal);
    await withServer((_req, res) => {
      startEventStream(res);
      res.end(deltaEvent(Buffer.alloc(480), `item_${hostile}`) + doneEvent());
    }, async (server) => {
      const r = await runTtsInProcess(['stream', '-o', join(dir, 'x.raw'), '--verbose', '--json', 'Hello.'], { env: env(server) });
      assert.equal(r.code, 0, r.stderr);
      for (const bad of ['\u001b', '\u0007', '\u009b', '\u202e', '\r']) assert.ok(!r.stderr.includes(bad), `raw ${JSON.stringify(bad)} on stderr`);
      const summary = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { item_ids: string[] };
      assert.deepEqual(summary.item_ids, [`item_${hostile}`], 'the JSON still carries the exact id');
    });
  });

  it('refuses -o naming the -f file (same inode, any name), and -o ending in /', async () => {
    const text = join(dir, 'same.txt');
    await writeFile(text, 'Hello there.');
    await withServer(echo, async (server) => {
      for (const args of [['-f', text, '-o', text], ['-f', text, '-o', join(dir, '.', 'same.txt')]]) {
        const r = await runTtsInProcess(['stream', ...args], { env: env(server) });
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /is the file the text is read from/);
      }
      const viaStdin = spawn(process.execPath, [TTS_BIN, 'stream', '-o', text], { env: cleanEnv(env(server)), stdio: [await openRead(text), 'ignore', 'pipe'] });
      const code = await new Promise((resolve) => viaStdin.on('close', resolve));
      assert.equal(code, 2);
      assert.equal(await readFile(text, 'utf8'), 'Hello there.', 'the text is untouched');
      const folder = await runTtsInProcess(['stream', '-o', join(dir, 'newdir') + '/', 'Hello.'], { env: env(server) });
      assert.equal(folder.code, 2, folder.stderr);
      assert.match(folder.stderr, /names a folder/);
      assert.equal(existsSync(join(dir, 'newdir')), false);
      assert.equal(server.requests.length, 0);
    });
  });

  it('a service that answers with done alone writes nothing and exits 4 (no_audio), keeping an existing file', async () => {
    const out = join(dir, 'kept.wav');
    await writeFile(out, 'precious');
    await withServer((_req, res) => {
      startEventStream(res);
      res.end(doneEvent());
    }, async (server) => {
      for (const target of [out, join(dir, 'new.raw')]) {
        const r = await runTtsInProcess(['stream', '-o', target, 'Hello.'], { env: env(server) });
        assert.equal(r.code, 4, r.stderr);
        assert.match(r.stderr, /returned no audio for this text \[no_audio\]/);
      }
      assert.equal(await readFile(out, 'utf8'), 'precious');
      assert.equal(existsSync(join(dir, 'new.raw')), false);
    });
  });

  it('an odd number of pcm16 bytes (or float32 bytes not a multiple of 4) at done is a protocol error (exit 6)', async () => {
    for (const [format, size] of [['pcm16', 481], ['float32', 962]] as const) {
      await withServer((_req, res) => {
        startEventStream(res);
        res.end(deltaEvent(Buffer.alloc(size)) + doneEvent());
      }, async (server) => {
        const out = join(dir, `odd-${format}.wav`);
        const r = await runTtsInProcess(['stream', '--format', format, '--retries', '0', '-o', out, 'Hello.'], { env: env(server) });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /not a whole number of \d-byte samples/);
        assert.equal(existsSync(out), false);
      });
    }
  });

  it('finishes under a terminal that reports zero columns (no endless spinner)', async () => {
    const text = join(dir, 'tty.txt');
    const out = join(dir, 'tty.raw');
    await writeFile(text, 'Hello there. '.repeat(20));
    await withServer(async (_req, res, body) => {
      startEventStream(res);
      // Slow enough that a spinner would get to draw.
      await new Promise((r) => setTimeout(r, 400));
      res.end(deltaEvent(echoAudio(body)) + doneEvent());
    }, async (server) => {
      const command = `stty cols 0 rows 0; ${JSON.stringify(process.execPath)} ${JSON.stringify(TTS_BIN)} stream -f ${JSON.stringify(text)} -o ${JSON.stringify(out)}`;
      // Asynchronously: the fake service answers from this very process.
      const child = spawn('script', ['-qfec', command, '/dev/null'], { env: cleanEnv({ ...env(server), TERM: 'xterm' }), stdio: ['ignore', 'pipe', 'ignore'] });
      const parts: Buffer[] = [];
      let size = 0;
      child.stdout.on('data', (d: Buffer) => {
        size += d.length;
        if (size < 1024 * 1024) parts.push(d);
      });
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const code = await new Promise((resolve) => child.on('close', resolve));
      clearTimeout(killer);
      const typescript = Buffer.concat(parts);
      assert.equal(code, 0, typescript.toString());
      assert.ok(size < 64 * 1024, `${size} bytes written to the terminal`);
      assert.ok(existsSync(out));
    });
  });

  it('a crash takes its temporary file with it, and a later run removes one a killed run left', async () => {
    const hook = join(dir, 'crash-hook.mjs');
    await writeFile(hook, "setTimeout(() => { throw new Error('injected crash'); }, 700);\n");
    const out = join(dir, 'crash.raw');
    await withServer(async (_req, res) => {
      startEventStream(res);
      for (let i = 0; i < 30 && !res.destroyed; i++) {
        res.write(deltaEvent(Buffer.alloc(4800)));
        await new Promise((r) => setTimeout(r, 100));
      }
      res.end(doneEvent());
    }, async (server) => {
      const r = await runTts(['stream', '-o', out, 'Hello.'], { env: env(server), nodeArgs: ['--import', hook] });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /internal error: .*injected crash/);
    });
    assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('.crash.raw.')), []);

    // A run killed outright leaves its file; the next run writing that name sweeps it.
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => dead.on('close', resolve));
    const stale = join(dir, `.swept.raw.tts-${dead.pid}-0123456789ab.tmp`);
    const alive = join(dir, `.swept.raw.tts-${process.pid}-0123456789ab.tmp`);
    await writeFile(stale, 'left by a killed run');
    await writeFile(alive, 'still being written by a live process');
    await withServer(echo, async (server) => {
      const r = await runTtsInProcess(['stream', '-o', join(dir, 'swept.raw'), 'Hello.'], { env: env(server) });
      assert.equal(r.code, 0, r.stderr);
    });
    assert.equal(existsSync(stale), false);
    assert.equal(existsSync(alive), true);
  });
});

async function openRead(path: string): Promise<number> {
  const { openSync } = await import('node:fs');
  return openSync(path, 'r');
}
