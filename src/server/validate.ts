/**
 * Validation of synthesis requests for the built-in service (docs/protocol.md §2.1, §7; docs/cli.md §4):
 * the service is definite — every refusal names one code of docs/protocol.md §7.
 */
import type { ServiceErrorCode } from '../errors.js';
import { quoteInput } from '../cli/escape.js';
import { AUDIO_FORMATS, LANGUAGES, REALTIME_SAMPLE_RATES, type AudioFormat, type Language } from '../protocol/types.js';
import { isSpeakable } from '../protocol/speakable.js';
import { DEFAULT_VOICE, voiceFromWire, voiceToWire } from '../protocol/voices.js';
import { engineVoices, findVoice } from '../engine/catalogue.js';


/** A request the engine can run. */
export interface ValidRequest {
  text: string;
  voice: string;
  format: AudioFormat;
  language: Language;
  /**
   * `word_timings: true` (docs/protocol.md §2.1, §2.4, a built-in extension): send the words'
   * timings with the end of the audio. False when absent, null or false.
   */
  wordTimings: boolean;
}

/** A refusal: a docs/protocol.md §7 code and a message for people. */
export interface Refusal {
  code: ServiceErrorCode;
  message: string;
}

/** Fields as they are named on one channel. */
export interface FieldNames {
  text: string;
  voice: string;
  format: string;
  language: string;
  /** The built-in extension asking for word timings; undefined on a channel without it (OpenAI's). */
  wordTimings?: string | undefined;
}

/** Name of the request field asking for word timings (docs/protocol.md §2.1, §2.4; built-in extension). */
export const WORD_TIMINGS_FIELD = 'word_timings';

/** Field names of the SSE body (docs/protocol.md §2.1). */
export const SSE_FIELDS: FieldNames = { text: 'input', voice: 'voice', format: 'response_format', language: 'language', wordTimings: WORD_TIMINGS_FIELD };

/**
 * Checks the common fields of a synthesis request. Only the text is required; defaults are
 * `ja-man-1`, `pcm16`, the voice's language and no word timings (docs/cli.md §4); a
 * `word_timings` (where the channel has it) that is not a boolean is `invalid_parameters`.
 * Other fields are ignored.
 * @param body the parsed JSON (anything).
 * @param names how the fields are spelled on this channel.
 * @param maxChars longest accepted text, in characters (code points).
 * @param voiceFromWire turns the channel's voice spelling into a hyphenated id.
 * @returns the request, or the refusal to send.
 */
export function validateSynthesis(
  body: unknown,
  names: FieldNames,
  maxChars: number,
  voiceFromWire: (v: string) => string = (v) => v,
): ValidRequest | Refusal {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { code: 'bad_request', message: 'the request body must be a JSON object' };
  }
  const obj = body as Record<string, unknown>;
  const input = obj[names.text];
  if (input !== undefined && input !== null && typeof input !== 'string') {
    return { code: 'invalid_parameters', message: `\`${names.text}\` must be a string` };
  }
  if (typeof input !== 'string' || input.trim() === '') {
    return { code: 'text_string_required', message: `\`${names.text}\` must be non-empty text` };
  }
  if (!input.isWellFormed()) {
    return { code: 'text_string_required', message: `\`${names.text}\` is not valid Unicode text (lone surrogate)` };
  }
  if (!isSpeakable(input)) {
    return { code: 'text_string_required', message: `\`${names.text}\` has nothing to speak (only punctuation, emoji, invisible or control characters)` };
  }
  const length = [...input].length;
  if (length > maxChars) {
    return { code: 'max_character_length_exceeded', message: `\`${names.text}\` has ${length} characters; the limit is ${maxChars}` };
  }
  const voiceRaw = optionalString(obj, names.voice);
  if (voiceRaw === false) return { code: 'invalid_parameters', message: `\`${names.voice}\` must be a string` };
  const voiceId = voiceRaw === undefined ? DEFAULT_VOICE : voiceFromWire(voiceRaw);
  const voice = findVoice(voiceId);
  if (voice === undefined) return { code: 'voice_not_found', message: `no voice \`${quoteInput(voiceRaw ?? '')}\`; voices: ja-man-1, ja-woman-1, en-man-1, en-woman-1` };
  const formatRaw = optionalString(obj, names.format);
  if (formatRaw === false) return { code: 'invalid_parameters', message: `\`${names.format}\` must be a string` };
  if (formatRaw !== undefined && !(AUDIO_FORMATS as readonly string[]).includes(formatRaw)) {
    return { code: 'audio_format_not_found', message: `no audio format \`${quoteInput(formatRaw)}\`; formats: ${AUDIO_FORMATS.join(', ')}` };
  }
  const languageRaw = optionalString(obj, names.language);
  if (languageRaw === false) return { code: 'invalid_parameters', message: `\`${names.language}\` must be a string` };
  if (languageRaw !== undefined && !(LANGUAGES as readonly string[]).includes(languageRaw)) {
    return { code: 'language_not_found', message: `no language \`${quoteInput(languageRaw)}\`; languages: ${LANGUAGES.join(', ')}` };
  }
  const wordTimings = names.wordTimings === undefined ? undefined : obj[names.wordTimings];
  if (wordTimings !== undefined && wordTimings !== null && typeof wordTimings !== 'boolean') {
    return { code: 'invalid_parameters', message: `\`${names.wordTimings}\` must be true or false` };
  }
  return {
    text: input,
    voice: voice.id,
    format: (formatRaw ?? 'pcm16') as AudioFormat,
    language: (languageRaw ?? voice.language) as Language,
    wordTimings: wordTimings === true,
  };
}

/** True when `v` is a refusal rather than a request. */
export function isRefusal(v: ValidRequest | Refusal): v is Refusal {
  return 'code' in v;
}

/** The string at `key`, undefined when absent or null, false when of another type. */
function optionalString(obj: Record<string, unknown>, key: string): string | undefined | false {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : false;
}

/** Sample rate of a WebSocket session that names none, in Hz (docs/cli.md §4). */
export const REALTIME_DEFAULT_SAMPLE_RATE = 24000;

/** Field names of the WebSocket session (docs/protocol.md §2.4). */
export const REALTIME_FIELDS: FieldNames = { text: 'input_text', voice: 'preset_voice', format: 'output_audio_format', language: 'language', wordTimings: WORD_TIMINGS_FIELD };

/** A WebSocket session the engine can run: the common fields plus rate and channels. */
export interface ValidRealtimeRequest extends ValidRequest {
  /** Output sample rate in Hz, one of REALTIME_SAMPLE_RATES. */
  sampleRate: number;
  /** Output channels, 1 or 2. */
  channels: number;
}

/**
 * Checks the `session` of a `tts_session.update` (docs/protocol.md §2.4) with the same codes as the SSE
 * body, plus the WebSocket's own values (docs/cli.md §4): `output_audio_sample_rate` one of
 * REALTIME_SAMPLE_RATES (default 24000), `output_audio_number_of_channels` 1 or 2 (default 1);
 * anything else, or a non-integer, is `invalid_parameters`. Voices are written with underscores
 * (`ja_man_1`); a hyphenated id is accepted too.
 * @param session the `session` member of the parsed message (anything).
 * @param maxChars longest accepted text, in characters (code points).
 */
export function validateRealtimeSession(session: unknown, maxChars: number): ValidRealtimeRequest | Refusal {
  if (typeof session !== 'object' || session === null || Array.isArray(session)) {
    return { code: 'bad_request', message: '`session` must be a JSON object' };
  }
  const common = validateSynthesis(session, REALTIME_FIELDS, maxChars, voiceFromWire);
  if (isRefusal(common)) {
    if (common.code === 'voice_not_found') {
      const raw = (session as Record<string, unknown>)[REALTIME_FIELDS.voice];
      return { code: common.code, message: `no voice \`${String(raw)}\`; voices: ${engineVoices().map((v) => voiceToWire(v.id)).join(', ')}` };
    }
    return common;
  }
  const obj = session as Record<string, unknown>;
  const rate = obj['output_audio_sample_rate'] ?? REALTIME_DEFAULT_SAMPLE_RATE;
  if (typeof rate !== 'number' || !(REALTIME_SAMPLE_RATES as readonly number[]).includes(rate)) {
    return {
      code: 'invalid_parameters',
      message: `\`output_audio_sample_rate\` must be one of ${REALTIME_SAMPLE_RATES.join(', ')} (an integer, in Hz)`,
    };
  }
  const channels = obj['output_audio_number_of_channels'] ?? 1;
  if (channels !== 1 && channels !== 2) {
    return { code: 'invalid_parameters', message: '`output_audio_number_of_channels` must be 1 or 2' };
  }
  return { ...common, sampleRate: rate, channels };
}
