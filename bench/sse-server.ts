/**
 * A fake SSE service in a process of its own (started by `startChildSseServer` in util.ts), so
 * that producing hundreds of megabytes of events does not share an event loop with the client
 * being measured.
 *
 * Usage: `node dist/bench/sse-server.js '{"deltas":31000,"deltaBytes":4800}'`. It listens on
 * 127.0.0.1 port 0, prints one JSON line `{"url","sseBytes"}` on stdout, answers every request
 * with that many identical `delta` events then `done`, and exits when its stdin closes.
 */
import { type DeltaPlan, sseBodyBytes, startLoopbackServer, streamDeltas } from './fake-servers.js';

const plan = JSON.parse(process.argv[2] ?? '') as DeltaPlan;
if (!Number.isInteger(plan.deltas) || !Number.isInteger(plan.deltaBytes) || plan.deltas < 0 || plan.deltaBytes < 1) {
  throw new Error('usage: sse-server.js \'{"deltas":N,"deltaBytes":M}\'');
}
const server = await startLoopbackServer(async (_req, res) => {
  await streamDeltas(res, plan).catch(() => res.destroy());
});
process.stdout.write(`${JSON.stringify({ url: server.url, sseBytes: sseBodyBytes(plan) })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void server.close().then(() => process.exit(0));
});
