/**
 * The HTTP status the built-in service answers each error code with: docs/protocol.md §7 where the
 * spec shows one, our own choice (docs/protocol.md, "Decisions") where it does not.
 */
import type { ServiceErrorCode } from '../errors.js';

/**
 * HTTP status the built-in service answers each code with (docs/protocol.md §7 where it is shown,
 * docs/cli.md §4 where it is not).
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
