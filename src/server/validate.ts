/**
 * Validation of synthesis requests for the built-in service (SERVICE.md §2.1, §7; DESIGN.md §4):
 * the service is definite — every refusal names one code of SERVICE.md §7.
 */
import type { ServiceErrorCode } from '../protocol/codes.js';
import { AUDIO_FORMATS, LANGUAGES, type AudioFormat, type Language } from '../protocol/types.js';
import { findVoice, DEFAULT_VOICE } from '../protocol/voices.js';

/** A request the engine can run. */
export interface ValidRequest {
  text: string;
  voice: string;
  format: AudioFormat;
  language: Language;
}

/** A refusal: a SERVICE.md §7 code and a message for people. */
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
}

/** Field names of the SSE body (SERVICE.md §2.1). */
export const SSE_FIELDS: FieldNames = { text: 'input', voice: 'voice', format: 'response_format', language: 'language' };

/**
 * Checks the common fields of a synthesis request. Only the text is required; defaults are
 * `ja-man-1`, `pcm16` and the voice's language (DESIGN.md §4).
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
  const length = [...input].length;
  if (length > maxChars) {
    return { code: 'max_character_length_exceeded', message: `\`${names.text}\` has ${length} characters; the limit is ${maxChars}` };
  }
  const voiceRaw = optionalString(obj, names.voice);
  if (voiceRaw === false) return { code: 'invalid_parameters', message: `\`${names.voice}\` must be a string` };
  const voiceId = voiceRaw === undefined ? DEFAULT_VOICE : voiceFromWire(voiceRaw);
  const voice = findVoice(voiceId);
  if (voice === undefined) return { code: 'voice_not_found', message: `no voice \`${voiceRaw ?? ''}\`; voices: ja-man-1, ja-woman-1, en-man-1, en-woman-1` };
  const formatRaw = optionalString(obj, names.format);
  if (formatRaw === false) return { code: 'invalid_parameters', message: `\`${names.format}\` must be a string` };
  if (formatRaw !== undefined && !(AUDIO_FORMATS as readonly string[]).includes(formatRaw)) {
    return { code: 'audio_format_not_found', message: `no audio format \`${formatRaw}\`; formats: ${AUDIO_FORMATS.join(', ')}` };
  }
  const languageRaw = optionalString(obj, names.language);
  if (languageRaw === false) return { code: 'invalid_parameters', message: `\`${names.language}\` must be a string` };
  if (languageRaw !== undefined && !(LANGUAGES as readonly string[]).includes(languageRaw)) {
    return { code: 'language_not_found', message: `no language \`${languageRaw}\`; languages: ${LANGUAGES.join(', ')}` };
  }
  return {
    text: input,
    voice: voice.id,
    format: (formatRaw ?? 'pcm16') as AudioFormat,
    language: (languageRaw ?? voice.language) as Language,
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
