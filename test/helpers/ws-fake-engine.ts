/**
 * A deterministic stand-in for the speech engine (src/engine/types.ts), for testing the
 * WebSocket route without eSpeak NG: each job yields `chunks` chunks of 100 ms of pattern bytes
 * sized by the job's format, rate and channels, and records what it was asked and whether it
 * was aborted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SpeechEngine, SynthesisJob } from '../../src/engine/types.js';
import { EngineError } from '../../src/engine/types.js';
import { patternBytes } from './servers.js';

/** Knobs of the fake. */
export interface FakeEngineOptions {
  /** Chunks per job (default 5). */
  chunks?: number;
  /** Milliseconds before each chunk (default 0). */
  delayMs?: number;
  /** Throw EngineError after this many chunks. */
  failAfter?: number;
}

/** What one job did. */
export interface FakeJobRecord {
  job: SynthesisJob;
  /** Chunks handed out. */
  yielded: number;
  /** True once the signal aborted before the last chunk. */
  aborted: boolean;
  /** True once the generator finished, by any path. */
  ended: boolean;
  /** performance.now() when the abort was seen. */
  abortedAt?: number;
}

/** The fake engine and its records. */
export interface FakeEngine extends SpeechEngine {
  records: FakeJobRecord[];
  closed: boolean;
}

/** Bytes per sample of one channel. */
export function bytesPerSample(format: SynthesisJob['format']): number {
  return format === 'float32' ? 4 : format === 'mulaw' ? 1 : 2;
}

/** The `i`-th chunk (0-based) a job yields: 100 ms of whole frames of pattern bytes. */
export function fakeChunk(job: Pick<SynthesisJob, 'format' | 'sampleRate' | 'channels'>, i: number): Buffer {
  const frames = Math.round(job.sampleRate / 10);
  return patternBytes(frames * job.channels * bytesPerSample(job.format), i + 1);
}

/** Everything a job of `chunks` chunks yields, concatenated. */
export function fakeAudio(job: Pick<SynthesisJob, 'format' | 'sampleRate' | 'channels'>, chunks: number): Buffer {
  return Buffer.concat(Array.from({ length: chunks }, (_, i) => fakeChunk(job, i)));
}

/** Makes a fake engine. */
export function fakeEngine(options: FakeEngineOptions = {}): FakeEngine {
  const records: FakeJobRecord[] = [];
  const engine: FakeEngine = {
    records,
    closed: false,
    synthesize(job: SynthesisJob, signal?: AbortSignal): AsyncIterable<Buffer> {
      const record: FakeJobRecord = { job: { ...job }, yielded: 0, aborted: false, ended: false };
      records.push(record);
      const onAbort = (): void => {
        if (record.ended) return;
        record.aborted = true;
        record.abortedAt = performance.now();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const total = options.chunks ?? 5;
      return (async function* () {
        try {
          for (let i = 0; i < total; i++) {
            if (signal?.aborted) return;
            if ((options.delayMs ?? 0) > 0) {
              try {
                await sleep(options.delayMs, undefined, signal === undefined ? {} : { signal });
              } catch {
                return;
              }
            }
            if (options.failAfter !== undefined && i >= options.failAfter) throw new EngineError('the fake engine failed on purpose');
            record.yielded++;
            yield fakeChunk(job, i);
          }
        } finally {
          record.ended = true;
          signal?.removeEventListener('abort', onAbort);
        }
      })();
    },
    async close() {
      engine.closed = true;
    },
  };
  return engine;
}
