/**
 * Opens given up while still blocked in a thread of libuv's pool (docs/cli.md §3): an open(2)
 * that sleeps in the kernel — of a FIFO for reading until a writer comes (text/fifo-open.ts), of a
 * device until it is ready (a serial line's carrier: audio/special-files.ts
 * `openDeviceForWriting`) — cannot be interrupted from JavaScript, and Node's exit
 * (`process.exit`, the end of the event loop) joins the pool's threads, so it would wait for it.
 * A stop signal gives such an open up ({@link openedUnlessAborted}); cli/main.ts `endProcess`
 * then ends the process by the signal itself while {@link opensLeftBlocked} is not 0.
 */
import { closeSync } from 'node:fs';

/** Opens given up ({@link leaveOpenBlocked}) that have not returned yet. */
let blocked = 0;

/**
 * Counts an open given up while blocked, until `returned` settles (the open returned at last and
 * what it opened was closed, or it failed). The caller closes what it opens, should it return.
 * @param returned settles once the open returned.
 */
export function leaveOpenBlocked(returned: Promise<unknown>): void {
  blocked++;
  const done = (): void => {
    blocked--;
  };
  returned.then(done, done);
}

/**
 * How many opens were given up while blocked in libuv's pool ({@link leaveOpenBlocked}) and are
 * still blocked: while there is one, Node's exit would wait for it.
 */
export function opensLeftBlocked(): number {
  return blocked;
}

/**
 * The descriptor `opening` (an open(2) in libuv's pool: `fs.open`'s callback) gives, or
 * `signal.reason` as soon as `signal` aborts first. On abort, `wake` (when given) is asked to make
 * the open return (a FIFO's: text/fifo-open.ts `wakeFifoOpen`); once it returned, what it opened is
 * closed. An open that cannot be woken — no `wake` (a device's: a serial line's without carrier),
 * or `wake` said false — is given up ({@link leaveOpenBlocked}): the wait ends at once, and what
 * the open gives, should it ever return, is closed then.
 * @param wake resolves true once `opened` (the open) settled, false at once when it cannot make it
 *   return; never rejects.
 * @returns the open descriptor (the caller closes it).
 * @throws `opening`'s error (an errno error of open(2)); `signal.reason` once aborted.
 */
export function openedUnlessAborted(opening: Promise<number>, signal: AbortSignal, wake?: (opened: Promise<unknown>) => Promise<boolean>): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const closeWhenOpened = (): Promise<void> =>
      opening.then(
        (fd) => closeSync(fd),
        () => {},
      );
    const onAbort = (): void => {
      if (wake === undefined) {
        leaveOpenBlocked(closeWhenOpened());
        return reject(signal.reason);
      }
      void wake(opening).then((woke) => {
        if (woke) void closeWhenOpened().then(() => reject(signal.reason));
        else {
          leaveOpenBlocked(closeWhenOpened());
          reject(signal.reason);
        }
      });
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    opening.then(
      (fd) => {
        if (signal.aborted) return; // onAbort settles it (and closes fd).
        signal.removeEventListener('abort', onAbort);
        resolve(fd);
      },
      (error: unknown) => {
        if (signal.aborted) return;
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
