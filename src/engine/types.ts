/**
 * The offline synthesizer's interface, as the built-in service uses it (docs/cli.md §5).
 */
import type { AudioFormat, Language } from '../protocol/types.js';

/** One synthesis: what to say and the audio to produce. */
export interface SynthesisJob {
  /** Text to speak, non-empty. */
  text: string;
  /** Preset voice id with hyphens (`ja-man-1`); must be one of VOICES (validated by the caller). */
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
   * the loop early ends it without an error.
   * @throws EngineError when synthesis fails.
   */
  synthesize(job: SynthesisJob, signal?: AbortSignal): AsyncIterable<Buffer>;
  /** Stops every worker; pending and later jobs fail with EngineError. */
  close(): Promise<void>;
}

/** Failure inside the engine (worker crash, WebAssembly error, dictionary load failure). */
export class EngineError extends Error {
  override readonly name = 'EngineError';
}
