/**
 * The piece cache on disk (docs/cli.md §8): one file per piece of speech, named by a hash of
 * everything that decides its audio (src/cache/identity.ts), in `$XDG_CACHE_HOME/tts/pieces`
 * (default `~/.cache/tts/pieces`; folders 0700, files 0600).
 *
 * An entry (its layout: src/cache/entry.ts) holds the audio with its length and SHA-256. It is written to a temporary name beside it and renamed into place only after the service's
 * `done`: a reader sees a whole entry or none, so two runs at once share the cache safely. A
 * reader checks the length and the checksum of the whole entry before it hands out a byte: a
 * corrupt or cut-off entry is removed and the piece requested again, never spliced.
 *
 * Least recently used entries (by modification time, renewed on every hit) are removed when the
 * cache grows past its size cap (`--cache-size`, default 1 GiB).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BLOCK_BYTES, entryHeader, HEADER_BYTES, MAX_META_BYTES, wholeEntry } from './entry.js';
import { privateFolder, privateFolderRefusal } from './private-folder.js';
import { createTemp, ENTRY_NAME, isFolder, listEntries, NotAnEntryError, openEntry, TEMP_NAME } from './safe-fs.js';

/** Default size cap of the cache, in bytes (1 GiB). */
export const DEFAULT_CACHE_BYTES = 2 ** 30;

/** How long {@link PieceCache.settle} waits for the disk before the run ends without it. */
const SETTLE_MS = 5000;
/** Audio bytes an entry's writes may fall behind its stream before the stream waits for the disk. */
const WRITE_BACKLOG_BYTES = 4 * 1024 * 1024;
/** Once past the cap, entries are removed down to this share of it, so a full cache is not swept on every piece. */
const EVICT_TO = 0.9;

/** What `tts cache stats` shows. */
export interface CacheStats {
  /** The folder of the entries. */
  dir: string;
  /** Whole entries. */
  entries: number;
  /** Bytes on disk of those entries (headers included). */
  bytes: number;
}

/** A verified entry, open for replay. */
export interface CacheHit {
  /** Audio bytes in the entry. */
  bytes: number;
  /** The entry's metadata (entry.ts: UTF-8 JSON stored with {@link CacheWriter.commit}), if any. */
  meta: Buffer | undefined;
  /** The audio in blocks of at most 64 KiB; the file is closed when the iteration ends, however it ends. */
  chunks(): AsyncGenerator<Buffer, void, undefined>;
  /** Closes the entry without replaying it. */
  close(): Promise<void>;
}

/** An entry being written; nothing is visible to readers until {@link CacheWriter.commit}. */
export interface CacheWriter {
  /** Appends audio bytes. Never throws: a write failure abandons the entry. */
  write(data: Buffer): Promise<void>;
  /**
   * Finishes the entry after the service's `done`, with `meta` (at most MAX_META_BYTES, else the
   * entry is dropped) stored after the audio, and renames it into place. Never throws.
   */
  commit(meta?: Buffer): Promise<void>;
  /** Drops the entry (the request failed or was aborted). Never throws. */
  discard(): Promise<void>;
}

/**
 * The piece cache of one folder. Every method is safe to call from several runs (processes) at
 * once, and none throws for a cache problem: a cache that cannot be read or written is reported
 * once through `warn` and then behaves as an empty one, so a run never fails because of it.
 */
export class PieceCache {
  /** The folder holding the entries (`<cacheDir>/pieces`). */
  readonly dir: string;
  /** Size cap in bytes; 0 stores nothing. */
  readonly maxBytes: number;
  readonly #warn: (line: string) => void;
  #ready: Promise<boolean> | undefined;
  /**
   * Keys of the entries in the folder, read once when the cache is first used and kept up to
   * date by this process: a miss costs no file system call, so a request for a piece not in the
   * cache starts as soon as without a cache. An entry another run stores later is not seen.
   */
  #known = new Set<string>();
  /** Bytes on disk as last scanned, plus what this process added since; undefined before the first scan. */
  #estimate: number | undefined;
  #evicting: Promise<void> | undefined;
  /** Entries being finished or dropped in the background, for {@link settle}. */
  readonly #pending = new Set<Promise<void>>();
  #warned = false;

  /**
   * @param root the cache's folder, from {@link cacheDir}.
   * @param maxBytes size cap in bytes (`--cache-size`).
   * @param warn prints a line on stderr (once, for the first problem).
   */
  constructor(root: string, maxBytes: number, warn: (line: string) => void) {
    this.dir = join(root, 'pieces');
    this.maxBytes = maxBytes;
    this.#warn = warn;
  }

  /**
   * Creates the folders and reads which entries exist. Called by {@link read} and {@link begin}
   * on first use; a run calls it before its first request so that no request waits for it.
   * @returns false when the cache cannot be used (reported once through `warn`).
   */
  prepare(): Promise<boolean> {
    return this.#prepare();
  }

  /** The entry of `key` when it exists and is whole; a corrupt or cut-off one is removed. */
  async read(key: string): Promise<CacheHit | undefined> {
    if (!(await this.#prepare()) || !this.#known.has(key)) return undefined;
    const path = this.#path(key);
    let handle: FileHandle;
    try {
      // Never blocks (a FIFO) and never follows a symlink: such a thing is a corrupt entry.
      handle = await openEntry(path);
    } catch (error) {
      this.#known.delete(key);
      if (error instanceof NotAnEntryError) {
        this.#problem('reading', error, true);
        await unlink(path).catch(() => {});
      }
      return undefined;
    }
    try {
      const size = (await handle.stat()).size;
      const whole = await wholeEntry(handle, size);
      if (whole === undefined) {
        await handle.close();
        // Another run may have renamed a good entry over this one since it was opened: at worst
        // that one is fetched again.
        await unlink(path).catch(() => {});
        this.#known.delete(key);
        return undefined;
      }
      // Least recently used is least recently read or written: renew the entry's time.
      const now = new Date();
      await handle.utimes(now, now).catch(() => {});
      let closed = false;
      const close = async (): Promise<void> => {
        if (closed) return;
        closed = true;
        await handle.close().catch(() => {});
      };
      const { length, meta } = whole;
      return {
        bytes: length,
        meta,
        close,
        chunks: async function* () {
          try {
            for (let at = 0; at < length; ) {
              const block = Buffer.alloc(Math.min(BLOCK_BYTES, length - at));
              const got = (await handle.read(block, 0, block.length, HEADER_BYTES + at)).bytesRead;
              if (got !== block.length) throw new Error('cache entry shrank while it was read');
              at += got;
              yield block;
            }
          } finally {
            await close();
          }
        },
      };
    } catch (error) {
      await handle.close().catch(() => {});
      this.#problem('reading', error);
      return undefined;
    }
  }

  /**
   * Starts a new entry for `key`.
   * @param limitBytes audio bytes past which the entry is abandoned (a piece larger than the cap).
   * @returns undefined when nothing can be stored (cap 0, cache not writable).
   */
  async begin(key: string): Promise<CacheWriter | undefined> {
    if (this.maxBytes === 0 || !(await this.#prepare())) return undefined;
    const target = this.#path(key);
    const temp = join(this.dir, `.${key}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
    // Disk work runs behind the stream, in order, on one chain: a request is never slowed by its
    // entry unless the disk falls more than WRITE_BACKLOG_BYTES behind.
    let handle: FileHandle | undefined;
    let chain: Promise<void> = (async () => {
      handle = await createTemp(temp);
      await handle.write(Buffer.alloc(HEADER_BYTES), 0, HEADER_BYTES, 0);
    })();
    const hash = createHash('sha256');
    let length = 0;
    let backlog = 0;
    let failed = false;
    let finished = false;
    const limit = Math.max(0, this.maxBytes - HEADER_BYTES);
    const fail = (error: unknown): void => {
      if (!failed) this.#problem('writing', error);
      failed = true;
    };
    chain = chain.catch(fail);
    const drop = async (): Promise<void> => {
      if (finished) return;
      finished = true;
      await chain;
      await handle?.close().catch(() => {});
      await unlink(temp).catch(() => {});
    };
    const writer: CacheWriter = {
      write: async (data) => {
        if (failed || finished) return;
        if (length + data.length > limit) {
          failed = true;
          return;
        }
        const at = HEADER_BYTES + length;
        hash.update(data);
        length += data.length;
        backlog += data.length;
        chain = chain.then(async () => {
          if (failed || handle === undefined) return;
          try {
            await handle.write(data, 0, data.length, at);
          } catch (error) {
            fail(error);
          }
          backlog -= data.length;
        });
        if (backlog > WRITE_BACKLOG_BYTES) await chain;
      },
      discard: () => this.#track(drop()),
      commit: (meta) => this.#track(commit(meta)),
    };
    const commit = async (meta: Buffer | undefined): Promise<void> => {
      await chain;
      if (failed || finished || length === 0 || handle === undefined || (meta?.length ?? 0) > MAX_META_BYTES) return drop();
      try {
        const metaLength = meta?.length ?? 0;
        if (meta !== undefined && metaLength > 0) {
          hash.update(meta);
          await handle.write(meta, 0, metaLength, HEADER_BYTES + length);
        }
        await handle.write(entryHeader(length, hash.digest(), metaLength), 0, HEADER_BYTES, 0);
        await handle.close();
        finished = true;
        await rename(temp, target);
        this.#known.add(key);
      } catch (error) {
        this.#problem('writing', error);
        finished = false;
        return drop();
      }
      this.#added(HEADER_BYTES + length + (meta?.length ?? 0));
    };
    return writer;
  }

  /** Keeps `work` in {@link settle}'s sight until it ends. */
  #track(work: Promise<void>): Promise<void> {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
    return work;
  }

  /**
   * Counts the entries and their bytes (an absent folder is an empty cache).
   * @throws the file system's error (ENOTDIR when the folder or its parent is not a folder,
   *   EACCES…) when the folder cannot be read; `tts cache` turns it into exit 7.
   */
  async stats(): Promise<CacheStats> {
    const entries = (await isFolder(this.dir)) ? await listEntries(this.dir, false, true) : [];
    return { dir: this.dir, entries: entries.length, bytes: entries.reduce((n, e) => n + e.size, 0) };
  }

  /**
   * Why runs will not use this cache: its folder, or one above it, is owned by another user or
   * writable by others (the check every run makes before its first read or write, which then
   * warns and goes on without the cache: private-folder.ts, the compile cache's rules). Nothing is
   * created: when the folder or folders above it are not there yet, a run would make them (this
   * user's, mode 0700) only where the nearest folder that is there passes, at its place in the path
   * (`$XDG_CACHE_HOME` in a folder others can write, not a sticky one of root's, turns the cache off
   * as surely as `$XDG_CACHE_HOME/tts` writable by others does).
   * @returns the reason (`/home/me/.cache/tts is writable by others`), or undefined when the folder
   *   passes that check, or would once a run made it.
   * @throws the file system's error when a folder cannot be read; ENOTDIR when a name on the way
   *   is not a folder (a run could not make the cache's folder there); ENOENT for a link on the
   *   way that leads nowhere.
   */
  async refusal(): Promise<string | undefined> {
    return privateFolderRefusal(...this.#place());
  }

  /**
   * Removes every entry (and any temporary one), and the folder when nothing else is in it;
   * nothing whose name is not an entry's is removed.
   * @returns what was removed.
   * @throws as {@link stats} when the folder cannot be read, before removing anything.
   */
  async clear(): Promise<CacheStats> {
    const before = await this.stats();
    if (before.entries > 0 || (await isFolder(this.dir))) {
      for (const name of await readdir(this.dir)) if (ENTRY_NAME.test(name) || TEMP_NAME.test(name)) await unlink(join(this.dir, name));
      await rmdir(this.dir).catch(() => {});
    }
    this.#ready = undefined;
    this.#known.clear();
    this.#estimate = 0;
    return before;
  }

  /** Waits for entries being finished in the background and for an eviction this process started. */
  async settle(): Promise<void> {
    const done = (async () => {
      while (this.#pending.size > 0) await Promise.all([...this.#pending]);
      await this.#evicting;
    })();
    // Bounded: a stuck disk never keeps the process alive after its run (the timer is unref'd).
    await Promise.race([done, new Promise<void>((r) => setTimeout(r, SETTLE_MS).unref())]);
  }

  #path(key: string): string {
    return join(this.dir, key);
  }

  /**
   * Where {@link dir} is, for private-folder.ts: the folder holding the cache's folder
   * (`$XDG_CACHE_HOME`), and the folders tts makes below it (`tts`, `pieces`), each this user's.
   */
  #place(): [base: string, names: readonly string[], ownGroup: boolean] {
    const root = dirname(this.dir);
    // A folder writable by this user's own group (user private groups, umask 002) passes: it
    // must not turn the cache off with a warning on every run.
    return [dirname(root), [basename(root), basename(this.dir)], true];
  }

  /**
   * Judges the folders and makes those missing, once (private-folder.ts: nothing made where it
   * would not be used; folders 0700), then reads which entries exist; false when the cache
   * cannot be used (then it is off, with one warning).
   */
  #prepare(): Promise<boolean> {
    this.#ready ??= (async () => {
      try {
        const unsafe = privateFolder(...this.#place()).refused;
        if (unsafe !== undefined) {
          if (!this.#warned) this.#warn(`the piece cache in ${this.dir} is not used: ${unsafe}; going on without it`);
          this.#warned = true;
          return false;
        }
        for (const name of await readdir(this.dir)) if (ENTRY_NAME.test(name)) this.#known.add(name);
        return true;
      } catch (error) {
        this.#problem('creating', error);
        return false;
      }
    })();
    return this.#ready;
  }

  #added(bytes: number): void {
    if (this.#estimate !== undefined) this.#estimate += bytes;
    if (this.#evicting !== undefined) return;
    if (this.#estimate !== undefined && this.#estimate <= this.maxBytes) return;
    this.#evicting = this.#evict().finally(() => {
      this.#evicting = undefined;
    });
  }

  /** Removes least recently used entries until the cache is within its cap; sweeps stale temporary entries. */
  async #evict(): Promise<void> {
    const entries = await listEntries(this.dir, true);
    let total = entries.reduce((n, e) => n + e.size, 0);
    if (total > this.maxBytes) {
      entries.sort((a, b) => a.mtimeMs - b.mtimeMs);
      for (const e of entries) {
        if (total <= this.maxBytes * EVICT_TO) break;
        await unlink(join(this.dir, e.name)).catch(() => {});
        this.#known.delete(e.name);
        total -= e.size;
      }
    }
    this.#estimate = total;
  }

  /** Warns once; `entry` for one bad entry (the cache itself goes on). */
  #problem(what: string, error: unknown, entry = false): void {
    if (this.#warned) return;
    this.#warned = true;
    const code = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    if (entry) this.#warn(`an entry of the piece cache in ${this.dir} was corrupt (${what}: ${code}); removed it, fetching the piece again`);
    else this.#warn(`the piece cache in ${this.dir} failed (${what}: ${code}); going on without it`);
  }
}
