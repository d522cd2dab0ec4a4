/**
 * How a service's address is named in messages: its origin only (WHATWG URL `origin`: scheme,
 * host, port), so a user name, password or query that may carry a key never reaches stderr.
 */

/** `https://host:port` of `url`, or `an invalid URL` (nothing of it echoed) when it does not parse. */
export function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an invalid URL';
  }
}
