/**
 * Error codes: the service's table (SERVICE.md §7), our own local codes, the exit code each
 * maps to (DESIGN.md §3), and the HTTP status the built-in service answers with (DESIGN.md §4).
 */

/** Every error code of SERVICE.md §7. */
export const SERVICE_ERROR_CODES = [
  'invalid_api_key',
  'rate_limit_exceeded',
  'too_many_concurrent_requests',
  'quota_exceeded',
  'invalid_parameters',
  'bad_request',
  'text_string_required',
  'max_character_length_exceeded',
  'voice_not_found',
  'audio_format_not_found',
  'language_not_found',
] as const;
/** One of {@link SERVICE_ERROR_CODES}. */
export type ServiceErrorCode = (typeof SERVICE_ERROR_CODES)[number];

/**
 * Codes the client raises itself, for failures that are not the service's words:
 * - `usage`: bad flags, empty or invalid text, unreadable input (exit 2)
 * - `no_api_key`: a service is configured but no key is (exit 3)
 * - `insecure_transport`: a key would go over plain http/ws to a non-loopback host (exit 2)
 * - `connection_failed`, `timeout`, `protocol_error`, `stream_ended_early`, `server_error` (exit 6)
 * - `io_error`, `no_playback_device` (exit 7)
 * - `interrupted` (exit 130), `internal` (exit 1)
 */
export const LOCAL_ERROR_CODES = [
  'usage',
  'no_api_key',
  'insecure_transport',
  'connection_failed',
  'timeout',
  'protocol_error',
  'stream_ended_early',
  'server_error',
  'io_error',
  'no_playback_device',
  'interrupted',
  'internal',
] as const;
/** One of {@link LOCAL_ERROR_CODES}. */
export type LocalErrorCode = (typeof LOCAL_ERROR_CODES)[number];

/** Exit codes of DESIGN.md §3. */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  auth: 3,
  rejected: 4,
  limits: 5,
  transport: 6,
  io: 7,
  interrupted: 130,
} as const;

/** True for a code of SERVICE.md §7. */
export function isServiceErrorCode(code: string): code is ServiceErrorCode {
  return (SERVICE_ERROR_CODES as readonly string[]).includes(code);
}

/**
 * Exit code for an error code (DESIGN.md §3). Service codes not in SERVICE.md §7 are
 * treated as transport/server failures (exit 6), as DESIGN.md §3 says of unknown codes.
 */
export function exitCodeFor(code: string): number {
  switch (code) {
    case 'invalid_api_key':
    case 'no_api_key':
      return EXIT.auth;
    case 'invalid_parameters':
    case 'bad_request':
    case 'text_string_required':
    case 'max_character_length_exceeded':
    case 'voice_not_found':
    case 'audio_format_not_found':
    case 'language_not_found':
      return EXIT.rejected;
    case 'rate_limit_exceeded':
    case 'too_many_concurrent_requests':
    case 'quota_exceeded':
      return EXIT.limits;
    case 'usage':
    case 'insecure_transport':
      return EXIT.usage;
    case 'io_error':
    case 'no_playback_device':
      return EXIT.io;
    case 'interrupted':
      return EXIT.interrupted;
    case 'internal':
      return EXIT.internal;
    default:
      return EXIT.transport;
  }
}

/**
 * HTTP status the built-in service answers each code with (SERVICE.md §7 where it is shown,
 * DESIGN.md §4 where it is not).
 */
export const HTTP_STATUS: Readonly<Record<ServiceErrorCode, number>> = {
  invalid_api_key: 401,
  rate_limit_exceeded: 429,
  too_many_concurrent_requests: 429,
  quota_exceeded: 402,
  invalid_parameters: 400,
  bad_request: 400,
  text_string_required: 422,
  max_character_length_exceeded: 422,
  voice_not_found: 400,
  audio_format_not_found: 400,
  language_not_found: 400,
};
