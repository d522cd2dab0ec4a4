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
 * A base URL as `tts config show` lists it, and as the messages naming one name it: whole, but a
 * user name and password in it replaced by `***` (`https://***@host/v1`), each query parameter's
 * value too (`?api_key=***`; a parameter without `=`, which may be a key itself, is `***`), and a
 * fragment (`#***`): a key pasted into a URL must not reach a bug report. A string that does not
 * parse as a URL (the run that uses it refuses it) is masked the same way, by its text: what stands
 * before an `@` between its `scheme://` and the next `/`, `\`, `?` or `#`, and what follows its first
 * `?` or `#` (`https://me:pw@host:99999/?k=v` → `https://***@host:99999/?k=***`).
 */
export function withoutCredentials(url: string): string {
  const [beforeQuery, query, fragment] = splitQuery(url);
  const masked = maskQuery(query) + (fragment === undefined ? '' : fragment === '' ? '#' : '#***');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return beforeQuery.replace(/^([a-z][a-z0-9+.-]*:[/\\]*)[^/\\]*@/iu, '$1***@') + masked;
  }
  if (parsed.username === '' && parsed.password === '') return beforeQuery + masked;
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href.replace('//', '//***@') + masked;
}

/** `url` cut at its first `?` and at the first `#` after that: [before, query without `?` or undefined, fragment without `#` or undefined]. */
function splitQuery(url: string): [string, string | undefined, string | undefined] {
  const hash = url.indexOf('#');
  const q = url.indexOf('?');
  const fragment = hash === -1 ? undefined : url.slice(hash + 1);
  const rest = hash === -1 ? url : url.slice(0, hash);
  if (q === -1 || (hash !== -1 && q > hash)) return [rest, undefined, fragment];
  return [rest.slice(0, q), rest.slice(q + 1), fragment];
}

/** `?name=***&…` for a query (without its `?`): names kept, values masked; `` for none. */
function maskQuery(query: string | undefined): string {
  if (query === undefined) return '';
  if (query === '') return '?';
  return `?${query.split('&').map((part) => (part === '' ? '' : part.includes('=') ? `${part.slice(0, part.indexOf('='))}=***` : '***')).join('&')}`;
}
