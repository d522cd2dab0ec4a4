/**
 * What both channels yield (STYLE.md §1): decoded audio chunks, so players and writers never
 * know whether SSE or the WebSocket fed them.
 */

/** One decoded delta: `data` is audio bytes in the requested encoding (not base64). */
export interface AudioChunk {
  /** Audio bytes; not necessarily a whole number of samples (SERVICE.md does not promise it). */
  data: Buffer;
  /** The `item_id` the delta carried (SERVICE.md §2.2), when the channel has one. */
  itemId: string | undefined;
}

/** Receives protocol-level detail for `--verbose`; lines never contain the API key. */
export type VerboseLog = (line: string) => void;
