/**
 * Positional reads of a whole byte range from an open file (POSIX pread, through Node's
 * `fs.readSync`), for the engine's data files read straight into the memory that uses them
 * (eSpeak NG's data package, espeak-data.ts; Flite's data segments, flite.ts).
 */
import { readSync } from 'node:fs';

/**
 * Reads `length` bytes of the open file `fd` from byte `position` into `into` at byte `offset`,
 * with as many reads as the system needs (one may return fewer bytes).
 * @returns the bytes read: fewer than `length` only when the file ends first.
 * @throws Error when the file cannot be read (EIO, EBADF), or RangeError when the range does not
 *   fit in `into`.
 */
export function readFully(fd: number, into: Uint8Array, offset: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, into, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
