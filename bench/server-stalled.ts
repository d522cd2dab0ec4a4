/**
 * The built-in service with clients that do not read (docs/cli.md §5; issue 9 §9): `tts serve`
 * (2 workers) is spawned, warmed on every code path, and its VmRSS read from /proc/PID/status
 * with no client (the baseline); then four raw clients (two WebSocket sessions at 48 kHz stereo
 * float32, two SSE streams in float32, each asking for about an hour of speech) send their
 * request and never read, and the peak VmRSS over the next 40 s (10 s with --quick) is the
 * figure. Target: less than 200 MB above the baseline.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { allEvents, postSse } from '../test/helpers/serve-http.js';
import { startServe } from '../test/helpers/serve-process.js';
import { connect, update } from '../test/helpers/serve-ws.js';
import { processMemory, stalledSse, stalledWs, type StalledClient } from '../test/helpers/stalled-clients.js';
import type { BenchOptions, Figure } from './figures.js';
import { mb } from './stats.js';

const KEY = 'bench-stalled-key-0123456789';
const BOOK = 'The quick brown fox jumps over the lazy dog near the quiet river bank. '.repeat(800);
/** Target: MB the four stalled clients may add to the server's RSS. */
export const STALLED_ADDED_MB_MAX = 200;

/** Peak RSS of `tts serve` with 4 non-reading clients, against its RSS with none. */
export async function benchServerStalled(options: BenchOptions): Promise<Figure[]> {
  const seconds = options.quick ? 10 : 40;
  const srv = await startServe(['--port', '0', '--workers', '2', '--max-chars', '60000', '-q'], { TTS_SERVER_API_KEYS: KEY });
  const clients: StalledClient[] = [];
  try {
    const pid = srv.child.pid!;
    await Promise.all([1, 2].map(async () => allEvents(await postSse(srv.base, { input: 'Warm up, please.', voice: 'en-man-1', response_format: 'float32' }, KEY))));
    const warm = await connect(srv.wsUrl, KEY);
    warm.ws.send(update({ input_text: 'Warm up.', output_audio_format: 'float32', output_audio_sample_rate: 48000, output_audio_number_of_channels: 2 }));
    await warm.closed;
    await sleep(500);
    const base = processMemory(pid).rss;
    const loud = { output_audio_format: 'float32', output_audio_sample_rate: 48000, output_audio_number_of_channels: 2 };
    clients.push(
      await stalledWs(srv.base, KEY, { input_text: BOOK, preset_voice: 'en_man_1', ...loud }),
      await stalledWs(srv.base, KEY, { input_text: BOOK, preset_voice: 'en_woman_1', ...loud }),
      await stalledSse(srv.base, KEY, { input: BOOK, voice: 'en-man-1', response_format: 'float32' }),
      await stalledSse(srv.base, KEY, { input: BOOK, voice: 'en-woman-1', response_format: 'float32' }),
    );
    let peak = base;
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      await sleep(200);
      peak = Math.max(peak, processMemory(pid).rss);
    }
    options.log(`server-stalled: RSS ${mb(base).toFixed(0)} MB with no client, peak ${mb(peak).toFixed(0)} MB over ${seconds} s with 4 that do not read`);
    return [
      {
        bench: 'server-stalled',
        name: `server: 4 non-reading clients for ${seconds} s, peak RSS`,
        value: mb(peak),
        unit: 'MB',
        baseline: { name: 'tts serve with no client', value: mb(base) },
        targets: [{ kind: 'added-max', limit: STALLED_ADDED_MB_MAX }],
        note: '2 workers; 2 WebSocket 48 kHz stereo float32 + 2 SSE float32, ~1 h of speech each',
      },
    ];
  } finally {
    for (const c of clients) c.socket.destroy();
    srv.child.kill('SIGKILL');
    await srv.exited;
  }
}
