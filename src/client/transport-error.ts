/**
 * Maps low-level network failures (undici's `UND_ERR_*` codes, Node's socket errno codes, ws
 * failures) to {@link TtsError}s of exit 6 (docs/cli.md §3), marked retriable (docs/cli.md §1).
 */
import { TtsError } from '../errors.js';

/**
 * Where a user sets the service's base URL (docs/cli.md §1, §7): named by a hint when the setting
 * that gave the URL is not known.
 */
export const BASE_URL_PLACES = '--base-url, TTS_BASE_URL or base-url in the config file';

/**
 * The hint that sends the user to the setting that gave the service's URL: `check SOURCE` when
 * known (`--base-url`, `TTS_BASE_URL`, `base-url in [profile.work] (PATH:3)`), else the places a
 * base URL is set ({@link BASE_URL_PLACES}).
 * @param urlSource the setting that gave the URL, as {@link ServiceTarget.baseUrlSource} names it.
 * @param what what to check about it, appended (e.g. `points at the speech service`).
 */
export function checkUrlHint(urlSource: string | undefined, what = ''): string {
  const tail = what === '' ? '' : ` ${what}`;
  return urlSource === undefined ? `check the base URL${tail} (${BASE_URL_PLACES})` : `check ${urlSource}${tail}`;
}

/**
 * Wraps a failure to reach or keep talking to the service.
 * @param cause the thrown error (undici, net, ws).
 * @param url the endpoint, named in the message (it never carries the key).
 * @param urlSource the setting that gave `url`'s base (`--base-url`, `TTS_BASE_URL`, the config
 *   file's line), named by the hint; undefined = not known, and the hint lists where it is set.
 */
export function transportError(cause: unknown, url: URL, urlSource?: string): TtsError {
  const code = errorCode(cause);
  const where = url.origin;
  switch (code) {
    case 'ECONNREFUSED':
      return new TtsError('connection_failed', `cannot connect to ${where}: connection refused`, { cause, retriable: true, hint: `is the service running? ${checkUrlHint(urlSource)}` });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new TtsError('connection_failed', `cannot resolve ${url.hostname}`, { cause, retriable: code === 'EAI_AGAIN', hint: checkUrlHint(urlSource) });
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return new TtsError('timeout', `connecting to ${where} timed out`, { cause, retriable: true, hint: 'check the network, or raise --timeout' });
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new TtsError('connection_failed', `the connection to ${where} broke`, { cause, retriable: true, hint: 'try again' });
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new TtsError('timeout', `${where} stopped answering`, { cause, retriable: true, hint: 'raise --timeout, or try again' });
    default: {
      const detail = cause instanceof Error ? cause.message : String(cause);
      return new TtsError('connection_failed', `cannot talk to ${where}: ${detail}`, { cause, retriable: true, hint: `${checkUrlHint(urlSource)}, and the network` });
    }
  }
}

/** The errno-style code of an error or of its `cause` chain. */
function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
