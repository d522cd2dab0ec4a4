/**
 * The layout of one piece cache entry (docs/cli.md §8): `TTSPIECE` (8 bytes), a version (uint32
 * LE), a reserved uint32, the audio's length in bytes (uint64 LE), its SHA-256 (32 bytes), then
 * the audio bytes exactly as the service sent them.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

const MAGIC = Buffer.from('TTSPIECE', 'latin1');
const VERSION = 1;
/** Bytes before the audio of an entry. */
export const HEADER_BYTES = 56;
/** Blocks in which an entry is checked and replayed, in bytes. */
export const BLOCK_BYTES = 64 * 1024;

/** The header of an entry of `length` audio bytes whose SHA-256 is `digest`. */
export function entryHeader(length: number, digest: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(VERSION, 8);
  header.writeBigUInt64LE(BigInt(length), 16);
  digest.copy(header, 24);
  return header;
}

/**
 * Checks a whole entry: magic, version, the length against the file's `size`, and the SHA-256 of
 * every audio byte (read in blocks).
 * @returns the audio's length in bytes, or undefined when the entry is not whole and right.
 * @throws the file system's error when the file cannot be read.
 */
export async function wholeEntryLength(handle: FileHandle, size: number): Promise<number | undefined> {
  const header = Buffer.alloc(HEADER_BYTES);
  const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
  if (bytesRead !== HEADER_BYTES || !header.subarray(0, 8).equals(MAGIC) || header.readUInt32LE(8) !== VERSION) return undefined;
  const length = Number(header.readBigUInt64LE(16));
  if (length !== size - HEADER_BYTES) return undefined;
  const hash = createHash('sha256');
  const block = Buffer.alloc(Math.min(BLOCK_BYTES * 16, Math.max(1, length)));
  for (let at = 0; at < length; ) {
    const got = (await handle.read(block, 0, Math.min(block.length, length - at), HEADER_BYTES + at)).bytesRead;
    if (got === 0) return undefined;
    hash.update(block.subarray(0, got));
    at += got;
  }
  return hash.digest().equals(header.subarray(24, 56)) ? length : undefined;
}
