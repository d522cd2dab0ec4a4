/**
 * The output containers of docs/cli.md §2 "Containers": which names they go by, what each can
 * hold, their bit rates, and the encoder behind each (loaded only when used, so a WAV run never
 * loads LAME, libFLAC or libopus).
 */
import type { AudioSpec } from '../../dsp/spec.js';
import { TtsError } from '../../errors.js';
import type { AudioEncoder } from './encoder.js';
import { OPUS_BITRATE_RANGE, defaultMp3Bitrate, defaultOpusBitrate, mp3BitratesAt, mp3OutputRate } from './rates.js';

/** Every container tts writes: `raw` = the spec's samples with no header. */
export const CONTAINERS = ['wav', 'raw', 'flac', 'mp3', 'opus'] as const;
/** One of {@link CONTAINERS}. */
export type Container = (typeof CONTAINERS)[number];

/** File name extensions (lower case, with the dot) and the container each gives. */
export const EXTENSIONS: Readonly<Record<string, Container>> = {
  '.wav': 'wav',
  '.raw': 'raw',
  '.pcm': 'raw',
  '.flac': 'flac',
  '.mp3': 'mp3',
  '.ogg': 'opus',
  '.opus': 'opus',
};

/** True for the containers whose bytes an encoder makes (not the spec's samples themselves). */
export function isEncoded(container: Container): container is 'flac' | 'mp3' | 'opus' {
  return container === 'flac' || container === 'mp3' || container === 'opus';
}

/**
 * The container a file name asks for, by its extension (case-insensitive).
 * @returns undefined when the extension is none of {@link EXTENSIONS}.
 */
export function containerOfPath(path: string): Container | undefined {
  const m = /(\.[^./\\]+)$/.exec(path);
  return m === null ? undefined : EXTENSIONS[m[1]!.toLowerCase()];
}

/** "`.wav`, `.raw`, …" for messages. */
export function extensionList(): string {
  return Object.keys(EXTENSIONS).join(', ');
}

/**
 * The bit rate, in kbit/s, a container is written at: `requested` (`--bitrate`) or the speech
 * default (MP3 48 kbit/s per channel, Opus 24 mono / 32 stereo).
 * @returns undefined for the containers that have no bit rate to choose (wav, raw, flac).
 * @throws TtsError `usage` (exit 2) when a bit rate is given for one of those, or is outside
 *   what the container allows at this rate (the message lists the allowed values).
 */
export function bitrateFor(container: Container, spec: AudioSpec, requested: number | undefined): number | undefined {
  if (container === 'mp3') {
    if (requested === undefined) return defaultMp3Bitrate(spec);
    const rate = mp3OutputRate(spec.sampleRate);
    const allowed = mp3BitratesAt(rate);
    if (!allowed.includes(requested)) {
      throw new TtsError('usage', `--bitrate ${requested} is not an MP3 bit rate at ${rate} Hz`, { hint: `use one of ${allowed.join(', ')} (kbit/s)` });
    }
    return requested;
  }
  if (container === 'opus') {
    if (requested === undefined) return defaultOpusBitrate(spec);
    const [lo, hi] = OPUS_BITRATE_RANGE;
    if (requested < lo || requested > hi) throw new TtsError('usage', `--bitrate ${requested} is outside Opus's ${lo}–${hi} kbit/s`, { hint: 'speech sounds well from 16 kbit/s; the default is 24 (mono)' });
    return requested;
  }
  if (requested !== undefined) {
    throw new TtsError('usage', `--bitrate applies to MP3 and Opus only, not to ${container.toUpperCase()}`, { hint: 'drop --bitrate, or write .mp3 / .opus (--container mp3|opus)' });
  }
  return undefined;
}

/**
 * Checks that `container` can hold audio of `spec`.
 * @throws TtsError `usage` (exit 2): MP3 and Opus hold 1 or 2 channels, FLAC 1 to 8.
 */
export function assertContainerFits(container: Container, spec: AudioSpec): void {
  if ((container === 'mp3' || container === 'opus') && spec.channels > 2) {
    throw new TtsError('usage', `${container === 'mp3' ? 'MP3' : 'Opus'} holds 1 or 2 channels, not ${spec.channels}`, { hint: 'use -c 1 or -c 2, or write FLAC or WAV' });
  }
  if (container === 'flac' && spec.channels > 8) {
    throw new TtsError('usage', `FLAC holds at most 8 channels, not ${spec.channels}`, { hint: 'write WAV instead' });
  }
}

/**
 * Loads and starts the encoder of an encoded container for PCM of `spec`.
 * @param bitrateKbps from {@link bitrateFor} (ignored by FLAC).
 * @throws TtsError `internal` (exit 1) when the codec cannot start.
 */
export async function openEncoder(container: 'flac' | 'mp3' | 'opus', spec: AudioSpec, bitrateKbps: number | undefined): Promise<AudioEncoder> {
  try {
    switch (container) {
      case 'mp3': {
        const { openMp3Encoder } = await import('./mp3.js');
        return await openMp3Encoder(spec, bitrateKbps ?? defaultMp3Bitrate(spec));
      }
      case 'flac': {
        const { openFlacEncoder } = await import('./flac.js');
        return await openFlacEncoder(spec);
      }
      case 'opus': {
        const { openOpusEncoder } = await import('./opus.js');
        return await openOpusEncoder(spec, bitrateKbps ?? defaultOpusBitrate(spec));
      }
    }
  } catch (cause) {
    throw new TtsError('internal', `cannot start the ${container.toUpperCase()} encoder: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
