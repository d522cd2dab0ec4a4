/**
 * Where the piece cache lives (docs/cli.md §8), apart from the cache itself so `tts doctor` can
 * name the folder without loading the store.
 */
import { homeFolder } from '../home-folder.js';
import { isAbsolute, join } from 'node:path';

/**
 * The cache's folder: `$XDG_CACHE_HOME/tts` when that is an absolute path (the XDG Base
 * Directory Specification ignores a relative one), else `~/.cache/tts` (home-folder.ts: with no
 * home folder at all, a path that does not exist, and no cache).
 */
export function cacheDir(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(homeFolder(env), '.cache');
  return join(base, 'tts');
}
