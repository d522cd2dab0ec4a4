/**
 * WAV (RIFF WAVE) headers for the three encodings of docs/cli.md §2, and a reader for them.
 *
 * Followed:
 * - Microsoft/IBM, "Multimedia Programming Interface and Data Specifications 1.0" (1991),
 *   ch. 3 "Waveform audio file format": the RIFF chunk layout (every chunk is a 4-byte id, a
 *   32-bit little-endian size that excludes the 8-byte chunk header, then the data, padded to an
 *   even length with one byte that the size does not count), the `fmt ` chunk, and the `fact`
 *   chunk, which is required for every format other than WAVE_FORMAT_PCM and holds the
 *   length in sample frames.
 * - Microsoft, WAVEFORMATEX (mmreg.h, learn.microsoft.com "WAVEFORMATEX structure"): for
 *   non-PCM formats `cbSize` follows `wBitsPerSample` (0 here: no extra format bytes), for PCM
 *   it is absent in the file (the classic 16-byte PCMWAVEFORMAT).
 * - Format tags, RFC 2361 "WAVE and AVI Codec Registries" appendix A / mmreg.h:
 *   0x0001 WAVE_FORMAT_PCM, 0x0003 WAVE_FORMAT_IEEE_FLOAT, 0x0007 WAVE_FORMAT_MULAW.
 * - Streaming to a pipe (length unknown): the RIFF and data sizes are 0xFFFFFFFF, as sox and
 *   ffmpeg write them and read them back as "until end of stream" (docs/cli.md §2).
 */
import type { AudioFormat } from '../protocol/types.js';
import { assertAudioSpec, bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import { bytesPerSample } from '../dsp/encoding.js';

/** Format tags of RFC 2361 / mmreg.h used by tts. */
export const WAVE_FORMAT = {
  PCM: 0x0001,
  IEEE_FLOAT: 0x0003,
  MULAW: 0x0007,
  /** WAVE_FORMAT_EXTENSIBLE: the real tag is the first 2 bytes of the SubFormat GUID. Read, never written. */
  EXTENSIBLE: 0xfffe,
} as const;

/** The size written when the length is unknown (streaming): 0xFFFFFFFF. */
export const WAV_UNKNOWN_SIZE = 0xffffffff;

/** Format tag written for each encoding (docs/cli.md §2). */
export function formatTagOf(format: AudioFormat): number {
  switch (format) {
    case 'pcm16':
      return WAVE_FORMAT.PCM;
    case 'float32':
      return WAVE_FORMAT.IEEE_FLOAT;
    case 'mulaw':
      return WAVE_FORMAT.MULAW;
  }
}

/**
 * Length in bytes of the header {@link wavHeader} writes for `format`, i.e. the offset of the
 * first audio byte: 44 for pcm16 (RIFF 12 + fmt 8+16 + data 8), 58 for float32 and mulaw
 * (RIFF 12 + fmt 8+18 + fact 8+4 + data 8). It does not depend on the data size, so a header
 * written with placeholder sizes can be overwritten in place.
 */
export function wavHeaderLength(format: AudioFormat): number {
  return format === 'pcm16' ? 44 : 58;
}

/**
 * Pad bytes that must follow `dataBytes` bytes of audio so the `data` chunk ends on an even
 * offset (RIFF: chunks are word-aligned; the pad byte is not counted in the chunk size).
 * @returns 1 when `dataBytes` is odd (only possible for mulaw with an odd number of samples), else 0.
 */
export function wavPadLength(dataBytes: number): number {
  return dataBytes % 2;
}

/**
 * Builds a WAV header for audio of `spec`.
 *
 * @param spec encoding, rate (Hz) and channels of the audio that follows.
 * @param dataBytes length of the audio in bytes (pad byte excluded), when known. Undefined when
 *   streaming: the RIFF size, the data size and the `fact` frame count are then 0xFFFFFFFF.
 *   When `dataBytes` is odd the writer must append one zero pad byte after the audio
 *   ({@link wavPadLength}); the RIFF size here already counts it.
 * @returns a new Buffer of {@link wavHeaderLength} bytes (44 for pcm16, 58 otherwise): `RIFF`,
 *   `fmt ` (tag 1 / 16 bits; tag 3 / 32 bits + cbSize 0; tag 7 / 8 bits + cbSize 0), for
 *   float32 and mulaw a `fact` chunk holding the length in sample frames, then the `data`
 *   chunk header.
 * @throws RangeError for an invalid spec ({@link assertAudioSpec}) or a `dataBytes` that is not
 *   a whole number ≥ 0 or makes the file exceed the 4 GiB a RIFF size can express.
 */
export function wavHeader(spec: AudioSpec, dataBytes?: number): Buffer {
  assertAudioSpec(spec);
  const headerLength = wavHeaderLength(spec.format);
  const frameBytes = bytesPerFrame(spec);
  let riffSize = WAV_UNKNOWN_SIZE;
  let dataSize = WAV_UNKNOWN_SIZE;
  let frames = WAV_UNKNOWN_SIZE;
  if (dataBytes !== undefined) {
    if (!Number.isSafeInteger(dataBytes) || dataBytes < 0) {
      throw new RangeError(`WAV data size must be a whole number of bytes, got ${dataBytes}`);
    }
    riffSize = headerLength - 8 + dataBytes + wavPadLength(dataBytes);
    // 0xFFFFFFFF itself is reserved for "unknown", so the largest exact size is one less.
    if (riffSize >= WAV_UNKNOWN_SIZE) {
      throw new RangeError(`${dataBytes} bytes of audio exceed the 4 GiB limit of a WAV file`);
    }
    dataSize = dataBytes;
    // A trailing partial frame is not a sample frame; the fact chunk counts whole frames.
    frames = Math.floor(dataBytes / frameBytes);
  }

  const b = Buffer.alloc(headerLength);
  let o = 0;
  const id = (s: string): void => {
    o += b.write(s, o, 'latin1');
  };
  const u16 = (v: number): void => {
    o = b.writeUInt16LE(v, o);
  };
  const u32 = (v: number): void => {
    o = b.writeUInt32LE(v, o);
  };

  const pcm = spec.format === 'pcm16';
  const bits = bytesPerSample(spec.format) * 8;
  id('RIFF');
  u32(riffSize);
  id('WAVE');
  id('fmt ');
  u32(pcm ? 16 : 18);
  u16(formatTagOf(spec.format)); // wFormatTag
  u16(spec.channels); // nChannels
  u32(spec.sampleRate); // nSamplesPerSec (frames per second)
  u32(spec.sampleRate * frameBytes); // nAvgBytesPerSec
  u16(frameBytes); // nBlockAlign: bytes per sample frame
  u16(bits); // wBitsPerSample
  if (!pcm) {
    u16(0); // cbSize: no extra format information
    id('fact');
    u32(4);
    u32(frames); // dwSampleLength: sample frames (per channel)
  }
  id('data');
  u32(dataSize);
  return b;
}
