/**
 * Alignment beside the stream (issue 23 point 2: "runs beside the stream, never delays the
 * audio, and costs a bounded share of one core"): jobs go to one worker thread, one at a time, in
 * the order given. The work waiting is bounded in seconds of target audio; a job that would pass
 * the bound is not queued (its promise resolves to `undefined`, and the caller says so) rather
 * than letting the aligner fall ever further behind a stream it cannot keep up with.
 */
import { Worker } from 'node:worker_threads';
import type { Alignment, MonoAudio, TimeSpan } from './align.js';
import type { BandOptions } from './dtw.js';
import type { AlignReply, AlignRequest } from './worker.js';
import { workerExecArgv } from '../engine/job.js';

/**
 * Default bound on target audio waiting for (or in) the thread, in seconds: 300 s is ~29 MB of
 * float samples at 24 kHz. A run waits for each piece's words at its end (speak/run.ts), so it
 * holds a few pieces at most; the bound is for what would otherwise pile up.
 */
export const MAX_PENDING_SECONDS = 300;

/** Options of {@link AlignThread}. */
export interface AlignThreadOptions {
  /** Bound on target audio queued or being aligned, in seconds; default {@link MAX_PENDING_SECONDS}. */
  maxPendingSeconds?: number;
  /** DTW band (dtw.ts); default its defaults. */
  band?: BandOptions;
  /** Worker script; tests only. */
  workerUrl?: URL;
}

interface Pending {
  seconds: number;
  resolve: (result: Alignment<TimeSpan> | undefined) => void;
  reject: (err: Error) => void;
}

/** One worker thread that aligns (see the file comment). Started on the first job; unref'd while idle. */
export class AlignThread {
  readonly #maxPendingSeconds: number;
  readonly #band: BandOptions;
  readonly #workerUrl: URL;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #pendingSeconds = 0;
  #nextId = 1;
  #closed = false;

  /** @throws RangeError for a bound that is not a positive number. */
  constructor(options: AlignThreadOptions = {}) {
    this.#maxPendingSeconds = options.maxPendingSeconds ?? MAX_PENDING_SECONDS;
    if (!(this.#maxPendingSeconds > 0)) throw new RangeError(`maxPendingSeconds must be positive, got ${this.#maxPendingSeconds}`);
    this.#band = options.band ?? {};
    this.#workerUrl = options.workerUrl ?? new URL('./worker.js', import.meta.url);
  }

  /** Seconds of target audio queued or being aligned now. */
  get pendingSeconds(): number {
    return this.#pendingSeconds;
  }

  /**
   * Aligns `spans` (seconds of `reference`) onto `target` (align.ts {@link alignSpans}) in the
   * thread. The samples are copied to the thread, the caller's arrays are left as they are.
   * @returns the alignment, or `undefined` when the job was not taken because the thread already
   *   has `maxPendingSeconds` of audio to align (it cannot keep up: the caller goes without).
   * @throws Error when the thread fails or was closed.
   */
  align<T extends TimeSpan>(reference: MonoAudio, target: MonoAudio, spans: readonly T[]): Promise<Alignment<T> | undefined> {
    if (this.#closed) return Promise.reject(new Error('the aligner is closed'));
    const seconds = target.samples.length / target.sampleRate;
    if (this.#pending.size > 0 && this.#pendingSeconds + seconds > this.#maxPendingSeconds) return Promise.resolve(undefined);
    const worker = this.#start();
    const id = this.#nextId++;
    this.#pendingSeconds += seconds;
    worker.ref();
    const request: AlignRequest = { id, reference, target, spans: spans.map((s) => ({ start: s.start, end: s.end })), band: this.#band };
    return new Promise<Alignment<TimeSpan> | undefined>((resolve, reject) => {
      this.#pending.set(id, { seconds, resolve, reject });
      worker.postMessage(request);
    }).then((result) => result && { ...result, spans: spans.map((s, i) => ({ ...s, start: result.spans[i]!.start, end: result.spans[i]!.end })) });
  }

  /** Stops the thread; jobs not done reject. Safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#failAll(new Error('the aligner was closed'));
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(this.#workerUrl, { execArgv: workerExecArgv() });
    worker.on('message', (reply: AlignReply) => {
      const job = this.#pending.get(reply.id);
      if (job === undefined) return;
      this.#pending.delete(reply.id);
      this.#pendingSeconds -= job.seconds;
      if (this.#pending.size === 0) {
        this.#pendingSeconds = 0;
        worker.unref();
      }
      if (reply.ok) job.resolve({ spans: reply.spans, meanCost: reply.meanCost, cpuSeconds: reply.cpuSeconds });
      else job.reject(new Error(`alignment failed: ${reply.message}`));
    });
    const die = (err: Error): void => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(err);
    };
    worker.on('error', die);
    worker.on('exit', (code) => die(new Error(`the aligner's thread exited (code ${code})`)));
    this.#worker = worker;
    return worker;
  }

  #failAll(err: Error): void {
    for (const job of this.#pending.values()) job.reject(err);
    this.#pending.clear();
    this.#pendingSeconds = 0;
  }
}
