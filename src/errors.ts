/**
 * The ground floor of tts: the one error root (docs/style.md §4), the error codes — the service's table
 * (docs/protocol.md §7) and our own local codes — and the exit code each maps to (docs/cli.md
 * "Exit codes"). Every failure the CLI reports is a {@link TtsError} whose `code` is a service
 * code, an unknown code a service sent, or one of {@link LOCAL_ERROR_CODES}.
 */

/** Every error code of docs/protocol.md §7. */
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
 * - `no_audio`: the service answered a text with no audio at all (exit 4)
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
  'no_audio',
  'io_error',
  'no_playback_device',
  'interrupted',
  'internal',
] as const;
/** One of {@link LOCAL_ERROR_CODES}. */
export type LocalErrorCode = (typeof LOCAL_ERROR_CODES)[number];

/** Exit codes of docs/cli.md §3. */
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

/** True for a code of docs/protocol.md §7. */
export function isServiceErrorCode(code: string): code is ServiceErrorCode {
  return (SERVICE_ERROR_CODES as readonly string[]).includes(code);
}

/**
 * Exit code for an error code (docs/cli.md §3). Service codes not in docs/protocol.md §7 are
 * treated as transport/server failures (exit 6), as docs/cli.md §3 says of unknown codes.
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
    case 'no_audio':
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


/** Extra facts an error may carry. */
export interface TtsErrorOptions {
  /** HTTP status of the response that carried the error, if any. */
  status?: number | undefined;
  /** One line saying what to do next (docs/cli.md §3). */
  hint?: string | undefined;
  /** The lower-level error (undici, ws, fs). */
  cause?: unknown;
  /** Seconds the service asked us to wait before retrying (Retry-After / retry-after-ms). */
  retryAfterSeconds?: number | undefined;
  /** True when the failure may succeed if tried again (limits, 408, 5xx, network). */
  retriable?: boolean | undefined;
  /**
   * True when nothing may mend it: no retry, and no re-request of a broken piece either (an
   * `error` event whose code is missing or unknown, docs/cli.md §4).
   */
  final?: boolean | undefined;
}

/**
 * A failure with a stable code and the exit code it maps to.
 * Messages never contain the API key: callers build them from codes, statuses and
 * service-sent messages only.
 */
export class TtsError extends Error {
  override readonly name = 'TtsError';
  /** Service error code (docs/protocol.md §7), an unknown code the service sent, or a local code. */
  readonly code: ServiceErrorCode | LocalErrorCode | (string & {});
  /** HTTP status, when the error came with one. */
  readonly status: number | undefined;
  /** What to do next, one line. */
  readonly hint: string | undefined;
  /** Seconds to wait before a retry, when the service said so. */
  readonly retryAfterSeconds: number | undefined;
  /** Whether a retry may succeed (docs/cli.md §1 `--retries`). */
  readonly retriable: boolean;
  /** Whether the failure is final: never retried, never recovered by requesting the piece again. */
  readonly final: boolean;

  constructor(code: TtsError['code'], message: string, options: TtsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.hint = options.hint;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.final = options.final ?? false;
    this.retriable = !this.final && (options.retriable ?? false);
  }

  /** Exit code of docs/cli.md §3 for this error. */
  get exitCode(): number {
    return exitCodeFor(this.code);
  }
}

/**
 * Why a file could not be read, in words for a message: `no such file`, `permission denied`,
 * `it is a directory`, `an input/output error (EIO)`, else the system's code (`ELOOP`…) or the error's text.
 * @param cause what `fs` threw (a NodeJS.ErrnoException, or anything).
 */
export function fileProblem(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'EIO') return 'an input/output error (EIO)';
  return code ?? (cause instanceof Error ? cause.message : String(cause));
}
