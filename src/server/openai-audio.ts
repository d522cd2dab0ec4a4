/**
 * The audio of the OpenAI route (docs/protocol.md §10.1): the engine's 24 000 Hz mono pcm16 goes
 * through our tempo stage (src/dsp/effects.ts) when `speed` is not 1, then into the container of
 * `response_format` — our own encoders (src/audio/containers), chunk by chunk, so the first bytes
 * leave while the text is still being synthesized.
 */
import { openEncoder } from '../audio/containers/registry.js';
import { defaultMp3Bitrate, defaultOpusBitrate } from '../audio/containers/rates.js';
import { wavHeader } from '../audio/wav.js';
import { EffectChain } from '../dsp/effects.js';
import type { AudioSpec } from '../dsp/spec.js';
import { SSE_SAMPLE_RATE } from '../protocol/types.js';
import { OPENAI_SPEED_RANGE, type OpenAiFormat } from './openai-validate.js';

/** What the engine makes for the route: pcm16, 24 000 Hz, mono (`pcm` is exactly these bytes). */
export const OPENAI_PCM_SPEC: AudioSpec = { format: 'pcm16', sampleRate: SSE_SAMPLE_RATE, channels: 1 };

/** `Content-Type` of each `response_format` on `stream_format: audio`. */
export const OPENAI_CONTENT_TYPES: Readonly<Record<OpenAiFormat, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg; codecs=opus',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm; rate=24000; channels=1; format=s16le',
};

/** One response's audio: engine pcm in, container bytes out. Calls are synchronous. */
export interface SpeechAudio {
  /**
   * Takes a chunk of the engine's pcm16 (whole samples).
   * @returns the container bytes ready now (possibly empty).
   */
  push(pcm: Buffer): Buffer;
  /** Ends the stream: what the tempo stage and the codec still hold, end-of-stream marks included. */
  end(): Buffer;
  /** Frees the tempo stage and the codec; idempotent. */
  free(): void;
}

/**
 * Opens the tempo stage and the encoder of one response (their WebAssembly is loaded now).
 * WAV is streamed with the RIFF and data sizes 0xFFFFFFFF (unknown length, as ffmpeg and
 * OpenAI write a streamed WAV); FLAC's STREAMINFO keeps 0 total samples and no MD5 (allowed
 * by RFC 9639 §8.2 for a stream whose length is not known in advance).
 * @param speed tempo factor within {@link OPENAI_SPEED_RANGE}; 1 = untouched.
 * @throws RangeError for a speed outside it; TtsError `internal` when a codec cannot start.
 */
export async function openSpeechAudio(format: OpenAiFormat, speed: number): Promise<SpeechAudio> {
  const spec = OPENAI_PCM_SPEC;
  const effects = speed === 1 ? undefined : await EffectChain.create(spec, { speed, volume: 1 }, OPENAI_SPEED_RANGE);
  let encode: (pcm: Buffer) => Buffer = (pcm) => pcm;
  let finish: () => Buffer = () => Buffer.alloc(0);
  let freeCodec: () => void = () => {};
  if (format === 'wav') {
    let header: Buffer | undefined = wavHeader(spec);
    encode = (pcm) => {
      if (header === undefined) return pcm;
      const first = Buffer.concat([header, pcm]);
      header = undefined;
      return first;
    };
    finish = () => (header === undefined ? Buffer.alloc(0) : header);
  } else if (format !== 'pcm') {
    const container = format;
    let encoder;
    try {
      encoder = await openEncoder(container, spec, container === 'mp3' ? defaultMp3Bitrate(spec) : container === 'opus' ? defaultOpusBitrate(spec) : undefined);
    } catch (error) {
      effects?.destroy();
      throw error;
    }
    const codec = encoder;
    encode = (pcm) => (pcm.length === 0 ? pcm : codec.encode(pcm));
    finish = () => codec.finish();
    freeCodec = () => codec.free();
  }
  let freed = false;
  return {
    push: (pcm) => encode(effects === undefined ? pcm : effects.push(pcm)),
    end: () => {
      const tail = effects === undefined ? Buffer.alloc(0) : effects.endPiece();
      const last = encode(tail);
      const rest = finish();
      return last.length === 0 ? rest : Buffer.concat([last, rest]);
    },
    free: () => {
      if (freed) return;
      freed = true;
      effects?.destroy();
      freeCodec();
    },
  };
}
