/**
 * The piece cache in front of a channel (docs/cli.md §8): an {@link OpenRequest} that answers a
 * piece from the cache when a whole entry exists, and otherwise asks the service, storing the
 * audio exactly as the service sent it once the service said `done` — never before, so an
 * interrupted, failed or cut-back request leaves nothing behind. Conversion to the run's spec,
 * speed, volume, pauses and containers all come after it (channels.ts `converted`, the audio
 * stage), so they are recomputed on every replay and runs that differ only in them share pieces.
 * The pipeline (src/speak/pipeline.ts) does not know about it.
 */
import { sameSpec } from '../dsp/convert.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import type { OpenRequest } from '../speak/channels.js';
import type { AudioChunk } from '../wire/delta.js';
import { pieceKey, type CacheIdentity } from './identity.js';
import type { PieceCache } from './store.js';
import { parseWordTimings, type WordTiming } from '../protocol/words.js';

/** What a cached opener counts, in the run's stats. */
export interface CacheCounters {
  /** Pieces answered from the cache (each was also counted as a request by the pipeline). */
  cacheHits?: number | undefined;
}

/** How to wrap a channel's opener. */
export interface CachedOpenerOptions {
  /** The cache; undefined with `--no-cache` (then the opener is the channel's own). */
  cache: PieceCache | undefined;
  identity: CacheIdentity;
  /**
   * The spec the service is asked for (channels.ts `requestedSpec`): a hit replays audio in it,
   * and an answer that arrived in another spec is never stored.
   */
  requested: AudioSpec;
  counters: CacheCounters;
  /** Called (for --verbose) when an answer is not stored because someone else than the key names spoke. */
  verbose?: ((line: string) => void) | undefined;
}

/**
 * Wraps `open` with the cache.
 * @returns an opener with the same contract: the service's chunks, ending after `done`; a hit
 *   yields the stored bytes (in blocks of at most 64 KiB, with no item id) in `requested`, and
 *   makes no request. An answer is stored only when it is whole samples of `requested` and, when
 *   the identity names who must speak ({@link CacheIdentity.speaker}), the service's `done` named
 *   that same engine: a fallback's audio is never stored under the primary's key. Failures are the
 *   service's; the cache's own problems only make it a miss.
 */
export function cachedOpener(open: OpenRequest, options: CachedOpenerOptions): OpenRequest {
  const { cache, identity, counters, requested } = options;
  const frameBytes = bytesPerFrame(requested);
  return (text, signal) => {
    let answer: ReturnType<OpenRequest> | undefined;
    let fromCache = false;
    let cachedWords: WordTiming[] | undefined;
    async function* chunks(): AsyncGenerator<AudioChunk, void, undefined> {
      const key = cache === undefined ? undefined : pieceKey(identity, text);
      if (cache !== undefined && key !== undefined) {
        const hit = await cache.read(key);
        if (hit !== undefined) {
          if (signal.aborted) {
            await hit.close();
            throw signal.reason;
          }
          fromCache = true;
          cachedWords = storedWords(hit.meta);
          counters.cacheHits = (counters.cacheHits ?? 0) + 1;
          for await (const data of hit.chunks()) {
            if (signal.aborted) throw signal.reason;
            yield { data, itemId: undefined };
          }
          return;
        }
      }
      answer = open(text, signal);
      const writer = cache === undefined || key === undefined ? undefined : await cache.begin(key);
      let complete = false;
      let bytes = 0;
      try {
        for await (const chunk of answer.chunks) {
          if (chunk.data.length > 0) await writer?.write(chunk.data);
          bytes += chunk.data.length;
          yield chunk;
        }
        const spoke = answer.spoke();
        const rightSpeaker = identity.speaker === undefined || spoke === identity.speaker;
        if (!rightSpeaker && writer !== undefined) options.verbose?.(`cache: not storing a piece spoken by ${spoke ?? 'an unnamed engine'}, not ${identity.speaker}`);
        complete = bytes % frameBytes === 0 && sameSpec(answer.arriving(), requested) && rightSpeaker;
      } finally {
        // Only a request that reached `done` (the channel's iterable ended by itself) is stored.
        // The entry is finished behind the stream: the piece's end is not delayed by the disk
        // (PieceCache.settle waits for it before the process ends).
        if (complete && !signal.aborted) void writer?.commit(wordsMeta(answer.words?.()));
        else void writer?.discard();
      }
    }
    return {
      chunks: chunks(),
      arriving: () => (fromCache || answer === undefined ? requested : answer.arriving()),
      spoke: () => (fromCache ? identity.speaker : answer?.spoke()),
      words: () => (fromCache ? cachedWords : answer?.words?.()),
      replayed: () => fromCache,
    };
  };
}

/** The metadata stored with a piece (cache/entry.ts): its word timings as JSON, or none. */
function wordsMeta(words: WordTiming[] | undefined): Buffer | undefined {
  return words === undefined ? undefined : Buffer.from(JSON.stringify({ words }), 'utf8');
}

/** The word timings in a piece's stored metadata; undefined when it has none or they are not well-formed. */
function storedWords(meta: Buffer | undefined): WordTiming[] | undefined {
  if (meta === undefined) return undefined;
  try {
    const parsed = JSON.parse(meta.toString('utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null ? parseWordTimings((parsed as { words?: unknown }).words) : undefined;
  } catch {
    return undefined;
  }
}
