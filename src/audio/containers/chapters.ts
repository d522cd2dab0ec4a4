/**
 * Chapter and tag metadata of the containers (docs/cli.md §10 "Chapters"), as bytes: a WebVTT
 * chapters track (W3C WebVTT §3, `kind="chapters"`), Vorbis comments with `CHAPTERnnn` /
 * `CHAPTERnnnNAME` (the Matroska/Vorbis chapter extension ffmpeg and players read; Vorbis I §5)
 * for FLAC and Ogg Opus, and the WAV `cue ` chunk with `LIST`/`adtl` labels and `LIST`/`INFO`
 * tags (RIFF MCI 1991, "Cue-Points Chunk", "Associated Data List"). ID3v2.4 for MP3 is id3.ts.
 */
import { cueText, withoutControls } from '../../speak/subtitles.js';

/** Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which can make text read in another order (CVE-2021-42574). */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/gu;

/**
 * A chapter's name or a tag's value as every chapter output writes it (docs/cli.md §10 "Chapter
 * outputs": ID3 frames, Vorbis comments, WAV `INFO` and `labl`, the WebVTT chapters track, the
 * `--split-chapters` file names): every run of white space (line breaks too) made one space, C0
 * and C1 control characters and DEL left out as subtitle cues leave them out (speak/subtitles.ts
 * `withoutControls`), bidirectional controls left out too, spaces made one again and trimmed — an ESC or a one-byte
 * CSI from the document never reaches the terminal or player that shows the name.
 * `Ch\u001b]0;x\u0007one` → `Ch]0;xone`.
 */
export function metadataText(text: string): string {
  // White space first (a tab, a vertical tab or a line break parts words), then again where a control left two spaces.
  return withoutControls(text.replace(/\s+/gu, ' ')).replace(BIDI_CONTROLS, '').replace(/\s+/gu, ' ').trim();
}

/** One chapter of the audio, in seconds from its start. */
export interface AudioChapter {
  title: string;
  /** Seconds from the start of the audio to the chapter's first sample. */
  start: number;
  /** Seconds to just after its last sample (the next chapter's start, or the end). */
  end: number;
}

/** Tags from the document's metadata; each absent tag is simply not written. */
export interface AudioTags {
  title?: string | undefined;
  artist?: string | undefined;
  album?: string | undefined;
  /** Track number (one file per chapter). */
  track?: number | undefined;
}

/** Chapters Vorbis comments can number (CHAPTER001 … CHAPTER999). */
export const MAX_VORBIS_CHAPTERS = 999;

/** `HH:MM:SS.mmm` (WebVTT timestamps and Vorbis CHAPTERnnn values). */
export function clock(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}.${String(ms % 1000).padStart(3, '0')}`;
}

/**
 * A WebVTT chapters track: one cue per chapter, its text the chapter's name as {@link metadataText}
 * makes it (every run of white space one space, since a blank line would end the cue; controls
 * left out) with `&`, `<`, `>` escaped as in a subtitle cue (speak/subtitles.ts `cueText`).
 */
export function webvttChapters(chapters: readonly AudioChapter[]): string {
  const cues = chapters.map((c, i) => `${i + 1}\n${clock(c.start)} --> ${clock(c.end)}\n${cueText(metadataText(c.title), 'vtt')}\n`);
  return `WEBVTT\n\n${cues.join('\n')}`;
}

/**
 * The user comments for tags and chapters, as `KEY=value` strings: TITLE, ARTIST, ALBUM,
 * TRACKNUMBER, then `CHAPTER001=00:00:00.000` and `CHAPTER001NAME=…` per chapter. The
 * numbers have three digits, so the first {@link MAX_VORBIS_CHAPTERS} chapters are written.
 * Names and values are written as {@link metadataText} makes them.
 */
export function vorbisChapterComments(tags: AudioTags, chapters: readonly AudioChapter[]): string[] {
  const out: string[] = [];
  if (tags.title !== undefined) out.push(`TITLE=${metadataText(tags.title)}`);
  if (tags.artist !== undefined) out.push(`ARTIST=${metadataText(tags.artist)}`);
  if (tags.album !== undefined) out.push(`ALBUM=${metadataText(tags.album)}`);
  if (tags.track !== undefined) out.push(`TRACKNUMBER=${tags.track}`);
  chapters.slice(0, MAX_VORBIS_CHAPTERS).forEach((c, i) => {
    const n = String(i + 1).padStart(3, '0');
    out.push(`CHAPTER${n}=${clock(c.start)}`, `CHAPTER${n}NAME=${metadataText(c.title)}`);
  });
  return out;
}

/**
 * A Vorbis comment body (Vorbis I §5.2.1, the FLAC VORBIS_COMMENT block and the OpusTags
 * packet after its magic): vendor string, then the comments, all lengths 32-bit little-endian.
 */
export function vorbisCommentBody(vendor: string, comments: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  const str = (s: string): void => {
    const b = Buffer.from(s, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    parts.push(len, b);
  };
  str(vendor);
  const count = Buffer.alloc(4);
  count.writeUInt32LE(comments.length);
  parts.push(count);
  for (const c of comments) str(c);
  return Buffer.concat(parts);
}

/**
 * WAV chunks for the chapters and tags, to follow the `data` chunk: `LIST`/`INFO` (INAM title,
 * IART artist, IPRD album, ITRK track), `cue ` with one cue point per chapter at its first sample
 * frame, and `LIST`/`adtl` with a `labl` naming each, names and values as {@link metadataText}
 * makes them. Every chunk is padded to an even size.
 * @param sampleRate frames per second, to turn chapter starts into sample frames.
 */
export function wavChapterChunks(tags: AudioTags, chapters: readonly AudioChapter[], sampleRate: number): Buffer {
  const chunk = (id: string, body: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.write(id, 0, 'latin1');
    head.writeUInt32LE(body.length, 4);
    return Buffer.concat([head, body, Buffer.alloc(body.length % 2)]);
  };
  const zstr = (s: string): Buffer => Buffer.concat([Buffer.from(metadataText(s), 'utf8'), Buffer.alloc(1)]);
  const out: Buffer[] = [];
  const info: Buffer[] = [];
  if (tags.title !== undefined) info.push(chunk('INAM', zstr(tags.title)));
  if (tags.artist !== undefined) info.push(chunk('IART', zstr(tags.artist)));
  if (tags.album !== undefined) info.push(chunk('IPRD', zstr(tags.album)));
  if (tags.track !== undefined) info.push(chunk('ITRK', zstr(String(tags.track))));
  if (info.length > 0) out.push(chunk('LIST', Buffer.concat([Buffer.from('INFO', 'latin1'), ...info])));
  if (chapters.length > 0) {
    const cue = Buffer.alloc(4 + 24 * chapters.length);
    cue.writeUInt32LE(chapters.length, 0);
    chapters.forEach((c, i) => {
      const at = 4 + 24 * i;
      const frame = Math.round(c.start * sampleRate);
      cue.writeUInt32LE(i + 1, at); // dwName: the cue point's id, which its label refers to
      cue.writeUInt32LE(frame, at + 4); // dwPosition
      cue.write('data', at + 8, 'latin1'); // fccChunk
      cue.writeUInt32LE(0, at + 12); // dwChunkStart
      cue.writeUInt32LE(0, at + 16); // dwBlockStart
      cue.writeUInt32LE(frame, at + 20); // dwSampleOffset
    });
    out.push(chunk('cue ', cue));
    const labels = chapters.map((c, i) => {
      const id = Buffer.alloc(4);
      id.writeUInt32LE(i + 1);
      return chunk('labl', Buffer.concat([id, zstr(c.title)]));
    });
    out.push(chunk('LIST', Buffer.concat([Buffer.from('adtl', 'latin1'), ...labels])));
  }
  return Buffer.concat(out);
}
