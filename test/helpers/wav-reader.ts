/**
 * A WAV header reader, for tests that check files byte by byte (the tool itself only writes
 * WAV). Follows the same sources as src/audio/wav.ts: the RIFF layout, `fmt `, `fact`, skipping
 * other chunks with their pad byte.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { WAVE_FORMAT } from '../../src/audio/wav.js';

/** What {@link parseWavHeader} read. Sizes are in bytes unless named otherwise. */
export interface WavInfo {
  /** wFormatTag as written (e.g. 1 PCM, 3 IEEE float, 7 µ-law, 0xFFFE extensible). */
  formatTag: number;
  /** For WAVE_FORMAT_EXTENSIBLE: the tag in the first two bytes of the SubFormat GUID. */
  subFormatTag?: number;
  /** nChannels. */
  channels: number;
  /** nSamplesPerSec: sample frames per second, Hz. */
  sampleRate: number;
  /** wBitsPerSample. */
  bitsPerSample: number;
  /** nBlockAlign: bytes per sample frame. */
  blockAlign: number;
  /** nAvgBytesPerSec. */
  byteRate: number;
  /** Offset of the first audio byte in the file. */
  dataOffset: number;
  /** Size field of the `data` chunk: audio bytes, pad byte excluded; 0xFFFFFFFF = unknown (streamed). */
  dataBytes: number;
  /** Size field of the RIFF chunk (file length − 8); 0xFFFFFFFF = unknown. */
  riffSize: number;
  /** dwSampleLength of the `fact` chunk (sample frames), when there is one. */
  factSamples?: number;
}

/**
 * Reads the header of a WAV file: the RIFF/WAVE preamble, the `fmt ` chunk, an optional `fact`
 * chunk, skipping any other chunk (LIST, …, each with its pad byte), up to the `data` chunk
 * header. `buf` needs to hold the file only up to the start of the audio.
 *
 * @throws Error with a message saying what is wrong, when `buf` is not RIFF/WAVE, a chunk is
 *   cut short, `fmt ` is missing, shorter than 16 bytes or after `data`, or channels, rate or
 *   block align are 0.
 */
export function parseWavHeader(buf: Uint8Array): WavInfo {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < 12) malformed(`${b.length} bytes, a RIFF header needs 12`);
  if (b.toString('latin1', 0, 4) !== 'RIFF') malformed('does not start with "RIFF"');
  if (b.toString('latin1', 8, 12) !== 'WAVE') malformed('RIFF form type is not "WAVE"');
  const riffSize = b.readUInt32LE(4);

  let fmt: Omit<WavInfo, 'dataOffset' | 'dataBytes' | 'riffSize' | 'factSamples'> | undefined;
  let factSamples: number | undefined;
  let o = 12;
  for (;;) {
    if (o + 8 > b.length) malformed(fmt === undefined ? 'no "fmt " chunk' : 'no "data" chunk');
    const chunkId = b.toString('latin1', o, o + 4);
    const size = b.readUInt32LE(o + 4);
    const body = o + 8;
    if (chunkId === 'data') {
      if (fmt === undefined) malformed('"data" chunk before "fmt " chunk');
      return {
        ...fmt,
        dataOffset: body,
        dataBytes: size,
        riffSize,
        ...(factSamples === undefined ? {} : { factSamples }),
      };
    }
    if (body + size > b.length) malformed(`"${chunkId}" chunk of ${size} bytes is cut short`);
    if (chunkId === 'fmt ') {
      if (size < 16) malformed(`"fmt " chunk of ${size} bytes, needs at least 16`);
      const formatTag = b.readUInt16LE(body);
      fmt = {
        formatTag,
        channels: b.readUInt16LE(body + 2),
        sampleRate: b.readUInt32LE(body + 4),
        byteRate: b.readUInt32LE(body + 8),
        blockAlign: b.readUInt16LE(body + 12),
        bitsPerSample: b.readUInt16LE(body + 14),
      };
      // WAVEFORMATEXTENSIBLE: cbSize ≥ 22, SubFormat GUID at offset 24 of the fmt body.
      if (formatTag === WAVE_FORMAT.EXTENSIBLE && size >= 40) fmt.subFormatTag = b.readUInt16LE(body + 24);
      if (fmt.channels === 0) malformed('0 channels');
      if (fmt.sampleRate === 0) malformed('sample rate 0');
      if (fmt.blockAlign === 0) malformed('block align 0');
    } else if (chunkId === 'fact') {
      if (size < 4) malformed(`"fact" chunk of ${size} bytes, needs 4`);
      factSamples = b.readUInt32LE(body);
    }
    // Every chunk is padded to an even length; the pad byte is not in its size.
    o = body + size + (size % 2);
  }
}

function malformed(why: string): never {
  throw new Error(`not a valid WAV header: ${why}`);
}

/** What {@link wavFileInfo} reads from a WAV file: the fields tests used to ask `sox --i` for. */
export interface WavFileInfo {
  /** Sample frames per second, Hz. */
  rate: number;
  channels: number;
  /** In sox's words: "Signed Integer PCM", "Floating Point PCM", "u-law", else `tag 0x…`. */
  encoding: string;
  /** Sample frames (per channel) in the `data` chunk. */
  samples: number;
  /** Seconds: samples / rate. */
  duration: number;
  /** The header as read. */
  header: WavInfo;
}

/** Bytes read from the start of a file for its header (ours is 44 bytes; room for LIST chunks). */
const HEADER_READ_BYTES = 64 * 1024;

/**
 * Reads a WAV file's header with {@link parseWavHeader}, in-process (no `sox` spawned), and the
 * length of its audio: the `data` size, or for a streamed header (size 0xFFFFFFFF) the rest of
 * the file, in whole frames.
 * @throws Error when the header is malformed, the `data` chunk claims more bytes than the file
 *   holds, or it is not whole frames.
 */
export function wavFileInfo(path: string): WavFileInfo {
  const fd = openSync(path, 'r');
  let header: WavInfo;
  let fileBytes: number;
  try {
    fileBytes = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(HEADER_READ_BYTES, fileBytes));
    readSync(fd, head, 0, head.length, 0);
    header = parseWavHeader(head);
  } finally {
    closeSync(fd);
  }
  const available = fileBytes - header.dataOffset;
  const dataBytes = header.dataBytes === 0xffffffff ? available : header.dataBytes;
  if (dataBytes > available) malformed(`"data" claims ${dataBytes} bytes, the file holds ${available}`);
  if (dataBytes % header.blockAlign !== 0) malformed(`"data" of ${dataBytes} bytes is not whole ${header.blockAlign}-byte frames`);
  const tag = header.formatTag === WAVE_FORMAT.EXTENSIBLE ? (header.subFormatTag ?? header.formatTag) : header.formatTag;
  const encoding =
    tag === WAVE_FORMAT.PCM ? 'Signed Integer PCM' : tag === WAVE_FORMAT.IEEE_FLOAT ? 'Floating Point PCM' : tag === WAVE_FORMAT.MULAW ? 'u-law' : `tag 0x${tag.toString(16)}`;
  const samples = dataBytes / header.blockAlign;
  return { rate: header.sampleRate, channels: header.channels, encoding, samples, duration: samples / header.sampleRate, header };
}
