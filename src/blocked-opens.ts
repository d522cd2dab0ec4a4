/**
 * Opens given up while still blocked in a thread of libuv's pool (docs/cli.md §3): an open(2)
 * that sleeps in the kernel — of a FIFO for reading until a writer comes (text/fifo-open.ts), of a
 * device until it is ready (a serial line's carrier: audio/special-files.ts
 * `openDeviceForWriting`) — cannot be interrupted from JavaScript, and Node's exit
 * (`process.exit`, the end of the event loop) joins the pool's threads, so it would wait for it.
 * A stop signal gives such an open up; cli/main.ts `endProcess` then ends the process by the
 * signal itself while {@link opensLeftBlocked} is not 0.
 */

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
