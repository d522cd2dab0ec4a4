/**
 * Decode throughput: megabytes of event stream per second through the whole SSE client
 * (`streamSse`: undici → TextDecoder → eventsource-parser → protocol events → strict base64 →
 * AudioChunk), into /dev/null — against a bare loop in this same process over the same bytes
 * from the same server: `http.request` → `setEncoding('utf8')` → eventsource-parser →
 * `JSON.parse` → `Buffer.from(delta, 'base64')` → /dev/null.
 *
 * The server runs in a child process (sse-server.ts), so producing the stream does not share
 * this event loop; it sends identical deltas of 4800 audio bytes (100 ms of 24 kHz pcm16).
 * Runs alternate subject and baseline; the figure is the median of the rounds.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { createParser } from 'eventsource-parser';
import { BENCH_KEY, requestBody, sseBodyBytes, startChildSseServer } from './fake-servers.js';
import type { BenchOptions, Figure } from './figures.js';
import { mb, median } from './stats.js';

/** Target: our client decodes at least this fraction of the bare loop's throughput. */
export const DECODE_RATIO_MIN = 0.6;
/** Target: our client decodes at least this many MB/s of event stream (10⁶ bytes). */
export const DECODE_MBPS_MIN = 300;

/** Audio bytes per delta: 100 ms of 24 kHz mono pcm16. */
const DELTA_BYTES = 4800;

/**
 * Measures event-stream throughput in MB/s (10⁶ bytes of SSE body per second): ~50 MB per run
 * and 2 rounds with `--quick`, ~200 MB and 3 rounds otherwise, after one ~10 MB warm-up each.
 */
export async function benchDecode(options: BenchOptions): Promise<Figure[]> {
  const targetMb = options.quick ? 50 : 200;
  const rounds = options.quick ? 2 : 3;
  const perEvent = sseBodyBytes({ deltas: 1, deltaBytes: DELTA_BYTES }) - sseBodyBytes({ deltas: 0, deltaBytes: DELTA_BYTES });
  const deltas = Math.round((targetMb * 1e6) / perEvent);
  const { streamSse } = await import('../src/client/sse.js');

  const subject = async (url: string, fd: number): Promise<number> => {
    let audio = 0;
    for await (const chunk of streamSse({ baseUrl: url, apiKey: BENCH_KEY, body: JSON.parse(requestBody()) as never, timeoutMs: 30_000 })) {
      writeSync(fd, chunk.data);
      audio += chunk.data.length;
    }
    return audio;
  };
  const baseline = (url: string, fd: number): Promise<number> =>
    new Promise((resolve, reject) => {
      let audio = 0;
      let finished = false;
      const parser = createParser({
        onEvent: (event) => {
          if (event.event === 'delta') {
            const data = JSON.parse(event.data) as { delta: string };
            const bytes = Buffer.from(data.delta, 'base64');
            writeSync(fd, bytes);
            audio += bytes.length;
          } else if (event.event === 'done') {
            finished = true;
          }
        },
      });
      const req = request(
        `${url}/v1/tts/sse`,
        { method: 'POST', headers: { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json', accept: 'text/event-stream' } },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (s: string) => parser.feed(s));
          res.on('end', () => (finished ? resolve(audio) : reject(new Error('the stream ended before done'))));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(requestBody());
    });

  const fd = openSync('/dev/null', 'w');
  const warm = await startChildSseServer({ deltas: Math.round(10e6 / perEvent), deltaBytes: DELTA_BYTES });
  const server = await startChildSseServer({ deltas, deltaBytes: DELTA_BYTES });
  try {
    await subject(warm.url, fd);
    await baseline(warm.url, fd);
    const rates = { subject: [] as number[], baseline: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['baseline', 'subject'] as const) : (['subject', 'baseline'] as const);
      for (const which of order) {
        const started = performance.now();
        const audio = await (which === 'subject' ? subject : baseline)(server.url, fd);
        const seconds = (performance.now() - started) / 1000;
        if (audio !== deltas * DELTA_BYTES) throw new Error(`${which}: decoded ${audio} audio bytes, expected ${deltas * DELTA_BYTES}`);
        rates[which].push(mb(server.sseBytes) / seconds);
      }
    }
    options.log(`decode: ${rounds} rounds of ${mb(server.sseBytes).toFixed(0)} MB`);
    return [
      {
        bench: 'decode',
        name: 'decode: streamSse → /dev/null',
        value: median(rates.subject),
        unit: 'MB/s',
        baseline: { name: 'eventsource-parser + Buffer.from', value: median(rates.baseline) },
        targets: [
          { kind: 'ratio-min', limit: DECODE_RATIO_MIN },
          { kind: 'min', limit: DECODE_MBPS_MIN },
        ],
        note: `median of ${rounds} × ${mb(server.sseBytes).toFixed(0)} MB`,
      },
    ];
  } finally {
    closeSync(fd);
    await Promise.all([warm.close(), server.close()]);
  }
}
