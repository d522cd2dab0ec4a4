/**
 * Client time to first audio: how long the first delta takes to cross `tts stream`, from the
 * moment a loopback server writes it to the moment its first audio byte arrives at this process
 * through the child's stdout pipe — against the same path through a minimal Node reader (a
 * `node -e` script that POSTs with `http.request`, splits events at blank lines and writes the
 * base64-decoded `delta` to stdout).
 *
 * One clock: the server runs in this process and records `performance.now()` right before it
 * writes the delta; this process records `performance.now()` at the child's first stdout byte.
 * The server holds the stream open (no `done`) until that byte arrived, so nothing else is in
 * flight. Also reported: spawn to first byte, end to end (start-up + connect + the above).
 */
import { cleanEnv } from '../test/helpers/cli.js';
import { BENCH_KEY, startFirstDeltaServer } from './fake-servers.js';
import type { BenchOptions, Figure } from './figures.js';
import { timedSpawn, ttsArgs } from './process.js';
import { median } from './stats.js';

/** Target: at most this many milliseconds added by our client to the first delta's path. */
export const CLIENT_ADDED_MS_MAX = 5;

/** The minimal reader: the bare way to get the first audio of an SSE response onto stdout. */
const MINIMAL_READER = `
const http = require('node:http');
const req = http.request(process.env.BENCH_URL + '/v1/tts/sse', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.BENCH_KEY, 'content-type': 'application/json', accept: 'text/event-stream' },
}, (res) => {
  res.setEncoding('utf8');
  let buf = '';
  res.on('data', (s) => {
    buf += s;
    let i;
    while ((i = buf.indexOf('\\n\\n')) !== -1) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const line = ev.split('\\n').find((l) => l.startsWith('data:'));
      if (line === undefined) continue;
      const d = JSON.parse(line.slice(5));
      if (typeof d.delta === 'string') process.stdout.write(Buffer.from(d.delta, 'base64'));
    }
  });
});
req.end(JSON.stringify({ input: 'hello', voice: 'ja-man-1', response_format: 'pcm16', language: 'ja' }));
`;

/**
 * Measures, in milliseconds (medians of N interleaved runs; N = 8 with `--quick`, 30 otherwise):
 * server write → first stdout byte, and spawn → first stdout byte, for `tts stream` and the
 * minimal reader.
 */
export async function benchClientTtfa(options: BenchOptions): Promise<Figure[]> {
  const rounds = options.quick ? 8 : 30;
  const server = await startFirstDeltaServer();
  try {
    const subjects = [
      {
        name: 'tts stream',
        args: ttsArgs('stream', '-q', 'hello'),
        // Every run must reach the server: no piece cache.
        env: cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: BENCH_KEY, TTS_NO_CACHE: '1' }),
        latency: [] as number[],
        spawnToByte: [] as number[],
      },
      {
        name: 'node http.request reader',
        args: ['-e', MINIMAL_READER],
        env: cleanEnv({ BENCH_URL: server.url, BENCH_KEY }),
        latency: [] as number[],
        spawnToByte: [] as number[],
      },
    ];
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 === 0 ? subjects : [...subjects].reverse();
      for (const s of order) {
        const { result: run, latencyMs } = await server.latency((onFirstByte) => timedSpawn(process.execPath, s.args, { env: s.env, onFirstByte }));
        if (latencyMs === undefined || run.firstByteMs === undefined) {
          throw new Error(`${s.name}: no request or no audio on stdout (${run.stderr.trim().slice(0, 300)})`);
        }
        if (run.stdoutBytes !== 4800) throw new Error(`${s.name}: wrote ${run.stdoutBytes} bytes, expected 4800`);
        if (round < 0) continue;
        s.latency.push(latencyMs);
        s.spawnToByte.push(run.firstByteMs);
      }
    }
    options.log(`client-ttfa: ${rounds} interleaved rounds`);
    const [tts, bare] = subjects as [(typeof subjects)[0], (typeof subjects)[0]];
    return [
      {
        bench: 'client-ttfa',
        name: 'client: server write → stdout',
        value: median(tts.latency),
        unit: 'ms',
        baseline: { name: 'node http reader', value: median(bare.latency) },
        targets: [{ kind: 'added-max', limit: CLIENT_ADDED_MS_MAX }],
        note: `median of ${rounds}`,
      },
      {
        bench: 'client-ttfa',
        name: 'client: spawn → first byte',
        value: median(tts.spawnToByte),
        unit: 'ms',
        baseline: { name: 'node http reader', value: median(bare.spawnToByte) },
        targets: [],
        note: `median of ${rounds}, end to end`,
      },
    ];
  } finally {
    await server.close();
  }
}
