/**
 * MP3 (MPEG-1/2/2.5 Layer III, ISO/IEC 11172-3 and 13818-3) through LAME compiled to
 * WebAssembly by `wasm-media-encoders` (LAME is LGPL-2.0-or-later, the wrapper MIT; both may be
 * combined with GPL-3.0 code). Constant bit rate, so a stream cut anywhere is still playable and
 * its duration is known from its size; no Xing/LAME tag is written (nothing to patch at the end,
 * the same bytes are right for a file and a pipe).
 *
 * The output rate is the input's when MP3 has it (8000, 11025, 12000, 16000, 22050, 24000, 32000,
 * 44100, 48000 Hz); any other input rate is resampled by LAME to the nearest MP3 rate above it
 * (48000 Hz at most).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { createEncoder } from 'wasm-media-encoders';
import type { AudioSpec } from '../../dsp/spec.js';
import type { AudioEncoder } from './encoder.js';
import { deinterleave, toFloat32, warmUpTone } from './pcm.js';
import { mp3OutputRate, type Mp3Bitrate } from './rates.js';

/** The WebAssembly global (Node has it; this project's TypeScript libs do not declare it). */
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<object> };

/** A compiled WebAssembly.Module. */
type WasmModule = Parameters<typeof createEncoder>[1];

let compiled: Promise<WasmModule> | undefined;

/**
 * LAME's WebAssembly, compiled once per process from the package's `wasm/mp3.wasm` (~4 ms).
 * The package's default loader decodes a copy inlined as base64 text, which took ~40 ms of CPU.
 */
function lameModule(): Promise<WasmModule> {
  compiled ??= (async () => {
    // The package's exports map misspells this path; the file sits beside its dist/ folder.
    const main = createRequire(import.meta.url).resolve('wasm-media-encoders');
    return (await WebAssembly.compile(await readFile(join(dirname(main), '..', 'wasm', 'mp3.wasm')))) as WasmModule;
  })();
  return compiled;
}

/**
 * Starts an MP3 encoder for PCM of `spec` (1 or 2 channels) at `bitrateKbps` kbit/s CBR.
 * Loading compiles LAME's WebAssembly (~4 ms), once per process.
 * @param bitrateKbps one of mp3BitratesAt(the output rate) (rates.ts; checked by the planner).
 */
export async function openMp3Encoder(spec: AudioSpec, bitrateKbps: number): Promise<AudioEncoder> {
  // Through import(): the bundle is CommonJS (scripts/bundle.js), and `require` would load the
  // package's other build (dist/index.cjs) instead of the ES module one import has always loaded.
  const { createEncoder } = await import('wasm-media-encoders');
  let lame: Awaited<ReturnType<typeof createEncoder<'audio/mpeg'>>> | undefined = await createEncoder('audio/mpeg', await lameModule());
  const params = {
    sampleRate: spec.sampleRate,
    channels: spec.channels as 1 | 2,
    bitrate: bitrateKbps as Mp3Bitrate,
    outputSampleRate: mp3OutputRate(spec.sampleRate),
  };
  // Warm-up: V8 compiles WebAssembly functions on their first call, which made the first real
  // chunk ~10 ms late. A throwaway stream of 200 ms here, while the request is on its way, takes
  // that cost; configure() then starts the real stream afresh (the wrapper's documented reuse).
  lame.configure(params);
  lame.encode(deinterleave(warmUpTone(spec.sampleRate, spec.channels), spec.channels));
  lame.finalize();
  lame.configure(params);
  const live = (): NonNullable<typeof lame> => {
    if (lame === undefined) throw new Error('the MP3 encoder was freed');
    return lame;
  };
  return {
    encode(pcm) {
      if (pcm.length === 0) return Buffer.alloc(0);
      // The returned view is LAME's own output buffer, reused by the next call: copy it.
      return Buffer.from(live().encode(deinterleave(toFloat32(pcm, spec.format), spec.channels)));
    },
    finish() {
      return Buffer.from(live().finalize());
    },
    headerPatch: () => undefined,
    free() {
      // The module has no explicit destructor: dropping it lets its memory be collected.
      lame = undefined;
    },
  };
}
