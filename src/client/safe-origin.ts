/**
 * How a service's address is named in messages: its origin only (WHATWG URL `origin`: scheme,
 * host, port), so a user name, password or query that may carry a key never reaches stderr.
 * A user name and password in a base URL are never sent (tts sends only its API key, as a Bearer
 * token: docs/cli.md §1), so no message or listing needs them either.
 */

/** `https://host:port` of `url`, or `an invalid URL` (nothing of it echoed) when it does not parse. */
export function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an invalid URL';
  }
}

/**
 * `url` as `--verbose` names what it asks: scheme, host, port and path (WHATWG URL `origin` +
 * `pathname`), without a user name, password, query or fragment.
 */
export function safeLocation(url: URL): string {
  return `${url.origin === 'null' ? `${url.protocol}//${url.host}` : url.origin}${url.pathname}`;
}

/**
 * A base URL as `tts config show` lists it, and as the message refusing one that does not parse
 * names it: whole, but a user name and password in it replaced by `***` (`https://***@host/v1`).
 * A string that does not parse as a URL (the run that uses it refuses it) is returned as it is,
 * but for what stands before an `@` between its `scheme://` and the next `/`, `\`, `?` or `#`
 * (`https://me:pw@host:99999/` → `https://***@host:99999/`).
 */
export function withoutCredentials(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/^([a-z][a-z0-9+.-]*:[/\\]*)[^/\\?#]*@/iu, '$1***@');
  }
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace('//', '//***@');
}
