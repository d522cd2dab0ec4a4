/**
 * Waiting for a process's open of a FIFO to block (src/text/fifo-open.ts), or for it to hold a
 * FIFO open for reading ({@link untilHoldsForReading}), read from Linux's /proc: the events the
 * Ctrl-C tests of `-f FIFO` start from, without sleeping; and a FIFO whose reader takes nothing
 * ({@link stalledFifo}).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readdirSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
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

/** Linux's O_PATH (include/uapi/asm-generic/fcntl.h), as /proc/PID/fdinfo's octal `flags` show it. */
const O_PATH = 0o10000000;

/**
 * Whether process `pid` holds a file at one of `paths` open for reading: one of the descriptors it
 * opened (/proc/PID/fd/N, N above standard error's 2) leads to it, opened O_RDONLY or O_RDWR and
 * not O_PATH (/proc/PID/fdinfo/N `flags`; an O_PATH hold opens nothing, src/text/fifo-open.ts).
 * False once the process is gone.
 */
export function holdsForReading(pid: number, paths: readonly string[]): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      if (Number(fd) <= 2) return false;
      try {
        if (!paths.includes(readlinkSync(`/proc/${pid}/fd/${fd}`))) return false;
        const flags = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1] ?? '', 8);
        return (flags & O_PATH) === 0 && (flags & 3) !== constants.O_WRONLY;
      } catch {
        return false; // The descriptor was closed meanwhile.
      }
    });
  } catch {
    return false;
  }
}

/**
 * Resolves once process `pid` holds a file at one of `paths` (absolute, as /proc shows them: a
 * FIFO, a terminal) open for reading ({@link holdsForReading}), looking every 5 ms.
 * @throws Error when `gone()` says first that the process will not get there (it exited).
 */
export async function untilHoldsForReading(pid: number, paths: readonly string[], gone: () => boolean = () => false): Promise<void> {
  while (!holdsForReading(pid, paths)) {
    if (gone()) throw new Error(`process ${pid} ended before it opened ${paths.join(' or ')} for reading`);
    await delay(5);
  }
}

/** A FIFO nobody reads ({@link stalledFifo}). */
export interface StalledFifo {
  /** Whether the pipe is full: one byte written through a descriptor of the test's own fails with EAGAIN (a byte is added when it is not). */
  full(): boolean;
  /** Closes the test's read end and its probe. */
  close(): void;
}

/**
 * Makes a FIFO at `path` (mkfifo) whose read end the test holds and never reads, so that a writer
 * that fills it (64 KiB on Linux) then waits: the stalled reader of the tests of stop signals
 * and bounded output.
 * @throws Error when the FIFO cannot be made or opened.
 */
export function stalledFifo(path: string): StalledFifo {
  execFileSync('mkfifo', [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const probe = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  return {
    full: () => {
      try {
        writeSync(probe, Buffer.from('\n'));
        return false;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return true;
        throw error;
      }
    },
    close: () => {
      closeSync(probe);
      closeSync(reader);
    },
  };
}
