/**
 * The one deterministic stand-in for the speech engine (src/engine/types.ts), for tests of the
 * built-in service's routes without eSpeak NG: each job yields chunks of 100 ms of pattern bytes
 * sized by the job's format, rate and channels, and is recorded — what it was asked, how many
 * chunks it handed out, whether it was aborted — so what reaches the engine and what leaves the
 * socket can be compared byte for byte. {@link scriptedEngine} is the same engine with the
 * "slow text" rule the limit tests use.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SpeechEngine, SynthesisJob, SynthesisOptions } from '../../src/engine/types.js';
import { EngineError } from '../../src/engine/types.js';
import { patternBytes } from './servers.js';

/** Knobs of the fake; a function gives a value per job. */
export interface FakeEngineOptions {
  /** Chunks per job (default 5). */
  chunks?: number | ((job: SynthesisJob) => number);
  /** Milliseconds before each chunk (default 0); an abort cuts the wait short. */
  delayMs?: number | ((job: SynthesisJob) => number);
  /** Throw EngineError after this many chunks. */
  failAfter?: number;
}

/** What one job did. */
export interface FakeJobRecord {
  job: SynthesisJob;
  /** The fairness key the caller gave (docs/cli.md §5), if any. */
  key?: string | undefined;
  /** Whether the caller asked for word timings (SynthesisOptions.wordTimings). */
  wordTimings: boolean;
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
  /** Jobs started and not yet ended. */
  running(): number;
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
  const perJob = (v: number | ((job: SynthesisJob) => number) | undefined, job: SynthesisJob, fallback: number): number =>
    typeof v === 'function' ? v(job) : (v ?? fallback);
  const engine: FakeEngine = {
    records,
    closed: false,
    running: () => records.filter((r) => !r.ended).length,
    synthesize(job: SynthesisJob, signal?: AbortSignal, synthesisOptions?: SynthesisOptions): AsyncIterable<Buffer> {
      const record: FakeJobRecord = { job: { ...job }, key: synthesisOptions?.key, wordTimings: synthesisOptions?.wordTimings === true, yielded: 0, aborted: false, ended: false };
      records.push(record);
      const onAbort = (): void => {
        if (record.ended) return;
        record.aborted = true;
        record.abortedAt = performance.now();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const total = perJob(options.chunks, job, 5);
      const delayMs = perJob(options.delayMs, job, 0);
      return (async function* () {
        try {
          for (let i = 0; i < total; i++) {
            if (signal?.aborted) return;
            if (delayMs > 0) {
              try {
                await sleep(delayMs, undefined, signal === undefined ? {} : { signal });
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

/**
 * The fake engine with the limit tests' rule: a text starting with `slow` yields a 100 ms chunk
 * every 20 ms for `slowMs` (default 5 s) unless aborted; any other text yields 3 chunks at once.
 */
export function scriptedEngine(slowMs = 5000): FakeEngine {
  const slow = (job: SynthesisJob): boolean => job.text.startsWith('slow');
  return fakeEngine({ chunks: (job) => (slow(job) ? Math.ceil(slowMs / 20) : 3), delayMs: (job) => (slow(job) ? 20 : 0) });
}
