/**
 * Child process for the playback tests: plays a file through openSpeakerSink and prints one
 * JSON line on stdout. A child because alsa-lib reads $HOME/.asoundrc once per process, and
 * because a missing device can abort the process that loads `speaker`.
 *
 * argv[2]: JSON {format, sampleRate, channels, input: path of the encoded audio,
 *   chunks: sizes in bytes to cut the input into, cycled, abortAfter?: bytes, then abort()}
 * stdout: {"ok":true,"written":N,"finishMs":…,"abortMs":…} or {"ok":false,"code","exitCode","message","hint"}
 */
import { readFileSync } from 'node:fs';
import { openSpeakerSink } from '../../src/audio/speaker-sink.js';
import type { AudioFormat } from '../../src/protocol/types.js';

interface Job {
  format: AudioFormat;
  sampleRate: number;
  channels: number;
  input: string;
  chunks: number[];
  abortAfter?: number;
}

async function main(): Promise<number> {
  const job = JSON.parse(process.argv[2] ?? '{}') as Job;
  const data = readFileSync(job.input);
  try {
    const sink = await openSpeakerSink({ format: job.format, sampleRate: job.sampleRate, channels: job.channels });
    let o = 0;
    for (let i = 0; o < data.length; i++) {
      if (job.abortAfter !== undefined && o >= job.abortAfter) {
        const t = performance.now();
        await sink.abort();
        await sink.abort(); // idempotent
        console.log(JSON.stringify({ ok: true, written: o, abortMs: performance.now() - t }));
        return 0;
      }
      const n = job.chunks[i % job.chunks.length]!;
      await sink.write(data.subarray(o, o + n));
      o += n;
    }
    const t = performance.now();
    await sink.finish();
    console.log(JSON.stringify({ ok: true, written: data.length, finishMs: performance.now() - t }));
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string; hint?: string };
    console.log(JSON.stringify({ ok: false, code: e.code, exitCode: e.exitCode, message: e.message, hint: e.hint }));
    return e.exitCode ?? 1;
  }
}

process.exitCode = await main();
