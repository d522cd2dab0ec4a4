/**
 * `tts serve` with clients that do not read (docs/cli.md §5, issue 9 §9): four clients (two SSE,
 * two WebSocket, raw sockets that never read) asking for long texts must not grow the server's
 * memory without bound — the engine stops synthesizing a stream whose socket does not drain —
 * and must not keep other clients from being served; a stream that accepts nothing for
 * `--write-timeout` is closed and its concurrency slot freed. Memory is the serve process's
 * VmRSS from /proc/PID/status, sampled until the fifth client is served (its course over 40 s is
 * `npm run bench`'s server-stalled figure).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { allEvents, audioOf, errorBody, postSse, waitFor } from '../helpers/serve-http.js';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';
import { connect, update } from '../helpers/serve-ws.js';
import { processMemory, stalledSse, stalledWs, type StalledClient } from '../helpers/stalled-clients.js';

const KEY_A = 'sk-stalled-AAAA-0123456789';
const KEY_B = 'sk-stalled-BBBB-0123456789';
/** About an hour of speech (57 600 characters): far more than any buffer may hold. */
const BOOK = 'The quick brown fox jumps over the lazy dog near the quiet river bank. '.repeat(800);
const MB = 1024 * 1024;

/**
 * Starts four non-reading clients of key A: two WebSocket sessions at 48 kHz stereo float32 (the
 * most bytes per second of speech the service makes: 384 kB/s), then two SSE streams in float32.
 */
async function fourStalled(base: string): Promise<StalledClient[]> {
  const loud = { output_audio_format: 'float32', output_audio_sample_rate: 48000, output_audio_number_of_channels: 2 };
  return [
    await stalledWs(base, KEY_A, { input_text: BOOK, preset_voice: 'en_man_1', ...loud }),
    await stalledWs(base, KEY_A, { input_text: BOOK, preset_voice: 'en_woman_1', ...loud }),
    await stalledSse(base, KEY_A, { input: BOOK, voice: 'en-man-1', response_format: 'float32' }),
    await stalledSse(base, KEY_A, { input: BOOK, voice: 'en-woman-1', response_format: 'float32' }),
  ];
}

/** Stops `tts serve` (SIGKILL: what is tested here is not the shutdown). */
async function stop(srv: ServeProcess | undefined): Promise<void> {
  if (srv === undefined || srv.child.exitCode !== null) return;
  srv.child.kill('SIGKILL');
  await srv.exited;
}

describe('tts serve with clients that do not read', { timeout: 90_000 }, () => {
  let srv: ServeProcess | undefined;
  const clients: StalledClient[] = [];
  after(async () => {
    for (const c of clients) c.socket.destroy();
    await stop(srv);
  });

  it('four non-reading clients raise RSS by little, and a fifth client of another key still gets its audio', async (t) => {
    srv = await startServe(['--port', '0', '--workers', '2', '--max-chars', '60000'], { TTS_SERVER_API_KEYS: `${KEY_A},${KEY_B}` });
    const pid = srv.child.pid!;
    // Warm both workers and every code path first (float32, 48 kHz resampling, the WebSocket
    // route), so one-time costs are in the baseline, not in the growth.
    await Promise.all([1, 2].map(async () => allEvents(await postSse(srv!.base, { input: 'Warm up, please.', voice: 'en-man-1', response_format: 'float32' }, KEY_B))));
    const warm = await connect(srv.wsUrl, KEY_B);
    warm.ws.send(update({ input_text: 'Warm up.', output_audio_format: 'float32', output_audio_sample_rate: 48000, output_audio_number_of_channels: 2 }));
    await warm.closed;
    const base = processMemory(pid).rss;
    const started = performance.now();
    // Each resolves once the server answered it: all four streams are running.
    clients.push(...(await fourStalled(srv.base)));
    let peak = base;
    const sample = (): void => {
      try {
        peak = Math.max(peak, processMemory(pid).rss);
      } catch {
        // the server is gone; the assertions below say why
      }
    };
    const sampler = setInterval(sample, 100);
    try {
      // The fifth client reads; its request runs while the four stalled streams are open (the
      // test's timeout bounds the wait). How RSS goes on over 10–40 s is `npm run bench`'s
      // server-stalled figure, not a bound here.
      const reading = await postSse(srv.base, { input: 'Hello there, I am still being served.', voice: 'en-woman-1' }, KEY_B);
      const served = { status: reading.status, events: await allEvents(reading), at: performance.now() - started };
      sample();
      t.diagnostic(`RSS ${(base / MB).toFixed(0)} MB → peak ${(peak / MB).toFixed(0)} MB while the fifth client was served`);
      assert.ok(peak - base < 100 * MB, `RSS grew by ${((peak - base) / MB).toFixed(0)} MB with four clients that do not read`);
      assert.ok(clients.every((c) => !c.socket.destroyed), 'the stalled clients are still connected (the write timeout is 30 s)');
      t.diagnostic(`the fifth client was done ${served.at.toFixed(0)} ms after the stalled ones started`);
      assert.equal(served.status, 200);
      assert.equal(served.events.at(-1)?.event, 'done', 'the reading client got its whole stream');
      assert.ok(audioOf(served.events).length > 24000, 'the reading client got audio');
    } finally {
      clearInterval(sampler);
    }
  });

  it('a stream that accepts nothing for --write-timeout is closed and its slot freed', async () => {
    await stop(srv);
    srv = await startServe(['--port', '0', '--workers', '2', '--max-chars', '60000', '--max-concurrent', '2', '--write-timeout', '2'], { TTS_SERVER_API_KEYS: KEY_A });
    const stalled = [await stalledSse(srv.base, KEY_A, { input: BOOK, voice: 'en-man-1' }), await stalledWs(srv.base, KEY_A, { input_text: BOOK, preset_voice: 'en_man_1' })];
    clients.push(...stalled);
    const busy = await postSse(srv.base, { input: 'Hi.', voice: 'en-man-1' }, KEY_A);
    assert.equal(busy.status, 429);
    assert.equal(errorBody(await busy.text()).code, 'too_many_concurrent_requests');
    const t0 = performance.now();
    // A paused socket never sees the server's FIN or RST, so the access log tells when each was cut.
    const timedOut = (): string[] => srv!.stderr().split('\n').filter((l) => / write-timeout$/.test(l));
    // The streams stall once the engine has filled the socket buffers, which takes a while on a
    // loaded machine (26 s at load 17): the bound only ends a test that would otherwise hang.
    assert.ok(await waitFor(() => timedOut().length >= 2, 120_000), `the stalled streams were not closed within 120 s:\n${srv.stderr()}`);
    // A timer never fires early: the 2 s write timeout had passed (how much later is the bench's).
    assert.ok(performance.now() - t0 >= 1500, 'not closed before the write timeout');
    const ok = await postSse(srv.base, { input: 'Hi.', voice: 'en-man-1' }, KEY_A);
    assert.equal(ok.status, 200, 'the slots are free again');
    assert.equal((await allEvents(ok)).at(-1)?.event, 'done');
    const lines = timedOut();
    assert.equal(lines.length, 2, srv.stderr());
    assert.ok(lines.some((l) => /^127\.0\.0\.1 key#1 POST \/v1\/tts\/sse 200 \d+ms write-timeout$/.test(l)), srv.stderr());
    assert.ok(lines.some((l) => /^127\.0\.0\.1 key#1 GET \/v1\/realtime_tts 101 close=1006 \d+ms write-timeout$/.test(l)), srv.stderr());
  });
});
