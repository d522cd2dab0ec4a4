/**
 * The temporary files of atomic outputs (docs/cli.md §2): how they are named, which ones this
 * process is still writing, and the removal of those a crashed run left behind.
 *
 * A temporary file is `.<name>.tts-<pid>-<12 hex>.tmp` beside its target. The clean-up of a
 * normal failure is the sink's own; what cannot wait for it — a second Ctrl-C, an uncaught
 * exception, `process.exit`, a SIGTERM or SIGHUP nobody handles — is done by
 * {@link removeTempFilesSync} on the way out, hooked with the `signal-exit` package (which knows
 * which signals can be caught on each platform and re-raises them after); and what no code
 * of the dying process can run for — SIGKILL, the kernel's out-of-memory killer — is swept by
 * the next run that writes to the same name ({@link removeStaleTempFiles}), recognised by a
 * process id that no longer runs.
 */
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { opendir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { onExit } from 'signal-exit';

/** Temporary files this process is still writing. */
const live = new Set<string>();

/**
 * A fresh temporary name for `base` (a file name without folder) in `dir`: the name part is cut
 * to 200 bytes so the whole stays under NAME_MAX (255 bytes).
 */
export function tempPathFor(dir: string, base: string): string {
  return join(dir, `.${cutBase(base)}.tts-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
}

/** Whether the exit hook is installed (once, with the first temporary file). */
let hooked = false;

/**
 * Remembers a temporary file as being written by this process; it is removed when the process
 * exits or dies of a catchable signal before {@link untrackTempFile}.
 */
export function trackTempFile(path: string): void {
  if (!hooked) {
    hooked = true;
    onExit(() => removeTempFilesSync());
  }
  live.add(path);
}

/** Forgets a temporary file (renamed into place, or removed). */
export function untrackTempFile(path: string): void {
  live.delete(path);
}

/** Deletes every temporary file this process is still writing (synchronously: safe right before exit). */
export function removeTempFilesSync(): void {
  for (const path of live) {
    try {
      unlinkSync(path);
    } catch {
      // Already gone.
    }
  }
  live.clear();
}

/** Folder entries read per call while a folder is searched for stale temporary files. */
const LIST_BATCH = 1024;

/**
 * Removes the temporary files for `base` in `dir` left by runs whose process is gone. Another
 * live process's file (two runs writing the same name) is never touched. The folder is read in
 * batches of {@link LIST_BATCH} entries and only the names of this base's temporary files are
 * kept, so a folder of 100,000 files costs no more memory than an empty one (it costs time: about
 * 70 ms to read, which is why openAtomicFile runs this beside the synthesis rather than before
 * it). Best effort: an unreadable folder is reported later by the write itself.
 * @returns how many were removed; never rejects.
 */
export async function removeStaleTempFiles(dir: string, base: string): Promise<number> {
  const prefix = `.${cutBase(base)}.tts-`;
  const stale: string[] = [];
  try {
    for await (const entry of await opendir(dir, { bufferSize: LIST_BATCH })) {
      if (!entry.name.startsWith(prefix)) continue;
      const m = /^(\d+)-[0-9a-f]{12}\.tmp$/.exec(entry.name.slice(prefix.length));
      if (m !== null && !isRunning(Number(m[1]))) stale.push(entry.name);
    }
  } catch {
    // Unreadable, or gone: nothing to sweep (the write itself reports a folder it cannot use).
  }
  let removed = 0;
  for (const name of stale) {
    try {
      await unlink(join(dir, name));
      removed++;
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}

/** True when a process with this id exists (EPERM: it exists, under another user). */
function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function cutBase(base: string): string {
  return Buffer.from(base).subarray(0, 200).toString();
}
