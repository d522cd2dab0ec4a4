/**
 * The real engine worker with Flite failing partway through a piece, as a trap in its
 * WebAssembly would, for the fallback tests in test/engine/voices.test.ts: a piece whose text
 * holds `fails-early` throws at its first chunk of samples (before any block of 2048 samples has
 * reached the job), one holding `fails-late` at its 20th (after two blocks have). Other text is
 * spoken normally. Static imports run in order, so the host is wrapped before the worker serves.
 */
import { MemoryWasi } from '../../src/engine/wasi-memfs.js';

const reset = MemoryWasi.prototype.reset;
const stream = MemoryWasi.prototype.stream;
let failAt = Number.POSITIVE_INFINITY;
MemoryWasi.prototype.reset = function (this: MemoryWasi, args: readonly string[]): void {
  const text = args[args.indexOf('-t') + 1] ?? '';
  failAt = text.includes('fails-early') ? 1 : text.includes('fails-late') ? 20 : Number.POSITIVE_INFINITY;
  reset.call(this, args);
};
MemoryWasi.prototype.stream = function (this: MemoryWasi, fd: number, write: (bytes: Uint8Array) => boolean): void {
  let chunks = 0;
  stream.call(this, fd, (bytes) => {
    if (++chunks >= failAt) throw new Error('unreachable (a simulated trap)');
    return write(bytes);
  });
};
await import('../../src/engine/worker.js');
