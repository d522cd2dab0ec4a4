/**
 * `tts serve` end to end (docs/cli.md §1, §3, §5): the real `bin/tts.js serve` in a child process
 * where signals or the process matter (else in-process), and `tts say`, `stream` and `realtime`
 * talking to it with TTS_BASE_URL / TTS_API_KEY — in-process, but for one real `tts stream`
 * against the server with a generated key.
 * Port 0 prints the real port; a generated key is printed once and works; a non-loopback address
 * without keys is refused (exit 2); the limit flags reach the service; SIGTERM and SIGINT stop it
 * alike (exit 0): running streams get a short grace period to finish (the drain), then those still
 * running end (an `error` event on SSE, error event + close 1001 on the WebSocket); `tts voices`
 * lists the four voices.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SHUTDOWN_GRACE_SECONDS } from '../../src/cli/serve.js';
import { parseWavHeader } from '../helpers/wav-reader.js';
import { runTts } from '../helpers/cli.js';
import { allEvents, errorBody, postSse, waitFor } from '../helpers/serve-http.js';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';
import { connect, refused, update } from '../helpers/serve-ws.js';

const KEY_A = 'sk-serve-e2e-AAAA-0123456789';
const KEY_B = 'sk-serve-e2e-BBBB-0123456789';
const LONG = 'This is a long text for a stream that is still running when the server is told to stop. '.repeat(40);
/** About 10 s of speech: synthesized well within the grace period, even on a loaded machine. */
const MEDIUM = 'This stream is still running when the server is told to stop. '.repeat(2);

/** Waits for the child to exit; fails when it takes longer than `ms`. */
async function exitWithin(p: ServeProcess, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`tts serve still running after ${ms} ms:\n${p.stderr()}`)), ms).unref());
  try {
    return await Promise.race([p.exited, timeout]);
  } catch (error) {
    p.child.kill('SIGKILL');
    throw error;
  }
}

describe('tts serve (keys from TTS_SERVER_API_KEYS)', () => {
  let dir: string;
  // In this process (main's serve); the signal tests below start the real `tts serve`.
  let srv: InProcessServe;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-serve-'));
    srv = await startServeInProcess(['--port', '0'], { TTS_SERVER_API_KEYS: ` ${KEY_A} , ${KEY_B} ` });
  });
  after(async () => {
    await srv.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the real port it listens on for port 0, both URLs, and no key', () => {
    const { port, hostname } = new URL(srv.base);
    assert.equal(hostname, '127.0.0.1');
    assert.ok(Number(port) > 0, srv.stderr());
    assert.equal(srv.wsUrl, `ws://127.0.0.1:${port}/v1/realtime_tts`);
    assert.doesNotMatch(srv.stderr(), /API key/);
    assert.ok(!srv.stderr().includes(KEY_A) && !srv.stderr().includes(KEY_B));
  });

  it('serves `tts say -o x.wav` with an exact WAV, and `tts stream` with the same bytes as the offline engine', async () => {
    const env = { TTS_BASE_URL: srv.base, TTS_API_KEY: KEY_B };
    const wav = join(dir, 'x.wav');
    const said = await runTtsInProcess(['say', '-o', wav, '--voice', 'en-woman-1', 'Hello from the built-in server.'], { env });
    assert.equal(said.code, 0, said.stderr);
    assert.equal(said.stdout.length, 0);
    const bytes = await readFile(wav);
    const h = parseWavHeader(bytes);
    assert.equal(h.formatTag, 1);
    assert.equal(h.sampleRate, 24000);
    assert.equal(h.channels, 1);
    assert.equal(h.dataBytes, bytes.length - h.dataOffset);
    assert.ok(h.dataBytes / 48000 > 1, `${h.dataBytes / 48000} s`);

    const streamed = await runTtsInProcess(['stream', '--voice', 'en-man-1', 'Hello there.'], { env });
    assert.equal(streamed.code, 0, streamed.stderr);
    assert.ok(streamed.stdout.length > 24000 && streamed.stdout.length % 2 === 0, `${streamed.stdout.length} bytes`);
    const offline = await runTtsInProcess(['stream', '--offline', '--voice', 'en-man-1', 'Hello there.']);
    assert.equal(offline.code, 0, offline.stderr);
    assert.ok(streamed.stdout.equals(offline.stdout), 'the server speaks exactly as the embedded engine does');
  });

  it('serves `tts realtime -o` over the WebSocket with the same key', async () => {
    const out = join(dir, 'rt.wav');
    const r = await runTtsInProcess(['realtime', '-o', out, '-r', '16000', '--voice', 'en-man-1', 'Hello there.'], { env: { TTS_BASE_URL: srv.base, TTS_API_KEY: KEY_A } });
    assert.equal(r.code, 0, r.stderr);
    const h = parseWavHeader(await readFile(out));
    assert.equal(h.sampleRate, 16000);
    assert.ok(h.dataBytes > 16000);
  });

  it('refuses an unknown key: the client exits 3 naming invalid_api_key', async () => {
    const r = await runTtsInProcess(['stream', 'Hello'], { env: { TTS_BASE_URL: srv.base, TTS_API_KEY: 'sk-not-a-key-000000' } });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /invalid_api_key/);
    assert.equal(r.stdout.length, 0);
  });

  it('writes one access-log line per request on stderr, without keys or text', () => {
    const log = srv.stderr();
    const lines = log.split('\n').filter((l) => /(POST \/v1\/tts\/sse|GET \/v1\/realtime_tts) \d{3} /.test(l));
    // say, stream, realtime, the unknown key (the client does not retry a 401).
    assert.equal(lines.length, 4, log);
    assert.equal(lines.filter((l) => / 401 /.test(l)).length, 1);
    assert.ok(!log.includes(KEY_A) && !log.includes(KEY_B) && !log.includes('sk-not-a-key'));
    assert.doesNotMatch(log, /Hello/);
  });

  it('exits 7 when the port is taken', async () => {
    const { port } = new URL(srv.base);
    const r = await runTtsInProcess(['serve', '--port', port], { env: { TTS_SERVER_API_KEYS: KEY_A } });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /EADDRINUSE/);
  });

  it('on SIGTERM drains: new connections refused, running streams get the grace period, then end with an error event / close 1001; exit 0', async (t) => {
    // The real process: the signal comes from outside.
    const srv = await startServe(['--port', '0'], { TTS_SERVER_API_KEYS: ` ${KEY_A} , ${KEY_B} ` });
    t.after(() => srv.child.kill('SIGKILL'));
    const res = await postSse(srv.base, { input: LONG, voice: 'en-man-1' }, KEY_A);
    assert.equal(res.status, 200);
    const iterator = res.events[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.event, 'delta');
    const s = await connect(srv.wsUrl, KEY_B);
    await s.next('tts_session.created');
    s.ws.send(update({ input_text: LONG, preset_voice: 'en_woman_1' }));
    await s.next('tts.output_audio.delta');
    // Both clients stop reading, so neither stream can finish within the grace period.
    s.ws.pause();

    const t0 = performance.now();
    srv.child.kill('SIGTERM');
    while (!/SIGTERM: stopping/.test(srv.stderr())) await sleep(10);
    await assert.rejects(postSse(srv.base, { input: 'Hi.' }, KEY_A), /ECONNREFUSED/, 'no new connection during the drain');
    // The server says when the grace period is over; the streams' last events are sent then.
    assert.ok(await waitFor(() => /s are over: ending the streams still running/.test(srv.stderr()), SHUTDOWN_GRACE_SECONDS * 1000 + 5000), srv.stderr());
    s.ws.resume();
    const rest: string[] = [];
    let lastData: Record<string, unknown> | undefined;
    for (let r = await iterator.next(); r.done !== true; r = await iterator.next()) {
      rest.push(r.value.event);
      lastData = r.value.data;
    }
    assert.equal(rest.at(-1), 'error', `the stream ended with ${rest.at(-1)}`);
    assert.equal((lastData?.['error'] as { code: string }).code, 'server_error');
    const closed = await s.closed;
    assert.equal(closed.code, 1001);
    assert.equal(s.events.at(-1)?.type, 'error');
    const exit = await exitWithin(srv, SHUTDOWN_GRACE_SECONDS * 1000 + 5000);
    assert.equal(exit.code, 0, srv.stderr());
    // A timer never fires early: the streams had the whole grace period (how much later it
    // exits is a figure for the bench, not a bound here).
    assert.ok(exit.at - t0 >= SHUTDOWN_GRACE_SECONDS * 1000, `exited ${(exit.at - t0).toFixed(0)} ms after SIGTERM`);
  });
});

/**
 * Connects to 127.0.0.1:`port` from another process while this one waits (spawnSync): the
 * kernel completes the handshake for a listening socket whether or not its process runs.
 * @returns `connected`, or the connect error's code (`ECONNREFUSED` once nothing listens).
 */
function connectFromOutside(port: number): string {
  const script = "const s = require('node:net').connect(Number(process.argv[1]), '127.0.0.1'); s.on('connect', () => { process.stdout.write('connected'); process.exit(0); }); s.on('error', (e) => { process.stdout.write(String(e.code)); process.exit(0); });";
  return spawnSync(process.execPath, ['-e', script, String(port)], { encoding: 'utf8' }).stdout;
}

describe('tts serve: stopping (docs/cli.md §5)', () => {
  it('says “stopping” only once the listener is closed: a client that connects the moment the line is written is refused, never accepted and then reset', async () => {
    let port = 0;
    let probe: string | undefined;
    const srv = await startServeInProcess(['--port', '0', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY_A }, undefined, (text) => {
      // Within the write itself: a client that read the line could connect no sooner.
      if (text.includes(': stopping;')) probe = connectFromOutside(port);
    });
    port = Number(new URL(srv.base).port);
    assert.equal(await srv.stop('SIGTERM', true), 0, srv.stderr());
    assert.match(srv.stderr(), /SIGTERM: stopping;/);
    assert.equal(probe, 'ECONNREFUSED', 'nothing listens once the line is written');
  });
});

describe('tts serve with a generated key', () => {
  it('prints a key once, that key works, and SIGINT stops it with exit 0', async () => {
    const srv = await startServe(['--port', '0']);
    try {
      const m = /API key for this server \(shown once\): (\S+)\n/.exec(srv.stderr());
      assert.ok(m !== null, srv.stderr());
      const key = m[1]!;
      assert.match(key, /^tts_[A-Za-z0-9_-]{43}$/);
      assert.ok(srv.stderr().includes(`OpenAI speech on ${srv.base}/v1/audio/speech\n`), `the start-up line names the OpenAI route: ${srv.stderr()}`);
      const r = await runTts(['stream', '--voice', 'en-man-1', 'Hi.'], { env: { TTS_BASE_URL: srv.base, TTS_API_KEY: key } });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.length > 0);
      const wrong = await postSse(srv.base, { input: 'Hi.' }, `${key}x`);
      assert.equal(wrong.status, 401);
      await wrong.text();
      assert.equal(srv.stderr().split(key).length - 1, 1, 'the key is printed exactly once');
      const t0 = performance.now();
      srv.child.kill('SIGINT');
      const exit = await exitWithin(srv, 5000);
      assert.equal(exit.code, 0);
      // Nothing was running: no grace period to wait for.
      assert.ok(exit.at - t0 < 2000);
    } finally {
      srv.child.kill('SIGKILL');
    }
  });

  it('SIGINT lets a stream in flight finish with done (the drain), then exits 0; so does SIGTERM', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const srv = await startServe(['--port', '0'], { TTS_SERVER_API_KEYS: KEY_A });
      try {
        // Warm the engine first: what is measured is the drain, not a cold start.
        await allEvents(await postSse(srv.base, { input: 'Warm up.', voice: 'en-man-1' }, KEY_A));
        const res = await postSse(srv.base, { input: MEDIUM, voice: 'en-man-1' }, KEY_A);
        const iterator = res.events[Symbol.asyncIterator]();
        assert.equal((await iterator.next()).value?.event, 'delta');
        srv.child.kill(signal);
        let last = '';
        for (let r = await iterator.next(); r.done !== true; r = await iterator.next()) last = r.value.event;
        assert.equal(last, 'done', `${signal}: the stream in flight was finished`);
        const exit = await exitWithin(srv, SHUTDOWN_GRACE_SECONDS * 1000 + 5000);
        assert.equal(exit.code, 0, `${signal}: ${srv.stderr()}`);
        // The stream was still running when the signal came: its access-log line (written when
        // it ends) follows the notice.
        const lines = srv.stderr().split('\n');
        const notice = lines.findIndex((l) => l.includes(`${signal}: stopping; running streams get ${SHUTDOWN_GRACE_SECONDS} s to finish`));
        const streamLine = lines.findLastIndex((l) => / POST \/v1\/tts\/sse 200 /.test(l));
        assert.ok(notice !== -1 && notice < streamLine, srv.stderr());
      } finally {
        srv.child.kill('SIGKILL');
      }
    }
  });

  it('refuses --host 0.0.0.0 without configured keys: exit 2, nothing served', async () => {
    const r = await runTtsInProcess(['serve', '--host', '0.0.0.0', '--port', '0']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /refusing to serve on 0\.0\.0\.0 without configured keys/);
    assert.match(r.stderr, /TTS_SERVER_API_KEYS|--api-keys-file/);
    assert.doesNotMatch(r.stderr, /serving|API key for this server/);
  });

  it('binds 0.0.0.0 when keys come from --api-keys-file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-serve-keys-'));
    const file = join(dir, 'keys');
    await writeFile(file, `# keys for the test\n${KEY_A}\n\n${KEY_B}\r\n`);
    const srv = await startServeInProcess(['--host', '0.0.0.0', '--port', '0', '--api-keys-file', file]);
    try {
      const { port } = new URL(srv.base);
      const res = await postSse(`http://127.0.0.1:${port}`, { input: 'Hi.', voice: 'en-man-1' }, KEY_B);
      assert.equal(res.status, 200);
      assert.equal((await allEvents(res)).at(-1)?.event, 'done');
      const bad = await postSse(`http://127.0.0.1:${port}`, { input: 'Hi.' }, '# keys for the test');
      assert.equal(bad.status, 401);
      await bad.text();
      assert.equal(await srv.stop('SIGTERM', true), 0);
    } finally {
      await srv.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tts serve limit flags', () => {
  it('--max-chars, --rate-limit, --max-concurrent and --quota-chars reach the service', async () => {
    const srv = await startServeInProcess(['--port', '0', '--max-chars', '10', '--rate-limit', '4/min', '--max-concurrent', '1', '--quota-chars', '15'], {
      TTS_SERVER_API_KEYS: `${KEY_A},${KEY_B}`,
    });
    try {
      // A session waiting for its update holds key A's only slot on both channels.
      const firstRequest = performance.now();
      const s = await connect(srv.wsUrl, KEY_A);
      await s.next('tts_session.created');
      const busy = await postSse(srv.base, { input: 'Hi.' }, KEY_A);
      assert.equal(busy.status, 429);
      assert.equal(errorBody(await busy.text()).code, 'too_many_concurrent_requests');
      s.ws.close();
      await s.closed;
      // The server frees the slot, then logs the session's end.
      assert.ok(await waitFor(() => / GET \/v1\/realtime_tts 101 close=/.test(srv.stderr()), 5000), srv.stderr());
      const long = await postSse(srv.base, { input: 'eleven char' }, KEY_A);
      assert.equal(long.status, 422);
      assert.equal(errorBody(await long.text()).code, 'max_character_length_exceeded');
      const fourth = await postSse(srv.base, { input: 'Hi.', voice: 'en-man-1' }, KEY_A);
      assert.equal(fourth.status, 200);
      assert.equal(fourth.headers['ratelimit-policy'], '"per-key";q=4;w=60');
      await allEvents(fourth);
      const limited = await postSse(srv.base, { input: 'Hi.' }, KEY_A);
      assert.equal(limited.status, 429);
      assert.equal(errorBody(await limited.text()).code, 'rate_limit_exceeded');
      // 4 per minute is one per 15 s: the wait counts from the first request, so it is 15 s less
      // the time since then (rounded up; whatever that time is on a loaded machine).
      const retryAfter = Number(limited.headers['retry-after']);
      const since = (performance.now() - firstRequest) / 1000;
      assert.ok(retryAfter >= Math.floor(15 - since) && retryAfter <= 15, `Retry-After: ${retryAfter}, ${since.toFixed(1)} s after the first request`);
      const ws = await refused(srv.wsUrl, KEY_A);
      assert.equal(ws.status, 429);
      assert.equal(errorBody(ws.body).code, 'rate_limit_exceeded');

      const ten = await postSse(srv.base, { input: 'Hello you.', voice: 'en-man-1' }, KEY_B);
      assert.equal(ten.status, 200);
      await allEvents(ten);
      const over = await postSse(srv.base, { input: 'Hello!' }, KEY_B);
      assert.equal(over.status, 402);
      assert.equal(errorBody(await over.text()).code, 'quota_exceeded');
      assert.equal(await srv.stop('SIGTERM', true), 0);
    } finally {
      await srv.stop();
    }
  });

  it('refuses bad flag values with exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--port', '0', '--rate-limit', 'fast'], /--rate-limit/],
      [['--port', '99999'], /--port/],
      [['--port', '0', '--max-concurrent', '0'], /--max-concurrent/],
      [['--port', '0', '--api-keys-file', '/nonexistent/keys'], /cannot read \/nonexistent\/keys/],
    ];
    for (const [args, message] of cases) {
      const r = await runTtsInProcess(['serve', ...args], { env: { TTS_SERVER_API_KEYS: KEY_A } });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });
});

describe('tts voices', () => {
  const expected = [
    { id: 'ja-man-1', language: 'ja', gender: 'male' },
    { id: 'ja-woman-1', language: 'ja', gender: 'female' },
    { id: 'en-man-1', language: 'en', gender: 'male' },
    { id: 'en-woman-1', language: 'en', gender: 'female' },
  ];

  it('lists the four voices with language and gender', async () => {
    const r = await runTtsInProcess(['voices']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.toString('utf8').trim().split('\n');
    assert.match(lines[0]!, /^VOICE\s+LANGUAGE\s+GENDER/);
    assert.equal(lines.length, 5);
    for (const v of expected) assert.ok(lines.some((l) => new RegExp(`^${v.id}\\s+${v.language}\\s+${v.gender}\\b`).test(l)), `${v.id}:\n${r.stdout}`);
  });

  it('--json prints one array with id, language and gender', async () => {
    const r = await runTtsInProcess(['voices', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const voices = JSON.parse(r.stdout.toString('utf8')) as { id: string; language: string; gender: string }[];
    assert.deepEqual(
      voices.map(({ id, language, gender }) => ({ id, language, gender })),
      expected,
    );
  });
});
