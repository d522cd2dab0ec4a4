/**
 * Where the piece cache lives (docs/cli.md §8), apart from the cache itself so `tts doctor` can
 * name the folder without loading the store.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The cache's folder: `$XDG_CACHE_HOME/tts` when that is an absolute path (the XDG Base
 * Directory Specification ignores a relative one), else `~/.cache/tts`.
 */
export function cacheDir(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir(), '.cache');
  return join(base, 'tts');
}
