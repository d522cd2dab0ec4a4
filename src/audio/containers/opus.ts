/**
 * Ogg Opus (RFC 6716 codec, RFC 7845 encapsulation) through libopus compiled to WebAssembly by
 * `libopus-wasm` (libopus is BSD-3-Clause, the wrapper MIT). Pinned to 0.2.0: later releases
 * need Node 22, tts supports Node 20.
 *
 * - libopus runs at 8, 12, 16, 24 or 48 kHz. Audio at another rate is resampled as it streams
 *   to the next of those above it (48 kHz at most) by libsamplerate (BSD-2-Clause;
 *   src/dsp/libsamplerate.ts), and drained with zeros at the end so that no sample is lost.
 * - 20 ms frames, application VOIP (tuned for speech), constant bit rate off (VBR, libopus's default).
 * - Pages (ogg.ts): OpusHead alone on the first page, OpusTags on the second, then a page for
 *   every {@link PACKETS_PER_PAGE} packets (100 ms), closed when the packet after them is
 *   encoded, and a last page at the end. Page boundaries follow the audio, not the arrival of
 *   chunks, so the same audio gives the same bytes however it was delivered (a cached rerun
 *   equals the first run, docs/cli.md §8), while a pipe still gets audio every 100 ms.
 * - The serial number is {@link oggSerial}, not random: the same input gives the same file.
 *   RFC 3533 §4 asks only that serials be unique among the logical streams of one physical
 *   stream; a tts file holds a single one, so any fixed value is valid. Granule positions count
 *   48 kHz samples including the pre-skip (the encoder's lookahead), and the last page's granule
 *   trims the padding of the final frame (RFC 7845 §4.4, §4.5).
 */
import type { AudioSpec } from '../../dsp/spec.js';
import type { AudioEncoder } from './encoder.js';
import { oggCrc, OggWriter, opusHead, opusTags } from './ogg.js';
import { newConverter } from '../../dsp/resample.js';
import { toFloat32, warmUpTone } from './pcm.js';
import { opusRateFor } from './rates.js';

/** Frame duration: 20 ms, the usual one for speech (RFC 6716 §2.1.4). */
const FRAME_SECONDS = 0.02;

/** Packets per Ogg page: 5 × 20 ms = 100 ms of audio per page (a page's latency bound). */
export const PACKETS_PER_PAGE = 5;

/**
 * The Ogg serial number of a tts Opus stream: derived from its parameters (CRC-32 of
 * "tts-opus/<rate>/<channels>/<kbps>"), so equal runs give equal bytes. RFC 3533 §4 requires
 * uniqueness only within one physical stream, which here holds one logical stream.
 */
export function oggSerial(sampleRate: number, channels: number, bitrateKbps: number): number {
  return oggCrc(Buffer.from(`tts-opus/${sampleRate}/${channels}/${bitrateKbps}`, 'latin1'));
}

/**
 * Starts an Ogg Opus encoder for PCM of `spec` (1 or 2 channels) at `bitrateKbps` kbit/s.
 * Loading instantiates libopus's WebAssembly (~15 ms) and, for a rate libopus lacks, a
 * libsamplerate converter. When any part fails, the parts that loaded are freed before the error.
 * @throws what libopus throws for a setting it refuses (a bit rate out of its range: RangeError or
 *   its OpusError); what newConverter (src/dsp/resample.ts) throws.
 */
export async function openOpusEncoder(spec: AudioSpec, bitrateKbps: number): Promise<AudioEncoder> {
  // Through import(): the bundle is CommonJS (scripts/bundle.js), and libopus-wasm is an ES
  // module only, which `require` cannot load on Node before 20.19.
  const { Application, createEncoder, loadLibopus } = await import('libopus-wasm');
  const channels = spec.channels as 1 | 2;
  const rate = opusRateFor(spec.sampleRate);
  // Settled, not Promise.all: when one part fails, the others that loaded are freed, since
  // libopus's encoder and libsamplerate's converter live in WebAssembly memory that no garbage
  // collection gives back.
  const parts = await Promise.allSettled([
    loadLibopus(),
    createEncoder({ sampleRate: rate, channels, application: Application.Voip, bitrate: bitrateKbps * 1000, frameSize: Math.round(rate * FRAME_SECONDS) }),
    rate === spec.sampleRate ? undefined : newConverter(channels, spec.sampleRate, rate),
  ]);
  const [library, encoder, converter] = parts;
  const opus = encoder.status === 'fulfilled' ? encoder.value : undefined;
  const resampler = converter.status === 'fulfilled' ? converter.value : undefined;
  const freeParts = (): void => {
    opus?.free();
    resampler?.destroy();
  };
  if (library.status === 'rejected' || opus === undefined || converter.status === 'rejected') {
    freeParts();
    throw parts.find((p): p is PromiseRejectedResult => p.status === 'rejected')!.reason;
  }
  const { version } = library.value;
  const frame = opus.frameSize * channels; // samples (all channels) per packet
  try {
    // Warm-up: V8 compiles WebAssembly functions on their first call, which made the first real
    // chunk tens of ms late. A throwaway encoder of the same module takes that cost now, while the
    // request is on its way.
    const warm = await createEncoder({ sampleRate: rate, channels, application: Application.Voip, bitrate: bitrateKbps * 1000, frameSize: opus.frameSize });
    try {
      const tone = warmUpTone(rate, channels);
      for (let off = 0; off + frame <= tone.length; off += frame) warm.encodeFloat(tone.subarray(off, off + frame));
    } finally {
      warm.free();
    }
  } catch (error) {
    freeParts();
    throw error;
  }
  const to48k = 48000 / rate;
  const preSkip = opus.getLookahead() * to48k;
  const ogg = new OggWriter(oggSerial(spec.sampleRate, channels, bitrateKbps));
  // RFC 7845 §3: OpusHead alone on the first page, OpusTags on the next; audio on pages after.
  ogg.add(opusHead(channels, preSkip, spec.sampleRate), 0n);
  const headPage = ogg.flush();
  ogg.add(opusTags(`tts, ${version}`), 0n);
  let headers: Buffer | undefined = Buffer.concat([headPage, ogg.flush()]);
  const held = new Float32Array(frame); // samples waiting for a whole frame
  let heldLength = 0;
  let inFrames = 0; // input sample frames taken, at the input rate
  let outFrames = 0; // sample frames handed to libopus (padding excluded), at the Opus rate
  let granule = 0n; // 48 kHz samples of every packet so far
  let queued = 0; // packets added since the last page was closed
  const pages: Buffer[] = []; // closed pages not yet handed out
  let freed = false;

  /** Appends samples at the Opus rate; encodes each whole frame. */
  const push = (samples: Float32Array): void => {
    let off = 0;
    while (off < samples.length) {
      const n = Math.min(frame - heldLength, samples.length - off);
      held.set(samples.subarray(off, off + n), heldLength);
      heldLength += n;
      off += n;
      if (heldLength === frame) {
        const packet = opus.encodeFloat(held);
        granule += BigInt(opus.frameSize * to48k);
        // A full page is closed when the next packet comes, so that the last packet of the
        // stream is always still queued for finish() to set the end granule on.
        if (queued === PACKETS_PER_PAGE) {
          pages.push(ogg.flush());
          queued = 0;
        }
        ogg.add(packet, granule);
        queued++;
        // encodeFloat copied the samples into libopus's memory: the buffer can be refilled.
        heldLength = 0;
      }
    }
  };
  /** The headers (first time) and the closed pages, plus `last` (the final page) if given. */
  const take = (last?: Buffer): Buffer => {
    const out = Buffer.concat([...(headers === undefined ? [] : [headers]), ...pages, ...(last === undefined ? [] : [last])]);
    headers = undefined;
    pages.length = 0;
    return out;
  };
  /** Sample frames the input so far is worth at the Opus rate (what the resampler owes). */
  const owed = (): number => Math.round((inFrames * rate) / spec.sampleRate);

  return {
    encode(pcm) {
      if (freed) throw new Error('the Opus encoder was freed');
      const samples = toFloat32(pcm, spec.format);
      inFrames += samples.length / channels;
      const converted = resampler === undefined ? samples : resampler.process(samples);
      // Never more than the exact total: what the resampler lags is drained at the end.
      const usable = Math.min(Math.floor(converted.length / channels), owed() - outFrames);
      outFrames += usable;
      push(converted.subarray(0, usable * channels));
      return take();
    },
    finish() {
      if (freed) throw new Error('the Opus encoder was freed');
      const target = owed();
      if (resampler !== undefined) {
        const zeros = new Float32Array(256 * channels);
        // The filter delay is far under 64 rounds of 256 frames; the bound stops a runaway loop.
        for (let round = 0; round < 64 && outFrames < target; round++) {
          const converted = resampler.process(zeros);
          const usable = Math.min(Math.floor(converted.length / channels), target - outFrames);
          outFrames += usable;
          push(converted.subarray(0, usable * channels));
        }
      }
      if (outFrames < target) {
        push(new Float32Array((target - outFrames) * channels));
        outFrames = target;
      }
      // Encode the lookahead's worth of silence and pad the last frame, so that every input
      // sample comes out of the decoder; the last page's granule then cuts what is beyond the
      // audio (RFC 7845 §4.5). At least one packet goes on that page, which ends the stream.
      push(new Float32Array(opus.getLookahead() * channels));
      push(new Float32Array(frame - heldLength));
      ogg.endGranule(BigInt(preSkip) + BigInt(Math.round(outFrames * to48k)));
      return take(ogg.flush(true));
    },
    headerPatch: () => undefined,
    free() {
      if (freed) return;
      freed = true;
      freeParts();
    },
  };
}
