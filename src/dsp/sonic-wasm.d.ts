/**
 * Types for `@echogarden/sonic-wasm` (Sonic, Bill Cox's speech time-stretcher, compiled to
 * WebAssembly by Emscripten; Apache-2.0), which ships none. Only the members tempo.ts uses are
 * declared; the C signatures are those of sonic.h (a `sonicStream` is a pointer, a count of
 * samples is a count of frames).
 */
declare module '@echogarden/sonic-wasm' {
  /** The instantiated module: Sonic's C functions and the WebAssembly heap. */
  export interface SonicModule {
    /** The heap as floats; replaced when memory grows, so read it after every allocation. */
    HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** A stream for `numChannels` interleaved channels at `sampleRate` Hz; 0 on failure. */
    _sonicCreateStream(sampleRate: number, numChannels: number): number;
    _sonicDestroyStream(stream: number): void;
    /** Tempo factor: 2 = twice as fast, pitch kept. */
    _sonicSetSpeed(stream: number, speed: number): void;
    /** Writes `frames` interleaved frames from `samples`; returns 0 when out of memory. */
    _sonicWriteFloatToStream(stream: number, samples: number, frames: number): number;
    /** Reads up to `maxFrames` frames into `samples`; returns the number read. */
    _sonicReadFloatFromStream(stream: number, samples: number, maxFrames: number): number;
    /** Processes what is buffered as if silence followed; returns 0 when out of memory. */
    _sonicFlushStream(stream: number): number;
    _sonicSamplesAvailable(stream: number): number;
  }
  /** Instantiates the module (compiles sonic.wasm beside the script). */
  export default function Sonic(moduleArg?: Record<string, unknown>): Promise<SonicModule>;
}
