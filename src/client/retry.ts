/**
 * When and how long to wait before retrying a request (docs/cli.md §1 `--retries`): only errors
 * marked retriable (limits that pass, 408, 5xx, network), with exponential backoff
 * 0.5 s × 2ⁿ capped at 8 s, less up to 25 % jitter, or the service's own `retry-after-ms` /
 * `Retry-After` (already capped at 60 s by service-error.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { TtsError } from '../errors.js';

/** First backoff, in seconds. */
export const BASE_DELAY_SECONDS = 0.5;
/** Longest computed backoff, in seconds (a server's Retry-After may ask for more, up to 60 s). */
export const MAX_DELAY_SECONDS = 8;

/**
 * Seconds to wait before retry number `attempt` (0 for the first retry).
 * @param random a number in [0, 1) for the jitter (injectable for tests).
 */
export function backoffSeconds(error: TtsError, attempt: number, random: number = Math.random()): number {
  if (error.retryAfterSeconds !== undefined) return error.retryAfterSeconds;
  // Jitter shortens the wait (as openai-node does), so the cap is never passed.
  const base = Math.min(BASE_DELAY_SECONDS * 2 ** attempt, MAX_DELAY_SECONDS);
  return base * (1 - 0.25 * random);
}

/** Whether `error` may be retried (a {@link TtsError} marked retriable). */
export function shouldRetry(error: unknown): error is TtsError {
  return error instanceof TtsError && error.retriable;
}

/**
 * Sleeps `seconds`, or rejects with `signal.reason` as soon as the signal aborts (Node's
 * timers/promises would reject with a generic AbortError; callers tell an interrupt from a
 * timeout by the reason).
 */
export async function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(seconds * 1000, undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    throw error;
  }
}
