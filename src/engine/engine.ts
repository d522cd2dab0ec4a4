/**
 * The built-in service's speech engine (docs/cli.md §5): a pool of worker threads, each running
 * eSpeak NG (WebAssembly) with kuromoji for Japanese readings, streaming encoded audio chunks
 * back to the caller as they are made.
 *
 * Why workers: eSpeak NG's synthesize() is synchronous CPU-bound WebAssembly; on the main thread
 * it would freeze the service's event loop (other requests, keep-alives, SSE writes) for the whole
 * text. Workers start lazily on the first job that needs one and are reused; jobs wait in a FIFO
 * queue while every worker is busy. Idle workers are unref'd so that an engine nobody closed never
 * keeps Node running; a worker with a job is ref'd so that a pending synthesis does.
 */
import { Worker } from 'node:worker_threads';
import { AUDIO_FORMATS, LANGUAGES } from '../protocol/types.js';
import { EngineError, type SpeechEngine, type SynthesisJob } from './types.js';
import type { EngineWorkerData, JobReport, JobRequest, WorkerReply } from './messages.js';
import { VOICE_VARIANTS } from './voices.js';

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /** Worker threads, i.e. jobs synthesized at once; a positive integer, default 1. */
  workers?: number;
  /**
   * Module the workers run; default `./worker.js` next to this file (dist/src/engine/worker.js).
   * Only tests set it (to a worker that can be made to crash).
   */
  workerUrl?: URL;
}

/** Counters and the last job's report, for diagnostics and tests. */
export interface EngineStats {
  /** Live worker threads. */
  workers: number;
  /** Workers with a job (including an aborted job they have not yet acknowledged). */
  busy: number;
  /** Jobs waiting for a worker. */
  queued: number;
  /** Jobs whose audio was produced to the end. */
  completed: number;
  /** Jobs stopped early by an abort signal or by the consumer leaving the loop. */
  aborted: number;
  /** Jobs that failed with EngineError (worker error or crash). */
  failed: number;
  /** Workers that died unexpectedly (and were replaced on demand). */
  crashes: number;
  /** Whether any live worker has loaded kuromoji's dictionary. */
  kuromojiLoaded: boolean;
  /** Report of the most recent job a worker finished (completed or aborted). */
  lastReport?: JobReport;
}

type RunState = 'queued' | 'running' | 'ended' | 'failed' | 'cancelled';

/** One synthesize() call, from queue to end. */
interface Run {
  id: number;
  job: SynthesisJob;
  state: RunState;
  /** Chunks received and not yet yielded. */
  chunks: Buffer[];
  error?: EngineError;
  /** Resolves the consumer's wait for the next chunk or the end. */
  wake?: (() => void) | undefined;
}

/** A worker thread and its abort flag. */
interface Slot {
  worker: Worker;
  abortFlag: Int32Array;
  run?: Run | undefined;
  alive: boolean;
  kuromojiLoaded: boolean;
}

/**
 * The eSpeak NG engine pool. Implements {@link SpeechEngine}; see {@link createEngine}.
 */
export class EspeakEngine implements SpeechEngine {
  private readonly maxWorkers: number;
  private readonly workerUrl: URL;
  private readonly slots: Slot[] = [];
  private readonly queue: Run[] = [];
  private nextId = 1;
  private closed = false;
  private readonly counters = { completed: 0, aborted: 0, failed: 0, crashes: 0 };
  private lastReport: JobReport | undefined;

  /** @throws RangeError when `workers` is not a positive integer. */
  constructor(options: EngineOptions = {}) {
    const workers = options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`workers must be a positive integer, got ${workers}`);
    this.maxWorkers = workers;
    this.workerUrl = options.workerUrl ?? new URL('./worker.js', import.meta.url);
  }

  /**
   * Synthesizes `job`: yields encoded audio chunks (Buffers in `job.format`, `job.channels`
   * interleaved, at `job.sampleRate` Hz) in order, each a whole number of frames and at most
   * 100 ms, as soon as each exists. The total is exactly round(n × sampleRate / 22050) frames for
   * the n samples eSpeak NG made. The job is queued when iteration starts (the first next()).
   *
   * Aborting `signal` throws `signal.reason` (an AbortError DOMException unless the caller gave
   * another reason) from the loop at once; leaving the loop early (break, return, throw) ends it
   * quietly. Either way the worker stops within one eSpeak callback (a few ms) and takes the next job.
   * @throws EngineError for an invalid job, a closed engine, or a failure in the worker
   *   (eSpeak or dictionary error, worker crash); chunks received before a failure are yielded first.
   */
  async *synthesize(job: SynthesisJob, signal?: AbortSignal): AsyncGenerator<Buffer, void, undefined> {
    validateJob(job);
    if (this.closed) throw new EngineError('the speech engine is closed');
    signal?.throwIfAborted();
    // Only the known fields cross to the worker: anything else might not survive structured cloning.
    const { text, voice, language, format, sampleRate, channels } = job;
    const run: Run = { id: this.nextId++, job: { text, voice, language, format, sampleRate, channels }, state: 'queued', chunks: [] };
    const onAbort = (): void => {
      this.cancel(run);
      run.wake?.();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    this.queue.push(run);
    this.dispatch();
    try {
      for (;;) {
        signal?.throwIfAborted();
        const chunk = run.chunks.shift();
        if (chunk !== undefined) {
          yield chunk;
          continue;
        }
        if (run.error !== undefined) throw run.error;
        if (run.state === 'ended') return;
        await new Promise<void>((resolve) => {
          run.wake = resolve;
        });
        run.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.cancel(run);
    }
  }

  /**
   * Terminates every worker. Queued and running jobs fail with EngineError; later synthesize()
   * calls fail with EngineError. Resolves when all threads have exited. Calling it twice is harmless.
   */
  async close(): Promise<void> {
    this.closed = true;
    const error = new EngineError('the speech engine was closed');
    for (const run of this.queue.splice(0)) this.fail(run, error);
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.alive = false;
      if (slot.run !== undefined) this.fail(slot.run, error);
      slot.run = undefined;
    }
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /**
   * Starts every worker and readies eSpeak NG and the resampler in each by running one tiny job
   * per worker (they count in stats as completed jobs), so that the first real request does not
   * pay the start-up (~0.2–0.5 s: thread, WebAssembly compilation, JIT). Loads kuromoji (~0.6 s)
   * only with `japanese: true`, for a caller that knows Japanese text with kanji is coming.
   * Optional: without it, start-up happens on first use.
   * @throws EngineError when a worker cannot start.
   */
  async warmUp(options: { japanese?: boolean } = {}): Promise<void> {
    const warmJob: SynthesisJob =
      options.japanese === true
        ? { text: '日', voice: 'ja-man-1', language: 'ja', format: 'pcm16', sampleRate: 24000, channels: 1 }
        : { text: 'a', voice: 'en-man-1', language: 'en', format: 'pcm16', sampleRate: 24000, channels: 1 };
    await Promise.all(
      Array.from({ length: this.maxWorkers }, async () => {
        for await (const _ of this.synthesize(warmJob)) {
          // drain
        }
      }),
    );
  }

  /**
   * Starts every worker now, without running a job: each begins loading eSpeak NG and the
   * resampler at once (and kuromoji with `japanese: true`), so a job that arrives meanwhile only
   * waits for what is still loading — not, as after {@link warmUp}, for a warm-up job too.
   * Returns at once; a worker that fails to start is reported by the first job it gets.
   */
  prestart(options: { japanese?: boolean } = {}): void {
    while (!this.closed && this.slots.length < this.maxWorkers) this.spawn(options.japanese === true);
  }

  /** A snapshot of the pool's counters. */
  stats(): EngineStats {
    const stats: EngineStats = {
      workers: this.slots.length,
      busy: this.slots.filter((s) => s.run !== undefined).length,
      queued: this.queue.length,
      ...this.counters,
      kuromojiLoaded: this.slots.some((s) => s.kuromojiLoaded),
    };
    if (this.lastReport !== undefined) stats.lastReport = this.lastReport;
    return stats;
  }

  /** Hands queued jobs to idle workers, starting workers up to the limit. */
  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let slot = this.slots.find((s) => s.run === undefined);
      if (slot === undefined) {
        if (this.slots.length >= this.maxWorkers) return;
        slot = this.spawn();
      }
      const run = this.queue.shift()!;
      run.state = 'running';
      slot.run = run;
      slot.worker.ref();
      const request: JobRequest = { type: 'job', id: run.id, job: run.job };
      slot.worker.postMessage(request);
    }
  }

  private spawn(preloadJapanese = false): Slot {
    const abortFlag = new SharedArrayBuffer(4);
    const workerData: EngineWorkerData = { abortFlag, preloadJapanese };
    const worker = new Worker(this.workerUrl, { workerData, execArgv: workerExecArgv() });
    worker.unref();
    const slot: Slot = { worker, abortFlag: new Int32Array(abortFlag), alive: true, kuromojiLoaded: false };
    worker.on('message', (reply: WorkerReply) => this.onReply(slot, reply));
    worker.on('error', (err) => this.onDeath(slot, err));
    worker.on('exit', (code) => this.onDeath(slot, new Error(`the worker thread exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    const run = slot.run;
    if (!slot.alive || run === undefined || reply.id !== run.id) return;
    switch (reply.type) {
      case 'chunk':
        if (run.state !== 'running') return; // cancelled: the consumer is gone
        run.chunks.push(Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength));
        run.wake?.();
        return;
      case 'end':
        slot.kuromojiLoaded = reply.report.kuromojiLoaded;
        this.lastReport = reply.report;
        if (run.state === 'running' && !reply.report.aborted) {
          run.state = 'ended';
          this.counters.completed++;
        } else {
          this.counters.aborted++;
        }
        break;
      case 'error':
        if (run.state === 'running') this.fail(run, new EngineError(`speech synthesis failed: ${reply.message}`));
        else this.counters.failed++;
        break;
    }
    // The worker is free again: it only sends end/error once the job has stopped.
    slot.run = undefined;
    slot.worker.unref();
    run.wake?.();
    this.dispatch();
  }

  /** A worker died (uncaught error, out of memory, process.exit): fail its job, replace it lazily. */
  private onDeath(slot: Slot, err: Error): void {
    if (!slot.alive) return; // 'exit' follows 'error'; or close() terminated it
    slot.alive = false;
    this.counters.crashes++;
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    const run = slot.run;
    slot.run = undefined;
    if (run !== undefined) {
      if (run.state === 'running') this.fail(run, new EngineError(`the speech engine worker crashed: ${err.message}`, { cause: err }));
      else this.counters.aborted++;
    }
    this.dispatch();
  }

  private fail(run: Run, error: EngineError): void {
    if (run.state !== 'queued' && run.state !== 'running') return;
    run.state = 'failed';
    run.error = error;
    this.counters.failed++;
    run.wake?.();
  }

  /** Stops a run the consumer no longer wants: dequeue it, or raise its worker's abort flag. */
  private cancel(run: Run): void {
    if (run.state === 'queued') {
      const index = this.queue.indexOf(run);
      if (index >= 0) this.queue.splice(index, 1);
      this.counters.aborted++;
    } else if (run.state === 'running') {
      const slot = this.slots.find((s) => s.run === run);
      // The slot stays busy until the worker acknowledges with end/error for this id.
      if (slot !== undefined) Atomics.store(slot.abortFlag, 0, run.id);
    } else {
      return;
    }
    run.state = 'cancelled';
    run.chunks.length = 0;
  }
}

/**
 * Node options for the workers: those of the process's own that a worker accepts and that
 * matter to it (source maps, warnings, module hooks). Workers refuse per-process and V8 options
 * such as --expose-gc or --max-old-space-size (ERR_WORKER_INVALID_EXEC_ARGV), and a file-started
 * worker refuses --input-type (ERR_INPUT_TYPE_NOT_ALLOWED), so anything else is left out.
 */
function workerExecArgv(): string[] {
  const args: string[] = [];
  const withValue = new Set(['--import', '--require', '-r', '--conditions', '-C', '--loader', '--experimental-loader']);
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i]!;
    const name = arg.split('=', 1)[0]!;
    if (withValue.has(name)) {
      args.push(arg);
      if (!arg.includes('=') && i + 1 < process.execArgv.length) args.push(process.execArgv[++i]!);
    } else if (name === '--enable-source-maps' || name === '--no-warnings' || name === '--no-deprecation' || name === '--trace-warnings') {
      args.push(arg);
    }
  }
  return args;
}

/** Checks a job's fields (the service validates requests, this guards other callers). */
function validateJob(job: SynthesisJob): void {
  const problems: string[] = [];
  if (typeof job.text !== 'string' || job.text.trim() === '') problems.push('text must be a non-empty string');
  if (!(job.voice in VOICE_VARIANTS)) problems.push(`unknown voice ${JSON.stringify(job.voice)}`);
  if (!(LANGUAGES as readonly string[]).includes(job.language)) problems.push(`unknown language ${JSON.stringify(job.language)}`);
  if (!(AUDIO_FORMATS as readonly string[]).includes(job.format)) problems.push(`unknown format ${JSON.stringify(job.format)}`);
  if (!Number.isInteger(job.sampleRate) || job.sampleRate < 1000 || job.sampleRate > 384000) {
    problems.push(`sample rate must be an integer of Hz from 1000 to 384000, got ${job.sampleRate}`);
  }
  if (job.channels !== 1 && job.channels !== 2) problems.push(`channels must be 1 or 2, got ${job.channels}`);
  if (problems.length > 0) throw new EngineError(`invalid synthesis job: ${problems.join('; ')}`);
}

/**
 * Creates the offline speech engine behind the built-in service: eSpeak NG in `workers` worker
 * threads (default 1), started on first use. Call close() when done; an idle engine does not keep
 * the process alive even if you don't.
 * @throws RangeError when `workers` is not a positive integer.
 */
export function createEngine(options: EngineOptions = {}): EspeakEngine {
  return new EspeakEngine(options);
}
