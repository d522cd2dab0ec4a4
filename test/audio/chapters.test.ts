/**
 * Chapters and tags in the containers (docs/cli.md §10 "Chapters"): the bytes of each writer,
 * and files made by our own encoders read back by ffprobe -show_chapters.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { clock, vorbisChapterComments, wavChapterChunks, webvttChapters, type AudioChapter } from '../../src/audio/containers/chapters.js';
import { writeChapterMetadata, type TaggedContainer } from '../../src/audio/containers/chapter-files.js';
import { id3v24Tag, id3v2Length } from '../../src/audio/containers/id3.js';
import { openEncoder } from '../../src/audio/containers/registry.js';
import { wavHeader } from '../../src/audio/wav.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { which } from '../helpers/engine-audio.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'tts-chapters-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SPEC: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };
const CHAPTERS: AudioChapter[] = [
  { title: 'Introduction', start: 0, end: 1.25 },
  { title: 'Zweites Kapitel — Über', start: 1.25, end: 2.5 },
  { title: '第三章', start: 2.5, end: 3 },
];
const TAGS = { title: 'A Book', artist: 'Jo Writer', album: 'A Book' };

/** 3 s of a quiet 440 Hz tone, pcm16 mono at 24000 Hz. */
function tone(): Buffer {
  const frames = SPEC.sampleRate * 3;
  const b = Buffer.alloc(frames * 2);
  for (let i = 0; i < frames; i++) b.writeInt16LE(Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / SPEC.sampleRate)), i * 2);
  return b;
}

/** A file of `container` made by tts's own encoder (or WAV header), as the file sink writes it. */
async function audioFile(container: TaggedContainer): Promise<string> {
  const pcm = tone();
  let bytes: Buffer;
  if (container === 'wav') bytes = Buffer.concat([wavHeader(SPEC, pcm.length), pcm]);
  else {
    const enc = await openEncoder(container, SPEC, undefined);
    const parts = [enc.encode(pcm), enc.finish()];
    bytes = Buffer.concat(parts);
    const patch = enc.headerPatch();
    if (patch !== undefined) patch.bytes.copy(bytes, patch.offset);
    enc.free();
  }
  const path = join(dir, `book.${container === 'opus' ? 'ogg' : container}`);
  writeFileSync(path, bytes);
  return path;
}

describe('chapter writers', () => {
  it('clock() gives HH:MM:SS.mmm', () => {
    assert.equal(clock(0), '00:00:00.000');
    assert.equal(clock(3725.0456), '01:02:05.046');
  });

  it('a WebVTT chapters track escapes names', () => {
    assert.equal(webvttChapters([{ title: 'A & <B>', start: 0, end: 61.5 }]), 'WEBVTT\n\n1\n00:00:00.000 --> 00:01:01.500\nA &amp; &lt;B&gt;\n');
  });

  it('a WebVTT chapters track leaves out control characters, as subtitle cues do (docs/cli.md §10: "escaped as in subtitles")', () => {
    const track = webvttChapters([{ title: 'Chap \u001b[2J one', start: 0, end: 1 }, { title: 'Two \u009b31m\u0007', start: 1, end: 2 }]);
    assert.equal(track, 'WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.000\nChap [2J one\n\n2\n00:00:01.000 --> 00:00:02.000\nTwo 31m\n');
  });

  it('every writer leaves C0, C1 and bidirectional controls out of names and tags, as the WebVTT chapters track does (docs/cli.md §10)', () => {
    // An OSC that would set a terminal's title, a one-byte CSI, NEL, a right-to-left override and an isolate.
    const hostile: AudioChapter[] = [
      { title: 'Ch\u001b]0;PWN\u0007one', start: 0, end: 1 },
      { title: 'Two \u009b2J\u0085 \u202egpj.exe\u2066x\u2069', start: 1, end: 2 },
    ];
    const tags = { title: 'Book\u001b[31m', artist: 'Jo\u009d0;t\u009c', album: 'A\u202e\u0007lbum' };
    const names = ['Ch]0;PWNone', 'Two 2J gpj.exex'];
    assert.equal(webvttChapters(hostile), `WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.000\n${names[0]}\n\n2\n00:00:01.000 --> 00:00:02.000\n${names[1]}\n`);
    assert.deepEqual(vorbisChapterComments(tags, hostile), ['TITLE=Book[31m', 'ARTIST=Jo0;t', 'ALBUM=Album', 'CHAPTER001=00:00:00.000', `CHAPTER001NAME=${names[0]}`, 'CHAPTER002=00:00:01.000', `CHAPTER002NAME=${names[1]}`]);
    for (const [writer, bytes] of [['ID3', id3v24Tag(tags, hostile)], ['WAV', wavChapterChunks(tags, hostile, 24000)]] as const) {
      for (const name of [...names, 'Book[31m', 'Jo0;t', 'Album']) assert.ok(bytes.includes(Buffer.from(name, 'utf8')), `${writer}: ${name} is not written`);
      for (const raw of ['\u001b', '\u0007lbum', '\u009b', '\u009c', '\u009d', '\u0085', '\u202e', '\u2066', '\u2069']) assert.ok(!bytes.includes(Buffer.from(raw, 'utf8')), `${writer} holds ${JSON.stringify(raw)}`);
    }
  });

  it('mp3: ffprobe reads chapter names without the controls of the headings', async (t) => {
    if ((await which('ffprobe')) === undefined) return t.skip('ffprobe is not installed (apt-get install ffmpeg)');
    const path = await audioFile('mp3');
    await writeChapterMetadata(path, 'mp3', { title: 'B\u009b2Jook' }, [{ title: 'Ch\u001b]0;PWN\u0007one', start: 0, end: 1.5 }, { title: 'Two\u202e', start: 1.5, end: 3 }], SPEC.sampleRate);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_chapters', '-show_format', '-of', 'json', path]);
    const probe = JSON.parse(stdout) as { chapters: { tags?: { title?: string } }[]; format: { tags?: { title?: string } } };
    assert.deepEqual(probe.chapters.map((c) => c.tags?.title), ['Ch]0;PWNone', 'Two']);
    assert.equal(probe.format.tags?.title, 'B2Jook');
  });

  it('Vorbis comments: tags, then CHAPTERnnn and CHAPTERnnnNAME', () => {
    assert.deepEqual(vorbisChapterComments({ title: 'T' }, CHAPTERS.slice(0, 2)), ['TITLE=T', 'CHAPTER001=00:00:00.000', 'CHAPTER001NAME=Introduction', 'CHAPTER002=00:00:01.250', 'CHAPTER002NAME=Zweites Kapitel — Über']);
  });

  it('an ID3v2.4 tag: header, synchsafe size, CTOC listing each CHAP', () => {
    const tag = id3v24Tag(TAGS, CHAPTERS);
    assert.equal(tag.toString('latin1', 0, 5), 'ID3\x04\x00');
    assert.equal(id3v2Length(tag), tag.length);
    assert.equal(tag.toString('latin1').split('CHAP').length - 1, 3);
    assert.ok(tag.includes(Buffer.from('CTOC\0', 'latin1')) || tag.includes(Buffer.from('CTOC', 'latin1')));
    // No byte of a synchsafe size has its top bit set.
    for (const b of tag.subarray(6, 10)) assert.ok(b < 0x80);
  });

  for (const container of ['mp3', 'flac', 'opus', 'wav'] as const) {
    it(`${container}: ffprobe reads the chapters and tags back, the audio is unchanged`, async (t) => {
      if ((await which('ffprobe')) === undefined) return t.skip('ffprobe is not installed (apt-get install ffmpeg)');
      const path = await audioFile(container);
      const before = await decode(path);
      await writeChapterMetadata(path, container, TAGS, CHAPTERS, SPEC.sampleRate);
      assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_chapters', '-show_format', '-show_streams', '-of', 'json', path]);
      const probe = JSON.parse(stdout) as { chapters: { start_time: string; end_time: string; tags?: { title?: string } }[]; format: { tags?: Record<string, string> }; streams: { tags?: Record<string, string> }[] };
      // Ogg keeps the comments on its stream, the others on the file.
      const tags = Object.fromEntries(Object.entries({ ...probe.streams[0]?.tags, ...probe.format.tags }).map(([k, v]) => [k.toLowerCase(), v]));
      assert.equal(tags.title, 'A Book');
      if (container !== 'wav') assert.equal(tags.artist, 'Jo Writer');
      if (container === 'wav' && probe.chapters.length === 0) {
        // ffmpeg 5 reads a WAV's INFO tags but not its cue points: check our chunks ourselves.
        const bytes = readFileSync(path);
        assert.ok(bytes.includes(Buffer.from('cue ', 'latin1')) && bytes.includes(Buffer.from('labl', 'latin1')));
        assert.equal(bytes.readUInt32LE(4), bytes.length - 8, 'RIFF size covers the new chunks');
      } else {
        assert.deepEqual(probe.chapters.map((c) => c.tags?.title), CHAPTERS.map((c) => c.title));
        probe.chapters.forEach((c, i) => assert.ok(Math.abs(Number(c.start_time) - CHAPTERS[i]!.start) < 0.002, `${c.start_time} vs ${CHAPTERS[i]!.start}`));
      }
      assert.deepEqual(await decode(path), before, 'the decoded audio is the same');
    });
  }

  it('opus: comments over one page (1200 chapters; the 999 the format can number are written) renumber the pages after them, CRCs redone', async (t) => {
    if ((await which('ffprobe')) === undefined) return t.skip('ffprobe is not installed (apt-get install ffmpeg)');
    const path = await audioFile('opus');
    const before = await decode(path);
    const many = Array.from({ length: 1200 }, (_, i) => ({ title: `Chapter number ${i + 1} of a long book`, start: (i * 3) / 1200, end: ((i + 1) * 3) / 1200 }));
    await writeChapterMetadata(path, 'opus', {}, many, SPEC.sampleRate);
    const { stdout, stderr } = await run('ffprobe', ['-v', 'error', '-show_chapters', '-of', 'json', path]);
    assert.equal(stderr, '', 'ffprobe finds no bad page (CRC, sequence)');
    assert.equal((JSON.parse(stdout) as { chapters: unknown[] }).chapters.length, 999);
    assert.equal(await decode(path), before);
  });

  it('a file that is not of its container: io_error, the file untouched, no temporary file', async () => {
    const path = join(dir, 'not.flac');
    writeFileSync(path, 'not audio at all');
    await assert.rejects(writeChapterMetadata(path, 'flac', TAGS, CHAPTERS, 24000), (e: unknown) => e instanceof Error && (e as { exitCode?: number }).exitCode === 7);
    assert.equal(readFileSync(path, 'utf8'), 'not audio at all');
    assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), []);
  });

  it('-o through a symbolic link: the chapters go into the file the audio went to, the link stays a link', async () => {
    // The audio sink writes through links (audio/file-sink.ts resolves them); the chapters must follow it there.
    const target = await audioFile('wav');
    const before = readFileSync(target);
    const link = join(dir, 'link.wav');
    symlinkSync(target, link);
    await writeChapterMetadata(link, 'wav', TAGS, CHAPTERS, SPEC.sampleRate);
    assert.equal(lstatSync(link).isSymbolicLink(), true, 'the link was replaced by a file');
    const after = readFileSync(target);
    assert.ok(after.length > before.length && after.includes(Buffer.from('cue ')), 'the linked file did not get the chapters');
  });
});

/** The file decoded by ffmpeg to raw pcm16 (its MD5 suffices to compare). */
async function decode(path: string): Promise<string> {
  const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 'md5', '-'], { maxBuffer: 1024 * 1024 });
  return stdout.trim();
}
