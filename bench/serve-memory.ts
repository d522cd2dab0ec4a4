/**
 * `tts serve` memory as issue 20 states it: 2 workers, the kernel's high-water mark (VmHWM of
 * /proc/PID/status) when idle (its RSS steady after start-up, no request yet), after one Japanese
 * sentence with kanji, and after four long Japanese streams at once — against `node -e 0`'s peak
 * RSS in the same run. Median of 3 fresh servers (1 with --quick). Memory does not depend on the
 * machine's load, unlike the times.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { allEvents, postSse } from '../test/helpers/serve-http.js';
import { startServe } from '../test/helpers/serve-process.js';
import { processMemory } from '../test/helpers/stalled-clients.js';
import type { BenchOptions, Figure } from './figures.js';
import { measurePeakRss } from './process.js';
import { median } from './stats.js';

const KEY = 'bench-serve-memory-key-0123456789';
const MIB = 1024 * 1024;
const SENTENCE = '今日は良い天気なので、東京駅から歩いて行きます。';
/** About 1,500 characters of Japanese with kanji per stream. */
const LONG = '昨日は友達と一緒に新しい美術館へ行きました。展示はとても面白くて、三時間も見ていました。'.repeat(34);

/** Targets of issue 20, in MiB. */
export const SERVE_MEMORY_TARGETS = { idleMiB: 150, oneJapaneseMiB: 250, fourLongMiB: 400 } as const;

/** Waits until the process's RSS has moved less than 1 MiB over 1 s (start-up done), at most 20 s. */
async function settled(pid: number): Promise<void> {
  let last = processMemory(pid).rss;
  for (let waited = 0; waited < 20_000; waited += 1000) {
    await sleep(1000);
    const now = processMemory(pid).rss;
    if (Math.abs(now - last) < MIB) return;
    last = now;
  }
}

/** One Japanese request, read to its end; throws when it did not end with `done`. */
async function speak(base: string, input: string): Promise<void> {
  const events = await allEvents(await postSse(base, { input, voice: 'ja-man-1', response_format: 'pcm16', language: 'ja' }, KEY));
  if (events.at(-1)?.event !== 'done') throw new Error(`tts serve did not finish a Japanese request: ${JSON.stringify(events.at(-1))}`);
}

/** The three figures of `tts serve` memory, each a median over fresh servers. */
export async function benchServeMemory(options: BenchOptions): Promise<Figure[]> {
  const rounds = options.quick ? 1 : 3;
  const idle: number[] = [];
  const one: number[] = [];
  const four: number[] = [];
  const node: number[] = [];
  for (let r = 0; r < rounds; r++) {
    node.push((await measurePeakRss(process.execPath, ['-e', '0'])).bytes / MIB);
    const srv = await startServe(['--port', '0', '--workers', '2', '-q'], { TTS_SERVER_API_KEYS: KEY });
    try {
      const pid = srv.child.pid!;
      await settled(pid);
      idle.push(processMemory(pid).hwm / MIB);
      await speak(srv.base, SENTENCE);
      one.push(processMemory(pid).hwm / MIB);
      await Promise.all([1, 2, 3, 4].map(() => speak(srv.base, LONG)));
      four.push(processMemory(pid).hwm / MIB);
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exited;
    }
    options.log(`serve-memory: round ${r + 1} of ${rounds}`);
  }
  const baseline = { name: 'node -e 0', value: median(node) };
  const note = `median of ${rounds}; VmHWM, 2 workers`;
  const t = SERVE_MEMORY_TARGETS;
  return [
    { bench: 'serve-memory', name: '`tts serve`, 2 workers: idle, peak RSS', value: median(idle), unit: 'MiB', baseline, targets: [{ kind: 'max', limit: t.idleMiB }], note },
    { bench: 'serve-memory', name: '`tts serve`: after one Japanese sentence, peak RSS', value: median(one), unit: 'MiB', baseline, targets: [{ kind: 'max', limit: t.oneJapaneseMiB }], note },
    { bench: 'serve-memory', name: '`tts serve`: after 4 long Japanese streams at once, peak RSS', value: median(four), unit: 'MiB', baseline, targets: [{ kind: 'max', limit: t.fourLongMiB }], note: `${note}; 4 × ${[...LONG].length} characters` },
  ];
}
