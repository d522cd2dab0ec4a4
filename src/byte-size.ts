/**
 * Sizes in bytes as people write them (docs/cli.md §1 `--max-input`, `--cache-size`): `65536`,
 * `512K`, `64MiB`, `1 GiB`, `100 bytes`, where K, M and G are binary (1024, 1024², 1024³) with or
 * without `i`/`B`. The arithmetic and the formatting are the `bytes` package's (binary multiples
 * too); this module only maps our documented spellings onto its `kb`/`mb`/`gb` — `bytes`
 * alone reads `512M` as 512 and `64MiB` as 64 — and its `KB`/`MB` names back to `KiB`/`MiB`.
 */
import bytes from 'bytes';

/** Our documented syntax: a whole number, then an optional unit. */
const SIZE = /^\s*(\d+)\s*(?:([kmg])(?:i?b)?|b|bytes?)?\s*$/i;

/**
 * The number of bytes `text` names, or undefined when it is not a size in our syntax
 * (a fraction, a negative number, an unknown unit).
 */
export function parseByteSize(text: string): number | undefined {
  const m = SIZE.exec(text);
  if (m === null) return undefined;
  const n = bytes.parse(`${m[1]}${m[2] === undefined ? 'b' : `${m[2].toLowerCase()}b`}`);
  return n === null || !Number.isSafeInteger(n) ? undefined : n;
}

/**
 * `n` bytes for a message, in the largest binary unit it reaches: `64 MiB`, `12.3 MiB`,
 * `100 bytes`. With `exact`, a unit is used only when it divides `n` (`1000000 bytes`, not
 * `976.6 KiB`), so the value can be typed back as it is.
 */
export function formatByteSize(n: number, options: { exact?: boolean } = {}): string {
  const text = bytes.format(n, { unitSeparator: ' ', decimalPlaces: 1 }) ?? `${n} B`;
  const [value, unit] = text.split(' ');
  if (unit === 'B' || unit === undefined) return `${n} bytes`;
  if (options.exact === true && n % (bytes.parse(`1${unit.toLowerCase()}`) ?? 1) !== 0) return `${n} bytes`;
  return `${value} ${unit.replace(/B$/, 'iB')}`;
}
