/**
 * Types for `@echogarden/espeak-ng-emscripten` (eSpeak NG compiled to WebAssembly by Emscripten,
 * https://github.com/echogarden-project/espeak-ng-emscripten), which ships none. Only the members
 * the engine uses are declared; shapes were read from the package's espeak-ng.js.
 */
declare module '@echogarden/espeak-ng-emscripten' {
  /** One eSpeak NG instance: a voice setting plus a synchronous synthesizer (22050 Hz mono). */
  export interface ESpeakNGWorker {
    /** Address of the C++ `eSpeakNGWorker` object in the module's memory (Emscripten WebIDL). */
    readonly ptr: number;
    /**
     * Selects a voice by name, `language[+variant]` (`en-us+f3`).
     * @returns 0 on success, an espeak_ERROR code (e.g. 2 = not found) otherwise. An unknown
     *   variant is ignored (returns 0), an unknown language is not.
     */
    set_voice(name: string): number;
    /**
     * Synthesizes `text` synchronously, calling `callback` with each block of signed 16-bit
     * samples at 22050 Hz mono as it is made (a few tens of ms of audio per call) and its events.
     * Returning 1 (or true) from the callback aborts the synthesis.
     */
    synthesize(text: string, callback: (samples: Int16Array, events: unknown[]) => number | boolean): void;
    /** Phonemes of `text` in IPA (words separated by spaces, phonemes by `_`); code 0 on success. */
    synthesize_ipa(text: string): { code: number; ipa: string };
    /**
     * Translates `text` to phonemes (espeak_TextToPhonemes), without synthesis: a pointer to a
     * NUL-terminated UTF-8 string in the module's memory (IPA when `useIpa` is 1: phonemes joined
     * by `_`, words by spaces, clauses by ` | `).
     */
    text_to_phonemes(text: string, useIpa: number): { ptr: number };
    /** Output sample rate in Hz (22050). */
    get_samplerate(): number;
    /** Speaking rate in words per minute (default 175). */
    get_rate(): number;
  }

  /** The instantiated WebAssembly module. */
  export interface ESpeakNGModule {
    /** Makes a worker: the C++ constructor, which runs espeak_Initialize (~100 ms cold). */
    eSpeakNGWorker: new () => ESpeakNGWorker;
    /**
     * The JavaScript object for the C++ object at `ptr` (Emscripten WebIDL's `wrapPointer`):
     * the one made earlier for that address, or a new one of `type` that runs no C++ code.
     */
    wrapPointer(ptr: number, type: new () => ESpeakNGWorker): ESpeakNGWorker;
    /** The module's memory (Emscripten's `HEAPU8`), replaced when it grows. */
    HEAPU8: Uint8Array;
  }

  /** Emscripten module factory: loads the WebAssembly and espeak-ng.data (~110 ms). */
  const factory: (moduleArg?: object) => Promise<ESpeakNGModule>;
  export default factory;
}
