/**
 * The offline synthesizer's interface, as the built-in service uses it (docs/cli.md §5).
 */
import type { AudioFormat, Language } from '../protocol/types.js';
import type { WordTiming } from '../protocol/words.js';
import type { EspeakInitialState } from './espeak.js';
import type { SpeechSegment } from './japanese.js';
import type { SchedulingPolicy } from './scheduler.js';

/** Default per-stream buffer between the engine's workers and the caller, in bytes (~2.7 s of 24 kHz pcm16). */
export const STREAM_BUFFER_BYTES = 128 * 1024;


/** One synthesis: what to say and the audio to produce. */
export interface SynthesisJob {
  /** Text to speak, non-empty. */
  text: string;
  /** Preset voice id with hyphens (`ja-man-1`); must be one of engineVoices() (validated by the caller). */
  voice: string;
  /** Language the text is read in. */
  language: Language;
  /** Encoding of the yielded bytes. */
  format: AudioFormat;
  /** Output sample rate in Hz (eSpeak NG makes 22050 Hz; the engine resamples). */
  sampleRate: number;
  /** Output channels, 1 or 2 (2 = the mono signal duplicated, interleaved). */
  channels: number;
}

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /** Worker threads, i.e. units synthesized at once; a positive integer, default 1. */
  workers?: number;
  /**
   * `fair` (default): round-robin between keys, then between a key's streams; `fifo`: streams
   * in arrival order, as a plain job queue (the benchmark's baseline). See scheduler.ts.
   */
  scheduling?: SchedulingPolicy;
  /**
   * Bytes of encoded audio buffered per stream before its synthesis pauses (default
   * STREAM_BUFFER_BYTES); the next unit starts once a quarter of it is left.
   */
  streamBufferBytes?: number;
  /**
   * Module the workers run; default `./worker.js` next to this file (dist/src/engine/worker.js).
   * Only tests set it (to a worker that can be made to crash).
   */
  workerUrl?: URL;
  /**
   * Load kuromoji's dictionary on the pool's thread and hand it to the workers, with one worker
   * too (several always share one copy): the embedded one-shot (issue 20), whose main thread waits
   * idle while its worker starts eSpeak NG, so that the two load side by side, and the worker,
   * holding no dictionary heap of its own, ends at once. The load stops within 4 MiB of reads once
   * the engine is closed (a run answered from the piece cache does not wait for the rest). The
   * audio is the same bytes either way.
   */
  shareDictionary?: boolean;
  /**
   * Told, once per pool and kind, what a long-running service's operator must know because the
   * engine cannot mend it (messages.ts NoticeReply): Flite's binary rewritten in place by another
   * build while the engine runs, so that the English voices its workers had not spoken yet are
   * spoken by eSpeak NG until a restart. `tts serve` prints it on stderr (docs/cli.md §5). One
   * line, no prefix.
   */
  onNotice?: (line: string) => void;
}

/** Counters and the last stream's report, for diagnostics and tests. */
export interface EngineStats {
  /** Live worker threads. */
  workers: number;
  /** Workers with a unit (including an aborted one they have not yet acknowledged). */
  busy: number;
  /** Streams that have not had a unit yet. */
  queued: number;
  /** Streams whose audio was produced to the end. */
  completed: number;
  /** Streams stopped early by an abort signal or by the consumer leaving the loop. */
  aborted: number;
  /** Streams that failed with EngineError (worker error or crash). */
  failed: number;
  /** Workers that died unexpectedly (and were replaced on demand). */
  crashes: number;
  /** Whether any live worker has loaded kuromoji's dictionary. */
  kuromojiLoaded: boolean;
  /** Report of the most recent stream that finished (completed or aborted), its units' merged. */
  lastReport?: JobReport;
}

/** How a stream is scheduled among others (engine.ts, scheduler.ts). */
export interface SynthesisOptions {
  /**
   * The caller's group for fairness, e.g. the service's key index as a string: workers go
   * round-robin between keys, then between a key's streams. Streams without a key share one group.
   */
  key?: string | undefined;
  /**
   * Time each word of the text (JobReport.words, word-timings.ts; docs/protocol.md §2.1
   * `word_timings`). Default false: the workers do no word-timing work at all — for English no
   * second Flite run (`kal16`) and no segment times, for Japanese no kuromoji pass and no eSpeak
   * NG translator pass for the words — and the report has no `words`. The audio is the same
   * bytes either way (test/engine/determinism.test.ts).
   */
  wordTimings?: boolean | undefined;
  /**
   * Called once the stream completed (not when it failed or was aborted), before its last chunk
   * is taken, with the report of its units merged: its segments say which engine spoke each.
   */
  onReport?: ((report: JobReport) => void) | undefined;
}

/**
 * A speech engine. Implementations stream: the first chunk is yielded as soon as the first
 * audio exists, not after the whole text is synthesized.
 */
export interface SpeechEngine {
  /**
   * Synthesizes `job`, yielding encoded audio chunks in order, each a whole number of frames
   * and at most 100 ms of audio. Aborting `signal` (or leaving the loop early) stops the
   * synthesis promptly and frees the engine for the next job.
   * In the eSpeak NG engine (engine.ts), work starts at the first next(); an aborted `signal`
   * makes the loop throw `signal.reason` (an AbortError DOMException by default), while leaving
   * the loop early ends it without an error. `options.key` groups the stream with the same
   * caller's others for fair scheduling; a consumer that stops taking chunks pauses the synthesis
   * of its stream once a bounded buffer is full.
   * @throws EngineError when synthesis fails.
   */
  synthesize(job: SynthesisJob, signal?: AbortSignal, options?: SynthesisOptions): AsyncIterable<Buffer>;
  /** Stops every worker; pending and later jobs fail with EngineError. */
  close(): Promise<void>;
}

/** Failure inside the engine (worker crash, WebAssembly error, dictionary load failure). */
export class EngineError extends Error {
  override readonly name = 'EngineError';
}

/** What a worker measured for one job (diagnostics and tests; all times in milliseconds). */
export interface JobReport {
  /** True when the job was stopped by the abort flag before it completed. */
  aborted: boolean;
  /** The text as handed to eSpeak NG, piece by piece, with the language each was read in. */
  segments: SpeechSegment[];
  /** Samples eSpeak NG made, at 22050 Hz mono. */
  inputSamples: number;
  /** Frames sent, at the job's sample rate. */
  outputFrames: number;
  /**
   * Where each word of the job's text is in the frames sent (word-timings.ts), in order; absent
   * when the job did not ask for them ({@link SynthesisOptions.wordTimings}) or its synthesizers
   * give none (voice packages). In a worker's report the
   * frames and char offsets are the unit's; the engine's stream report has them of the stream.
   */
  words?: WordTiming[];
  /** Whether this worker has kuromoji's dictionary loaded (after this job). */
  kuromojiLoaded: boolean;
  /** Where this worker's dictionary came from (japanese.ts dictionarySource), once loaded. */
  dictionarySource?: 'shared' | 'unpacked' | 'gzip';
  /** Whether this worker runs Flite compiled by the pool (`shared`) or by itself (`own`), once loaded. */
  fliteSource?: 'shared' | 'own';
  /** Dictionary load time, if this worker has loaded it. */
  kuromojiLoadMs?: number;
  /** eSpeak NG WebAssembly start-up time; only in the report of a worker's first job. */
  espeakInitMs?: number;
  /**
   * How that eSpeak NG instance got its initialized state: restored from the file the build
   * wrote, or by espeak_Initialize; in the same report as {@link espeakInitMs}.
   */
  espeakInitialState?: EspeakInitialState;
  /**
   * True when this worker has started eSpeak NG (loading or loaded), after this job; absent when it
   * has not. In a stream's report (units merged): some worker that ran one of its units had.
   */
  espeakStarted?: true;
  /** From receiving the job to the first chunk sent, if any was sent. */
  firstChunkMs?: number;
  /** From receiving the job to its end. */
  totalMs: number;
}
