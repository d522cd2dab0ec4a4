/**
 * API-key checks for the built-in service (docs/protocol.md §5; docs/cli.md §4): Bearer only, compared
 * in constant time so the time taken says nothing about how much of a key matched.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A set of accepted keys, stored as SHA-256 digests. */
export class KeyRing {
  readonly #digests: Buffer[];

  /** @param keys accepted keys (non-empty strings). */
  constructor(keys: readonly string[]) {
    this.#digests = keys.map(digest);
  }

  /**
   * The matching key's index, or -1. Hashing both sides first gives equal-length inputs to
   * `crypto.timingSafeEqual`, and every stored key is compared, match or not.
   * @param presented the key from the request.
   */
  indexOf(presented: string): number {
    const d = digest(presented);
    let found = -1;
    this.#digests.forEach((k, i) => {
      if (timingSafeEqual(k, d) && found === -1) found = i;
    });
    return found;
  }
}

/**
 * The key of an `Authorization: Bearer <key>` header (docs/protocol.md §5.2), or undefined when the
 * header is missing or malformed.
 */
export function bearerKey(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  return m?.[1];
}

/** A fresh random key: 32 bytes of randomness, base64url (43 characters), prefixed `tts_`. */
export function generateKey(): string {
  return `tts_${randomBytes(32).toString('base64url')}`;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}
