/**
 * What voices an OpenAI-compatible server offers (docs/cli.md §1 `tts voices --api openai`):
 * `GET {base}/v1/audio/voices`, which OpenAI itself does not have but Kokoro-FastAPI, `tts serve`
 * (docs/protocol.md §10.3) and others do. Bounded: at most 1 MiB of body, `timeoutMs` in all, no
 * redirect followed (the key would go along), the key only as `Authorization: Bearer`.
 */
import { TtsError } from '../errors.js';
import { CappedBuffer } from '../wire/capped-read.js';
import { isRecord } from '../wire/delta.js';
import { assertSecureTransport, bearer } from './auth.js';
import { openAiRefusal } from './openai.js';
import { endpointUrl } from './sse.js';
import { transportError } from './transport-error.js';

/** Path of the voice list on the servers that have one. */
export const OPENAI_VOICES_LIST_PATH = '/v1/audio/voices';

/** Largest voice list read, in bytes. */
const MAX_LIST_BYTES = 1024 * 1024;

/**
 * The voice ids out of a voice list: `{"voices":[…]}` or a bare array, whose items are strings or
 * objects with `id`, `voice_id` or `name`.
 * @returns the ids, or undefined when the JSON has neither shape.
 */
export function voiceIdsOf(json: unknown): string[] | undefined {
  const list = Array.isArray(json) ? json : isRecord(json) && Array.isArray(json['voices']) ? json['voices'] : undefined;
  if (list === undefined) return undefined;
  const ids: string[] = [];
  for (const item of list as unknown[]) {
    const id = typeof item === 'string' ? item : isRecord(item) ? [item['id'], item['voice_id'], item['name']].find((v) => typeof v === 'string') : undefined;
    if (typeof id === 'string') ids.push(id);
  }
  return ids;
}

/**
 * Asks the server for its voices. `urlSource` names the setting that gave `baseUrl` in the hint of a
 * connection failure (client/transport-error.ts).
 * @returns the ids; undefined when the server does not say (404, 405, or an answer that is not a
 *   voice list).
 * @throws TtsError: `insecure_transport`; the refusal (`invalid_api_key`, …) of another 4xx/5xx
 *   or of a redirect; `protocol_error` for a body over 1 MiB; `timeout` or a transport error.
 */
export async function fetchOpenAiVoices(options: { baseUrl: string; apiKey: string; timeoutMs: number; allowInsecure: boolean; urlSource?: string | undefined }): Promise<string[] | undefined> {
  const url = endpointUrl(options.baseUrl, OPENAI_VOICES_LIST_PATH);
  assertSecureTransport(url, options.allowInsecure);
  const { request } = await import('./undici.js');
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    // undici's request follows no redirect unless told to.
    const res = await request(url, { method: 'GET', headers: { authorization: bearer(options.apiKey), accept: 'application/json' }, signal });
    const body = new CappedBuffer(MAX_LIST_BYTES);
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (!body.push(chunk)) {
        res.body.destroy();
        break;
      }
    }
    if (res.statusCode === 404 || res.statusCode === 405) return undefined;
    if (res.statusCode < 200 || res.statusCode >= 300) throw openAiRefusal(res.statusCode, res.headers, body.text());
    if (body.overflowed) {
      throw new TtsError('protocol_error', `the voice list from ${url.origin} is over ${MAX_LIST_BYTES / 1024 / 1024} MiB`, { hint: 'check the service: its GET /v1/audio/voices answered more than any list of voices' });
    }
    try {
      return voiceIdsOf(JSON.parse(body.text()));
    } catch {
      return undefined;
    }
  } catch (error) {
    if (error instanceof TtsError) throw error;
    if (signal.aborted) throw new TtsError('timeout', `no voice list from ${url.origin} within ${options.timeoutMs / 1000} s`, { cause: error, hint: 'check the service' });
    throw transportError(error, url, options.urlSource);
  }
}
