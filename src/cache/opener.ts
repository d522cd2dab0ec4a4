/**
 * The piece cache in front of a channel (docs/cli.md §8): an {@link OpenStream} that answers a
 * piece from the cache when a whole entry exists, and otherwise asks the service, storing the
 * audio once the service said `done` — never before, so an interrupted, failed or cut-back
 * request leaves nothing behind. The pipeline (src/speak/pipeline.ts) does not know about it.
 */
import type { OpenStream } from '../speak/pipeline.js';
import type { AudioChunk } from '../wire/delta.js';
import { pieceKey, type CacheIdentity } from './identity.js';
import type { PieceCache } from './store.js';

/** What a cached opener counts, in the run's stats. */
export interface CacheCounters {
  /** Pieces answered from the cache (each was also counted as a request by the pipeline). */
  cacheHits?: number | undefined;
}

/** How to wrap a channel's opener. */
export interface CachedOpenerOptions {
  /** The cache; undefined with `--no-cache` (then only `onPieceDone` is added). */
  cache: PieceCache | undefined;
  identity: CacheIdentity;
  counters: CacheCounters;
  /** Bytes of one sample frame of the stream: a piece whose audio is not whole frames is never stored. */
  frameBytes?: number | undefined;
  /** Called when a piece's audio was all handed on: `text` as sent, `fromCache` when it was replayed. */
  onPieceDone?: ((text: string, fromCache: boolean) => void) | undefined;
}

/**
 * Wraps `open` with the cache.
 * @returns an opener with the same contract: chunks of the piece's audio, ending after `done`;
 *   a hit yields the stored bytes (in blocks of at most 64 KiB, with no item id) and makes no
 *   request. Failures are the service's; the cache's own problems only make it a miss.
 */
export function cachedOpener(open: OpenStream, options: CachedOpenerOptions): OpenStream {
  const { cache, identity, counters, onPieceDone } = options;
  return async function* (text: string, signal: AbortSignal): AsyncGenerator<AudioChunk, void, undefined> {
    const key = cache === undefined ? undefined : pieceKey(identity, text);
    if (cache !== undefined && key !== undefined) {
      const hit = await cache.read(key);
      if (hit !== undefined) {
        if (signal.aborted) {
          await hit.close();
          throw signal.reason;
        }
        counters.cacheHits = (counters.cacheHits ?? 0) + 1;
        for await (const data of hit.chunks()) {
          if (signal.aborted) throw signal.reason;
          yield { data, itemId: undefined };
        }
        onPieceDone?.(text, true);
        return;
      }
    }
    const writer = cache === undefined || key === undefined ? undefined : await cache.begin(key);
    let complete = false;
    let bytes = 0;
    try {
      for await (const chunk of open(text, signal)) {
        if (chunk.data.length > 0) await writer?.write(chunk.data);
        bytes += chunk.data.length;
        yield chunk;
      }
      complete = bytes % (options.frameBytes ?? 1) === 0;
    } finally {
      // Only a request that reached `done` (the channel's iterable ended by itself) is stored.
      // The entry is finished behind the stream: the piece's end is not delayed by the disk
      // (PieceCache.settle waits for it before the process ends).
      if (complete && !signal.aborted) void writer?.commit();
      else void writer?.discard();
    }
    onPieceDone?.(text, false);
  };
}
