/**
 * Ctrl-C while `-f FIFO` waits for a writer (docs/cli.md §1 "Text input", §3: exit 130, no file
 * left). Opening a FIFO for reading blocks until a writer opens it (fifo(7)); Node does that
 * open(2) in a thread of libuv's pool, which no JavaScript can interrupt, and which Node's exit
 * waits for: `process.exit`, `process.reallyExit`, WASI's `proc_exit` and the end of the event
 * loop all go through uv_library_shutdown, which joins the pool's threads (measured on Node 20.20
 * and 24.21: each still waited after 5 s). So on abort the open is made to return: the FIFO is
 * opened for writing, without blocking, and closed at once ({@link wakeFifoOpen}); the reader then
 * sees the end of the stream.
 *
 * The path may no longer lead to that FIFO by then (removed, or replaced by another file). On
 * Linux the FIFO is therefore held from before the open by an O_PATH descriptor
 * ({@link holdFifo}), which names the file without opening it for reading or writing: no reader
 * or writer counts it, so a writer already waiting for its reader keeps waiting, unlike a reader
 * opened early (reverted in d1b1ea2; test/text/read.test.ts). The read and the wake-up both open
 * the FIFO again through `/proc/self/fd/N`, whatever became of its path.
 *
 * Where even that cannot reach the FIFO — one this user may read but not write, or, without the
 * hold (not Linux, no /proc), a path removed or replaced — the read gives up waiting and leaves
 * the open blocked (blocked-opens.ts `openedUnlessAborted`); since no exit can happen then, the
 * process ends by its stop signal once the run has cleaned up (cli/main.ts endProcess).
 */
import { closeSync, constants, fstatSync, openSync, statSync, type Stats } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Linux's O_PATH flag of open(2) (include/uapi/asm-generic/fcntl.h: 010000000), absent from
 * `fs.constants`. Its value differs on alpha, parisc and sparc, so it is used only on the
 * architectures in {@link GENERIC_FCNTL_ARCHES}.
 */
const O_PATH = 0o10000000;

/** `process.arch` values whose Linux uses asm-generic/fcntl.h's O_PATH. */
const GENERIC_FCNTL_ARCHES: ReadonlySet<string> = new Set(['x64', 'ia32', 'arm64', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64']);

/** Milliseconds between two attempts of {@link wakeFifoOpen}. */
const WAKE_RETRY_MS = 20;

/** A FIFO held by an O_PATH descriptor ({@link holdFifo}). */
export interface FifoHold {
  /** `/proc/self/fd/N`: opening it opens the held FIFO, whatever became of its path. */
  path: string;
  /** Closes the descriptor (once the open through {@link path} has returned, or was given up). */
  close(): void;
}

/**
 * Holds the FIFO at `path` (symbolic links followed) by an O_PATH descriptor, checked to be
 * reachable again at `/proc/self/fd/N`. It is neither a reader nor a writer of the FIFO (open(2):
 * "the file itself is not opened"), so a writer waiting for a reader is not let through.
 * @returns the hold, or undefined where it is not possible (not Linux on a generic-fcntl
 *   architecture, /proc not mounted) or the path names no FIFO (any more). Never throws.
 */
export function holdFifo(path: string): FifoHold | undefined {
  if (process.platform !== 'linux' || !GENERIC_FCNTL_ARCHES.has(process.arch)) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(path, O_PATH);
    const held = fstatSync(fd);
    const proc = `/proc/self/fd/${fd}`;
    if (!held.isFIFO() || !sameFile(statSync(proc), held)) throw new Error('not a FIFO reachable through /proc');
    const hold = fd;
    return { path: proc, close: () => closeSync(hold) };
  } catch {
    if (fd !== undefined) closeSync(fd);
    return undefined;
  }
}

/**
 * Makes the blocking open of the FIFO `fifo` for reading, pending at `target` (its path or its
 * hold's, {@link holdFifo}), return: opens `target` for writing without blocking (ENXIO until
 * that reader waits in the FIFO, then it succeeds; fifo(7)) and closes it at once, every
 * {@link WAKE_RETRY_MS} ms until `opened` settles.
 * @param fifo the FIFO's stat, from before the open: only that file (device and inode) is opened.
 * @returns true once `opened` settled; false, at once, when the FIFO cannot be opened for writing:
 *   no permission, or `target` gone or naming another file (checked before and after opening).
 *   The open then stays blocked until a writer comes. Never throws.
 */
export async function wakeFifoOpen(target: string, fifo: Stats, opened: Promise<unknown>): Promise<boolean> {
  let settled = false;
  opened.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) {
    let fd: number | undefined;
    try {
      if (!sameFile(statSync(target), fifo)) return false;
      fd = openSync(target, constants.O_WRONLY | constants.O_NONBLOCK);
      if (!sameFile(fstatSync(fd), fifo)) return false;
    } catch (error) {
      // ENXIO: the reader's open has not reached the FIFO yet (libuv's pool may be busy).
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') return false;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    await delay(WAKE_RETRY_MS);
  }
  return true;
}

/** Whether two stats are of the same file (device and inode). */
function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
