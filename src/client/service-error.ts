/**
 * Turning a service's refusal (an HTTP error response, an SSE `error` event, a WebSocket error
 * event or refused handshake) into a {@link TtsError}, keyed on the service's code rather than
 * the status (docs/cli.md §4: statuses "not shown" are not relied on).
 */
import { isServiceErrorCode } from '../errors.js';
import { parseErrorPayload } from './error-body.js';
import { TtsError } from '../errors.js';

/** Retry-After cap of docs/cli.md §1 `--retries`, in seconds. */
export const MAX_RETRY_AFTER_SECONDS = 60;

const HINTS: Record<string, string> = {
  invalid_api_key: 'check TTS_API_KEY or --api-key-file',
  rate_limit_exceeded: 'wait and try again, or raise --retries',
  too_many_concurrent_requests: 'lower --concurrency, or try again later',
  quota_exceeded: 'the account is out of credits',
  invalid_parameters: 'check the flags and their values',
  bad_request: 'check the flags and their values',
  text_string_required: 'give non-empty UTF-8 text',
  max_character_length_exceeded: 'lower --max-chars so each request is shorter',
  audio_format_not_found: 'use --format pcm16, float32 or mulaw',
  language_not_found: 'use --language ja or en',
};

/** The command that lists the native service's voices (docs/cli.md §1 `tts voices`). */
export const NATIVE_VOICES_COMMAND = 'tts voices';

/**
 * One-line suggestion for a service code, if we have one.
 * @param voicesCommand the command that lists the voices of the service refusing (`tts voices
 *   --api openai --base-url URL` for an OpenAI-compatible one), named by `voice_not_found`'s hint.
 */
export function hintFor(code: string, voicesCommand: string = NATIVE_VOICES_COMMAND): string | undefined {
  return code === 'voice_not_found' ? `run \`${voicesCommand}\` to list voice ids` : HINTS[code];
}

/**
 * Builds the error for a non-2xx HTTP response (docs/protocol.md §7).
 * @param status HTTP status code.
 * @param headers response headers (lower-case names), used for Retry-After / retry-after-ms.
 * @param body the response body as text (any shape, docs/cli.md §4).
 * @param voicesCommand the command that lists the service's voices ({@link hintFor}).
 */
export function errorFromResponse(status: number, headers: Record<string, string | string[] | undefined>, body: string, voicesCommand?: string): TtsError {
  if (status >= 300 && status < 400) {
    // Following it would carry the key to wherever the redirect points (docs/cli.md §1).
    const location = Array.isArray(headers['location']) ? headers['location'][0] : headers['location'];
    return new TtsError('protocol_error', `the service redirected (HTTP ${status}${location === undefined ? '' : ` to ${safeUrl(location)}`}); not followed, so the API key goes nowhere else`, {
      status,
      hint: 'set the base URL to the final address if you trust it',
    });
  }
  const payload = parseErrorPayload(body);
  const code = payload.code ?? codeForStatus(status);
  const retryAfterSeconds = parseRetryAfter(headers);
  const detail = payload.message === undefined ? '' : `: ${payload.message}`;
  return new TtsError(code, `service answered HTTP ${status} (${code})${detail}`, {
    status,
    hint: hintFor(code, voicesCommand) ?? (status >= 500 ? 'the service failed; try again later' : undefined),
    retriable: isRetriable(code, status),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}

/**
 * Builds the error for an error reported inside a stream (SSE `error` event, WebSocket error
 * event): `data` is the event's payload in any shape.
 *
 * An event whose code is missing (plain text, JSON without a code) or not one of
 * docs/protocol.md §7 is final (docs/cli.md §4): we cannot know that asking again would help,
 * so it is neither retried nor recovered by requesting the piece again; exit 6. A known code
 * keeps its own rule (only `rate_limit_exceeded` and `too_many_concurrent_requests` retry).
 * `voicesCommand` is the command that lists the service's voices ({@link hintFor}).
 */
export function errorFromEvent(data: string, channel: 'SSE' | 'WebSocket', voicesCommand?: string): TtsError {
  const payload = parseErrorPayload(data);
  const known = payload.code !== undefined && isServiceErrorCode(payload.code);
  const code = payload.code ?? 'server_error';
  const detail = payload.message === undefined ? '' : `: ${payload.message}`;
  const what = payload.code === undefined ? 'an error with no code' : `an error (${code})`;
  return new TtsError(code, `service sent ${what} on the ${channel} stream${detail}`, {
    hint: hintFor(code, voicesCommand) ?? 'the service failed and did not say it could be retried; try again later',
    retriable: known && isRetriable(code, undefined),
    final: !known,
  });
}

/** A URL without credentials or query (it may carry tokens), for messages. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return 'another address';
  }
}

/** The code we assume when a refusal carries none (docs/protocol.md §7 statuses). */
function codeForStatus(status: number): string {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 402) return 'quota_exceeded';
  if (status === 408) return 'timeout';
  if (status === 422) return 'invalid_parameters';
  if (status >= 400 && status < 500) return 'bad_request';
  return 'server_error';
}

/**
 * Whether a retry may succeed (docs/cli.md §1 `--retries`): limits that pass
 * (`rate_limit_exceeded`, `too_many_concurrent_requests`), 408 and 5xx. Never for the
 * request's own faults, the key, or `quota_exceeded`.
 */
export function isRetriable(code: string, status: number | undefined): boolean {
  if (code === 'rate_limit_exceeded' || code === 'too_many_concurrent_requests') return true;
  if (isServiceErrorCode(code)) return false;
  return status === 408 || (status !== undefined && status >= 500) || code === 'server_error' || code === 'timeout';
}

/**
 * Seconds to wait from `retry-after-ms` (milliseconds), else `Retry-After` (delta-seconds or an
 * HTTP-date, RFC 9110 §10.2.3), capped at {@link MAX_RETRY_AFTER_SECONDS}; undefined when absent
 * or unreadable.
 */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now: number = Date.now()): number | undefined {
  const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.min(Number(ms) / 1000, MAX_RETRY_AFTER_SECONDS);
  const ra = first(headers['retry-after']);
  if (ra === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(ra)) return Math.min(Number(ra), MAX_RETRY_AFTER_SECONDS);
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, (date - now) / 1000), MAX_RETRY_AFTER_SECONDS);
}
