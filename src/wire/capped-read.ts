/**
 * The one capped body reader of tts: reading an HTTP body (a refusal's error JSON on either
 * channel, a request body of the built-in service) without ever holding more than a fixed
 * number of bytes, whatever the peer sends.
 */

/** Collects at most `capBytes` bytes; what comes after is counted, not kept. */
export class CappedBuffer {
  readonly capBytes: number;
  readonly #parts: Buffer[] = [];
  #kept = 0;
  #seen = 0;

  /** @param capBytes the most bytes kept (≥ 0). */
  constructor(capBytes: number) {
    this.capBytes = capBytes;
  }

  /**
   * Takes the next bytes of the body.
   * @returns false once more than `capBytes` bytes have arrived in all (the reader may stop).
   */
  push(chunk: Uint8Array | string): boolean {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#seen += bytes.length;
    const room = this.capBytes - this.#kept;
    if (room > 0) {
      const kept = bytes.length <= room ? bytes : bytes.subarray(0, room);
      this.#parts.push(kept);
      this.#kept += kept.length;
    }
    return !this.overflowed;
  }

  /** True once more than `capBytes` bytes arrived. */
  get overflowed(): boolean {
    return this.#seen > this.capBytes;
  }

  /** The kept bytes (at most `capBytes`). */
  bytes(): Buffer {
    return Buffer.concat(this.#parts, this.#kept);
  }

  /** The kept bytes as UTF-8 text (a character cut at the cap becomes U+FFFD). */
  text(): string {
    return this.bytes().toString('utf8');
  }
}

/** What {@link readCapped} read. */
export interface CappedRead {
  /** The first bytes of the body, at most the cap. */
  bytes: Buffer;
  /** True when the body was longer than the cap (reading stopped there). */
  overflowed: boolean;
  /** The stream's error, when it failed before its end (what arrived before is in `bytes`). */
  error?: unknown;
}

/**
 * Reads a byte stream to its end, or until more than `capBytes` bytes arrived. Leaving early
 * ends the iteration, which destroys a Node Readable (the rest is never read). Never rejects.
 * @param source a Readable (IncomingMessage, PassThrough) or any async iterable of bytes.
 * @param capBytes the most bytes kept.
 */
export async function readCapped(source: AsyncIterable<Uint8Array | string>, capBytes: number): Promise<CappedRead> {
  const buffer = new CappedBuffer(capBytes);
  try {
    for await (const chunk of source) {
      if (!buffer.push(chunk)) return { bytes: buffer.bytes(), overflowed: true };
    }
  } catch (error) {
    return { bytes: buffer.bytes(), overflowed: buffer.overflowed, error };
  }
  return { bytes: buffer.bytes(), overflowed: false };
}
