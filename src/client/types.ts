/**
 * What both channels share besides the audio chunks they yield (wire/delta.ts `AudioChunk`).
 */

/** Receives protocol-level detail for `--verbose`; lines never contain the API key. */
export type VerboseLog = (line: string) => void;
