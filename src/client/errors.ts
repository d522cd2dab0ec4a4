/**
 * The one error root of tts (STYLE.md §4): every failure the CLI reports is a {@link TtsError}
 * whose `code` is a service code (SERVICE.md §7), an unknown code a service sent, or one of our
 * LOCAL_ERROR_CODES; its exit code follows DESIGN.md §3.
 */
import { exitCodeFor, type LocalErrorCode, type ServiceErrorCode } from '../protocol/codes.js';

/** Extra facts an error may carry. */
export interface TtsErrorOptions {
  /** HTTP status of the response that carried the error, if any. */
  status?: number | undefined;
  /** One line saying what to do next (DESIGN.md §3). */
  hint?: string | undefined;
  /** The lower-level error (undici, ws, fs). */
  cause?: unknown;
  /** Seconds the service asked us to wait before retrying (Retry-After / retry-after-ms). */
  retryAfterSeconds?: number | undefined;
  /** True when the failure may succeed if tried again (limits, 408, 5xx, network). */
  retriable?: boolean | undefined;
}

/**
 * A failure with a stable code and the exit code it maps to.
 * Messages never contain the API key: callers build them from codes, statuses and
 * service-sent messages only.
 */
export class TtsError extends Error {
  override readonly name = 'TtsError';
  /** Service error code (SERVICE.md §7), an unknown code the service sent, or a local code. */
  readonly code: ServiceErrorCode | LocalErrorCode | (string & {});
  /** HTTP status, when the error came with one. */
  readonly status: number | undefined;
  /** What to do next, one line. */
  readonly hint: string | undefined;
  /** Seconds to wait before a retry, when the service said so. */
  readonly retryAfterSeconds: number | undefined;
  /** Whether a retry may succeed (DESIGN.md §1 `--retries`). */
  readonly retriable: boolean;

  constructor(code: TtsError['code'], message: string, options: TtsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.hint = options.hint;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.retriable = options.retriable ?? false;
  }

  /** Exit code of DESIGN.md §3 for this error. */
  get exitCode(): number {
    return exitCodeFor(this.code);
  }
}
