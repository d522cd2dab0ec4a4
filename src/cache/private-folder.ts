/**
 * The rules for the folders tts makes in the user's cache folder (docs/cli.md §8): the piece
 * cache's `tts/pieces` follows the compile cache's `tts/compile` (bin/tts.js `privateFolder`):
 * the nearest folder that is there is judged first, each missing folder is made on its own, mode
 * 0700, one someone else made is refused, and nothing is made that will not be used.
 *
 * The code is bin/tts.js's own, which runs before any bundle is loaded (it decides where Node's
 * compile cache goes) and is plain CommonJS: it is required from there, not copied. In a run that
 * file is the process's main module, already in require's cache, so the run loads nothing more;
 * elsewhere (the in-process tests) requiring it only sets its handler of standard output's errors.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Where a folder of tts's own is ({@link privateFolder}), or why none is used. */
export type PrivateFolder = { folder: string; refused?: undefined } | { folder?: undefined; refused: string };

/** What bin/tts.js exports. */
interface FolderRules {
  privateFolder(base: string, names: readonly string[], ownGroup?: boolean, made?: string[]): PrivateFolder;
  privateFolderRefusal(base: string, names: readonly string[], ownGroup?: boolean): string | undefined;
}

let rules: FolderRules | undefined;

/** bin/tts.js's exports, required once. */
function folderRules(): FolderRules {
  rules ??= createRequire(import.meta.url)(fileURLToPath(new URL('../../../bin/tts.js', import.meta.url))) as FolderRules;
  return rules;
}

/**
 * tts's folder `names` below `base` (`['tts', 'pieces']`), made where it is missing but only where
 * it will be used (bin/tts.js `privateFolder`): the nearest folder that is there must be this
 * user's or root's and writable by no one else (unless root's and sticky, as /tmp), and those of
 * `names` that are there this user's; each missing one is made alone, mode 0700, and one made
 * meanwhile by someone else is refused; the last is given mode 0700. A folder writable by its group
 * counts as this user's alone when `ownGroup` and that group is this user's (user private groups).
 * Synchronous: a few lstat and mkdir calls.
 * @param base absolute: the folder holding `tts` (`$XDG_CACHE_HOME`, else `~/.cache`).
 * @returns `{ folder }` (absolute, without symbolic links) or `{ refused }`: the reason
 *   (`/tmp/x is writable by others`, `… is owned by user 1001`, `… is not a folder`), nothing made.
 *   Never refused where there are no user ids (Windows).
 * @throws Error `ENOTDIR` when a name on the way is not a folder; `ENOENT` for a link on the way
 *   that leads nowhere; the file system's error when a folder cannot be read or made (what was
 *   made is removed).
 */
export function privateFolder(base: string, names: readonly string[], ownGroup: boolean): PrivateFolder {
  return folderRules().privateFolder(base, names, ownGroup);
}

/**
 * Why {@link privateFolder} would refuse the folder, judged without making anything: when it is
 * there, what its path says; when it is not, what the nearest folder that is there says, at its
 * place in the path (bin/tts.js `privateFolderRefusal`).
 * @returns the reason, or undefined when the folder is (or, once made, would be) used.
 * @throws as {@link privateFolder}.
 */
export function privateFolderRefusal(base: string, names: readonly string[], ownGroup: boolean): string | undefined {
  return folderRules().privateFolderRefusal(base, names, ownGroup);
}
