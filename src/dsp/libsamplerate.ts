/**
 * libsamplerate (Secret Rabbit Code, Erik de Castro Lopo; BSD-2-Clause) 0.2.2 in WebAssembly:
 * Debian's source, unmodified, built by scripts/build-libsamplerate.sh into
 * vendor/libsamplerate/samplerate.wasm (114 KiB, no imports). This module is the one host of it.
 *
 * Why not the npm registry's build (issue 20): `@alexanderolsen/libsamplerate-js` is compiled to
 * JavaScript (wasm2js), 2 MB that every thread parses before its first conversion (90–120 ms) and
 * +28 MiB per thread; this one compiles in ~2 ms. Its samples are the same, bit for bit
 * (test/dsp/libsamplerate.test.ts compares the two on random signals, rates and chunkings).
 *
 * One instance per thread, loaded on first use: every converter of the thread has its own
 * `SRC_STATE` and buffers in that instance's memory. Calls follow libsamplerate's "full" API
 * (samplerate.h: `src_new`, `src_process`, `src_reset`, `src_delete`), which keeps the filter
 * state between calls, with `end_of_input` always 0 (the callers drain the filter with silence).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { TtsError } from '../errors.js';

/** Where the WebAssembly is read from: vendor/libsamplerate/ at the package root. */
export const LIBSAMPLERATE_WASM_URL = new URL('../../../vendor/libsamplerate/samplerate.wasm', import.meta.url);

/** What the module exports (scripts/build-libsamplerate.sh); pointers are byte offsets into `memory`. */
interface Exports {
  memory: { readonly buffer: ArrayBuffer };
  /** wasi-libc's reactor start: runs the C constructors once. */
  _initialize(): void;
  src_new(converterType: number, channels: number, errorPtr: number): number;
  src_process(state: number, data: number): number;
  src_reset(state: number): number;
  src_delete(state: number): number;
  src_strerror(error: number): number;
  malloc(bytes: number): number;
  free(ptr: number): void;
}

/** `SRC_SINC_MEDIUM_QUALITY` (samplerate.h): 90 % bandwidth, 121 dB SNR; the only converter built in. */
const SRC_SINC_MEDIUM_QUALITY = 1;

/** libsamplerate's bounds on output rate ÷ input rate (`SRC_MAX_RATIO`, src/common.h): 1/256 … 256. */
export const MAX_RATIO = 256;

/**
 * Whether libsamplerate converts `inputSampleRate` to `outputSampleRate` (both in Hz): their
 * ratio is within 1/{@link MAX_RATIO} … {@link MAX_RATIO} (`src_is_valid_ratio`, samplerate.c).
 */
export function convertibleRates(inputSampleRate: number, outputSampleRate: number): boolean {
  const ratio = outputSampleRate / inputSampleRate;
  return ratio >= 1 / MAX_RATIO && ratio <= MAX_RATIO;
}

/**
 * `SRC_DATA` (samplerate.h) in wasm32, where `long` and pointers are 4 bytes: byte offsets of its
 * fields, and its size (the double is 8-aligned).
 */
const DATA = { dataIn: 0, dataOut: 4, inputFrames: 8, outputFrames: 12, inputFramesUsed: 16, outputFramesGen: 20, endOfInput: 24, srcRatio: 32, size: 40 } as const;

/** Frames of input, and of output, each converter's buffers in the module's memory hold. */
const BLOCK_FRAMES = 4096;

let loading: Promise<Exports> | undefined;

/**
 * The thread's instance, compiled and started on first use; a failed load is retried by the next call.
 * @throws TtsError `internal` (exit 1) naming the file, when it is missing or not the module
 *   (a damaged installation).
 */
function load(): Promise<Exports> {
  loading ??= (async () => {
    const instance = new WebAssembly.Instance(await WebAssembly.compile(await readFile(LIBSAMPLERATE_WASM_URL)), {});
    const exports = instance.exports as unknown as Exports;
    exports._initialize();
    return exports;
  })().catch((err: unknown) => {
    loading = undefined;
    throw new TtsError('internal', `cannot load libsamplerate from ${fileURLToPath(LIBSAMPLERATE_WASM_URL)}: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'the installation of tts is incomplete or damaged: install it again',
      cause: err,
    });
  });
  return loading;
}

/** Converters of this thread made and not yet destroyed by {@link SampleRateConverter.destroy}. */
let live = 0;

/**
 * Converters of this thread that were made and not destroyed by
 * {@link SampleRateConverter.destroy} — also those the safety net below freed when they were
 * collected, so that a path that forgets to destroy one shows, whenever garbage collection runs
 * (tests check that a failed open leaves none behind).
 */
export function liveConverterCount(): number {
  return live;
}

/**
 * Gives back the libsamplerate state and buffers of a converter that was garbage-collected without
 * {@link SampleRateConverter.destroy}: WebAssembly memory is never collected, so a path that
 * forgot to destroy one would otherwise hold its ~0.25 MiB for the thread's life. A safety net
 * only; every path destroys what it makes.
 */
const collected = new FinalizationRegistry<{ lib: Exports; state: number; memory: number }>(({ lib, state, memory }) => {
  lib.src_delete(state);
  lib.free(memory);
});

/** libsamplerate's message for an error code (`src_strerror`), a NUL-terminated ASCII string. */
function messageOf(lib: Exports, error: number): string {
  const ptr = lib.src_strerror(error);
  if (ptr === 0) return `error ${error}`;
  const bytes = new Uint8Array(lib.memory.buffer, ptr);
  const end = bytes.indexOf(0);
  return Buffer.from(bytes.subarray(0, end < 0 ? 200 : Math.min(end, 200))).toString('latin1');
}

/**
 * One streaming converter of interleaved 32-bit float frames from `inputSampleRate` to
 * `outputSampleRate` Hz (sinc, medium quality). {@link process} keeps the filter's state from call
 * to call, so a stream converted chunk by chunk is the stream converted at once; the filter holds
 * back its delay (a few dozen frames) until more input, or silence, pushes it out.
 */
export class SampleRateConverter {
  #state: number;
  /** The `SRC_DATA`, then the input block, then the output block, in one allocation. */
  readonly #memory: number;
  readonly #ratio: number;

  private constructor(
    private readonly lib: Exports,
    /** Interleaved channels, 1 … 128. */
    readonly channels: number,
    /** Input sample rate in Hz. */
    readonly inputSampleRate: number,
    /** Output sample rate in Hz. */
    readonly outputSampleRate: number,
    state: number,
    memory: number,
  ) {
    this.#state = state;
    this.#memory = memory;
    this.#ratio = outputSampleRate / inputSampleRate;
    live++;
    collected.register(this, { lib, state, memory }, this);
  }

  /**
   * A new converter, loading the WebAssembly on the thread's first call (~2 ms).
   * @param channels interleaved channels, an integer 1 … 128.
   * @param inputSampleRate, outputSampleRate positive integers of Hz whose ratio is within
   *   1/256 … 256 (libsamplerate's own bound).
   * @throws RangeError for channels or rates outside those bounds; Error when libsamplerate
   *   refuses (its message); TtsError `internal` when the WebAssembly cannot be loaded.
   */
  static async create(channels: number, inputSampleRate: number, outputSampleRate: number): Promise<SampleRateConverter> {
    if (!Number.isInteger(channels) || channels < 1 || channels > 128) throw new RangeError(`channels must be 1 … 128, got ${channels}`);
    for (const rate of [inputSampleRate, outputSampleRate]) {
      if (!Number.isInteger(rate) || rate < 1) throw new RangeError(`sample rate must be a positive integer of Hz, got ${rate}`);
    }
    if (!convertibleRates(inputSampleRate, outputSampleRate)) {
      throw new RangeError(`cannot convert ${inputSampleRate} Hz to ${outputSampleRate} Hz: libsamplerate takes ratios of 1/${MAX_RATIO} … ${MAX_RATIO}`);
    }
    const lib = await load();
    const errorPtr = lib.malloc(4);
    if (errorPtr === 0) throw new Error('libsamplerate: out of memory');
    try {
      const state = lib.src_new(SRC_SINC_MEDIUM_QUALITY, channels, errorPtr);
      if (state === 0) throw new Error(`libsamplerate: ${messageOf(lib, new Int32Array(lib.memory.buffer, errorPtr, 1)[0]!)}`);
      const memory = lib.malloc(DATA.size + 2 * BLOCK_FRAMES * channels * 4);
      if (memory === 0) {
        lib.src_delete(state);
        throw new Error('libsamplerate: out of memory');
      }
      return new SampleRateConverter(lib, channels, inputSampleRate, outputSampleRate, state, memory);
    } finally {
      lib.free(errorPtr);
    }
  }

  /** Whether {@link destroy} was called. */
  get isDestroyed(): boolean {
    return this.#state === 0;
  }

  /**
   * Converts the next interleaved frames of the stream and returns the output frames ready now
   * (interleaved, possibly fewer than the input is worth: the filter's delay stays inside). With
   * equal rates the input is returned as it is, copied.
   * @param input interleaved samples, a whole number of frames (length a multiple of `channels`).
   * @throws RangeError for a partial frame; Error after {@link destroy} or when libsamplerate fails.
   */
  process(input: Float32Array): Float32Array {
    const { lib, channels } = this;
    const state = this.#live();
    if (input.length % channels !== 0) throw new RangeError(`input must be whole frames of ${channels} channels, got ${input.length} samples`);
    if (this.inputSampleRate === this.outputSampleRate) return input.slice();
    const frames = input.length / channels;
    const data = this.#memory;
    const inBlock = data + DATA.size;
    const outBlock = inBlock + BLOCK_FRAMES * channels * 4;
    const outputs: Float32Array[] = [];
    let total = 0;
    // At least one call, as for an empty input: libsamplerate may still have output to give.
    for (let offset = 0; offset === 0 || offset < frames; offset += BLOCK_FRAMES) {
      const n = Math.min(BLOCK_FRAMES, frames - offset);
      new Float32Array(lib.memory.buffer, inBlock, n * channels).set(input.subarray(offset * channels, (offset + n) * channels));
      let used = 0;
      for (;;) {
        const fields = new DataView(lib.memory.buffer, data, DATA.size);
        // No input left: a null pointer, as libsamplerate takes it; the end of the input block
        // would be the start of the output block, which it refuses as overlapping.
        fields.setUint32(DATA.dataIn, used < n ? inBlock + used * channels * 4 : 0, true);
        fields.setUint32(DATA.dataOut, outBlock, true);
        fields.setInt32(DATA.inputFrames, n - used, true);
        fields.setInt32(DATA.outputFrames, BLOCK_FRAMES, true);
        fields.setInt32(DATA.inputFramesUsed, 0, true);
        fields.setInt32(DATA.outputFramesGen, 0, true);
        fields.setInt32(DATA.endOfInput, 0, true);
        fields.setFloat64(DATA.srcRatio, this.#ratio, true);
        const error = lib.src_process(state, data);
        if (error !== 0) throw new Error(`libsamplerate: ${messageOf(lib, error)}`);
        const after = new DataView(lib.memory.buffer, data, DATA.size);
        const usedNow = after.getInt32(DATA.inputFramesUsed, true);
        const made = after.getInt32(DATA.outputFramesGen, true);
        if (made > 0) {
          outputs.push(new Float32Array(lib.memory.buffer, outBlock, made * channels).slice());
          total += made * channels;
        }
        used += usedNow;
        // Done with this block once its input is used and the output block was not filled (a
        // full one may have more behind it). Each call either uses input or fills output.
        if (used >= n && made < BLOCK_FRAMES) break;
        if (usedNow === 0 && made === 0) throw new Error('libsamplerate made no progress');
      }
    }
    if (outputs.length === 1) return outputs[0]!;
    const out = new Float32Array(total);
    let at = 0;
    for (const block of outputs) {
      out.set(block, at);
      at += block.length;
    }
    return out;
  }

  /**
   * Starts the stream afresh (`src_reset`): no filter memory of earlier input is left, so what
   * follows converts as with a new converter.
   * @throws Error after {@link destroy}.
   */
  reset(): void {
    const error = this.lib.src_reset(this.#live());
    if (error !== 0) throw new Error(`libsamplerate: ${messageOf(this.lib, error)}`);
  }

  /** Frees the converter's state and buffers (`src_delete`); it is unusable afterwards. Safe to call twice. */
  destroy(): void {
    if (this.#state === 0) return;
    collected.unregister(this);
    this.lib.src_delete(this.#state);
    this.lib.free(this.#memory);
    this.#state = 0;
    live--;
  }

  #live(): number {
    if (this.#state === 0) throw new Error('SampleRateConverter used after destroy()');
    return this.#state;
  }
}
