/**
 * Child process for the closed-pipe tests: writes `argv[3]` bytes of a ramp through
 * createStdoutSink to the real process.stdout, in 4096-byte chunks, as `argv[2]` (raw | wav,
 * pcm16 mono 24000 Hz). When the reader goes away it writes "closed-pipe" on stderr and exits
 * 0, as the CLI does (quietly, no stack); any other error is printed and exits with its code.
 */
import { createStdoutSink, isClosedPipe } from '../../src/audio/stdout-sink.js';

const container = process.argv[2] === 'wav' ? 'wav' : 'raw';
const total = Number(process.argv[3] ?? 10_000_000);
const sink = createStdoutSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, container);
try {
  for (let o = 0; o < total; o += 4096) {
    const n = Math.min(4096, total - o);
    const chunk = Buffer.alloc(n);
    for (let i = 0; i < n; i++) chunk[i] = (o + i) & 0xff;
    await sink.write(chunk);
  }
  await sink.finish();
} catch (err) {
  await sink.abort();
  if (isClosedPipe(err)) {
    process.stderr.write('closed-pipe\n');
  } else {
    process.stderr.write(`error: ${String(err)}\n`);
    process.exitCode = (err as { exitCode?: number }).exitCode ?? 1;
  }
}
