/**
 * The layout of one piece cache entry (docs/cli.md §8): `TTSPIECE` (8 bytes), a version (uint32
 * LE, 2), the length in bytes of the metadata (uint32 LE), the audio's length in bytes (uint64
 * LE), the SHA-256 of the audio and the metadata (32 bytes), then the audio bytes exactly as the
 * service sent them, then the metadata: UTF-8 JSON of what else the service said about the piece
 * (`{"words":[…],"wordsAsked":true}`: the word timings of the built-in service's `done`,
 * protocol/words.ts, and whether the request was made for a run that needed them; opener.ts
 * PieceMeta), or nothing. Version 1 entries (no metadata) are not whole to this version: they are fetched again.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

const MAGIC = Buffer.from('TTSPIECE', 'latin1');
const VERSION = 2;
/** Longest metadata of an entry, in bytes (16 MiB: ~150 000 word timings). */
export const MAX_META_BYTES = 16 * 1024 * 1024;
/** Bytes before the audio of an entry. */
export const HEADER_BYTES = 56;
/** Blocks in which an entry is checked and replayed, in bytes. */
export const BLOCK_BYTES = 64 * 1024;

/**
 * The header of an entry of `length` audio bytes and `metaLength` bytes of metadata whose
 * SHA-256 (audio, then metadata) is `digest`.
 */
export function entryHeader(length: number, digest: Buffer, metaLength = 0): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(VERSION, 8);
  header.writeUInt32LE(metaLength, 12);
  header.writeBigUInt64LE(BigInt(length), 16);
  digest.copy(header, 24);
  return header;
}

/**
 * Checks a whole entry: magic, version, the lengths against the file's `size`, and the SHA-256 of
 * every audio and metadata byte (read in blocks).
 * @returns the audio's length in bytes and the metadata (undefined when it has none), or
 *   undefined when the entry is not whole and right.
 * @throws the file system's error when the file cannot be read.
 */
export async function wholeEntry(handle: FileHandle, size: number): Promise<{ length: number; meta: Buffer | undefined } | undefined> {
  const header = Buffer.alloc(HEADER_BYTES);
  const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
  if (bytesRead !== HEADER_BYTES || !header.subarray(0, 8).equals(MAGIC) || header.readUInt32LE(8) !== VERSION) return undefined;
  const metaLength = header.readUInt32LE(12);
  const audioLength = Number(header.readBigUInt64LE(16));
  if (metaLength > MAX_META_BYTES || audioLength + metaLength !== size - HEADER_BYTES) return undefined;
  const length = audioLength + metaLength;
  const hash = createHash('sha256');
  const block = Buffer.alloc(Math.min(BLOCK_BYTES * 16, Math.max(1, length)));
  for (let at = 0; at < length; ) {
    const got = (await handle.read(block, 0, Math.min(block.length, length - at), HEADER_BYTES + at)).bytesRead;
    if (got === 0) return undefined;
    hash.update(block.subarray(0, got));
    at += got;
  }
  if (!hash.digest().equals(header.subarray(24, 56))) return undefined;
  if (metaLength === 0) return { length: audioLength, meta: undefined };
  const meta = Buffer.alloc(metaLength);
  if ((await handle.read(meta, 0, metaLength, HEADER_BYTES + audioLength)).bytesRead !== metaLength) return undefined;
  return { length: audioLength, meta };
}
