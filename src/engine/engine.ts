/**
 * The built-in service's speech engine (docs/cli.md §5): a pool of worker threads, each running
 * eSpeak NG (WebAssembly) with kuromoji for Japanese readings, streaming encoded audio chunks
 * back to the caller as they are made.
 *
 * Why workers: eSpeak NG's synthesize() is synchronous CPU-bound WebAssembly; on the main thread
 * it would freeze the service's event loop (other requests, keep-alives, SSE writes) for the whole
 * text. Workers start lazily when there is work and are reused. Idle workers are unref'd so that
 * an engine nobody closed never keeps Node running; a worker with work is ref'd so that a pending
 * synthesis does.
 *
 * Streams and units: each synthesize() call is a stream, cut into units (units.ts: a sentence or
 * a few, at most UNIT_CHARS characters). A worker gets one unit at a time; when it is free, the
 * scheduler (scheduler.ts) picks the next stream round-robin between keys and then between a
 * key's streams (or in arrival order with `scheduling: 'fifo'`). A stream has one unit in flight
 * at most, so its audio stays in order, and gets its next unit only while its buffer — a
 * byte-bounded ChunkQueue between the worker and the caller — is at its low-water mark or below:
 * a caller that stops taking chunks (a client that does not read) stops its stream's synthesis
 * after at most one unit, and the worker goes to other streams.
 */
import { Worker } from 'node:worker_threads';
import { ChunkQueue } from '../queue/chunk-queue.js';
import { validateJob, workerExecArgv } from './job.js';
import { ENGINE_WORKER_URL } from './worker-url.js';
import { adoptEarlyWorker } from './early-worker.js';
import type { SharedDictionary } from './kuromoji-dictionary.js';
import type { FliteModule } from './flite.js';
import type { DictionaryMessage, EngineWorkerData, FliteMessage, InitMessage, JobRequest, NoticeReply, WorkerReply } from './messages.js';
import { containsJapaneseScript } from './han.js';
import { Scheduler } from './scheduler.js';
import { EngineError, STREAM_BUFFER_BYTES, type EngineOptions, type EngineStats, type JobReport, type SpeechEngine, type SynthesisJob, type SynthesisOptions } from './types.js';
import { mergeReports, speechUnits } from './units.js';

export type { EngineOptions, EngineStats } from './types.js';

type RunState = 'queued' | 'running' | 'ended' | 'failed' | 'cancelled';

/** One synthesize() call (a stream), from its first unit to its end. */
interface Run {
  job: SynthesisJob;
  key: string;
  state: RunState;
  units: Iterator<string, void>;
  /** The next unit to synthesize; undefined when every unit was handed out. */
  nextUnit: string | undefined;
  /** Id of the unit a worker is synthesizing now (the JobRequest id). */
  unitId?: number | undefined;
  /** Encoded chunks made and not yet taken by the caller. */
  queue: ChunkQueue<Buffer>;
  /** Reports of the units done so far (their words shifted to the stream's frames and text). */
  reports: JobReport[];
  /** Where in the stream's text the search for the next unit starts (UTF-16 offset). */
  textCursor: number;
  /** UTF-16 offset in the stream's text of the unit in flight, -1 when it was not found there. */
  unitCharStart: number;
  /** {@link SynthesisOptions.onReport}. */
  onReport?: ((report: JobReport) => void) | undefined;
  /** {@link SynthesisOptions.wordTimings}: whether each unit's worker times its words. */
  wordTimings: boolean;
}

/** A worker thread, its abort flag and the run whose unit it is synthesizing. */
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
  /** kuromoji's dictionary in shared memory, read on a worker's first request ({@link shareDictionary}). */
  private sharedDictionary: Promise<SharedDictionary> | undefined;
  /** Closes the file the loaded shared dictionary reads features from (close(), once the workers have exited). */
  private releaseDictionary: (() => void) | undefined;
  /** Flite compiled once for every worker (a WebAssembly.Module is shared, not copied, by postMessage). */
  private sharedFlite: Promise<FliteModule> | undefined;
  private readonly workerUrl: URL;
  /** {@link EngineOptions.shareDictionary}, or several workers. */
  private readonly shareDictionary: boolean;
  /** Aborted by close(): stops the pool's own load of the shared dictionary (within 4 MiB of reads). */
  private readonly loads = new AbortController();
  private readonly bufferBytes: number;
  private readonly slots: Slot[] = [];
  private readonly scheduler: Scheduler<Run>;
  private nextId = 1;
  private closed = false;
  /** The first close()'s promise. */
  private closing: Promise<void> | undefined;
  private readonly counters = { completed: 0, aborted: 0, failed: 0, crashes: 0 };
  private lastReport: JobReport | undefined;
  /** {@link EngineOptions.onNotice}. */
  private readonly onNotice: ((line: string) => void) | undefined;
  /** The kinds of notice said already (each once: every worker sends its own). */
  private readonly noticed = new Set<NoticeReply['kind']>();

  /** @throws RangeError when `workers` is not a positive integer or the buffer is under 1 KiB. */
  constructor(options: EngineOptions = {}) {
    const workers = options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`workers must be a positive integer, got ${workers}`);
    this.maxWorkers = workers;
    this.bufferBytes = options.streamBufferBytes ?? STREAM_BUFFER_BYTES;
    if (!(this.bufferBytes >= 1024)) throw new RangeError(`streamBufferBytes must be at least 1024, got ${this.bufferBytes}`);
    this.scheduler = new Scheduler(options.scheduling ?? 'fair');
    this.workerUrl = options.workerUrl ?? ENGINE_WORKER_URL;
    this.shareDictionary = workers > 1 || options.shareDictionary === true;
    this.onNotice = options.onNotice;
  }

  /**
   * Synthesizes `job`: yields encoded audio chunks (Buffers in `job.format`, `job.channels`
   * interleaved, at `job.sampleRate` Hz) in order, each a whole number of frames and at most
   * 100 ms, as soon as each exists. Each unit of the text (units.ts) lasts exactly
   * round(n × sampleRate / 22050) frames for the n samples eSpeak NG made of it. The stream joins
   * the scheduler when iteration starts (the first next()); `options.key` groups it with the
   * caller's other streams for fairness; `options.wordTimings` asks the workers to time the
   * words (the report's `words`), which costs them work and never changes the audio.
   *
   * Aborting `signal` throws `signal.reason` (an AbortError DOMException unless the caller gave
   * another reason) from the loop at once; leaving the loop early (break, return, throw) ends it
   * quietly. Either way a running unit stops within one eSpeak callback (a few ms).
   * @throws EngineError for an invalid job, a closed engine, or a failure in the worker
   *   (eSpeak or dictionary error, worker crash); chunks received before a failure are yielded first.
   */
  async *synthesize(job: SynthesisJob, signal?: AbortSignal, options: SynthesisOptions = {}): AsyncGenerator<Buffer, void, undefined> {
    validateJob(job);
    if (this.closed) throw new EngineError('the speech engine is closed');
    signal?.throwIfAborted();
    // Only the known fields cross to the worker: anything else might not survive structured cloning.
    const { text, voice, language, format, sampleRate, channels } = job;
    const units = speechUnits(text);
    const run: Run = {
      job: { text, voice, language, format, sampleRate, channels },
      key: options.key ?? '',
      state: 'queued',
      units,
      nextUnit: units.next().value ?? undefined,
      queue: new ChunkQueue<Buffer>({ highWaterBytes: this.bufferBytes, sizeOf: (b) => b.length }),
      reports: [],
      textCursor: 0,
      unitCharStart: 0,
      onReport: options.onReport,
      wordTimings: options.wordTimings === true,
    };
    const onAbort = (): void => {
      run.queue.fail(signal?.reason, { urgent: true });
      this.cancel(run);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    this.scheduler.add(run, run.key);
    // A text of spaces the trim() above does not know (none in practice) has no unit: it is done.
    if (run.nextUnit === undefined) this.finishCompleted(run);
    this.dispatch();
    try {
      for (;;) {
        signal?.throwIfAborted();
        const chunk = await run.queue.take();
        if (chunk === undefined) return;
        yield chunk;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.cancel(run);
      run.queue.close();
    }
  }

  /**
   * Terminates every worker. Queued and running streams fail with EngineError; later synthesize()
   * calls fail with EngineError. Resolves when all threads have exited. Calling it twice is
   * harmless: a later call returns the first one's promise (resolving only once the threads have
   * exited, and closing the shared dictionary's file after that, never while one may read it).
   */
  close(): Promise<void> {
    return (this.closing ??= this.shutDown());
  }

  /** {@link close}'s work, done once. */
  private async shutDown(): Promise<void> {
    this.closed = true;
    this.loads.abort();
    const error = new EngineError('the speech engine was closed');
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.alive = false;
      if (slot.run !== undefined) this.fail(slot.run, error);
      slot.run = undefined;
    }
    for (const run of this.scheduler.streams()) this.fail(run, error);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
    // No thread tokenizes over the shared dictionary any more.
    this.releaseDictionary?.();
    this.releaseDictionary = undefined;
  }

  /**
   * Starts every worker and readies eSpeak NG and the resampler in each by running one tiny job
   * per worker (they count in stats as completed streams), so that the first real request does
   * not pay the start-up (~0.2–0.5 s: thread, WebAssembly compilation, JIT). Loads kuromoji
   * (~0.6 s) only with `japanese: true`, for a caller that knows Japanese text with kanji is coming.
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
   * Starts every worker now, without running a job: each begins loading Flite and the resamplers
   * at once (eSpeak NG and kuromoji too with `japanese: true`), so a job that arrives meanwhile
   * only waits for what is still loading — not, as after {@link warmUp}, for a warm-up job too.
   * With `text` (the text about to be spoken, in the embedded one-shot), only what it needs:
   * Flite when it has a Latin letter, eSpeak NG when it has kana or kanji (issue 20); with `voice`
   * too (the voice id about to speak: a hint), Flite reads that voice's data ahead. Does
   * nothing once the workers are started (a second call: the first
   * call's preloads stand). Returns at once; a worker that fails to start is reported by the first
   * job it gets.
   */
  prestart(options: { japanese?: boolean; text?: string; voice?: string } = {}): void {
    const { text } = options;
    const expect: EngineWorkerData['expect'] =
      text === undefined ? undefined : { flite: /\p{Script=Latin}/u.test(text), espeak: options.japanese === true || containsJapaneseScript(text) };
    if (expect?.flite === true && options.voice !== undefined) expect.voice = options.voice;
    while (!this.closed && this.slots.length < this.maxWorkers) this.spawn(options.japanese === true, expect);
  }

  /** A snapshot of the pool's counters. */
  stats(): EngineStats {
    const queued = this.scheduler.streams().filter((r) => r.state === 'queued').length;
    const stats: EngineStats = {
      workers: this.slots.length,
      busy: this.slots.filter((s) => s.run !== undefined).length,
      queued,
      ...this.counters,
      kuromojiLoaded: this.slots.some((s) => s.kuromojiLoaded),
    };
    if (this.lastReport !== undefined) stats.lastReport = this.lastReport;
    return stats;
  }

  /** Whether `run` can take its next unit now. */
  private ready(run: Run): boolean {
    return (
      (run.state === 'queued' || run.state === 'running') &&
      run.unitId === undefined &&
      run.nextUnit !== undefined &&
      run.queue.bytes <= run.queue.lowWaterBytes
    );
  }

  /** Hands units of ready streams to idle workers, starting workers up to the limit. */
  private dispatch(): void {
    while (!this.closed) {
      let slot = this.slots.find((s) => s.run === undefined);
      if (slot === undefined && this.slots.length >= this.maxWorkers) return;
      const run = this.scheduler.pick((r) => this.ready(r));
      if (run === undefined) return;
      slot ??= this.spawn();
      const id = this.nextId++;
      const request: JobRequest = { type: 'job', id, job: { ...run.job, text: run.nextUnit! }, wordTimings: run.wordTimings };
      run.state = 'running';
      // Units are pieces of the text, in order: where this one is places its words in the text.
      run.unitCharStart = run.job.text.indexOf(run.nextUnit!, run.textCursor);
      if (run.unitCharStart >= 0) run.textCursor = run.unitCharStart + run.nextUnit!.length;
      run.unitId = id;
      run.nextUnit = run.units.next().value ?? undefined;
      slot.run = run;
      slot.worker.ref();
      slot.worker.postMessage(request);
    }
  }

  private spawn(preloadJapanese = false, expect?: EngineWorkerData['expect']): Slot {
    const abortFlag = new SharedArrayBuffer(4);
    const data: EngineWorkerData = { abortFlag, preloadJapanese };
    if (expect !== undefined) data.expect = expect;
    // Several workers read kuromoji's dictionary from one shared copy (one worker too, when asked:
    // EngineOptions.shareDictionary) and run one compiled Flite module (issue 20).
    if (this.shareDictionary) data.shareDictionary = true;
    if (this.maxWorkers > 1) data.shareFlite = true;
    // The thread bin/tts.js started as the process started, when it runs the same file (issue 20):
    // it has booted, or is booting, and waits for its init like a thread started here.
    const execArgv = workerExecArgv();
    const worker = adoptEarlyWorker(this.workerUrl, execArgv) ?? new Worker(this.workerUrl, { execArgv });
    const slot: Slot = { worker, abortFlag: new Int32Array(abortFlag), alive: true, kuromojiLoaded: false };
    worker.on('message', (reply: WorkerReply) => this.onReply(slot, reply));
    worker.on('error', (err) => this.onDeath(slot, err));
    worker.on('exit', (code) => this.onDeath(slot, new Error(`the worker thread exited with code ${code}`)));
    // First, before any job: what the worker serves with (the shared buffer travels shared).
    const init: InitMessage = { type: 'init', data };
    worker.postMessage(init);
    // After the listeners: adding a 'message' listener refs the worker's port again, and an idle
    // worker (prestarted, no job yet) then kept Node running.
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    // A request from a worker already closed or dead: nobody is left to answer.
    if ((reply.type === 'dictionary-request' || reply.type === 'flite-request') && (!slot.alive || this.closed)) return;
    if (reply.type === 'dictionary-request') {
      this.sendShared(slot, 'dictionary');
      return;
    }
    if (reply.type === 'flite-request') {
      this.sendShared(slot, 'flite');
      return;
    }
    if (reply.type === 'notice') {
      if (!this.noticed.has(reply.kind)) this.onNotice?.(reply.message);
      this.noticed.add(reply.kind);
      return;
    }
    const run = slot.run;
    if (!slot.alive || run === undefined || reply.id !== run.unitId) return;
    switch (reply.type) {
      case 'chunk':
        // A cancelled stream's queue is closed: push drops the chunk.
        if (run.state === 'running') run.queue.push(Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength));
        return;
      case 'end':
        slot.kuromojiLoaded = reply.report.kuromojiLoaded;
        run.reports.push(streamWords(reply.report, run));
        if (run.state === 'cancelled') this.finishAborted(run);
        else if (run.state === 'running' && run.nextUnit === undefined) this.finishCompleted(run);
        else if (run.state === 'running' && run.queue.bytes > run.queue.lowWaterBytes) {
          // The caller is behind: the next unit waits until its buffer drains to the low-water mark.
          void run.queue.room().then(() => this.dispatch());
        }
        break;
      case 'error':
        if (run.state === 'running') this.fail(run, new EngineError(`speech synthesis failed: ${reply.message}`));
        else if (run.state === 'cancelled') this.counters.failed++;
        break;
    }
    // The worker is free again: it only sends end/error once the unit has stopped.
    run.unitId = undefined;
    slot.run = undefined;
    slot.worker.unref();
    this.dispatch();
  }

  /**
   * Sends a worker what the pool holds once for all workers — Flite's module, compiled in this
   * thread, or kuromoji's dictionary (kuromoji-dictionary.ts) — loaded on the first request; a
   * failed load is not kept, and the worker then loads its own (which reports the error).
   */
  private sendShared(slot: Slot, kind: 'flite' | 'dictionary'): void {
    const loaded: Promise<FliteModule | SharedDictionary> =
      kind === 'flite'
        ? (this.sharedFlite ??= import('./flite.js').then((m) => m.loadFlite()))
        : (this.sharedDictionary ??= import('./kuromoji-dictionary.js').then(async (m) => {
            const dictionary = await m.loadSharedDictionary(this.loads.signal);
            const release = (): void => m.releaseSharedDictionary(dictionary);
            // Loaded after close() began: nothing will release it later.
            if (this.closed) {
              release();
              throw new EngineError('the speech engine was closed');
            }
            this.releaseDictionary = release;
            return dictionary;
          }));
    const send = (message: FliteMessage | DictionaryMessage): void => {
      if (slot.alive) slot.worker.postMessage(message);
    };
    loaded.then(
      (value) => send(kind === 'flite' ? { type: 'flite', flite: value as FliteModule } : { type: 'dictionary', dictionary: value as SharedDictionary }),
      (err: unknown) => {
        if (kind === 'flite') this.sharedFlite = undefined;
        else this.sharedDictionary = undefined;
        send({ type: kind, error: err instanceof Error ? err.message : String(err) });
      },
    );
  }


  /** A worker died (uncaught error, out of memory, process.exit): fail its stream, replace it lazily. */
  private onDeath(slot: Slot, err: Error): void {
    if (!slot.alive) return; // 'exit' follows 'error'; or close() terminated it
    slot.alive = false;
    this.counters.crashes++;
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    const run = slot.run;
    slot.run = undefined;
    if (run !== undefined) {
      run.unitId = undefined;
      if (run.state === 'running') this.fail(run, new EngineError(`the speech engine worker crashed: ${err.message}`, { cause: err }));
      else if (run.state === 'cancelled') this.finishAborted(run);
    }
    this.dispatch();
  }

  private finishCompleted(run: Run): void {
    run.state = 'ended';
    this.scheduler.remove(run, run.key);
    this.counters.completed++;
    const merged = mergeReports(run.reports);
    this.lastReport = merged ?? this.lastReport;
    if (merged !== undefined) run.onReport?.(merged);
    run.queue.end();
  }

  /** Counts a cancelled stream once nothing of it runs any more. */
  private finishAborted(run: Run): void {
    this.counters.aborted++;
    const merged = mergeReports(run.reports);
    if (merged !== undefined) this.lastReport = { ...merged, aborted: true };
  }

  private fail(run: Run, error: EngineError): void {
    if (run.state !== 'queued' && run.state !== 'running') return;
    run.state = 'failed';
    this.scheduler.remove(run, run.key);
    this.counters.failed++;
    run.queue.fail(error);
  }

  /** Stops a stream the consumer no longer wants: drop it, and raise its worker's abort flag. */
  private cancel(run: Run): void {
    if (run.state !== 'queued' && run.state !== 'running') return;
    run.state = 'cancelled';
    this.scheduler.remove(run, run.key);
    run.queue.close();
    const slot = run.unitId === undefined ? undefined : this.slots.find((s) => s.run === run);
    // The slot stays busy until the worker acknowledges with end/error for this unit id.
    if (slot !== undefined) Atomics.store(slot.abortFlag, 0, run.unitId!);
    else this.finishAborted(run);
  }
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

/**
 * `report` with its words moved from the unit's frames and text to the stream's: after the frames
 * of the units before it, at the unit's place in the text (no words when it was not found there).
 */
function streamWords(report: JobReport, run: Run): JobReport {
  if (report.words === undefined) return report;
  const frames = run.reports.reduce((n, r) => n + r.outputFrames, 0);
  const chars = run.unitCharStart;
  const words = chars < 0 ? [] : report.words.map((w) => ({ ...w, start: w.start + frames, end: w.end + frames, charStart: w.charStart + chars, charEnd: w.charEnd + chars }));
  return { ...report, words };
}
