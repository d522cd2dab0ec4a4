/**
 * Opening files in the piece cache without ever blocking or following a link (docs/cli.md §8:
 * the cache never fails — nor hangs — a run). A FIFO, device, socket, folder or symlink at an
 * entry's path is not an entry: opening it must neither wait for a writer (a FIFO opened for
 * reading blocks in open(2) without O_NONBLOCK) nor read another file through a link.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Thrown by {@link openEntry} when the path holds something that is not a regular file. */
export class NotAnEntryError extends Error {
  /** `ENOTREG` style code for the one warning line. */
  readonly code = 'not a regular file';
}

/**
 * Opens an entry for reading: O_RDONLY|O_NONBLOCK|O_NOFOLLOW, then fstat on the descriptor.
 * @returns the open handle of a regular file (reads on a regular file ignore O_NONBLOCK).
 * @throws NotAnEntryError when the path is a symlink (ELOOP under O_NOFOLLOW), a FIFO, a folder
 *   or anything else but a regular file (the handle is closed); the file system's error (ENOENT…)
 *   when it cannot be opened.
 */
export async function openEntry(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EISDIR' || code === 'ENXIO' || code === 'EMLINK') throw new NotAnEntryError(`not a regular file: ${path}`);
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) throw new NotAnEntryError(`not a regular file: ${path}`);
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
  return handle;
}

/**
 * Creates a new temporary entry, mode 0600: O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW, so that nothing
 * already at the path (a file, a FIFO, a symlink) is opened.
 * @throws the file system's error (EEXIST when the name is taken).
 */
export function createTemp(path: string): Promise<FileHandle> {
  return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
}

/**
 * Whether `path` is a real folder (not a symlink to one).
 * @returns true for a folder, false when nothing is there (ENOENT).
 * @throws an Error with code ENOTDIR when something else is there; the file system's error
 *   (EACCES…) when it cannot be looked at.
 */
export async function isFolder(path: string): Promise<boolean> {
  try {
    const info = await lstat(path);
    if (info.isDirectory()) return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  throw Object.assign(new Error(`not a folder: ${path}`), { code: 'ENOTDIR' });
}

/** A temporary entry older than this was left by a run that died (SIGKILL, power loss). */
const STALE_TEMP_MS = 60 * 60 * 1000;
/** The name of an entry: its key, 64 hex digits. */
export const ENTRY_NAME = /^[0-9a-f]{64}$/;
/** The name of a temporary entry (`.<key>.<pid>-<12 hex>.tmp`, src/cache/store.ts begin). */
export const TEMP_NAME = /^\.[0-9a-f]{64}\.\d+-[0-9a-f]{12}\.tmp$/;

/**
 * The whole entries (regular files with an entry's name; symlinks are not followed) of `dir` with
 * their size in bytes and modification time in ms.
 * @param sweep removes temporary entries older than an hour.
 * @param strict throws the file system's error when `dir` cannot be read (else: no entries).
 */
export async function listEntries(dir: string, sweep = false, strict = false): Promise<{ name: string; size: number; mtimeMs: number }[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (strict) throw error;
    return [];
  }
  const out: { name: string; size: number; mtimeMs: number }[] = [];
  const now = Date.now();
  for (const name of names) {
    const info = await lstat(join(dir, name)).catch(() => undefined);
    if (info === undefined || !info.isFile()) continue;
    if (name.endsWith('.tmp')) {
      if (sweep && now - info.mtimeMs > STALE_TEMP_MS) await unlink(join(dir, name)).catch(() => {});
      continue;
    }
    if (ENTRY_NAME.test(name)) out.push({ name, size: info.size, mtimeMs: info.mtimeMs });
  }
  return out;
}
