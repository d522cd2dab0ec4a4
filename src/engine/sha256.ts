/**
 * SHA-256 for the engine's identities (voice packages, eSpeak NG's data and initialized state),
 * with node:crypto loaded on the first call rather than with the module: an engine worker that
 * speaks English never hashes anything, and loading node:crypto cost its start 3–5 ms of CPU
 * (issue 20, sixteenth round), before Flite could run.
 */
import type { Hash } from 'node:crypto';
import { createRequire } from 'node:module';

let crypto: typeof import('node:crypto') | undefined;

/**
 * A new SHA-256 hash: node:crypto's `createHash('sha256')` (FIPS 180-4), to be fed with
 * `update()` and read with `digest()`.
 * @throws Error only when node:crypto itself is missing (a Node built without OpenSSL).
 */
export function sha256(): Hash {
  crypto ??= createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  return crypto.createHash('sha256');
}
