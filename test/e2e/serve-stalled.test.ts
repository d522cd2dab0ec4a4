/**
 * `tts serve` with clients that do not read (docs/cli.md §5, issue 9 §9): four clients (two SSE,
 * two WebSocket, raw sockets that never read) asking for long texts must not grow the server's
 * memory without bound — the engine stops synthesizing a stream whose socket does not drain —
 * and must not keep other clients from being served; a stream that accepts nothing for
 * `--write-timeout` is closed and its concurrency slot freed. Memory is the serve process's
 * VmRSS from /proc/PID/status, sampled over a bounded time.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { allEvents, audioOf, errorBody, postSse } from '../helpers/serve-http.js';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';
import { processMemory, stalledSse, stalledWs, type StalledClient } from '../helpers/stalled-clients.js';

const KEY_A = 'sk-stalled-AAAA-0123456789';
const KEY_B = 'sk-stalled-BBBB-0123456789';
/** About an hour of speech (57 600 characters): far more than any buffer may hold. */
const BOOK = 'The quick brown fox jumps over the lazy dog near the quiet river bank. '.repeat(800);
const MB = 1024 * 1024;

/** Starts four non-reading clients of key A: two SSE, two WebSocket. */
async function fourStalled(base: string): Promise<StalledClient[]> {
  return [
    await stalledSse(base, KEY_A, { input: BOOK, voice: 'en-man-1' }),
    await stalledSse(base, KEY_A, { input: BOOK, voice: 'en-woman-1', response_format: 'float32' }),
    await stalledWs(base, KEY_A, { input_text: BOOK, preset_voice: 'en_man_1', output_audio_sample_rate: 48000, output_audio_number_of_channels: 2 }),
    await stalledWs(base, KEY_A, { input_text: BOOK, preset_voice: 'en_woman_1' }),
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
    // Warm both workers first, so their start-up is in the baseline, not in the growth.
    await Promise.all([1, 2].map(async () => allEvents(await postSse(srv!.base, { input: 'Warm up, please.', voice: 'en-man-1' }, KEY_B))));
    const base = processMemory(pid).rss;
    const started = performance.now();
    clients.push(...(await fourStalled(srv.base)));
    let peak = base;
    const sampler = setInterval(() => {
      peak = Math.max(peak, processMemory(pid).rss);
    }, 100);
    try {
      await sleep(1500);
      const reading = await postSse(srv.base, { input: 'Hello there, I am still being served.', voice: 'en-woman-1' }, KEY_B);
      assert.equal(reading.status, 200);
      const events = await allEvents(reading);
      assert.equal(events.at(-1)?.event, 'done', 'the reading client got its whole stream');
      const served = performance.now() - started;
      assert.ok(audioOf(events).length > 24000, 'the reading client got audio');
      // Long enough that a server synthesizing for the stalled clients would be seen growing.
      await sleep(Math.max(0, 10_000 - (performance.now() - started)));
      peak = Math.max(peak, processMemory(pid).rss);
      t.diagnostic(`RSS ${(base / MB).toFixed(0)} MB → peak ${(peak / MB).toFixed(0)} MB over ${((performance.now() - started) / 1000).toFixed(1)} s; the fifth client was done ${served.toFixed(0)} ms after the stalled ones started`);
      assert.ok(peak - base < 100 * MB, `RSS grew by ${((peak - base) / MB).toFixed(0)} MB with four clients that do not read`);
      assert.ok(clients.every((c) => !c.socket.destroyed), 'the stalled clients are still connected (the write timeout is 30 s)');
    } finally {
      clearInterval(sampler);
    }
  });

  it('a stream that accepts nothing for --write-timeout is closed and its slot freed', async () => {
    await stop(srv);
    srv = await startServe(['--port', '0', '--workers', '2', '--max-chars', '60000', '--max-concurrent', '2', '--write-timeout', '2'], { TTS_SERVER_API_KEYS: KEY_A });
    const stalled = [await stalledSse(srv.base, KEY_A, { input: BOOK, voice: 'en-man-1' }), await stalledWs(srv.base, KEY_A, { input_text: BOOK, preset_voice: 'en_man_1' })];
    clients.push(...stalled);
    await sleep(300);
    const busy = await postSse(srv.base, { input: 'Hi.', voice: 'en-man-1' }, KEY_A);
    assert.equal(busy.status, 429);
    assert.equal(errorBody(await busy.text()).code, 'too_many_concurrent_requests');
    const t0 = performance.now();
    // A paused socket never sees the server's FIN or RST, so the access log tells when each was cut.
    const timedOut = (): string[] => srv!.stderr().split('\n').filter((l) => / write-timeout$/.test(l));
    while (timedOut().length < 2) {
      if (performance.now() - t0 > 25_000) throw new Error(`the stalled streams were not closed within 25 s:\n${srv.stderr()}`);
      await sleep(50);
    }
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
