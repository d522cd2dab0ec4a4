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
import type { PieceVoice } from '../speak/piece-end.js';
import type { AudioChunk } from '../wire/delta.js';
import { pieceKey, type CacheIdentity } from './identity.js';
import type { PieceCache } from './store.js';
import { parseWordTimings, type WordTiming } from '../protocol/words.js';
import { FALLBACK_ENGINE_PREFIX } from '../protocol/types.js';

/** What a cached opener counts, in the run's stats. */
export interface CacheCounters {
  /** Pieces answered from the cache (each was also counted as a request by the pipeline). */
  cacheHits?: number | undefined;
}

/** How to wrap a channel's opener. */
export interface CachedOpenerOptions {
  /** The cache. (With `--no-cache` a run uses the channel's own opener: src/speak/run.ts.) */
  cache: PieceCache;
  /** The run's identity; a piece in a span of its own voice or language is keyed with those instead. */
  identity: CacheIdentity;
  /**
   * Who must speak a voice ({@link CacheIdentity.speaker}; the built-in service's `voiceIdentity`),
   * for a piece in another voice than the run's; absent = the run's speaker for every voice.
   */
  speakerOf?: ((voice: string) => string | undefined) | undefined;
  /**
   * The spec the service is asked for (channels.ts `requestedSpec`): a hit replays audio in it,
   * and an answer that arrived in another spec is never stored.
   */
  requested: AudioSpec;
  counters: CacheCounters;
  /**
   * The run needs word timings (docs/cli.md §12.1) and asks the service for them: an entry
   * stored without words by a run that did not ask is then a miss (replaying it would lose them
   * silently), and what this run stores says it asked (see {@link PieceMeta}).
   */
  wordTimings?: boolean | undefined;
  /** Called (for --verbose) when an answer is not stored because someone else than the key names spoke. */
  verbose?: ((line: string) => void) | undefined;
}

/**
 * Wraps `open` with the cache.
 * @returns an opener with the same contract: the service's chunks, ending after `done`; a hit
 *   yields the stored bytes (in blocks of at most 64 KiB, with no item id) in `requested`, and
 *   makes no request; an entry that is not whole samples of `requested` (or empty) is a miss. An answer is stored only when it is whole samples of `requested` and, when
 *   the identity names who must speak ({@link CacheIdentity.speaker}), the service's `done` named
 *   that same engine: a fallback's audio is never stored under the primary's key. With
 *   `wordTimings`, only an entry that {@link servesWords} is a hit. Failures are the service's;
 *   the cache's own problems only make it a miss.
 */
export function cachedOpener(open: OpenRequest, options: CachedOpenerOptions): OpenRequest {
  const { cache, identity, counters, requested } = options;
  const frameBytes = bytesPerFrame(requested);
  return (text, signal, piece) => {
    let answer: ReturnType<OpenRequest> | undefined;
    let fromCache = false;
    // A span in another voice or language is its own request, and so its own key (docs/cli.md §11).
    const own = pieceIdentity(identity, piece, options.speakerOf);
    let cachedWords: WordTiming[] | undefined;
    async function* chunks(): AsyncGenerator<AudioChunk, void, undefined> {
      const key = pieceKey(own, text);
      let hit = await cache.read(key);
      if (hit !== undefined && (hit.bytes === 0 || hit.bytes % frameBytes !== 0)) {
        // Not a piece any service sent (only whole samples are stored): a corrupt entry, forged
        // under a right checksum. Requested again, and the answer stored over it.
        await hit.close();
        hit = undefined;
        options.verbose?.('cache: a stored piece is not whole samples; asking the service again');
      }
      const meta = hit === undefined ? undefined : pieceMeta(hit.meta);
      if (hit !== undefined && !servesWords(meta!, options.wordTimings === true)) {
        // Stored by a run that wanted no words: this run asks the service again, and stores
        // what it answers (words and all) over it.
        await hit.close();
        hit = undefined;
        options.verbose?.('cache: a stored piece has no word timings; asking the service for them');
      }
      if (hit !== undefined) {
        if (signal.aborted) {
          await hit.close();
          throw signal.reason;
        }
        fromCache = true;
        cachedWords = meta!.words;
        counters.cacheHits = (counters.cacheHits ?? 0) + 1;
        for await (const data of hit.chunks()) {
          if (signal.aborted) throw signal.reason;
          yield { data, itemId: undefined };
        }
        return;
      }
      answer = open(text, signal, piece);
      const writer = await cache.begin(key);
      let complete = false;
      let bytes = 0;
      try {
        for await (const chunk of answer.chunks) {
          if (chunk.data.length > 0) await writer?.write(chunk.data);
          bytes += chunk.data.length;
          yield chunk;
        }
        const spoke = answer.spoke();
        // A remote service names no one we expect, but when it says a fallback spoke (another
        // machine's `tts serve`, docs/protocol.md §2.3) its audio is not its voice's either.
        const rightSpeaker = own.speaker === undefined ? spoke?.startsWith(FALLBACK_ENGINE_PREFIX) !== true : spoke === own.speaker;
        if (!rightSpeaker && writer !== undefined) options.verbose?.(`cache: not storing a piece spoken by ${spoke ?? 'an unnamed engine'}, not ${own.speaker ?? 'the voice\'s own engine'}`);
        complete = bytes % frameBytes === 0 && sameSpec(answer.arriving(), requested) && rightSpeaker;
      } finally {
        // Only a request that reached `done` (the channel's iterable ended by itself) is stored.
        // The entry is finished behind the stream: the piece's end is not delayed by the disk
        // (PieceCache.settle waits for it before the process ends).
        if (complete && !signal.aborted) void writer?.commit(metaBytes({ words: answer.words?.(), wordsAsked: options.wordTimings === true }));
        else void writer?.discard();
      }
    }
    return {
      chunks: chunks(),
      arriving: () => (fromCache || answer === undefined ? requested : answer.arriving()),
      spoke: () => (fromCache ? own.speaker : answer?.spoke()),
      words: () => (fromCache ? cachedWords : answer?.words?.()),
      replayed: () => fromCache,
    };
  };
}

/**
 * The identity of one piece: the run's, with the piece's own voice and language when it has them
 * (and who must speak that voice, from `speakerOf`). The same object when the piece has neither.
 */
export function pieceIdentity(identity: CacheIdentity, piece: PieceVoice | undefined, speakerOf?: (voice: string) => string | undefined): CacheIdentity {
  const voice = piece?.voice ?? identity.voice;
  const language = piece?.language ?? identity.language;
  if (voice === identity.voice && language === identity.language) return identity;
  return { ...identity, voice, language, speaker: voice === identity.voice || speakerOf === undefined ? identity.speaker : speakerOf(voice) };
}

/**
 * What is stored with a piece besides its audio (cache/entry.ts metadata, as JSON
 * `{"words":[…],"wordsAsked":true}`, each member only when it applies).
 */
export interface PieceMeta {
  /** The word timings the service sent with `done` (protocol/words.ts), if it sent any. */
  words?: WordTiming[] | undefined;
  /**
   * The request was made for a run that needed word timings (docs/cli.md §12.1): whatever words
   * the entry has — none, from a service that gives none — are all its service gives.
   */
  wordsAsked?: boolean | undefined;
}

/**
 * Whether an entry may answer a run: always when the run needs no word timings (an entry's words
 * are then simply not used); when it does, only an entry that has words or was stored by a run
 * that asked for them — never one a plain run stored without them, which would lose them silently.
 */
export function servesWords(meta: PieceMeta, wordTimings: boolean): boolean {
  return !wordTimings || meta.words !== undefined || meta.wordsAsked === true;
}

/** The metadata bytes stored with a piece; undefined when there is nothing to say. */
function metaBytes(meta: PieceMeta): Buffer | undefined {
  const json = { ...(meta.words === undefined ? {} : { words: meta.words }), ...(meta.wordsAsked === true ? { wordsAsked: true } : {}) };
  return Object.keys(json).length === 0 ? undefined : Buffer.from(JSON.stringify(json), 'utf8');
}

/** A piece's stored metadata; words that are not well-formed, or metadata that is not JSON, count as none. */
function pieceMeta(meta: Buffer | undefined): PieceMeta {
  if (meta === undefined) return {};
  try {
    const parsed = JSON.parse(meta.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return {};
    const { words, wordsAsked } = parsed as { words?: unknown; wordsAsked?: unknown };
    return { words: parseWordTimings(words), wordsAsked: wordsAsked === true };
  } catch {
    return {};
  }
}
