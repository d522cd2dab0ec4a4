/**
 * FLAC (RFC 9639, "Free Lossless Audio Codec") through libFLAC 1.3 compiled to WebAssembly by
 * `libflacjs` (libFLAC is BSD-3-Clause, the wrapper MIT). Its low-level stream encoder is fed
 * chunk by chunk; libFLAC hands out each frame as soon as a block (4096 samples) is full.
 *
 * Written to a stream, libFLAC cannot seek back: the STREAMINFO block it writes first says
 * "total samples unknown" (0) and has no MD5, which RFC 9639 §8.2 allows, so a pipe gets a valid
 * stream. For a file, the STREAMINFO libFLAC reports at the end (exact total, frame sizes, MD5 of
 * the audio) is written over the first one ({@link AudioEncoder.headerPatch}).
 *
 * Samples: pcm16 and µ-law as 16-bit, float32 as 24-bit integers (FLAC holds integers only).
 */
import { createRequire } from 'node:module';
import type { AudioSpec } from '../../dsp/spec.js';
import type { AudioEncoder } from './encoder.js';
import { integerBits, toInt32 } from './pcm.js';

/** What libFLAC reports at the end of a stream (libflacjs `StreamMetadata`). */
interface StreamInfo {
  min_blocksize: number;
  max_blocksize: number;
  min_framesize: number;
  max_framesize: number;
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  total_samples: number;
  /** 32 hex digits. */
  md5sum: string;
}

/** The part of libflacjs's API used here (its own typings do not load under NodeNext). */
interface LibFlac {
  isReady(): boolean;
  on(event: 'ready', listener: () => void): void;
  create_libflac_encoder(rate: number, channels: number, bps: number, level: number, totalSamples: number, verify: boolean, blockSize: number): number;
  init_encoder_stream(encoder: number, write: (data: Uint8Array) => void, metadata: (info: StreamInfo) => void): number;
  FLAC__stream_encoder_process_interleaved(encoder: number, samples: Int32Array, frames: number): boolean;
  FLAC__stream_encoder_finish(encoder: number): boolean;
  FLAC__stream_encoder_delete(encoder: number): void;
  FLAC__stream_encoder_get_state(encoder: number): number;
}

let loading: Promise<LibFlac> | undefined;

/**
 * Loads libflacjs's WebAssembly build (~15 ms), once per process.
 *
 * Its Emscripten loader prefers `fetch()` whenever one exists, and Node 20 has one — which then
 * fails on a file path. `fetch` is hidden for the synchronous moment of loading, so the loader
 * reads the .wasm from the package's folder with `fs` (no network use in either case).
 */
function loadLibFlac(): Promise<LibFlac> {
  loading ??= new Promise<LibFlac>((resolve, reject) => {
    const require = createRequire(import.meta.url);
    const fetchProperty = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
    let flac: LibFlac;
    try {
      delete (globalThis as { fetch?: unknown }).fetch;
      flac = require('libflacjs/dist/libflac.min.wasm.js') as LibFlac;
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
      return;
    } finally {
      if (fetchProperty !== undefined) Object.defineProperty(globalThis, 'fetch', fetchProperty);
    }
    if (flac.isReady()) resolve(flac);
    else flac.on('ready', () => resolve(flac));
  });
  return loading;
}

/** Compression level (libFLAC `-5`, its default: a good size/speed balance for speech). */
const COMPRESSION_LEVEL = 5;

/**
 * Starts a FLAC encoder for PCM of `spec` (1–8 channels, 1 Hz … 655 350 Hz).
 * @throws Error when libFLAC refuses the parameters (reported as an internal error).
 */
export async function openFlacEncoder(spec: AudioSpec): Promise<AudioEncoder> {
  const flac = await loadLibFlac();
  const bits = integerBits(spec.format);
  let encoder = flac.create_libflac_encoder(spec.sampleRate, spec.channels, bits, COMPRESSION_LEVEL, 0, false, 0);
  if (encoder === 0) throw new Error(`libFLAC cannot encode ${spec.sampleRate} Hz × ${spec.channels} channels`);
  let out: Buffer[] = [];
  let info: StreamInfo | undefined;
  const status = flac.init_encoder_stream(
    encoder,
    (data) => out.push(Buffer.from(data)), // a copy: the view may be into the module's memory
    (meta) => (info = meta),
  );
  if (status !== 0) {
    flac.FLAC__stream_encoder_delete(encoder);
    throw new Error(`libFLAC refused to start (init status ${status})`);
  }
  const drain = (): Buffer => {
    const bytes = out.length === 1 ? out[0]! : Buffer.concat(out);
    out = [];
    return bytes;
  };
  const live = (): number => {
    if (encoder === 0) throw new Error('the FLAC encoder was freed');
    return encoder;
  };
  return {
    encode(pcm) {
      if (pcm.length > 0) {
        const samples = toInt32(pcm, spec.format);
        if (!flac.FLAC__stream_encoder_process_interleaved(live(), samples, samples.length / spec.channels)) {
          throw new Error(`libFLAC failed (state ${flac.FLAC__stream_encoder_get_state(encoder)})`);
        }
      }
      return drain();
    },
    finish() {
      if (!flac.FLAC__stream_encoder_finish(live())) throw new Error(`libFLAC failed to finish (state ${flac.FLAC__stream_encoder_get_state(encoder)})`);
      return drain();
    },
    headerPatch() {
      // "fLaC" (4 bytes), then the STREAMINFO block header (4 bytes), then its 34 bytes.
      return info === undefined ? undefined : { offset: 8, bytes: streamInfoBytes(info) };
    },
    free() {
      if (encoder !== 0) flac.FLAC__stream_encoder_delete(encoder);
      encoder = 0;
      out = [];
    },
  };
}

/**
 * The 34 bytes of a STREAMINFO block body (RFC 9639 §8.2): min/max block size (u16 each),
 * min/max frame size (u24 each), sample rate (20 bits), channels − 1 (3 bits), bits per
 * sample − 1 (5 bits), total samples per channel (36 bits), MD5 of the unencoded audio (16 bytes).
 */
export function streamInfoBytes(info: StreamInfo): Buffer {
  const b = Buffer.alloc(34);
  b.writeUInt16BE(info.min_blocksize, 0);
  b.writeUInt16BE(info.max_blocksize, 2);
  b.writeUIntBE(info.min_framesize, 4, 3);
  b.writeUIntBE(info.max_framesize, 7, 3);
  const total = BigInt(info.total_samples) & 0xfffffffffn;
  const packed = (BigInt(info.sampleRate) << 44n) | (BigInt(info.channels - 1) << 41n) | (BigInt(info.bitsPerSample - 1) << 36n) | total;
  b.writeBigUInt64BE(packed, 10);
  if (/^[0-9a-f]{32}$/i.test(info.md5sum)) Buffer.from(info.md5sum, 'hex').copy(b, 18);
  return b;
}
