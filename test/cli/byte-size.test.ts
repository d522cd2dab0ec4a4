/**
 * Sizes (src/byte-size.ts): the documented syntax of --max-input and --cache-size (docs/cli.md
 * §1) read the same through the `bytes` package as before — `512M` and `64MiB`, which `bytes`
 * alone would read as 512 and 64 — and formatted in binary units.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatByteSize, parseByteSize } from '../../src/byte-size.js';

describe('byte sizes', () => {
  it('reads the documented spellings as binary multiples', () => {
    const cases: [string, number][] = [
      ['65536', 65536],
      ['512K', 512 * 1024],
      ['512k', 512 * 1024],
      ['512KiB', 512 * 1024],
      ['512M', 512 * 2 ** 20],
      ['64MiB', 64 * 2 ** 20],
      ['64MB', 64 * 2 ** 20],
      ['64mib', 64 * 2 ** 20],
      ['1G', 2 ** 30],
      ['1 GiB', 2 ** 30],
      ['100 bytes', 100],
      ['100b', 100],
      [' 7 ', 7],
    ];
    for (const [text, n] of cases) assert.equal(parseByteSize(text), n, text);
  });

  it('refuses what is not a size', () => {
    for (const text of ['', 'M', '1.5M', '-1', '64 XiB', '64MiBs', '1e3', 'lots', '2T']) assert.equal(parseByteSize(text), undefined, text);
  });

  it('formats in binary units; exact only when the unit divides', () => {
    assert.equal(formatByteSize(64 * 2 ** 20), '64 MiB');
    assert.equal(formatByteSize(2 ** 30), '1 GiB');
    assert.equal(formatByteSize(1536), '1.5 KiB');
    assert.equal(formatByteSize(100), '100 bytes');
    assert.equal(formatByteSize(0), '0 bytes');
    assert.equal(formatByteSize(1_000_000, { exact: true }), '1000000 bytes');
    assert.equal(formatByteSize(512 * 1024, { exact: true }), '512 KiB');
    assert.equal(formatByteSize(2 ** 20 + 1000, { exact: true }), '1049576 bytes', 'rounds to "1 MiB" but is not');
  });
});
