/**
 * A long Japanese text through the real built-in server with tight limits (500 characters,
 * 1 request at a time) and a connection cut mid-stream by a proxy: the WAV still comes out
 * whole — halved pieces, the busy piece re-queued, the broken piece requested again after the
 * file was cut back — and it is as long as the same text without the fault.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseWavHeader, wavFileInfo } from '../helpers/wav-reader.js';
import { runTts } from '../helpers/cli.js';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';

const KEY = 'book-test-key-0123456789';

/** About `n` characters of varied Japanese prose with kanji, numbers and a Latin word. */
function bookText(n: number): string {
  const sentences = [
    '今日は良い天気です。',
    '東京タワーに行きました。',
    '駅の近くに新しい図書館ができて、毎週末そこで本を読んでいます。',
    '彼は2024年にGoogleで働き始めました。',
    '雨が降っても、私たちは公園を散歩するのが好きです！',
    '明日の会議は午後三時からですか？',
    '山の上から見る景色は本当に美しかった。\n',
  ];
  let text = '';
  for (let i = 0; text.length < n; i++) text += sentences[i % sentences.length];
  return text;
}

/** A TCP proxy that, on connection number `cutAt` (1-based), cuts it after `cutAfter` response bytes. */
async function startCuttingProxy(target: number, cutAt: number, cutAfter: number): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    connections++;
    const cut = connections === cutAt;
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    let forwarded = 0;
    client.pipe(upstream);
    upstream.on('data', (d: Buffer) => {
      forwarded += d.length;
      if (cut && forwarded > cutAfter) {
        client.write(d.subarray(0, d.length - (forwarded - cutAfter)), () => {
          client.destroy();
          upstream.destroy();
        });
        return;
      }
      client.write(d);
    });
    upstream.on('end', () => client.end());
    for (const s of [client, upstream]) s.on('error', () => {
      client.destroy();
      upstream.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('a long Japanese book through a limited server with a fault', () => {
  let dir: string;
  /** The real built-in server, in this process (the run under test is the child). */
  let serve: InProcessServe;
  let port: number;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-book-'));
    serve = await startServeInProcess(['--port', '0', '--max-chars', '500', '--max-concurrent', '1', '--rate-limit', '1000/min', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY });
    port = Number(new URL(serve.base).port);
  });
  after(async () => {
    await serve.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes one whole WAV, as long as without the fault', async () => {
    const book = join(dir, 'book.txt');
    // Pieces of the client's 1000 characters are refused (the server takes 500) and halved: the
    // first connections are those of any longer book, and the third carries a piece's audio.
    await writeFile(book, bookText(1500));
    const clean = join(dir, 'clean.wav');
    const env = { TTS_BASE_URL: `http://127.0.0.1:${port}`, TTS_API_KEY: KEY };
    // The reference needs no process of its own; the run with the fault is the real binary.
    const ok = await runTtsInProcess(['stream', '--voice', 'ja-man-1', '-f', book, '-o', clean, '--json'], { env, timeoutMs: 120_000 });
    assert.equal(ok.code, 0, ok.stderr);

    // The third connection is cut 40 kB into its answer: well inside a piece's audio.
    const proxy = await startCuttingProxy(port, 3, 40_000);
    try {
      const out = join(dir, 'book.wav');
      const r = await runTts(['stream', '--voice', 'ja-man-1', '-f', book, '-o', out, '--json'], {
        env: { TTS_BASE_URL: `http://127.0.0.1:${proxy.port}`, TTS_API_KEY: KEY },
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /cutting back and requesting it again/);
      const summary = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { requests: number; bytes: number };
      const cleanSummary = JSON.parse(ok.stderr.trim().split('\n').at(-1)!) as { requests: number; bytes: number };
      assert.ok(summary.requests > cleanSummary.requests, `${summary.requests} requests with the fault, ${cleanSummary.requests} without`);

      const bytes = await readFile(out);
      const h = parseWavHeader(bytes);
      assert.equal(h.dataBytes, bytes.length - h.dataOffset);
      assert.equal(h.dataBytes, summary.bytes);
      const cleanHeader = parseWavHeader(await readFile(clean));
      const seconds = h.dataBytes / 48000;
      const cleanSeconds = cleanHeader.dataBytes / 48000;
      assert.ok(seconds > 100, `${seconds} s of speech for 1500 characters`);
      // No piece lost or doubled: a piece is tens of seconds, the tolerance is half a second.
      assert.ok(Math.abs(seconds - cleanSeconds) < 0.5, `${seconds} s with the fault, ${cleanSeconds} s without`);
      assert.equal(wavFileInfo(out).samples, h.dataBytes / 2);
    } finally {
      await proxy.close();
    }
  });
});
