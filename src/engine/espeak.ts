/**
 * eSpeak NG (`@echogarden/espeak-ng-emscripten`, compiled to JavaScript by Emscripten/wasm2js)
 * made deterministic: the same text and voice give the same samples whatever the instance spoke
 * before, and in every process (docs/cli.md §5, "deterministic").
 *
 * Two things made it vary, both found by synthesizing the same text twice:
 * - **The seed.** espeak_ng_Initialize seeds eSpeak's own random generator (used for breath noise
 *   in wavegen.c and Klatt noise in klatt.c) with `time(NULL)`, which Emscripten answers from
 *   `Date.now()`. So voices with breath (`f2`, `f5`) differed in every fresh process. We hold
 *   `Date.now` at 0 while the instance initializes: the seed is always the same. (Since issue 20's
 *   ninth round a new instance usually restores that initialized state from a file the build
 *   wrote instead of initializing: espeak-state.ts.)
 * - **State between jobs.** wavegen.c keeps the phase, pitch smoothing, flutter index, echo buffer
 *   and the random generator in static variables, so a sentence came out a few samples longer or
 *   shorter depending on what was said before. eSpeak has no call that resets them all, so we take
 *   a copy of the instance's whole linear memory (~17 MB) once it is initialized and write it back
 *   before every job (~1 ms): each job starts from exactly the same state.
 *
 * Restoring memory is only sound while the JavaScript side of the module keeps no pointers into
 * memory allocated after the copy. Its one such pointer is the WebIDL string buffer
 * (`ensureCache`), which grows when a string longer than the buffer is passed: we grow it to
 * {@link MAX_TEXT_BYTES} before taking the copy, and a caller must not pass longer text (a job
 * that would is split, see {@link EspeakSynth.synthesize}).
 */
import type { ESpeakNGModule, ESpeakNGWorker } from '@echogarden/espeak-ng-emscripten';
import { emscriptenLang, espeakModuleOptions, readEspeakPackage, type EspeakPackage } from './espeak-data.js';
import { ESPEAK_STATE_FILE, packageStamp, readEspeakState, writeEspeakState, type EspeakState } from './espeak-state.js';
import type { EspeakPhonemeEvent, EspeakWordEvent } from './word-timings.js';

export { ESPEAK_SAMPLE_RATE } from './output.js';
import { ESPEAK_SAMPLE_RATE as ESPEAK_RATE } from './output.js';

/**
 * Longest text, in UTF-8 bytes, one synthesize call may pass to eSpeak: the size the WebIDL string
 * buffer is grown to before the memory copy is taken (see the module comment).
 */
export const MAX_TEXT_BYTES = 60_000;

/** Receives each block of samples (22050 Hz mono, signed 16-bit); return true to stop. */
export type SampleSink = (samples: Int16Array) => boolean;

/**
 * How an instance got its initialized state: `restored` from the file the build wrote
 * (espeak-state.ts), `initialized` by running espeak_Initialize.
 */
export type EspeakInitialState = 'restored' | 'initialized';

/**
 * A new eSpeak NG module, not initialized: its JavaScript, and its data package with only the
 * files tts reads (espeak-data.ts: 0.7 of 24 MB resident, issue 20). Imported here, not at the
 * top: a worker that only speaks English with Flite never loads eSpeak's 842 KB of JavaScript and
 * 24 MB of data.
 * @param pkg the package as espeak-data.ts read it (undefined: the module loads as shipped).
 * @throws Error when the module cannot load.
 */
async function newModule(pkg: EspeakPackage | undefined): Promise<ESpeakNGModule> {
  const { default: createESpeak } = await import('@echogarden/espeak-ng-emscripten');
  return createESpeak(espeakModuleOptions(pkg));
}

/**
 * Initializes `module`: the worker's C++ constructor, espeak_Initialize. It seeds eSpeak's random
 * generator with `time(NULL)`, which Emscripten answers from `Date.now()`: held at 0 while it runs
 * (synchronously; nothing else runs meanwhile), so every instance gets the same seed.
 * @throws what the constructor throws (a WebAssembly trap).
 */
function initialize(module: ESpeakNGModule): ESpeakNGWorker {
  const realNow = Date.now;
  Date.now = () => 0;
  try {
    return new module.eSpeakNGWorker();
  } finally {
    Date.now = realNow;
  }
}

/** One eSpeak NG instance whose every job starts from the same state. */
export class EspeakSynth {
  private constructor(
    private readonly module: ESpeakNGModule,
    private readonly worker: ESpeakNGWorker,
    private readonly snapshot: Uint8Array,
    /** How the instance got its initialized state: from the build's file, or by espeak_Initialize. */
    readonly initialState: EspeakInitialState,
  ) {}

  /**
   * Loads eSpeak NG (the module and its 24 MB data file; then its initialized state, written by
   * the build: espeak-state.ts, or else espeak_Initialize with a fixed random seed, ~100 ms
   * more), grows the string buffer, and copies the memory every job starts from. An instance
   * made from the state that then fails is dropped, and a new one initializes.
   * @param stateFile where the initialized state is read from (tests give another file).
   * @throws Error when the module cannot load or eSpeak NG has no en-us voice.
   */
  static async create(stateFile: string = ESPEAK_STATE_FILE): Promise<EspeakSynth> {
    const pkg = readEspeakPackage();
    const stamp = pkg === undefined ? undefined : packageStamp(pkg);
    const state = stamp === undefined ? undefined : await readEspeakState(stateFile, stamp);
    if (state !== undefined) {
      try {
        return await EspeakSynth.made(pkg, state);
      } catch {
        // Whatever went wrong after the restore, an instance that initializes itself is the
        // reference: start again with one (a fresh module, nothing of the state in it).
      }
    }
    return EspeakSynth.made(pkg, undefined);
  }

  /**
   * A new instance of `pkg`'s module, its initialized state restored from `state` (when its
   * memory size is the module's) or made by espeak_Initialize; then its string buffer grown and
   * the memory every job starts from copied.
   * @throws Error when the module cannot load or eSpeak NG has no en-us voice.
   */
  private static async made(pkg: EspeakPackage | undefined, state: EspeakState | undefined): Promise<EspeakSynth> {
    const module = await newModule(pkg);
    let worker: ESpeakNGWorker;
    let initialState: EspeakInitialState;
    if (state !== undefined && state.heapBytes === module.HEAPU8.length) {
      // The memory of an instance just initialized, over this one's fresh memory (its static data
      // and what its start-up wrote, all part of that state); past it, that memory was zero.
      module.HEAPU8.set(state.memory);
      module.HEAPU8.fill(0, state.memory.length);
      worker = module.wrapPointer(state.pointer, module.eSpeakNGWorker);
      initialState = 'restored';
    } else {
      worker = initialize(module);
      initialState = 'initialized';
    }
    // A string of MAX_TEXT_BYTES makes the WebIDL glue note the size it needs; the next call
    // reallocates its buffer at that size. Both calls stop at the first block of audio. The long
    // one is "a" and NUL bytes: the glue sizes by the JavaScript string's UTF-8 bytes, eSpeak NG
    // reads up to the first NUL, so it speaks "a" rather than translating 60,000 letters (issue
    // 20: ~70 ms less per worker start; the same audio bytes, checked on 27 Japanese texts).
    if (worker.set_voice('en-us') !== 0) throw new Error('eSpeak NG has no en-us voice');
    worker.synthesize(`a${'\0'.repeat(MAX_TEXT_BYTES - 1)}`, () => 1);
    worker.synthesize('a', () => 1);
    return new EspeakSynth(module, worker, nonZeroPrefix(module.HEAPU8), initialState);
  }

  /**
   * Initializes a module and writes its state to `file` for {@link create} (the build step
   * scripts/espeak-state.js; tests).
   * @throws Error when the package cannot be found or read, or the module cannot load; the file
   *   system's errors.
   */
  static async writeInitializedState(file: string = ESPEAK_STATE_FILE): Promise<void> {
    const pkg = readEspeakPackage();
    const stamp = pkg === undefined ? undefined : packageStamp(pkg);
    if (pkg === undefined || stamp === undefined) throw new Error('@echogarden/espeak-ng-emscripten cannot be found or read');
    const module = await newModule(pkg);
    const worker = initialize(module);
    writeEspeakState(file, { heapBytes: module.HEAPU8.length, pointer: worker.ptr, memory: nonZeroPrefix(module.HEAPU8) }, stamp, emscriptenLang());
  }

  /** A copy of the memory every job starts from (see {@link reset}; tests). */
  memory(): Uint8Array {
    return this.snapshot.slice();
  }

  /**
   * Puts the instance back into its state right after {@link create}: call before each job.
   * The snapshot holds the memory up to its last non-zero byte (1.2 of 16.3 MiB); the rest,
   * and memory the instance grew since, is zeroed (the allocator's state, restored too, no longer
   * knows it).
   */
  reset(): void {
    const heap = this.module.HEAPU8;
    heap.set(this.snapshot);
    heap.fill(0, this.snapshot.length);
  }

  /**
   * Speaks `text` with eSpeak voice `voice` (`ja+f2`, `en-us`), passing each block of samples to
   * `sink` as it is made; stops early when `sink` returns true. Text longer than
   * {@link MAX_TEXT_BYTES} is spoken in parts cut at spaces or punctuation. `onWord`, when given,
   * receives each word event (espeakEVENT_WORD) before the samples it falls in: the word's UTF-16
   * offset in `text` and its first sample (22050 Hz) counted from the start of `text`'s audio
   * (eSpeak gives the audio position in ms: ±11 samples). `onPhoneme`, when given, receives each
   * phoneme event (espeakEVENT_PHONEME: the phoneme's IPA name, `''` for the pause closing a
   * clause, and its first sample on the same clock).
   * @throws Error when eSpeak cannot select the voice.
   */
  synthesize(
    voice: string,
    text: string,
    sink: SampleSink,
    onWord?: (event: EspeakWordEvent) => void,
    onPhoneme?: (event: EspeakPhonemeEvent) => void,
  ): void {
    const code = this.worker.set_voice(voice);
    if (code !== 0) throw new Error(`eSpeak NG cannot select voice ${voice} (error ${code})`);
    let partChars = 0;
    let partSamples = 0;
    for (const part of byteBoundedParts(text, MAX_TEXT_BYTES)) {
      let stopped = false;
      let made = 0;
      // eSpeak's text positions count characters (code points) from 1: their UTF-16 offsets.
      const offsets: number[] = [];
      if (onWord !== undefined) for (let i = 0; i < part.length; i += part.codePointAt(i)! > 0xffff ? 2 : 1) offsets.push(i);
      this.worker.synthesize(part, (samples, events) => {
        if (stopped) return 1;
        if (onWord !== undefined || onPhoneme !== undefined) {
          for (const ev of events as { type?: unknown; text_position?: unknown; audio_position?: unknown; id?: unknown }[]) {
            if (typeof ev.audio_position !== 'number') continue;
            const sample = partSamples + Math.round((ev.audio_position * ESPEAK_RATE) / 1000);
            if (ev.type === 'phoneme' && onPhoneme !== undefined && typeof ev.id === 'string') onPhoneme({ phoneme: ev.id, sample });
            if (ev.type !== 'word' || onWord === undefined || typeof ev.text_position !== 'number') continue;
            const at = offsets[ev.text_position - 1];
            if (at !== undefined) onWord({ charStart: partChars + at, sample });
          }
        }
        made += samples.length;
        stopped = sink(samples);
        return stopped ? 1 : 0;
      });
      if (stopped) return;
      partChars += part.length;
      partSamples += made;
    }
  }

  /**
   * The phonemes eSpeak NG's translator gives each of `texts` with voice `voice` (the voice set
   * once), in IPA, in order, as its phoneme events name them (espeak_TextToPhonemes: no synthesis,
   * ~1 ms a word, a tenth of its synthesis time). Only between jobs or after a job's last
   * synthesis: the translator's state is not what {@link reset} restores mid-job.
   * @throws Error when eSpeak cannot select the voice or a text has {@link MAX_TEXT_BYTES} or more.
   */
  phonemes(voice: string, texts: readonly string[]): string[][] {
    if (texts.some((t) => Buffer.byteLength(t) >= MAX_TEXT_BYTES)) throw new Error('text too long for eSpeak NG phonemes');
    const code = this.worker.set_voice(voice);
    if (code !== 0) throw new Error(`eSpeak NG cannot select voice ${voice} (error ${code})`);
    return texts.map((text) => {
      if (text === '') return [];
      const ptr = this.worker.text_to_phonemes(text, 1).ptr;
      const heap = this.module.HEAPU8;
      let end = ptr;
      while (ptr !== 0 && end < heap.length && heap[end] !== 0) end++;
      const ipa = Buffer.from(heap.subarray(ptr, end)).toString('utf8');
      return ipa.split(/[\s_|]+/u).filter((p) => p !== '');
    });
  }
}

/**
 * A copy of `memory` up to its last non-zero byte: what it takes to restore it over memory that
 * is zeroed beyond (issue 20: eSpeak NG's initialized 16.3 MiB are zero after the first 1.2 MiB).
 */
export function nonZeroPrefix(memory: Uint8Array): Uint8Array {
  let end = memory.length;
  // Whole 32-bit words first (the heap is 64 KiB-aligned), then the bytes of the last non-zero one.
  if (memory.byteOffset % 4 === 0 && memory.length % 4 === 0) {
    const words = new Uint32Array(memory.buffer, memory.byteOffset, memory.length / 4);
    let w = words.length;
    while (w > 0 && words[w - 1] === 0) w--;
    end = w * 4;
  }
  while (end > 0 && memory[end - 1] === 0) end--;
  return memory.slice(0, end);
}

/**
 * Cuts `text` into parts of at most `maxBytes` UTF-8 bytes, preferring to cut after whitespace or
 * punctuation, never inside a surrogate pair. Returns `[text]` when it fits.
 */
export function byteBoundedParts(text: string, maxBytes: number): string[] {
  if (Buffer.byteLength(text) <= maxBytes) return [text];
  const parts: string[] = [];
  let rest = text;
  while (Buffer.byteLength(rest) > maxBytes) {
    // Each code point is at most 4 bytes, so maxBytes / 4 code points always fit.
    let end = 0;
    let bytes = 0;
    let lastBreak = -1;
    for (const ch of rest) {
      const size = Buffer.byteLength(ch);
      if (bytes + size > maxBytes) break;
      bytes += size;
      end += ch.length;
      if (/[\s\p{P}]/u.test(ch)) lastBreak = end;
    }
    const cut = lastBreak > 0 ? lastBreak : end;
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest !== '') parts.push(rest);
  return parts;
}
