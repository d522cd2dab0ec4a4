/**
 * The sample rates and bit rates of MP3 and Opus (no codec loaded here, so the planner can check
 * flags cheaply): ISO/IEC 11172-3 and 13818-3 for MP3 (with LAME's limits), RFC 6716 for Opus.
 */
import type { AudioSpec } from '../../dsp/spec.js';

/** Sample rates of MPEG-1, 2 and 2.5 Layer III, in Hz. */
export const MP3_SAMPLE_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;
/** One of {@link MP3_SAMPLE_RATES}. */
export type Mp3Rate = (typeof MP3_SAMPLE_RATES)[number];

/** Constant bit rates LAME takes through wasm-media-encoders, in kbit/s. */
export const MP3_BITRATES = [8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] as const;
/** One of {@link MP3_BITRATES}. */
export type Mp3Bitrate = (typeof MP3_BITRATES)[number];

/** The MP3 rate written for an input of `sampleRate` Hz: the same, or the next above (≤ 48000). */
export function mp3OutputRate(sampleRate: number): Mp3Rate {
  return MP3_SAMPLE_RATES.find((r) => r >= sampleRate) ?? 48000;
}

/**
 * Bit rates (kbit/s) MP3 allows at an output rate: MPEG-1 (32–48 kHz) 32…320, MPEG-2
 * (16–24 kHz) 8…160, MPEG-2.5 (8–12 kHz) 8…64 (LAME's limit), among {@link MP3_BITRATES}.
 */
export function mp3BitratesAt(outputRate: number): readonly number[] {
  const [lo, hi] = outputRate >= 32000 ? [32, 320] : outputRate >= 16000 ? [8, 160] : [8, 64];
  return MP3_BITRATES.filter((b) => b >= lo && b <= hi);
}

/** The MP3 speech default: 48 kbit/s per channel (48 mono, 96 stereo), within what the rate allows. */
export function defaultMp3Bitrate(spec: AudioSpec): number {
  const allowed = mp3BitratesAt(mp3OutputRate(spec.sampleRate));
  const wanted = 48 * spec.channels;
  return allowed.filter((b) => b <= wanted).at(-1) ?? allowed[0]!;
}

/** Sample rates libopus encodes at, in Hz. */
export const OPUS_SAMPLE_RATES = [8000, 12000, 16000, 24000, 48000] as const;
/** One of {@link OPUS_SAMPLE_RATES}. */
export type OpusRate = (typeof OPUS_SAMPLE_RATES)[number];

/** The rate audio of `sampleRate` Hz is encoded at: the same, or the next Opus rate above (≤ 48 kHz). */
export function opusRateFor(sampleRate: number): OpusRate {
  return OPUS_SAMPLE_RATES.find((r) => r >= sampleRate) ?? 48000;
}

/** Opus bit rates accepted by `--bitrate`, in kbit/s (libopus: 6 … 510 kbit/s). */
export const OPUS_BITRATE_RANGE = [6, 510] as const;

/** The Opus speech default: 24 kbit/s mono, 32 kbit/s stereo. */
export function defaultOpusBitrate(spec: AudioSpec): number {
  return spec.channels === 1 ? 24 : 32;
}
