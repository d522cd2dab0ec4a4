/**
 * Wire types of the speech service (docs/protocol.md §2, §6) and the values our client and
 * built-in service agree on (docs/cli.md §4).
 */
import type { WordTiming } from './words.js';

/** Path of the SSE endpoint, appended to the HTTP base URL (docs/protocol.md §4.1). */
export const SSE_PATH = '/v1/tts/sse';

/** Path of the WebSocket endpoint, appended to the WebSocket base URL (docs/protocol.md §4.2). */
export const REALTIME_PATH = '/v1/realtime_tts';

/** Audio encodings (docs/protocol.md §1.4, docs/cli.md §2): pcm16 = s16le, float32 = f32le, mulaw = G.711 µ-law, 8 bits. */
export const AUDIO_FORMATS = ['pcm16', 'float32', 'mulaw'] as const;
/** One of {@link AUDIO_FORMATS}. */
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

/** Languages the service speaks (docs/protocol.md §1.3). */
export const LANGUAGES = ['ja', 'en'] as const;
/** One of {@link LANGUAGES}. */
export type Language = (typeof LANGUAGES)[number];

/** Sample rate of the SSE channel, in Hz: the built-in service always streams 24000 Hz mono (docs/cli.md §4). */
export const SSE_SAMPLE_RATE = 24000;

/**
 * How the built-in service's `engine` field (the `done` extension of docs/protocol.md §2.3)
 * begins when a fallback spoke: `fallback:<engines>`, e.g. `fallback:espeak`.
 */
export const FALLBACK_ENGINE_PREFIX = 'fallback:';

/** Sample rates the built-in WebSocket service accepts, in Hz (docs/cli.md §4). */
export const REALTIME_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

/** Body of `POST /v1/tts/sse` (docs/protocol.md §2.1). Our client always sends all four fields (docs/cli.md §4). */
export interface SseRequestBody {
  input: string;
  voice: string;
  response_format: AudioFormat;
  language: Language;
  /**
   * Built-in extension (docs/protocol.md §2.1): ask for the words' timings in `done`. Sent only
   * when the run needs word timings (docs/cli.md §12.1), never `false`.
   */
  word_timings?: true;
}

/** Data of an SSE `delta` event (docs/protocol.md §2.2): `delta` is base64 audio bytes. */
export interface SseDeltaData {
  type: 'speech.audio.delta';
  item_id: string;
  delta: string;
}

/** Data of an SSE `done` event (docs/protocol.md §2.3). */
export interface SseDoneData {
  type: 'speech.audio.done';
  item_id: string;
  /**
   * Built-in extension (docs/protocol.md §2.3): who spoke — the voice's own engines, or a
   * fallback. A client may ignore it.
   */
  engine?: string;
  /**
   * Built-in extension (docs/protocol.md §2.3): where each word of `input` is in the audio sent
   * (frames at 24000 Hz, UTF-16 offsets of `input`), when the request asked (`word_timings`). A
   * client may ignore it.
   */
  words?: WordTiming[];
}

/** Error body the built-in service sends, over HTTP and in `error` events (docs/cli.md §4). */
export interface ErrorBody {
  error: { code: string; message: string };
}

/** Data of an SSE `error` event as the built-in service sends it (docs/cli.md §4). */
export interface SseErrorData extends ErrorBody {
  type: 'error';
}

/** Session fields of `tts_session.update` (docs/protocol.md §2.4); `preset_voice` uses underscores (`ja_man_1`). */
export interface RealtimeSession {
  input_text: string;
  preset_voice: string;
  output_audio_format: AudioFormat;
  output_audio_sample_rate: number;
  output_audio_number_of_channels: number;
  language: Language;
  /** Built-in extension (docs/protocol.md §2.4): as the SSE body's `word_timings`. */
  word_timings?: true;
}

/** Client message `tts_session.update` (docs/protocol.md §2.4, §4.2). */
export interface RealtimeSessionUpdate {
  type: 'tts_session.update';
  session: RealtimeSession;
}
