/**
 * The audio stage (src/speak/audio-stage.ts) and the subtitle file (src/speak/subtitles.ts):
 * pauses only between pieces, cues timed from the bytes handed out, a rewind goes back to where
 * the piece (and its pause) began; the file appears only when finished.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TtsError } from '../../src/errors.js';
import { AudioStage } from '../../src/speak/audio-stage.js';
import { convertChunks, reportedSpec } from '../../src/speak/convert-stream.js';
import { cueText, formatKaraokeCue, openSubtitles, timestamp } from '../../src/speak/subtitles.js';

const spec = { format: 'pcm16' as const, sampleRate: 1000, channels: 1 };

describe('AudioStage', () => {
  it('passes audio untouched when nothing is asked', async () => {
    assert.equal(await AudioStage.create(spec, { speed: 1, volume: 1, pauseMs: 0, cues: false }), undefined);
  });

  it('puts the pause between pieces only, and times cues after it', async () => {
    const stage = (await AudioStage.create(spec, { speed: 1, volume: 1, pauseMs: 250, cues: true }))!;
    const bytes = (bufs: Buffer[]): number => bufs.reduce((n, b) => n + b.length, 0);
    assert.equal(bytes(stage.audio(Buffer.alloc(1000))), 1000);
    const first = stage.pieceEnd('Hello there. ');
    assert.deepEqual(first.cue, { start: 0, end: 0.5, text: 'Hello there. ' });
    // 250 ms of silence at 1000 Hz pcm16 = 500 bytes, then the audio.
    assert.equal(bytes(stage.audio(Buffer.alloc(600))), 1100);
    // The piece broke: back to before its pause.
    assert.equal(stage.rewind(), 1000);
    assert.equal(bytes(stage.audio(Buffer.alloc(800))), 1300);
    const second = stage.pieceEnd('How are you?');
    assert.deepEqual(second.cue, { start: 0.75, end: 1.15, text: 'How are you?' });
    // A piece with no audio has no cue and no pause.
    assert.equal(stage.pieceEnd('…').cue, undefined);
    stage.destroy();
  });
});

describe('subtitle files', () => {
  it('formats SubRip and WebVTT timestamps and cue text', () => {
    assert.equal(timestamp(3723.4567, 'srt'), '01:02:03,457');
    assert.equal(timestamp(0.0004, 'vtt'), '00:00:00.000');
    assert.equal(cueText('  A <b> & c\n\n  d.  ', 'vtt'), 'A &lt;b&gt; &amp; c d.');
    assert.equal(cueText('  A <b>\r\nc  ', 'srt'), 'A <b> c');
    // Control characters from the text (an ESC sequence) never reach the file; tabs stay.
    assert.equal(cueText('Red \u001b[31malert\u0007 now\u009b.\tok', 'srt'), 'Red [31malert now.\tok');
  });

  it('balances bidirectional formatting in each cue line: an open RLO is closed at its end, a stray PDF or PDI left out, marks and balanced pairs kept (CVE-2021-42574)', () => {
    // An override left open would reorder the next line, or the terminal's prompt (--subtitles /dev/stderr).
    assert.equal(cueText('Total \u202Eevil text', 'srt'), 'Total \u202Eevil text\u202C');
    assert.equal(cueText('a \u2067b \u202Bc', 'srt'), 'a \u2067b \u202Bc\u202C\u2069');
    // Closed within the line: as written, so right-to-left subtitles still read right.
    assert.equal(cueText('\u2067\u05E9\u05DC\u05D5\u05DD\u2069 and \u202Bx\u202C \u200F\u200E\u061C', 'srt'), '\u2067\u05E9\u05DC\u05D5\u05DD\u2069 and \u202Bx\u202C \u200F\u200E\u061C');
    // Terminators that close nothing go; a PDF never closes across an isolate; a PDI closes the embeddings inside its isolate first.
    assert.equal(cueText('\u202Cx\u2069 y', 'srt'), 'x y');
    assert.equal(cueText('\u2066a\u202Eb\u2069c', 'srt'), '\u2066a\u202Eb\u202C\u2069c');
    assert.equal(cueText('\u202Ea\u2066b\u202Cc', 'srt'), '\u202Ea\u2066bc\u2069\u202C');
    // Deeper than UAX #9's 125: the extra openers and their closers are left out, the rest closed.
    const deep = cueText('\u202B'.repeat(130) + 'x' + '\u202C'.repeat(3), 'srt');
    assert.equal(deep, '\u202B'.repeat(125) + 'x' + '\u202C'.repeat(125));
    // Each WebVTT karaoke line and the speaker's name on their own.
    const karaoke = formatKaraokeCue({ start: 0, end: 1, text: '\u202Eab cd', words: [{ text: '\u202Eab', start: 0, end: 0.5, charStart: 0, charEnd: 3 }, { text: 'cd', start: 0.5, end: 1, charStart: 4, charEnd: 6 }], span: { speaker: 'Al\u202E' } });
    assert.equal(karaoke, '00:00:00.000 --> 00:00:01.000\n<v Al\u202E\u202C>\u202Eab <00:00:00.500>cd\u202C\n\n');
  });

  it('appears only on finish, keeps an old file on abort', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-subs-'));
    try {
      const path = join(dir, 'x.vtt');
      await writeFile(path, 'old');
      const aborted = await openSubtitles(path);
      await aborted.add({ start: 0, end: 1, text: 'one' });
      await aborted.abort();
      assert.equal(await readFile(path, 'utf8'), 'old');
      assert.deepEqual(await readdir(dir), ['x.vtt']);
      const w = await openSubtitles(path);
      await w.add({ start: 0, end: 1.5, text: 'one' });
      await w.add({ start: 2, end: 3, text: 'two' });
      assert.equal(await readFile(path, 'utf8'), 'old');
      await w.finish();
      assert.equal(await readFile(path, 'utf8'), 'WEBVTT\n\n00:00:00.000 --> 00:00:01.500\none\n\n00:00:02.000 --> 00:00:03.000\ntwo\n\n');
      assert.deepEqual(await readdir(dir), ['x.vtt']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('what arrives', () => {
  const asked = { format: 'pcm16' as const, sampleRate: 48000, channels: 2 };

  it('reads the session tts_session.updated reported, falling back field by field to what was asked', () => {
    assert.deepEqual(reportedSpec({ output_audio_format: 'mulaw', output_audio_sample_rate: 24000, output_audio_number_of_channels: 1 }, asked), { format: 'mulaw', sampleRate: 24000, channels: 1 });
    assert.deepEqual(reportedSpec({ output_audio_format: 'mp3', output_audio_sample_rate: 1e9, output_audio_number_of_channels: 2.5 }, asked), asked);
    assert.deepEqual(reportedSpec({}, asked), asked);
  });

  it('passes the very same chunks through when nothing differs, converts when something does', async () => {
    const chunks = [Buffer.alloc(4800, 1), Buffer.alloc(4800, 2)];
    async function* source() {
      for (const data of chunks) yield { data, itemId: 'item_1' };
    }
    const same: Buffer[] = [];
    for await (const c of convertChunks(source(), () => asked, asked)) same.push(c.data);
    assert.equal(same[0], chunks[0]);
    assert.equal(same[1], chunks[1]);
    let bytes = 0;
    for await (const c of convertChunks(source(), () => ({ format: 'pcm16', sampleRate: 24000, channels: 1 }), asked)) bytes += c.data.length;
    // 4800 frames of 24 kHz mono → 9600 frames of 48 kHz stereo pcm16.
    assert.equal(bytes, 9600 * 4);
  });

  it('refuses audio at a rate more than 256 times off the one asked (found by review: it was "a bug in tts", exit 1)', async () => {
    async function* source() {
      yield { data: Buffer.alloc(1498), itemId: 'item_1' };
    }
    const convert = async (rate: number): Promise<number> => {
      let bytes = 0;
      for await (const c of convertChunks(source(), () => ({ format: 'pcm16', sampleRate: rate, channels: 1 }), { format: 'pcm16', sampleRate: 192000, channels: 1 })) bytes += c.data.length;
      return bytes;
    };
    await assert.rejects(convert(749), (err: unknown) => err instanceof TtsError && err.code === 'protocol_error' && err.exitCode === 6 && /749 Hz/.test(err.message));
    // 750 Hz is exactly 256 times lower: converted.
    assert.ok((await convert(750)) > 0);
  });
});
