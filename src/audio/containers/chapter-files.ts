/**
 * Puts chapters and tags into a finished audio file (docs/cli.md §10 "Chapters"), atomically like
 * every output (docs/cli.md §2): the file is copied, with its metadata replaced, to a temporary
 * name beside it, which is renamed over it only when whole. Memory stays at one copy block
 * (1 MiB) plus the metadata, whatever the file's length.
 *
 * - MP3: an ID3v2.4 tag (id3.ts) before the first frame, replacing any there.
 * - FLAC: a VORBIS_COMMENT block right after STREAMINFO (RFC 9639 §8.6), replacing any other.
 * - Ogg Opus: the OpusTags packet (RFC 7845 §5.2) with the comments; the pages after it are
 *   renumbered and their CRCs redone when the new packet takes another number of pages.
 * - WAV: `LIST`/`INFO`, `cue ` and `LIST`/`adtl` chunks after the audio, the RIFF size updated.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { TtsError } from '../../errors.js';
import { commitAtomicFile, discardAtomicFile, openAtomicFile, type AtomicFile } from '../file-sink.js';
import { vorbisChapterComments, vorbisCommentBody, wavChapterChunks, type AudioChapter, type AudioTags } from './chapters.js';
import { id3v24Tag, id3v2Length } from './id3.js';
import { oggCrc } from './ogg.js';

/** Containers that carry chapters and tags. */
export type TaggedContainer = 'wav' | 'mp3' | 'flac' | 'opus';

const BLOCK = 1024 * 1024;
/** Vendor string of the comments we write. */
const VENDOR = 'tts';

/**
 * Rewrites `path` with `tags` and `chapters`.
 * @param sampleRate the audio's rate in Hz (WAV cue points are sample frames).
 * @throws TtsError `io_error` (exit 7) when the file cannot be read or replaced, or is not of its
 *   container; the original is then untouched and no temporary file is left.
 */
export async function writeChapterMetadata(path: string, container: TaggedContainer, tags: AudioTags, chapters: readonly AudioChapter[], sampleRate: number): Promise<void> {
  let src: FileHandle | undefined;
  let file: AtomicFile | undefined;
  try {
    src = await open(path, 'r');
    // The one atomic writer (docs/cli.md §2): beside the file, with its mode, renamed over it when whole.
    // The file this run has just written: its mode is the umask's, not a refusal (file-sink.ts assertReplaceable).
    file = await openAtomicFile(path, { ownFile: true });
    const out = new Output(file.fh);
    if (container === 'mp3') await mp3(src, out, tags, chapters);
    else if (container === 'flac') await flac(src, out, tags, chapters);
    else if (container === 'opus') await opus(src, out, tags, chapters);
    else await wav(src, out, tags, chapters, sampleRate);
    await commitAtomicFile(file);
  } catch (cause) {
    if (file !== undefined) await discardAtomicFile(file);
    if (cause instanceof TtsError) throw cause;
    throw new TtsError('io_error', `cannot write the chapters into ${path}: ${(cause as Error).message}`, { cause, hint: 'check the folder and the disk' });
  } finally {
    await src?.close().catch(() => {});
  }
}

/** Sequential writes to the temporary file. */
class Output {
  at = 0;
  constructor(private readonly fh: FileHandle) {}
  async write(data: Buffer): Promise<void> {
    for (let done = 0; done < data.length; ) done += (await this.fh.write(data, done, data.length - done, this.at + done)).bytesWritten;
    this.at += data.length;
  }
  /** Overwrites bytes already written (a size field). */
  async writeAt(data: Buffer, at: number): Promise<void> {
    for (let done = 0; done < data.length; ) done += (await this.fh.write(data, done, data.length - done, at + done)).bytesWritten;
  }
  /** Copies `src` from byte `from` to its end. */
  async copyRest(src: FileHandle, from: number): Promise<void> {
    const buf = Buffer.alloc(BLOCK);
    for (let pos = from; ; ) {
      const { bytesRead } = await src.read(buf, 0, BLOCK, pos);
      if (bytesRead === 0) return;
      await this.write(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
  }
}

/** Exactly `n` bytes at `pos`, or fewer at the end of the file. */
async function readAt(src: FileHandle, pos: number, n: number): Promise<Buffer> {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const { bytesRead } = await src.read(buf, got, n - got, pos + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}

function notA(what: string): TtsError {
  return new TtsError('io_error', `the output is not a ${what} file; cannot add chapters`, { hint: 'this is a bug in tts; please report it' });
}

async function mp3(src: FileHandle, out: Output, tags: AudioTags, chapters: readonly AudioChapter[]): Promise<void> {
  const skip = id3v2Length(await readAt(src, 0, 10));
  await out.write(id3v24Tag(tags, chapters));
  await out.copyRest(src, skip);
}

async function flac(src: FileHandle, out: Output, tags: AudioTags, chapters: readonly AudioChapter[]): Promise<void> {
  if ((await readAt(src, 0, 4)).toString('latin1') !== 'fLaC') throw notA('FLAC');
  const kept: Buffer[] = [];
  let pos = 4;
  for (let last = false; !last; ) {
    const head = await readAt(src, pos, 4);
    if (head.length < 4) throw notA('FLAC');
    last = (head[0]! & 0x80) !== 0;
    const type = head[0]! & 0x7f;
    const length = head.readUIntBE(1, 3);
    // Our own encoder writes a handful of small blocks; keep all but an old VORBIS_COMMENT (4).
    if (type !== 4) kept.push(Buffer.concat([Buffer.from([type]), head.subarray(1, 4), await readAt(src, pos + 4, length)]));
    pos += 4 + length;
  }
  const comment = vorbisCommentBody(VENDOR, vorbisChapterComments(tags, chapters));
  const commentBlock = Buffer.concat([Buffer.from([4, (comment.length >>> 16) & 0xff, (comment.length >>> 8) & 0xff, comment.length & 0xff]), comment]);
  // STREAMINFO first (RFC 9639 §8.1), our comment after it, then the rest; the last one flagged.
  const blocks = [kept[0]!, commentBlock, ...kept.slice(1)];
  blocks[blocks.length - 1]![0]! |= 0x80;
  await out.write(Buffer.concat([Buffer.from('fLaC', 'latin1'), ...blocks]));
  await out.copyRest(src, pos);
}

/** One Ogg page as read (RFC 3533 §6). */
interface Page {
  header: Buffer;
  body: Buffer;
}

async function readPage(src: FileHandle, pos: number): Promise<Page | undefined> {
  const fixed = await readAt(src, pos, 27);
  if (fixed.length === 0) return undefined;
  if (fixed.length < 27 || fixed.toString('latin1', 0, 4) !== 'OggS') throw notA('Ogg');
  const segs = await readAt(src, pos + 27, fixed[26]!);
  const bodyLength = segs.reduce((n, s) => n + s, 0);
  return { header: Buffer.concat([fixed, segs]), body: await readAt(src, pos + 27 + segs.length, bodyLength) };
}

/** Pages for one packet of a header (granule 0), numbered from `sequence`. */
function headerPages(packet: Buffer, serial: number, sequence: number): Buffer[] {
  const lacing: number[] = [];
  for (let left = packet.length; ; left -= 255) {
    lacing.push(Math.min(left, 255));
    if (left < 255) break;
  }
  const pages: Buffer[] = [];
  let offset = 0;
  for (let i = 0; i < lacing.length; i += 255) {
    const segs = lacing.slice(i, i + 255);
    const size = segs.reduce((n, s) => n + s, 0);
    const header = Buffer.alloc(27 + segs.length);
    header.write('OggS', 0, 'latin1');
    header[5] = i === 0 ? 0 : 1; // continued packet
    header.writeBigUInt64LE(0n, 6);
    header.writeUInt32LE(serial, 14);
    header.writeUInt32LE(sequence + pages.length, 18);
    header[26] = segs.length;
    Buffer.from(segs).copy(header, 27);
    const page = Buffer.concat([header, packet.subarray(offset, offset + size)]);
    page.writeUInt32LE(oggCrc(page), 22);
    pages.push(page);
    offset += size;
  }
  return pages;
}

async function opus(src: FileHandle, out: Output, tags: AudioTags, chapters: readonly AudioChapter[]): Promise<void> {
  const first = await readPage(src, 0);
  if (first === undefined || first.body.toString('latin1', 0, 8) !== 'OpusHead') throw notA('Ogg Opus');
  await out.write(Buffer.concat([first.header, first.body]));
  let pos = first.header.length + first.body.length;
  // The OpusTags packet: the pages until one whose last lacing value is under 255.
  let oldPages = 0;
  for (;;) {
    const page = await readPage(src, pos);
    if (page === undefined) throw notA('Ogg Opus');
    pos += page.header.length + page.body.length;
    oldPages++;
    if (page.header[page.header.length - 1]! < 255) break;
  }
  const serial = first.header.readUInt32LE(14);
  const packet = Buffer.concat([Buffer.from('OpusTags', 'latin1'), vorbisCommentBody(VENDOR, vorbisChapterComments(tags, chapters))]);
  const pages = headerPages(packet, serial, 1);
  for (const p of pages) await out.write(p);
  const shift = pages.length - oldPages;
  if (shift === 0) return out.copyRest(src, pos);
  for (let page = await readPage(src, pos); page !== undefined; page = await readPage(src, pos)) {
    pos += page.header.length + page.body.length;
    const whole = Buffer.concat([page.header, page.body]);
    whole.writeUInt32LE(whole.readUInt32LE(18) + shift, 18);
    whole.writeUInt32LE(0, 22);
    whole.writeUInt32LE(oggCrc(whole), 22);
    await out.write(whole);
  }
}

async function wav(src: FileHandle, out: Output, tags: AudioTags, chapters: readonly AudioChapter[], sampleRate: number): Promise<void> {
  const riff = await readAt(src, 0, 12);
  if (riff.length < 12 || riff.toString('latin1', 0, 4) !== 'RIFF' || riff.toString('latin1', 8, 12) !== 'WAVE') throw notA('WAV');
  // Copy every chunk but old metadata ones, then ours; the RIFF size counts what follows it.
  await out.write(riff);
  for (let pos = 12; ; ) {
    const head = await readAt(src, pos, 8);
    if (head.length < 8) break;
    const id = head.toString('latin1', 0, 4);
    const size = head.readUInt32LE(4);
    const padded = size + (size % 2);
    const listType = id === 'LIST' ? (await readAt(src, pos + 8, 4)).toString('latin1') : '';
    if (!(id === 'cue ' || listType === 'INFO' || listType === 'adtl')) {
      await out.write(head);
      for (let done = 0; done < padded; done += BLOCK) await out.write(await readAt(src, pos + 8 + done, Math.min(BLOCK, padded - done)));
    }
    pos += 8 + padded;
  }
  await out.write(wavChapterChunks(tags, chapters, sampleRate));
  const size = Buffer.alloc(4);
  size.writeUInt32LE(out.at - 8);
  await out.writeAt(size, 4);
}
