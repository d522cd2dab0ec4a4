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
import { cueText, openSubtitles, timestamp } from '../../src/speak/subtitles.js';

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
