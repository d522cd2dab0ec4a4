/**
 * The engine's output stage: a synthesizer's mono 16-bit samples (eSpeak NG's 22050 Hz, Flite's
 * 16000 Hz, a voice package's own rate) → the job's sample rate, channels and encoding, cut into
 * chunks of whole frames and at most 100 ms.
 *
 * Resampling uses libsamplerate (Erik de Castro Lopo's Secret Rabbit Code, in WebAssembly:
 * src/dsp/libsamplerate.ts) through its streaming "full" API, which keeps filter state between
 * calls. It is used without its end-of-input flag and holds back a few dozen
 * samples (the sinc filter's delay), so {@link AudioOutput.finish} feeds zeros and trims: the total
 * is exactly round(inputSamples × sampleRate / inputRate) frames, the length a one-shot conversion
 * has. A job whose segments come at different input rates (Japanese from eSpeak NG, an English
 * word inside it from Flite) is a sequence of runs, one per change of rate, each drained and
 * trimmed like that on its own.
 */
import { newConverter, type Converter } from '../dsp/resample.js';
import { encodeFloat, int16ToFloat } from '../dsp/encoding.js';
import type { AudioFormat } from '../protocol/types.js';

/**
 * Idle converters by `inputRate→outputRate`, reset: a job reuses one rather than allocating
 * libsamplerate's state (a few hundred KiB) again.
 */
const idleConverters = new Map<string, Converter[]>();
const MAX_IDLE_PER_RATE = 2;

async function acquireConverter(inputRate: number, sampleRate: number): Promise<Converter> {
  const reused = idleConverters.get(`${inputRate}→${sampleRate}`)?.pop();
  if (reused !== undefined) return reused;
  return newConverter(1, inputRate, sampleRate);
}

function releaseConverter(converter: Converter): void {
  if (converter.isDestroyed) return;
  const key = `${converter.inputSampleRate}→${converter.outputSampleRate}`;
  const list = idleConverters.get(key) ?? [];
  if (list.length >= MAX_IDLE_PER_RATE) {
    converter.destroy();
    return;
  }
  // No filter memory of this job leaks into the next one.
  converter.reset();
  list.push(converter);
  idleConverters.set(key, list);
}

/** Sample rate of eSpeak NG's output, in Hz: the input rate an AudioOutput starts with. */
export const ESPEAK_SAMPLE_RATE = 22050;

/** Longest chunk the engine yields, in seconds of audio (SpeechEngine contract). */
export const MAX_CHUNK_SECONDS = 0.1;

function checkRate(rate: number): void {
  if (!Number.isInteger(rate) || rate <= 0 || rate > 384000) throw new RangeError(`input rate must be a positive integer of Hz, got ${rate}`);
}

/** What the output stage produces. */
export interface OutputOptions {
  /** Encoding of the produced bytes. */
  format: AudioFormat;
  /** Output sample rate in Hz, a positive integer. */
  sampleRate: number;
  /** Output channels (the mono signal is duplicated and interleaved), a positive integer. */
  channels: number;
}

/**
 * Streaming converter for one job. Call {@link push} with each block of synthesizer samples as it
 * arrives ({@link setInputRate} first when they come at another rate than the last), then
 * {@link finish} once, then {@link destroy}. Every returned Buffer is a whole number of frames of at
 * most `floor(sampleRate × 0.1)` frames (100 ms), encoded with `encodeFloat`.
 */
export class AudioOutput {
  /** Samples received so far, at whatever input rate each came (mono). */
  inputSamples = 0;
  /** Frames handed out so far (at the output sample rate). */
  outputFrames = 0;

  private readonly held: Float32Array[] = [];
  private heldFrames = 0;
  private readonly maxFrames: number;
  private finished = false;
  private inputRate = ESPEAK_SAMPLE_RATE;
  /** Input samples of the current run (since the last change of input rate). */
  private runSamples = 0;
  /** Frames emitted or held by the runs before the current one. */
  private framesBeforeRun = 0;
  /** The next run's rate and converter, made ready ahead by {@link prepareInputRate}. */
  private prepared: { inputRate: number; resampler: Converter | undefined } | undefined;

  private constructor(
    private readonly options: OutputOptions,
    private resampler: Converter | undefined,
  ) {
    this.maxFrames = Math.max(1, Math.floor(options.sampleRate * MAX_CHUNK_SECONDS));
  }

  /**
   * Makes the output stage for `options`, for input at `inputRate` Hz (default eSpeak NG's 22050),
   * with a libsamplerate converter (sinc, medium quality; reused from an earlier job of the same
   * rates when one is idle) unless the rates are equal.
   * @throws RangeError on a sample rate or channel count that is not a positive integer.
   */
  static async create(options: OutputOptions, inputRate = ESPEAK_SAMPLE_RATE): Promise<AudioOutput> {
    if (!Number.isInteger(options.sampleRate) || options.sampleRate <= 0 || options.sampleRate > 384000) {
      throw new RangeError(`sample rate must be a positive integer of Hz, got ${options.sampleRate}`);
    }
    if (!Number.isInteger(options.channels) || options.channels < 1 || options.channels > 8) {
      throw new RangeError(`channels must be an integer from 1 to 8, got ${options.channels}`);
    }
    checkRate(inputRate);
    const resampler = options.sampleRate === inputRate ? undefined : await acquireConverter(inputRate, options.sampleRate);
    const output = new AudioOutput(options, resampler);
    output.inputRate = inputRate;
    return output;
  }

  /**
   * Switches to input at `inputRate` Hz: a no-op at the current rate; otherwise the current run is
   * drained and trimmed (as {@link finish} does for the whole job) and a converter for the new rate
   * is made ready. Returns the chunks the drain completed. {@link prepareInputRate} then
   * {@link switchInputRate}, for a caller that must switch synchronously.
   * @throws RangeError on a rate that is not a positive integer.
   */
  async setInputRate(inputRate: number): Promise<Buffer[]> {
    await this.prepareInputRate(inputRate);
    return this.switchInputRate(inputRate);
  }

  /**
   * Makes a converter for input at `inputRate` Hz ready without switching to it: the current run
   * goes on as if this had not been called until {@link switchInputRate} (a synthesizer that
   * calls back synchronously switches at its first samples, so that a run that fails before any
   * leaves the output as it was; issue 20). A later call for another rate replaces it.
   * @throws RangeError on a rate that is not a positive integer.
   */
  async prepareInputRate(inputRate: number): Promise<void> {
    checkRate(inputRate);
    if (this.finished) throw new Error('AudioOutput.prepareInputRate after finish');
    if (inputRate === this.inputRate || this.prepared?.inputRate === inputRate) return;
    this.releasePrepared();
    const resampler = inputRate === this.options.sampleRate ? undefined : await acquireConverter(inputRate, this.options.sampleRate);
    this.prepared = { inputRate, resampler };
  }

  /**
   * Switches to input at `inputRate` Hz, made ready by {@link prepareInputRate} (a no-op at the
   * current rate): the current run is drained and trimmed, and the chunks that completed returned.
   * @throws Error when `inputRate` is neither the current rate nor the prepared one.
   */
  switchInputRate(inputRate: number): Buffer[] {
    if (this.finished) throw new Error('AudioOutput.switchInputRate after finish');
    if (inputRate === this.inputRate) return [];
    const prepared = this.prepared;
    if (prepared?.inputRate !== inputRate) throw new Error(`AudioOutput.switchInputRate(${inputRate}) without prepareInputRate`);
    this.prepared = undefined;
    const chunks = this.drainRun();
    if (this.resampler !== undefined) releaseConverter(this.resampler);
    this.resampler = prepared.resampler;
    this.inputRate = inputRate;
    this.framesBeforeRun = this.outputFrames + this.heldFrames;
    this.runSamples = 0;
    return chunks;
  }

  private releasePrepared(): void {
    if (this.prepared?.resampler !== undefined) releaseConverter(this.prepared.resampler);
    this.prepared = undefined;
  }

  /**
   * Where input samples still to come land in the output: a function from an offset in input
   * samples (at the current input rate, counted from the next sample {@link push} receives) to the
   * output frame (at the output rate, from the job's first frame) that sample becomes, rounded.
   * Valid while the input rate stays the same (a later {@link setInputRate} starts a new run).
   */
  clock(): (inputOffset: number) => number {
    const before = this.framesBeforeRun;
    const run = this.runSamples;
    const ratio = this.options.sampleRate / this.inputRate;
    return (inputOffset) => before + Math.round((run + inputOffset) * ratio);
  }

  /** Frames the whole input so far is worth: the earlier runs' plus round(runSamples × sampleRate / inputRate). */
  private targetFrames(): number {
    return this.framesBeforeRun + Math.round((this.runSamples * this.options.sampleRate) / this.inputRate);
  }

  /**
   * Takes one block of samples (mono, signed 16-bit, at the current input rate) and returns the
   * encoded chunks that are ready now — possibly none, never waiting to fill 100 ms.
   */
  push(samples: Int16Array): Buffer[] {
    if (this.finished) throw new Error('AudioOutput.push after finish');
    if (samples.length === 0) return [];
    this.inputSamples += samples.length;
    this.runSamples += samples.length;
    const float = int16ToFloat(samples);
    this.hold(this.resampler ? this.resampler.process(float) : float);
    // The resampler lags its input, so this cap never bites in practice; it guarantees that we
    // never hand out more than the exact total, which could not be taken back later.
    return this.emit(Math.min(this.heldFrames, this.targetFrames() - this.outputFrames));
  }

  /**
   * Ends the input: drains the resampler with zeros and returns the last chunks, so that the
   * total is exactly the sum over runs of round(runSamples × sampleRate / inputRate) frames
   * (with one run: round(inputSamples × sampleRate / inputRate)).
   */
  finish(): Buffer[] {
    if (this.finished) return [];
    const chunks = this.drainRun();
    chunks.push(...this.emit(this.heldFrames));
    this.finished = true;
    this.held.length = 0;
    this.heldFrames = 0;
    return chunks;
  }

  /**
   * Feeds the resampler zeros until the current run has its exact length, holds that many frames
   * (dropping the filter's tail beyond it) and returns the chunks that are complete.
   */
  private drainRun(): Buffer[] {
    const target = this.targetFrames();
    if (this.resampler) {
      const zeros = new Float32Array(256);
      // The filter delay is well under 256 input samples per round; the bound only stops a
      // misbehaving converter from looping forever.
      for (let round = 0; round < 64 && this.outputFrames + this.heldFrames < target; round++) {
        this.hold(this.resampler.process(zeros));
      }
      // Drop what the filter made beyond the run's exact length (its tail of zeros).
      this.truncateHeld(target - this.outputFrames);
    }
    if (this.outputFrames + this.heldFrames < target) {
      // Only reachable if the converter produced too little: pad with silence to keep the length exact.
      this.hold(new Float32Array(target - this.outputFrames - this.heldFrames));
    }
    return this.emit(Math.floor((target - this.outputFrames) / this.maxFrames) * this.maxFrames);
  }

  /** Keeps only the first `frames` held frames. */
  private truncateHeld(frames: number): void {
    let keep = Math.max(0, frames);
    if (keep >= this.heldFrames) return;
    const kept: Float32Array[] = [];
    for (const block of this.held) {
      if (keep <= 0) break;
      const part = block.length <= keep ? block : block.subarray(0, keep);
      kept.push(part);
      keep -= part.length;
    }
    this.held.length = 0;
    this.held.push(...kept);
    this.heldFrames = kept.reduce((n, b) => n + b.length, 0);
  }

  /** Returns the converter for reuse by a later job; call once when done. Safe to call twice. */
  destroy(): void {
    this.releasePrepared();
    if (this.resampler !== undefined) releaseConverter(this.resampler);
    this.resampler = undefined;
    this.finished = true;
  }

  private hold(block: Float32Array): void {
    if (block.length === 0) return;
    this.held.push(block);
    this.heldFrames += block.length;
  }

  /** Encodes and removes the first `frames` held frames, in chunks of at most maxFrames. */
  private emit(frames: number): Buffer[] {
    const chunks: Buffer[] = [];
    let left = Math.max(0, frames);
    while (left > 0) {
      const n = Math.min(left, this.maxFrames);
      chunks.push(this.encode(this.take(n)));
      left -= n;
    }
    return chunks;
  }

  private take(n: number): Float32Array {
    const out = new Float32Array(n);
    let filled = 0;
    while (filled < n) {
      const head = this.held[0]!;
      const need = n - filled;
      if (head.length <= need) {
        out.set(head, filled);
        filled += head.length;
        this.held.shift();
      } else {
        out.set(head.subarray(0, need), filled);
        this.held[0] = head.subarray(need);
        filled = n;
      }
    }
    this.heldFrames -= n;
    this.outputFrames += n;
    return out;
  }

  private encode(mono: Float32Array): Buffer {
    const { channels, format } = this.options;
    if (channels === 1) return encodeFloat(mono, format);
    const interleaved = new Float32Array(mono.length * channels);
    for (let i = 0; i < mono.length; i++) {
      for (let c = 0; c < channels; c++) interleaved[i * channels + c] = mono[i]!;
    }
    return encodeFloat(interleaved, format);
  }
}
