/**
 * An ID3v2.4 tag for MP3 (id3.org "ID3 tag version 2.4.0 – Main Structure" and "– Native
 * Frames"), with the chapter frames of the "ID3v2 Chapter Frame Addendum" 1.0: `TIT2`, `TPE1`,
 * `TALB`, `TRCK`, then one `CTOC` (top-level, ordered) listing every `CHAP`, each `CHAP` with its
 * start and end in milliseconds and a `TIT2` sub-frame naming it.
 *
 * Why our own writer: node-id3, the maintained JavaScript ID3 writer, writes ID3v2.3 only; the
 * part needed here — text frames and the two chapter frames, in UTF-8 — is small and fixed by the
 * documents above.
 */
import { metadataText, type AudioChapter, type AudioTags } from './chapters.js';

/** Text encoding byte $03: UTF-8 (ID3v2.4 §4.2). */
const UTF8 = 3;

/** A 28-bit "synchsafe" integer: 7 bits in each of 4 bytes (ID3v2.4 §6.2). */
export function synchsafe(n: number): Buffer {
  if (!Number.isInteger(n) || n < 0 || n >= 2 ** 28) throw new RangeError(`synchsafe(${n}): out of range`);
  return Buffer.from([(n >>> 21) & 0x7f, (n >>> 14) & 0x7f, (n >>> 7) & 0x7f, n & 0x7f]);
}

/** One frame: ID, synchsafe size, no flags, body (ID3v2.4 §4). */
function frame(id: string, body: Buffer): Buffer {
  const head = Buffer.alloc(10);
  head.write(id, 0, 'latin1');
  synchsafe(body.length).copy(head, 4);
  return Buffer.concat([head, body]);
}

/** A text information frame in UTF-8 (ID3v2.4 native frames §4.2), its text as chapters.ts `metadataText` makes it. */
function textFrame(id: string, text: string): Buffer {
  return frame(id, Buffer.concat([Buffer.from([UTF8]), Buffer.from(metadataText(text), 'utf8')]));
}

/**
 * The whole tag: header (`ID3`, version 4.0, no flags, synchsafe size) and frames, no padding.
 * @param chapters in order; times in seconds, written as whole milliseconds; byte offsets are
 *   0xFFFFFFFF ("not used", addendum §3).
 * @returns the tag's bytes, to go before the first MPEG frame.
 */
export function id3v24Tag(tags: AudioTags, chapters: readonly AudioChapter[]): Buffer {
  const frames: Buffer[] = [];
  if (tags.title !== undefined) frames.push(textFrame('TIT2', tags.title));
  if (tags.artist !== undefined) frames.push(textFrame('TPE1', tags.artist));
  if (tags.album !== undefined) frames.push(textFrame('TALB', tags.album));
  if (tags.track !== undefined) frames.push(textFrame('TRCK', String(tags.track)));
  if (chapters.length > 0) {
    const ids = chapters.map((_, i) => `ch${i + 1}`);
    // CTOC: element id, flags (top-level 0x02 | ordered 0x01), entry count, child ids (addendum §4).
    const ctoc = Buffer.concat([
      Buffer.from('toc\0', 'latin1'),
      Buffer.from([0x03, Math.min(255, ids.length)]),
      ...ids.slice(0, 255).map((id) => Buffer.from(`${id}\0`, 'latin1')),
    ]);
    frames.push(frame('CTOC', ctoc));
    chapters.forEach((c, i) => {
      const times = Buffer.alloc(16);
      times.writeUInt32BE(Math.round(c.start * 1000), 0);
      times.writeUInt32BE(Math.round(c.end * 1000), 4);
      times.writeUInt32BE(0xffffffff, 8);
      times.writeUInt32BE(0xffffffff, 12);
      frames.push(frame('CHAP', Buffer.concat([Buffer.from(`${ids[i]}\0`, 'latin1'), times, textFrame('TIT2', c.title)])));
    });
  }
  const body = Buffer.concat(frames);
  const head = Buffer.alloc(10);
  head.write('ID3', 0, 'latin1');
  head[3] = 4; // version 2.4.0
  head[4] = 0;
  head[5] = 0; // flags
  synchsafe(body.length).copy(head, 6);
  return Buffer.concat([head, body]);
}

/**
 * The length of an ID3v2 tag at the start of `head` (header, frames, padding and any footer),
 * or 0 when `head` does not start with one.
 */
export function id3v2Length(head: Buffer): number {
  if (head.length < 10 || head.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = ((head[6]! & 0x7f) << 21) | ((head[7]! & 0x7f) << 14) | ((head[8]! & 0x7f) << 7) | (head[9]! & 0x7f);
  const footer = (head[5]! & 0x10) !== 0 ? 10 : 0;
  return 10 + size + footer;
}
