/**
 * Strict UTF-8 (WHATWG Encoding "UTF-8 decode" with the fatal error mode, which refuses what RFC
 * 3629 forbids: stray continuation bytes, overlong forms, surrogates, code points past U+10FFFF, a
 * sequence cut off), with the place of the first bad byte for messages: text input (read.ts,
 * docs/cli.md §1 "Text input") and the TOML settings files (settings-file.ts; TOML 1.0: "A TOML
 * file must be a valid UTF-8 encoded Unicode document").
 */

/**
 * Offset of the first bad byte of `bytes` read as strict UTF-8 in a stream: the first byte of the
 * first ill-formed sequence — a lead byte whose sequence breaks off (`w\xE9rld`: the 0xE9, not the
 * `r` where the decoder notices), or a byte no sequence may start with (0xFF, 0xC0, a stray
 * continuation byte). A sequence merely cut off by the end of `bytes` is not bad (more may come).
 * @param bytes the bytes, in order.
 * @returns a byte offset into `bytes`, 0 … `bytes.length` (`bytes.length`: none is bad).
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  // Binary search for the shortest prefix that fails to decode; with stream: true a sequence
  // merely cut off at the end of a prefix is not an error, so failure is monotone in length.
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid + 1), { stream: true });
      lo = mid + 1;
    } catch {
      hi = mid;
    }
  }
  // Decoding fails at byte `lo`; the bytes before it decode, but may end inside the sequence
  // that byte broke: that sequence's lead byte is the bad one.
  return lo < bytes.length ? completeUtf8Length(bytes.subarray(0, lo)) : lo;
}

/** Where the first bad byte of a document that is not strict UTF-8 is: {@link strictUtf8Document}. */
export interface Utf8Problem {
  /** Byte offset of the first bad byte (of a sequence cut off by the end: its lead byte), from 0. */
  offset: number;
  /** Its line, from 1: line feeds (0x0A) before it, plus one. */
  line: number;
}

/**
 * Decodes a whole document (nothing follows `bytes`) as strict UTF-8. A byte order mark is kept
 * (U+FEFF at the start), as Buffer.toString('utf8') keeps it.
 * @param bytes the whole document.
 * @returns its text, or where its first bad byte is.
 */
export function strictUtf8Document(bytes: Uint8Array): { text: string } | { problem: Utf8Problem } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    // A sequence cut off by the end decodes as a stream: its lead byte is then the bad one.
    let offset = firstInvalidUtf8Offset(bytes);
    if (offset === bytes.length) offset = completeUtf8Length(bytes);
    let line = 1;
    for (let i = bytes.indexOf(0x0a); i !== -1 && i < offset; i = bytes.indexOf(0x0a, i + 1)) line++;
    return { problem: { offset, line } };
  }
}

/**
 * Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence: a lead byte
 * in the last 3 bytes whose sequence is longer than what follows it is held back.
 * @returns a byte count, `bytes.length` when the end cuts no sequence.
 */
export function completeUtf8Length(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}
