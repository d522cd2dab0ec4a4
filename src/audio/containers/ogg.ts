/**
 * Ogg pages (RFC 3533, "The Ogg Encapsulation Format Version 0") for one logical stream, and
 * the Opus identification and comment headers that open an Ogg Opus stream (RFC 7845 §5).
 *
 * Why our own: a page is a 27-byte header, a lacing table and a CRC-32 (polynomial 0x04C11DB7,
 * no reflection, initial value 0 — RFC 3533 §6), about a hundred lines, fully defined by the RFC.
 * The one well-kept JavaScript muxer with Ogg Opus, mediabunny (MPL-2.0), drives it through
 * its Output/track machinery, which buffers and times packets by its own rules and is a 12 MB
 * package; here the caller decides where pages end (opus.ts: every 5 packets, by content, so
 * the bytes do not depend on how the audio arrived).
 */

/** Header type flags of a page (RFC 3533 §6, byte 5). */
const CONTINUED = 0x01;
const FIRST_PAGE = 0x02;
const LAST_PAGE = 0x04;

const CRC_TABLE = ((): Uint32Array => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** The Ogg CRC-32 of `data` (RFC 3533 §6: direct, generator 0x04C11DB7, initial 0, no final XOR). */
export function oggCrc(data: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < data.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ data[i]!) & 0xff]!) >>> 0;
  return crc;
}

/**
 * Writes the pages of one logical Ogg stream. Packets are gathered with {@link OggWriter.add}
 * and leave as pages on {@link OggWriter.flush}: a page is closed there (or when its 255 lacing
 * values are used), so the caller decides how soon bytes go out.
 */
export class OggWriter {
  private sequence = 0;
  private packets: { data: Uint8Array; granule: bigint }[] = [];
  private started = false;

  /** @param serial the stream's serial number (RFC 3533 §6 "bitstream_serial_number"). */
  constructor(private readonly serial: number) {}

  /**
   * Queues a whole packet; `granule` is the granule position after it (for Opus: samples at
   * 48 kHz, pre-skip included, RFC 7845 §4). Packets larger than 255 × 255 bytes continue on the
   * next page (the header packets and Opus packets are far smaller).
   */
  add(data: Uint8Array, granule: bigint): void {
    this.packets.push({ data, granule });
  }

  /**
   * Sets the granule position of the last queued packet: the end of the stream, which may be
   * less than its packets' total to trim the padding of the last one (RFC 7845 §4.5).
   * @throws Error when no packet is queued.
   */
  endGranule(granule: bigint): void {
    const last = this.packets.at(-1);
    if (last === undefined) throw new Error('no packet queued to end the Ogg stream');
    last.granule = granule;
  }

  /**
   * Writes every queued packet as pages and returns their bytes.
   * @param last marks the final page of the stream (end-of-stream flag, RFC 3533 §6); an empty
   *   page is written then if nothing is queued.
   * @returns the pages' bytes, empty when nothing was queued and `last` is false.
   */
  flush(last = false): Buffer {
    const pages: Buffer[] = [];
    let segments: number[] = [];
    let bodies: Uint8Array[] = [];
    let granule = -1n; // -1: no packet ends on this page
    let continued = false;
    const emit = (isLast: boolean, nextContinued: boolean): void => {
      pages.push(this.page(segments, bodies, granule, continued, isLast));
      segments = [];
      bodies = [];
      granule = -1n;
      continued = nextContinued;
    };
    for (let p = 0; p < this.packets.length; p++) {
      const { data, granule: g } = this.packets[p]!;
      let off = 0;
      for (;;) {
        const take = Math.min(255, data.length - off);
        segments.push(take);
        bodies.push(data.subarray(off, off + take));
        off += take;
        const ended = take < 255;
        if (ended) granule = g;
        if (segments.length === 255 && !(ended && p === this.packets.length - 1)) emit(false, !ended);
        if (ended) break;
      }
    }
    this.packets = [];
    if (segments.length > 0 || last) emit(last, false);
    return Buffer.concat(pages);
  }

  private page(segments: number[], bodies: Uint8Array[], granule: bigint, continued: boolean, last: boolean): Buffer {
    const bodyLength = bodies.reduce((n, b) => n + b.length, 0);
    const page = Buffer.alloc(27 + segments.length + bodyLength);
    page.write('OggS', 0, 'latin1');
    page[4] = 0; // stream_structure_version
    page[5] = (continued ? CONTINUED : 0) | (this.started ? 0 : FIRST_PAGE) | (last ? LAST_PAGE : 0);
    page.writeBigInt64LE(granule, 6);
    page.writeUInt32LE(this.serial >>> 0, 14);
    page.writeUInt32LE(this.sequence++, 18);
    page.writeUInt32LE(0, 22); // CRC, computed over the page with this field zero
    page[26] = segments.length;
    for (let i = 0; i < segments.length; i++) page[27 + i] = segments[i]!;
    let o = 27 + segments.length;
    for (const b of bodies) {
      page.set(b, o);
      o += b.length;
    }
    page.writeUInt32LE(oggCrc(page), 22);
    this.started = true;
    return page;
  }
}

/**
 * The identification header "OpusHead" (RFC 7845 §5.1) for channel mapping family 0
 * (mono or stereo).
 * @param channels 1 or 2.
 * @param preSkip samples at 48 kHz the decoder drops at the start (the encoder's lookahead).
 * @param inputRate the original rate in Hz (informational, for a decoder that wants to resample back).
 */
export function opusHead(channels: number, preSkip: number, inputRate: number): Buffer {
  const b = Buffer.alloc(19);
  b.write('OpusHead', 0, 'latin1');
  b[8] = 1; // version
  b[9] = channels;
  b.writeUInt16LE(preSkip, 10);
  b.writeUInt32LE(inputRate, 12);
  b.writeInt16LE(0, 16); // output gain
  b[18] = 0; // channel mapping family 0
  return b;
}

/** The comment header "OpusTags" (RFC 7845 §5.2) with `vendor` and no user comments. */
export function opusTags(vendor: string): Buffer {
  const v = Buffer.from(vendor, 'utf8');
  const b = Buffer.alloc(8 + 4 + v.length + 4);
  b.write('OpusTags', 0, 'latin1');
  b.writeUInt32LE(v.length, 8);
  v.copy(b, 12);
  b.writeUInt32LE(0, 12 + v.length);
  return b;
}
