/**
 * Where an output named by the user is written (docs/cli.md §2): every file tts writes (`-o`,
 * `--subtitles`, `--word-timings`, `--chapters`, `--split-chapters`' files, batch outputs) goes
 * through the atomic writer of file-sink.ts, which writes {@link outputTarget}'s path, and the
 * checks that no two outputs (nor an output and an input) are one file compare the same path
 * (speak/output-checks.ts `fileIdentity`).
 */
import { lstat, mkdir, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileProblem, TtsError } from '../errors.js';

/**
 * Most symbolic links followed from an output's name to its target: Linux's MAXSYMLINKS, the
 * bound open(2) itself applies (a longer chain, or a loop, is ELOOP there too).
 */
export const MAX_LINK_HOPS = 40;

/**
 * Whether `path` is a symbolic link that Linux's `fs.protected_symlinks` (proc(5), on by default
 * in Debian and Ubuntu; applied here whatever the setting) forbids following: in a sticky, world-writable folder (`/tmp`), owned
 * neither by the user following it nor by the folder's owner. Such a link is someone else's in a
 * shared folder, and its target is theirs to choose: a shell's `>` fails on it (EACCES), and
 * tts, which resolves links itself to write atomically beside the target, must not create or
 * replace a file wherever it leads. False where there are no user ids (Windows) and when `path`
 * cannot be examined (the open reports why).
 */
async function protectedLink(path: string): Promise<boolean> {
  const uid = process.getuid?.();
  if (uid === undefined) return false;
  try {
    const link = await lstat(path);
    if (!link.isSymbolicLink()) return false;
    const folder = await stat(dirname(path));
    const sharedFolder = (folder.mode & 0o1000) !== 0 && (folder.mode & 0o002) !== 0;
    return sharedFolder && link.uid !== uid && link.uid !== folder.uid;
  } catch {
    return false;
  }
}

/**
 * Whether the name `path` leads through a symbolic link Linux would not follow
 * ({@link protectedLink}: another user's, in a sticky folder others can write such as `/tmp`) —
 * the name's own link, or one its chain of links leads to, as {@link outputTarget} judges them
 * (the folders' links are not judged, as there). An output written in place (a FIFO, a device:
 * special-files.ts) is opened through its links, so such a name is not written in place but by the
 * atomic writer, which writes the name as it stands (docs/cli.md §2): its target is someone else's
 * choice (their FIFO, any device). A link to a descriptor's own name (`/dev/stdout` →
 * `/proc/self/fd/1` → `pipe:[…]`, no path) ends the chain. Never throws.
 * @param path the output as the user gave it (relative to the working folder).
 */
export async function crossesProtectedLink(path: string): Promise<boolean> {
  let at = resolve(path);
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    if (await protectedLink(at)) return true;
    let link: string;
    try {
      link = await readlink(at);
    } catch {
      return false; // not a link, or not there
    }
    at = resolve(dirname(at), link);
  }
  return false;
}

/**
 * The path an output named `path` is written at: absolute, with every symbolic link resolved —
 * the file's own and its folders'. The file's own link is followed link after link (a relative
 * target counts from the link's folder), up to {@link MAX_LINK_HOPS}, also when its target does
 * not exist yet (a dangling link): the output is then created at the last one's target, as a
 * shell's `>` creates it, and the link stays a link (replacing it with a file would silently
 * destroy it). A link of that chain Linux would not follow ({@link protectedLink}: another
 * user's, in `/tmp`), the first or one a link of the user's leads to, is not followed, as the
 * kernel follows no such link of a chain: its own path comes back, and writing there replaces the
 * link if the user may (root), or fails (exit 7) as the shell's `>` does.
 * That is where the atomic writer puts its temporary file and what it renames it over.
 *
 * A folder on the way that does not exist yet is resolved as far as it can be, the same way: its
 * own folder's links, then its own link followed like the file's ({@link folderTarget}). So a
 * name in a folder that a dangling link will lead to once it is made (`tts batch --output-dir
 * LINK`, made by {@link makeOutputFolder} after the batch's outputs are compared) is the same
 * path as that name spelt through the folder the link leads to.
 *
 * Never throws: a name it cannot resolve (a missing folder on the way, a loop, no permission to
 * look) comes back as far as it was resolved, and opening the file there reports why
 * (file-sink.ts `openAtomicFile`: the missing folder of the link's target, ELOOP…).
 * @param path the output as the user gave it (relative to the working folder).
 * @param folders resolved folders already seen (folder → its resolved path, or itself when it
 *   cannot be resolved), to resolve each folder once over many names (a batch's outputs).
 * @returns an absolute path; the file there may not exist.
 */
export async function outputTarget(path: string, folders: Map<string, Promise<string>> = new Map()): Promise<string> {
  // Past the bound the name is left as it is: opening it reports the loop (ELOOP).
  return (await linkTarget(resolve(path), folders, { hops: 0 })) ?? resolve(path);
}

/**
 * {@link outputTarget} of the absolute path `start`, with the links it follows counted in
 * `followed` (shared with the folders resolved on the way: at most {@link MAX_LINK_HOPS} in all,
 * as Linux counts one lookup's links).
 * @param folders the cache of resolved folders; undefined for a folder resolved on the way (its
 *   own entry is still being made: looking it up again would wait for itself).
 * @returns the path; undefined past {@link MAX_LINK_HOPS} links.
 */
async function linkTarget(start: string, folders: Map<string, Promise<string>> | undefined, followed: { hops: number }): Promise<string | undefined> {
  let at = start;
  for (;;) {
    // The folders' links are resolved (Linux follows those wherever they are); the name's own
    // link is followed here, one hop at a time, so that each link of a chain is checked.
    const parent = dirname(at);
    let folder = folders?.get(parent);
    if (folder === undefined) {
      folder = folderTarget(parent, followed);
      folders?.set(parent, folder);
    }
    at = join(await folder, basename(at));
    // A link Linux would not follow here is not followed: the name is written as it is.
    if (await protectedLink(at)) return at;
    let link: string;
    try {
      link = await readlink(at);
    } catch {
      return at; // not a link (EINVAL: a file or folder there), or not there: a new file at this path
    }
    if (++followed.hops > MAX_LINK_HOPS) return undefined;
    at = resolve(dirname(at), link);
  }
}

/**
 * Where the folder `folder` (absolute) is: its realpath when it exists; else, as far as it can be
 * resolved, its parent's target joined with its name, that name's own link followed as an
 * output's is ({@link linkTarget}: a dangling link to a folder leads where the folder will be
 * made); itself when even that fails (a loop, past {@link MAX_LINK_HOPS}).
 */
async function folderTarget(folder: string, followed: { hops: number }): Promise<string> {
  try {
    return await realpath(folder);
  } catch {
    if (dirname(folder) === folder) return folder;
    return (await linkTarget(folder, undefined, followed)) ?? folder;
  }
}

/**
 * Makes the folder outputs are written into (`--split-chapters DIR`, `tts batch --output-dir
 * DIR`) when it is missing, with the folders above it; through a link, also a dangling one, the
 * folder made is its target ({@link outputTarget}), and the link stays.
 * @param dir the folder as the user gave it.
 * @throws TtsError `io_error` (exit 7) naming `dir` when it cannot be made: a file there or in
 *   its path (said so, not as `EEXIST` or `ENOTDIR`), no permission, a read-only disk…
 */
export async function makeOutputFolder(dir: string): Promise<void> {
  try {
    await mkdir(await outputTarget(dir), { recursive: true });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    // mkdir -p fails with EEXIST when what is there is not a folder (a file, a device).
    if (code === 'EEXIST') throw new TtsError('io_error', `${dir} is not a folder: a file of that name is there`, { cause, hint: 'name a folder, or a path where one can be made' });
    if (code === 'ENOTDIR') throw new TtsError('io_error', `cannot create the folder ${dir}: a part of its path is a file, not a folder`, { cause, hint: 'name a folder, or a path where one can be made' });
    throw new TtsError('io_error', `cannot create the folder ${dir}: ${fileProblem(cause)}`, { cause, hint: 'check the path and its permissions' });
  }
}
