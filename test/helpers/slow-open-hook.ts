/**
 * Loaded through `--import` (in the main thread; worker threads load it too and do nothing): an
 * open of a device that sleeps in the kernel, as a serial line's does while it has no carrier
 * (tty_port_block_til_ready) — no such device is at hand in a test. `fs.open` of the path named
 * by TTS_TEST_SLOW_OPEN first opens the FIFO named by TTS_TEST_SLOW_OPEN_FIFO for reading, in
 * the same way (a thread of libuv's pool), which sleeps in the kernel until a writer comes
 * (fifo(7); test/helpers/fifo.ts sees it), and only then opens the path itself. So the thread
 * that opens the device is held in open(2) as long as the test likes, and Node's exit would wait
 * for it. test/cli/device-open.test.ts.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import workerThreads from 'node:worker_threads';

const slow = process.env['TTS_TEST_SLOW_OPEN'];
const gate = process.env['TTS_TEST_SLOW_OPEN_FIFO'];
if (workerThreads.isMainThread && slow !== undefined && slow !== '' && gate !== undefined && gate !== '') {
  const open = fs.open as (...args: unknown[]) => void;
  (fs as unknown as Record<string, unknown>)['open'] = function (this: unknown, path: unknown, ...rest: unknown[]): void {
    if (String(path) !== slow) return open.call(this, path, ...rest);
    open.call(fs, gate, 'r', (error: NodeJS.ErrnoException | null, fd: number) => {
      if (error === null) fs.closeSync(fd);
      open.call(fs, path, ...rest);
    });
  };
  syncBuiltinESMExports();
}
