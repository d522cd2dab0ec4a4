/**
 * The built-in service's OpenAI dialect (docs/protocol.md §10): `POST /v1/audio/speech`,
 * `GET /v1/models` and `GET /v1/audio/voices`. Admission (keys, rate, concurrency), the quota,
 * fair scheduling and the write timeout are the native route's (builtin-server.ts, sse-route.ts); only
 * the body, the audio containers and the error shape are OpenAI's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { engineVoices } from '../engine/catalogue.js';
import { bodyCapFor, readBody, sendJson } from './http-util.js';
import { openSpeechAudio, OPENAI_CONTENT_TYPES, OPENAI_PCM_SPEC, type SpeechAudio } from './openai-audio.js';
import { fromServiceCode, invalidRequest, sendOpenAiError } from './openai-errors.js';
import { validateOpenAiSpeech, type OpenAiSpeechRequest } from './openai-validate.js';
import { OPENAI_VOICES } from './openai-voices.js';
import { drained, endWithin, type SseRouteContext } from './sse-route.js';

/** Path of the speech endpoint (POST). */
export const OPENAI_SPEECH_PATH = '/v1/audio/speech';
/** Path of the model list (GET). */
export const OPENAI_MODELS_PATH = '/v1/models';
/** Path of the voice list (GET; not OpenAI's own, but Kokoro-FastAPI's and others'). */
export const OPENAI_VOICES_PATH = '/v1/audio/voices';

/** Model ids `GET /v1/models` lists; every one (and any other string) runs the built-in engine. */
export const OPENAI_MODELS = ['tts-builtin', 'tts-1', 'tts-1-hd', 'gpt-4o-mini-tts'] as const;

/** Samples of 24 kHz audio in one usage "output token" (20 ms; docs/protocol.md §10.2). */
const SAMPLES_PER_OUTPUT_TOKEN = 480;

/** The route's context: the native route's, plus where the model name goes (the access log). */
export interface OpenAiRouteContext extends SseRouteContext {
  /** Called with the request's `model`, made safe for a log line. */
  onModel?: ((model: string) => void) | undefined;
}

/** `GET /v1/models` (docs/protocol.md §10.4): OpenAI's list shape. */
export function handleModels(res: ServerResponse): void {
  sendJson(res, 200, { object: 'list', data: OPENAI_MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'tts' })) });
}

/** `GET /v1/audio/voices` (docs/protocol.md §10.3): OpenAI's names, then our preset ids. */
export function handleVoices(res: ServerResponse): void {
  sendJson(res, 200, { voices: [...Object.keys(OPENAI_VOICES), ...engineVoices().map((v) => v.id)] });
}

/** A model name as it may appear in a log line: at most 64 of `[A-Za-z0-9._:/-]`, others `?`. */
export function loggableModel(model: string): string {
  return [...model.slice(0, 64)].map((c) => (/^[\w.:/-]$/.test(c) ? c : '?')).join('');
}

/**
 * Handles one admitted `POST /v1/audio/speech` (docs/protocol.md §10.1–10.2).
 * `stream_format: audio`: 200 with the container's content type, chunked, bytes as they are
 * encoded; a failure after the headers cuts the connection (the client sees a truncated
 * transfer, never a short file that looks whole). `stream_format: sse`: `speech.audio.delta`
 * events with base64 `audio`, then `speech.audio.done` with `usage`; a failure is an `error`
 * event. Headers: `X-TTS-Voice` (the preset voice used), `X-TTS-Instructions: ignored` when
 * `instructions` was sent.
 * @param signal aborted when the client goes away, stopping synthesis at once.
 */
export async function handleOpenAiSpeech(req: IncomingMessage, res: ServerResponse, ctx: OpenAiRouteContext, signal: AbortSignal): Promise<void> {
  const cap = bodyCapFor(ctx.maxChars);
  const read = await readBody(req, cap);
  if (!read.ok) {
    // As the native route: a body over the cap holds an input over the limit (string_above_max_length).
    if (read.reason === 'too_large') sendOpenAiError(res, invalidRequest(`request body is larger than ${cap} bytes, more than an input of at most ${ctx.maxChars} characters needs`, 'input', 'string_above_max_length'), { connection: 'close' });
    return;
  }
  let json: unknown;
  try {
    // Strict UTF-8, as on the native route (docs/protocol.md §2.1).
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(read.body));
  } catch {
    sendOpenAiError(res, invalidRequest('request body is not valid UTF-8 JSON', null, null));
    return;
  }
  const request = validateOpenAiSpeech(json, ctx.maxChars);
  if ('status' in request) {
    sendOpenAiError(res, request);
    return;
  }
  ctx.onModel?.(loggableModel(request.model));
  const characters = [...request.text].length;
  const overQuota = ctx.charge?.(characters);
  if (overQuota !== undefined) {
    sendOpenAiError(res, fromServiceCode(overQuota.code, overQuota.message));
    return;
  }
  if (ctx.shutdown.aborted) {
    sendOpenAiError(res, fromServiceCode('server_error', 'the server is shutting down', 503), { connection: 'close' });
    return;
  }
  let audio: SpeechAudio;
  try {
    audio = await openSpeechAudio(request.format, request.speed);
  } catch (error) {
    sendOpenAiError(res, fromServiceCode('server_error', `cannot start the ${request.format} encoder: ${error instanceof Error ? error.message : String(error)}`));
    return;
  }
  try {
    await stream(res, request, audio, characters, ctx, signal);
  } finally {
    audio.free();
  }
}

async function stream(res: ServerResponse, request: OpenAiSpeechRequest, audio: SpeechAudio, characters: number, ctx: OpenAiRouteContext, signal: AbortSignal): Promise<void> {
  const sse = request.stream === 'sse';
  res.writeHead(200, {
    'content-type': sse ? 'text/event-stream; charset=utf-8' : OPENAI_CONTENT_TYPES[request.format],
    'cache-control': 'no-cache, no-store',
    'x-accel-buffering': 'no',
    'x-tts-voice': request.voice,
    ...(request.instructions ? { 'x-tts-instructions': 'ignored' } : {}),
  });
  res.flushHeaders();
  const stop = AbortSignal.any([signal, ctx.shutdown]);
  const frame = (bytes: Buffer): string | Buffer => (sse ? `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: bytes.toString('base64') })}\n\n` : bytes);
  /** Writes; false when the stream was closed for its write timeout or stopped. */
  const send = async (bytes: Buffer): Promise<boolean> => {
    if (bytes.length === 0) return true;
    if (res.write(frame(bytes))) return true;
    const outcome = await drained(res, stop, ctx.writeTimeoutMs);
    if (outcome === 'timeout') {
      ctx.onWriteTimeout?.();
      res.destroy();
    }
    return outcome === 'drained';
  };
  let samples = 0;
  try {
    const job = { text: request.text, voice: request.voice, language: request.language, ...OPENAI_PCM_SPEC };
    for await (const chunk of ctx.engine.synthesize(job, stop, { key: String(ctx.keyIndex ?? '') })) {
      if (stop.aborted) break;
      samples += chunk.length / 2;
      if (!(await send(audio.push(chunk)))) break;
    }
    if (stop.aborted || res.destroyed) return failed(res, sse, 'the server is shutting down', signal, ctx);
    if (!(await send(audio.end()))) return;
    if (!sse) {
      endWithin(res, undefined, ctx.writeTimeoutMs, ctx.onWriteTimeout);
      return;
    }
    const outputTokens = Math.round(samples / request.speed / SAMPLES_PER_OUTPUT_TOKEN);
    const usage = { input_tokens: characters, output_tokens: outputTokens, total_tokens: characters + outputTokens };
    endWithin(res, `data: ${JSON.stringify({ type: 'speech.audio.done', usage })}\n\n`, ctx.writeTimeoutMs, ctx.onWriteTimeout);
  } catch (error) {
    failed(res, sse, `synthesis failed: ${error instanceof Error ? error.message : String(error)}`, signal, ctx);
  }
}

/** Ends a stream that cannot finish: an `error` event (SSE), or a cut connection (audio). */
function failed(res: ServerResponse, sse: boolean, message: string, signal: AbortSignal, ctx: OpenAiRouteContext): void {
  if (signal.aborted || res.destroyed) return;
  if (!sse) {
    res.destroy();
    return;
  }
  endWithin(res, `data: ${JSON.stringify({ type: 'error', error: { message, type: 'server_error', param: null, code: null } })}\n\n`, ctx.writeTimeoutMs, ctx.onWriteTimeout);
}
