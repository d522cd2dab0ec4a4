/**
 * Waiting for a process's open of a FIFO to block (src/text/fifo-open.ts), read from Linux's
 * /proc: the event the Ctrl-C tests of `-f FIFO` start from, without sleeping.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Whether a thread of process `pid` sleeps in the kernel's open of a FIFO, waiting for the other
 * end: its /proc/PID/task/TID/wchan names `wait_for_partner` (fs/pipe.c; `pipe_wait` before
 * Linux 5.9). False once the process is gone.
 */
export function fifoOpenWaits(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((tid) => {
      try {
        return /^(wait_for_partner|pipe_wait)$/.test(readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'utf8'));
      } catch {
        return false; // The thread ended meanwhile.
      }
    });
  } catch {
    return false;
  }
}

/**
 * Resolves once a thread of `pid` waits in the open of a FIFO ({@link fifoOpenWaits}), looking
 * every 5 ms. @throws Error when `gone()` says first that the process will not get there (it exited).
 */
export async function untilFifoOpenWaits(pid: number, gone: () => boolean = () => false): Promise<void> {
  while (!fifoOpenWaits(pid)) {
    if (gone()) throw new Error(`process ${pid} ended before its open of a FIFO waited`);
    await delay(5);
  }
}
