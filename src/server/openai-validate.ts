/**
 * Validation of an OpenAI speech request (docs/protocol.md §10.1): the body of
 * `POST /v1/audio/speech`. The text checks are the native route's (validate.ts); the refusals
 * are in OpenAI's shape (openai-errors.ts).
 */
import type { Language } from '../protocol/types.js';
import { quoteInput } from '../cli/escape.js';
import { engineVoices } from '../engine/catalogue.js';
import { invalidRequest, type OpenAiError } from './openai-errors.js';
import { mapOpenAiVoice, OPENAI_VOICES } from './openai-voices.js';
import { isRefusal, SSE_FIELDS, validateSynthesis } from './validate.js';

/** `response_format` values the route encodes (docs/protocol.md §10.1). */
export const OPENAI_FORMATS = ['mp3', 'opus', 'flac', 'wav', 'pcm'] as const;
/** One of {@link OPENAI_FORMATS}. */
export type OpenAiFormat = (typeof OPENAI_FORMATS)[number];

/** `stream_format` values (docs/protocol.md §10.1). */
export const OPENAI_STREAM_FORMATS = ['audio', 'sse'] as const;

/** Slowest and fastest `speed` OpenAI allows (its API reference: 0.25 to 4.0). */
export const OPENAI_SPEED_RANGE = [0.25, 4] as const;

/** A request the route can run. */
export interface OpenAiSpeechRequest {
  /** As sent, for the access log (any string). */
  model: string;
  text: string;
  /** Our preset voice id (hyphenated), after the mapping of openai-voices.ts. */
  voice: string;
  language: Language;
  format: OpenAiFormat;
  /** Tempo factor, pitch kept; 1 = unchanged. */
  speed: number;
  stream: 'audio' | 'sse';
  /** Whether `instructions` was sent (it is accepted and ignored). */
  instructions: boolean;
}

/**
 * Checks an OpenAI speech body. Required: `model` (any non-empty string), `input`, `voice` (an
 * OpenAI voice name or one of our ids). Defaults: `response_format` mp3, `speed` 1,
 * `stream_format` audio (OpenAI's). Unknown fields are ignored.
 * @param body the parsed JSON (anything).
 * @param maxChars longest accepted input, in characters (code points; `--max-chars`).
 * @returns the request, or a 400 refusal naming the field (`param`).
 */
export function validateOpenAiSpeech(body: unknown, maxChars: number): OpenAiSpeechRequest | OpenAiError {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalidRequest('the request body must be a JSON object', null, null);
  const obj = body as Record<string, unknown>;
  const model = obj['model'];
  if (model === undefined || model === null) return invalidRequest("missing required parameter: 'model'", 'model', 'missing_required_parameter');
  if (typeof model !== 'string' || model === '') return invalidRequest('`model` must be a non-empty string', 'model');
  const input = obj['input'];
  if (input === undefined || input === null) return invalidRequest("missing required parameter: 'input'", 'input', 'missing_required_parameter');
  const voiceRaw = obj['voice'];
  if (voiceRaw === undefined || voiceRaw === null) return invalidRequest("missing required parameter: 'voice'", 'voice', 'missing_required_parameter');
  if (typeof voiceRaw !== 'string') return invalidRequest('`voice` must be a string', 'voice');
  const mapped = typeof input === 'string' ? mapOpenAiVoice(voiceRaw, input) : undefined;
  const common = validateSynthesis({ input, voice: mapped ?? voiceRaw }, SSE_FIELDS, maxChars);
  if (isRefusal(common)) {
    switch (common.code) {
      case 'max_character_length_exceeded':
        return invalidRequest(common.message, 'input', 'string_above_max_length');
      case 'voice_not_found':
        return invalidRequest(`no voice \`${quoteInput(voiceRaw)}\`; voices: ${[...Object.keys(OPENAI_VOICES), ...engineVoices().map((v) => v.id)].join(', ')}`, 'voice');
      default:
        return invalidRequest(common.message, 'input');
    }
  }
  const format = obj['response_format'] ?? 'mp3';
  if (format === 'aac') {
    return invalidRequest('`response_format` aac is not offered: no AAC encoder under a licence compatible with GPL-3.0 is available; use mp3, opus, flac, wav or pcm', 'response_format', 'unsupported_value');
  }
  if (typeof format !== 'string' || !(OPENAI_FORMATS as readonly string[]).includes(format)) {
    return invalidRequest(`\`response_format\` must be one of ${OPENAI_FORMATS.join(', ')}`, 'response_format');
  }
  const speed = obj['speed'] ?? 1;
  const [slowest, fastest] = OPENAI_SPEED_RANGE;
  if (typeof speed !== 'number' || !(speed >= slowest && speed <= fastest)) {
    return invalidRequest(`\`speed\` must be a number from ${slowest} to ${fastest}`, 'speed');
  }
  const stream = obj['stream_format'] ?? 'audio';
  if (stream !== 'audio' && stream !== 'sse') return invalidRequest('`stream_format` must be `audio` or `sse`', 'stream_format');
  const instructions = obj['instructions'];
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') return invalidRequest('`instructions` must be a string', 'instructions');
  return {
    model,
    text: common.text,
    voice: common.voice,
    language: common.language,
    format: format as OpenAiFormat,
    speed,
    stream,
    instructions: typeof instructions === 'string',
  };
}
