/**
 * Whether and where a run uses the piece cache (docs/cli.md §8): on by default, in
 * `$XDG_CACHE_HOME/tts` (or `~/.cache/tts`); off with `--no-cache` or `TTS_NO_CACHE` set to
 * anything but empty or `0`; capped by `--cache-size`.
 */
import { cacheDir } from './dir.js';
import { DEFAULT_CACHE_BYTES, PieceCache } from './store.js';

/** The cache flags of a synthesis command. */
export interface CacheFlags {
  /** False with `--no-cache` (commander's negated flag). */
  cache?: boolean | undefined;
  /** `--cache-size`, in bytes. */
  cacheSize?: number | undefined;
}

/** True when `TTS_NO_CACHE` turns the cache off. */
export function cacheDisabledByEnv(env: NodeJS.ProcessEnv): boolean {
  const v = env['TTS_NO_CACHE'];
  return v !== undefined && v.trim() !== '' && v.trim() !== '0';
}

/**
 * The cache a run uses, or undefined when it is off.
 * @param warn prints a line on stderr when the cache cannot be used (the run goes on without it).
 */
export function cacheFor(flags: CacheFlags, env: NodeJS.ProcessEnv, warn: (line: string) => void): PieceCache | undefined {
  if (flags.cache === false || cacheDisabledByEnv(env)) return undefined;
  return new PieceCache(cacheDir(env), flags.cacheSize ?? DEFAULT_CACHE_BYTES, warn);
}
