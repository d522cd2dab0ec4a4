/**
 * WebSocket message data as the `ws` package hands it over, for both ends of the realtime
 * channel (docs/protocol.md §4.2).
 */
import type { RawData } from 'ws';

/**
 * One message's bytes: `ws` gives a Buffer, an ArrayBuffer, or (for a fragmented message) an
 * array of Buffers.
 */
export function rawToBuffer(raw: RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}
