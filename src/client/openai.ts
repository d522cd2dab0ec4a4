/**
 * The OpenAI dialect's client (docs/protocol.md §10; docs/cli.md §1 `--api openai`):
 * `POST {base}/v1/audio/speech` with `response_format: "pcm"` (24 000 Hz mono s16le, which is our
 * pcm16) and `stream_format: "sse"`; a server that refuses `stream_format` (400 naming it) is asked
 * again with `"audio"`, and a server that ignores it and answers raw pcm is read as such. It
 * yields the same `AsyncIterable<AudioChunk>` as the native channel (client/sse.ts, whose
 * transport it shares: the iterator owns cleanup, the queue bounds what is read ahead, the
 * --timeout clock, no redirects, key safety).
 */
import type { EventSourceMessage } from 'eventsource-parser';
import { isServiceErrorCode, TtsError } from '../errors.js';
import { decodeBase64, isRecord, malformed } from '../wire/delta.js';
import { parseErrorPayload } from './error-body.js';
import { errorFromEvent, errorFromResponse } from './service-error.js';
import { streamSse, type SseDialect, type SseStreamOptions } from './sse.js';
import type { SseOutcome } from './sse-events.js';
import type { AudioChunk } from '../wire/delta.js';

/** The model asked for when none is configured (docs/cli.md §1 `--model`). */
export const DEFAULT_OPENAI_MODEL = 'tts-1';

/** The body of one OpenAI speech request, as the client sends it. */
export interface OpenAiSpeechBody extends Record<string, unknown> {
  model: string;
  input: string;
  /** Passed through as given (`alloy`, `en-man-1`...). */
  voice: string;
  response_format: 'pcm';
  stream_format: 'sse' | 'audio';
}

/** What one request needs: the transport's options without the body and dialect. */
export interface OpenAiStreamOptions extends Omit<SseStreamOptions, 'body' | 'dialect'> {
  model: string;
  input: string;
  voice: string;
  /**
   * Shared by a run's requests: set to false once the server refused `stream_format: "sse"`, so
   * later pieces ask for `"audio"` at once.
   */
  sse: { supported: boolean };
  /**
   * The command that lists this service's voices, named by `voice_not_found`'s hint (e.g.
   * `tts voices --api openai --base-url http://host:8880`); default {@link OPENAI_VOICES_COMMAND}.
   */
  voicesCommand?: string | undefined;
}

/** The command that lists an OpenAI-compatible service's voices when nothing more is known (docs/cli.md §1 `tts voices --api openai`). */
export const OPENAI_VOICES_COMMAND = 'tts voices --api openai';

/**
 * Reads one message of an OpenAI speech event stream (docs/protocol.md §10.1): `data.type`
 * `speech.audio.delta` with base64 `audio`, `speech.audio.done`, or an error; anything else is
 * ignored. A delta without valid base64 `audio` is a `protocol_error`, never dropped audio.
 * `voicesCommand` is named by a `voice_not_found` error's hint (service-error.ts hintFor).
 */
export function interpretOpenAiEvent(event: EventSourceMessage, voicesCommand: string = OPENAI_VOICES_COMMAND): SseOutcome {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    data = undefined;
  }
  const named = event.event === undefined || event.event === '' || event.event === 'message' ? undefined : event.event;
  const type = isRecord(data) && typeof data['type'] === 'string' ? data['type'] : named;
  if (type === 'speech.audio.delta') {
    const audio = isRecord(data) ? data['audio'] : undefined;
    if (typeof audio !== 'string') return { kind: 'error', error: malformed('a speech.audio.delta event without a string `audio`') };
    const bytes = decodeBase64(audio);
    if (bytes === undefined) return { kind: 'error', error: malformed('a speech.audio.delta event whose `audio` is not valid base64') };
    return { kind: 'audio', chunk: { data: bytes, itemId: undefined } };
  }
  if (type === 'speech.audio.done') return { kind: 'done' };
  if (type !== undefined && type.includes('error')) return { kind: 'error', error: errorFromEvent(event.data, 'SSE', voicesCommand) };
  return { kind: 'ignored', name: type ?? '(unnamed)' };
}

/** OpenAI's codes → ours (docs/protocol.md §7, §10.5), so the exit codes of docs/cli.md §3 hold. */
const CODES: Readonly<Record<string, string>> = {
  insufficient_quota: 'quota_exceeded',
  string_above_max_length: 'max_character_length_exceeded',
};

/**
 * The error of an OpenAI-shaped refusal (`{"error":{"message","type","param","code"}}`), as the
 * native {@link errorFromResponse} makes it, with OpenAI's codes translated: `insufficient_quota`
 * → `quota_exceeded`, `string_above_max_length` → `max_character_length_exceeded`, a 400 about
 * `voice` → `voice_not_found`, whose hint names `voicesCommand`; a 3xx is never followed (the key
 * would go along).
 */
export function openAiRefusal(status: number, headers: Record<string, string | string[] | undefined>, body: string, voicesCommand: string = OPENAI_VOICES_COMMAND): TtsError {
  if (status < 400) return errorFromResponse(status, headers, body);
  const payload = parseErrorPayload(body);
  let param: unknown;
  try {
    const json: unknown = JSON.parse(body);
    param = isRecord(json) && isRecord(json['error']) ? json['error']['param'] : undefined;
  } catch {
    param = undefined;
  }
  let code = payload.code === undefined ? undefined : (CODES[payload.code] ?? payload.code);
  if (status === 400 && param === 'voice') code = 'voice_not_found';
  // "Other 400s" are invalid_parameters (docs/protocol.md §10.5, cli.md §1): servers put codes of
  // their own there (`invalid_value`, `invalid_type`…), which must not read as transport (exit 6).
  if (status === 400 && (code === undefined || !isServiceErrorCode(code))) code = 'invalid_parameters';
  return errorFromResponse(status, headers, JSON.stringify({ error: { code, message: payload.message } }), voicesCommand);
}

/** True when a refusal says the server does not take `stream_format: "sse"`. */
function refusesSse(error: unknown): boolean {
  return error instanceof TtsError && error.status === 400 && /stream_format/.test(error.message);
}

/**
 * The dialect's differences from the native route, for the shared transport (client/sse.ts); its
 * errors' `voice_not_found` hint names `voicesCommand`.
 */
function openAiDialect(voicesCommand: string): SseDialect {
  return {
    path: '/v1/audio/speech',
    accept: 'text/event-stream, audio/pcm, application/octet-stream',
    interpret: (event) => interpretOpenAiEvent(event, voicesCommand),
    // pcm answered as raw bytes: OpenAI's `audio/pcm`, others' `application/octet-stream` or L16.
    rawAudio: (contentType) => /^\s*(audio\/(pcm|l16|x-pcm|raw)|application\/octet-stream)\s*(;|$)/i.test(contentType),
    refusal: (status, headers, body) => openAiRefusal(status, headers, body, voicesCommand),
  };
}

/**
 * Streams one synthesis over the OpenAI dialect. The audio is pcm16, 24 000 Hz, mono.
 * @returns decoded audio chunks, in order; complete on `speech.audio.done` or the end of a raw body.
 * @throws TtsError as client/sse.ts's streamSse does; `protocol_error` for a content type that is
 *   neither an event stream nor raw pcm (e.g. `audio/mpeg` from a server that ignored
 *   `response_format`).
 */
export async function* streamOpenAi(options: OpenAiStreamOptions): AsyncGenerator<AudioChunk, void, undefined> {
  const { model, input, voice, sse, voicesCommand, ...transport } = options;
  const dialect = openAiDialect(voicesCommand ?? OPENAI_VOICES_COMMAND);
  const open = (stream: 'sse' | 'audio'): AsyncGenerator<AudioChunk, void, undefined> => {
    const body: OpenAiSpeechBody = { model, input, voice, response_format: 'pcm', stream_format: stream };
    return streamSse({ ...transport, body, dialect });
  };
  if (!sse.supported) {
    yield* open('audio');
    return;
  }
  const first = open('sse');
  let started = false;
  try {
    for await (const chunk of first) {
      started = true;
      yield chunk;
    }
    return;
  } catch (error) {
    // Only a refusal before any audio can be asked again; the fallback is remembered for the run.
    if (started || !refusesSse(error)) throw error;
    sse.supported = false;
    options.verbose?.('the server refused stream_format "sse"; asking for "audio" from now on');
  }
  yield* open('audio');
}
