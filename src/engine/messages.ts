/**
 * Messages between the engine's pool (main thread, engine.ts) and its workers (worker.ts).
 *
 * The pool sends a worker one job at a time and the next only after that job's `end` or `error`.
 * Cancellation does not travel as a message: while eSpeak NG synthesizes, the worker's thread is
 * inside a synchronous WebAssembly call and cannot read messages. Instead each worker shares an
 * Int32Array of one element with the pool (a SharedArrayBuffer in its {@link InitMessage}); the
 * pool stores the id of the job to abort there with Atomics.store, and the worker compares it with
 * its current job id in every eSpeak callback. Storing an id (not a boolean) means a late abort of
 * a finished job can never stop the next one.
 */
import type { JobReport, SynthesisJob } from './types.js';
import type { SharedDictionary } from './kuromoji-dictionary.js';
import type { FliteModule } from './flite.js';

/**
 * Pool → worker, always the first message a worker gets: what it serves with. It travels as a
 * message, not as `workerData`, so that a thread started before its pool existed (bin/tts.js starts
 * one for a one-shot run as the process starts; early-worker.ts) boots the same way as one the pool
 * starts: its module loads, then it waits for this. A worker posts nothing before it has it.
 */
export interface InitMessage {
  type: 'init';
  data: EngineWorkerData;
}

/** What an engine worker serves with (its {@link InitMessage}). */
export interface EngineWorkerData {
  /** 4 bytes: Int32 id of the job the pool wants aborted (0 = none). */
  abortFlag: SharedArrayBuffer;
  /** Load kuromoji's dictionary at start, beside eSpeak NG: Japanese text with kanji is coming. */
  preloadJapanese?: boolean;
  /**
   * What the coming job needs, when the pool was told (Engine.prestart): Flite for text with Latin
   * letters, eSpeak NG for Japanese. Present: only that is loaded at start (a kanji-only text never
   * loads Flite, English never loads eSpeak NG). Absent: Flite and the resamplers are, as for a
   * service that may get any job.
   */
  expect?: {
    flite: boolean;
    espeak: boolean;
    /** The voice id about to speak, when the pool was told (a hint): with Flite, its voice's data is read ahead too (flite.ts prepareFlite). */
    voice?: string;
  };
  /**
   * Ask the pool for kuromoji's dictionary (a {@link DictionaryRequest}) instead of reading it:
   * the pool has several workers and holds one copy for all, or one worker that loads beside the
   * pool's thread (EngineOptions.shareDictionary; issue 20).
   */
  shareDictionary?: boolean;
  /**
   * Ask the pool for Flite's compiled module (a {@link FliteRequest}) instead of compiling it: the
   * pool has several workers, and one module (its 17 MB of code and data segments) serves all
   * (issue 20).
   */
  shareFlite?: boolean;
}

/** Worker → pool: send the shared Flite module (id 0: not about a job). */
export interface FliteRequest {
  type: 'flite-request';
  id: 0;
}

/** Pool → worker: Flite's compiled module, or why there is none (the worker then compiles it). */
export interface FliteMessage {
  type: 'flite';
  flite?: FliteModule;
  error?: string;
}

/** Worker → pool: send the shared dictionary (id 0: not about a job). */
export interface DictionaryRequest {
  type: 'dictionary-request';
  id: 0;
}

/** Pool → worker: the shared dictionary, or why there is none (the worker then reads the files). */
export interface DictionaryMessage {
  type: 'dictionary';
  dictionary?: SharedDictionary;
  error?: string;
}

/** Pool → worker: synthesize `job`; ids are positive and increase per engine. */
export interface JobRequest {
  type: 'job';
  id: number;
  job: SynthesisJob;
  /** Time the job's words (SynthesisOptions.wordTimings): false = no word-timing work, no `words` in the report. */
  wordTimings: boolean;
}

/** Worker → pool: the next encoded chunk of job `id` (whole frames, ≤ 100 ms). */
export interface ChunkReply {
  type: 'chunk';
  id: number;
  data: Uint8Array;
}

/** Worker → pool: job `id` is over (completed, or stopped by the abort flag); the worker is free. */
export interface EndReply {
  type: 'end';
  id: number;
  report: JobReport;
}

/** Worker → pool: job `id` failed; the worker is free and still usable. */
export interface ErrorReply {
  type: 'error';
  id: number;
  message: string;
}

/**
 * Worker → pool (id 0: not about a job): something the service's operator should be told, sent
 * once per worker thread and kind, and said once per pool (EngineOptions.onNotice). `flite-changed`:
 * Flite's binary was rewritten in place by another build while the engine runs
 * (flite.ts FliteBinaryChangedError): the voices an instance had not spoken yet fall back to
 * eSpeak NG until the process is restarted.
 */
export interface NoticeReply {
  type: 'notice';
  id: 0;
  kind: 'flite-changed';
  /** The line to say, without a prefix (no control characters: a path, from the engine itself). */
  message: string;
}

/** Any message a worker sends. */
export type WorkerReply = ChunkReply | EndReply | ErrorReply | DictionaryRequest | FliteRequest | NoticeReply;

