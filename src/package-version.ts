/**
 * The `version` field of a package's `package.json`: the piece cache names the engine's packages
 * by it (src/cache/identity.ts), and eSpeak NG's initialized state names the package it was made
 * from by it (src/engine/espeak-state.ts).
 */
import { readFileSync } from 'node:fs';

/**
 * The version the `package.json` at `file` (a path or file URL) declares.
 * @returns undefined when the file cannot be read, is not JSON, or has no string `version`;
 *   throws nothing.
 */
export function packageVersion(file: string | URL): string | undefined {
  try {
    const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}
