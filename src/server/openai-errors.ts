/**
 * Errors of the built-in service's OpenAI route in OpenAI's shape and statuses (docs/protocol.md
 * §10.5): `{"error":{"message","type","param","code"}}`. Admission refusals (keys, limits) keep
 * their headers (`Retry-After`, `RateLimit`, `WWW-Authenticate`); only the body and, for the
 * quota, the status change (OpenAI answers a spent quota with 429 `insufficient_quota`).
 */
import type { ServerResponse } from 'node:http';
import type { ServiceErrorCode } from '../errors.js';
import { sendJson } from './http-util.js';

/** OpenAI's error body. */
export interface OpenAiErrorBody {
  error: {
    /** For people. */
    message: string;
    /** `invalid_request_error`, `requests`, `insufficient_quota`, `server_error`. */
    type: string;
    /** The request field at fault, else null. */
    param: string | null;
    /** A stable code (`invalid_api_key`, `rate_limit_exceeded`, `invalid_value`...), else null. */
    code: string | null;
  };
}

/** One refusal of the OpenAI route: the status and the body's fields. */
export interface OpenAiError {
  status: number;
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** A 400 `invalid_request_error` about `param` (OpenAI's answer to a bad field). */
export function invalidRequest(message: string, param: string | null, code: string | null = 'invalid_value'): OpenAiError {
  return { status: 400, message, type: 'invalid_request_error', param, code };
}

/**
 * OpenAI's status, type and code for one of our codes (docs/protocol.md §7 and §10.5):
 * 401 `invalid_api_key`; 429 `requests` for the rate and concurrency limits; 429
 * `insufficient_quota` for a spent character quota; 503 `server_error` while stopping; 400
 * `invalid_request_error` for the rest.
 */
export function fromServiceCode(code: ServiceErrorCode | 'server_error', message: string, status?: number): OpenAiError {
  switch (code) {
    case 'invalid_api_key':
      return { status: 401, message, type: 'invalid_request_error', param: null, code };
    case 'rate_limit_exceeded':
    case 'too_many_concurrent_requests':
      return { status: 429, message, type: 'requests', param: null, code };
    case 'quota_exceeded':
      return { status: 429, message, type: 'insufficient_quota', param: null, code: 'insufficient_quota' };
    case 'server_error':
      return { status: status ?? 500, message, type: 'server_error', param: null, code: null };
    default:
      return invalidRequest(message, null, code);
  }
}

/** Sends `error` as OpenAI's JSON body with its status. */
export function sendOpenAiError(res: ServerResponse, error: OpenAiError, headers: Record<string, string> = {}): void {
  const body: OpenAiErrorBody = { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
  sendJson(res, error.status, body, headers);
}
