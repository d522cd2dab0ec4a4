/**
 * End to end on the built-in engine: `bin/tts.js` with no service configured starts the service
 * in-process and speaks through the ordinary SSE client (docs/cli.md §1 "Embedded default").
 * WAV files are checked byte by byte and by our WAV reader (sox judges each encoding in test/audio/wav.test.ts); playback through ALSA's file plugin.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import alawmulaw from 'alawmulaw';
import { parseWavHeader, wavFileInfo } from '../helpers/wav-reader.js';
import { runTts } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';

/** Threads of this process now (Linux: /proc/self/status); a worker thread is one. */
function threadCount(): number {
  return Number(/^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
}

describe('tts on the built-in engine', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-builtin-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes Japanese with kanji to an exact pcm16 WAV (format tag 1, 24000 Hz, mono)', async () => {
    const out = join(dir, 'ja.wav');
    const r = await runTtsInProcess(['say', '-o', out, '今日は良い天気です。東京タワーに行きました。']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.length, 0, 'nothing but audio on stdout, and say -o writes none');
    const bytes = await readFile(out);
    const h = parseWavHeader(bytes);
    assert.equal(h.formatTag, 1);
    assert.equal(h.channels, 1);
    assert.equal(h.sampleRate, 24000);
    assert.equal(h.bitsPerSample, 16);
    assert.equal(h.dataOffset, 44);
    assert.equal(h.dataBytes, bytes.length - 44);
    assert.equal(bytes.readUInt32LE(4), bytes.length - 8);
    const seconds = h.dataBytes / 2 / 24000;
    assert.ok(seconds > 2 && seconds < 8, `${seconds} s`);
    const read = wavFileInfo(out); // in-process: sox judges each encoding in test/audio/wav.test.ts
    assert.equal(read.rate, 24000);
    assert.equal(read.channels, 1);
    assert.equal(read.samples, h.dataBytes / 2);
  });

  for (const [format, tag, bits, encoding] of [
    ['pcm16', 1, 16, /Signed Integer PCM/],
    ['float32', 3, 32, /Floating Point PCM/],
    ['mulaw', 7, 8, /u-law/],
  ] as const) {
    it(`writes ${format} English to a WAV with format tag ${tag} that reads back whole`, async () => {
      const out = join(dir, `en-${format}.wav`);
      const r = await runTtsInProcess(['stream', '--voice', 'en-woman-1', '--format', format, '-o', out, 'Good morning, world.']);
      assert.equal(r.code, 0, r.stderr);
      const bytes = await readFile(out);
      const h = parseWavHeader(bytes);
      assert.equal(h.formatTag, tag);
      assert.equal(h.bitsPerSample, bits);
      assert.equal(h.sampleRate, 24000);
      const frames = h.dataBytes / (bits / 8);
      if (format !== 'pcm16') assert.equal(h.factSamples, frames);
      const read = wavFileInfo(out); // in-process: sox judges each encoding in test/audio/wav.test.ts
      assert.match(read.encoding, encoding);
      assert.equal(read.samples, frames);
      assert.ok(frames / 24000 > 0.5);
    });
  }

  it('reads stdin and -f, and writes raw audio to stdout', async () => {
    const viaStdin = await runTtsInProcess(['stream', '--voice', 'en-man-1'], { input: 'Hello there\n' });
    assert.equal(viaStdin.code, 0, viaStdin.stderr);
    assert.ok(viaStdin.stdout.length > 24000, `${viaStdin.stdout.length} bytes`);
    assert.equal(viaStdin.stdout.length % 2, 0);
    const file = join(dir, 'text.txt');
    await writeFile(file, 'Hello there\n');
    const viaFile = await runTtsInProcess(['stream', '--voice', 'en-man-1', '-f', file]);
    assert.equal(viaFile.code, 0, viaFile.stderr);
    // The engine is deterministic: the same text gives the same bytes.
    assert.deepEqual(viaFile.stdout, viaStdin.stdout);
  });

  it('speaks text on the command line (its engine started before the run loads) as the same text from stdin', async () => {
    // Issue 20: `bin/tts` starts the engine's worker as soon as the flags are parsed when the
    // text is on the command line; from stdin, once the text is read. Same bytes, English and
    // Japanese with kanji (kuromoji's dictionary then comes from the main thread).
    for (const [voice, text] of [
      ['en-man-1', 'Hello there, from the command line.'],
      ['ja-man-1', '東京駅から歩いて行きます。'],
    ] as const) {
      const inline = await runTts(['stream', '-q', '--voice', voice, text]);
      const piped = await runTts(['stream', '-q', '--voice', voice], { input: `${text}\n` });
      assert.equal(inline.code, 0, inline.stderr);
      assert.equal(piped.code, 0, piped.stderr);
      assert.ok(inline.stdout.length > 24000, `${text}: ${inline.stdout.length} bytes`);
      assert.ok(inline.stdout.equals(piped.stdout), text);
    }
  });

  it('keeps eSpeak NG’s own messages off stdout and stderr (Greek letters, whose dictionary is not loaded)', async () => {
    // eSpeak NG printed "Bad data: …el_dict" once per word through the worker's console, past -q.
    const r = await runTts(['stream', '-q', '--voice', 'ja-man-1', '--raw', 'αβγ δέλτα と 日本語。']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.ok(r.stdout.length > 0 && r.stdout.length % 2 === 0);
    assert.ok(!r.stdout.includes(Buffer.from('Bad data')), 'no text in the audio on stdout');
  });

  it('ends a run that fails after its engine started early with the run’s own error', async () => {
    // The early engine is closed by the run that started it (server/embedded-engine.ts): the
    // process ends with the error's exit code (docs/cli.md §3), no hang, nothing written.
    const missing = await runTts(['stream', '-o', join(dir, 'no-such-folder', 'x.wav'), 'Hello']);
    assert.equal(missing.code, 7, missing.stderr);
    assert.match(missing.stderr, /does not exist/);
    // In-process, no worker thread is left behind once main() returns: this process has as many
    // threads after a second failing run as before it (the first one starts any lazy pools). The
    // config folder is empty, so no developer's `base-url` turns the built-in engine off.
    const failing = ['stream', '--lexicon', join(dir, 'no-such.toml'), '-o', join(dir, 'never.wav'), 'Hello'];
    const env = { XDG_CONFIG_HOME: join(dir, 'no-config') };
    assert.equal((await runTtsInProcess(failing, { env })).code, 2);
    const before = threadCount();
    const lexicon = await runTtsInProcess(failing, { env });
    assert.equal(lexicon.code, 2, lexicon.stderr);
    assert.match(lexicon.stderr, /cannot read the lexicon/);
    assert.equal(threadCount(), before, 'the early engine’s worker thread was not left running');
    assert.deepEqual((await readdir(dir)).filter((f) => f.startsWith('never')), []);
  });

  it('rejects an unknown voice with exit 4 naming voice_not_found', async () => {
    const r = await runTtsInProcess(['stream', '--voice', 'xx-robot-9', 'Hello']);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /voice_not_found/);
    assert.equal(r.stdout.length, 0);
  });

  it('fails with exit 2 on empty, whitespace-only or invalid UTF-8 text, before any request', async () => {
    for (const input of ['', '   \n\t', Buffer.from([0x48, 0x69, 0xff, 0xfe])]) {
      const r = await runTtsInProcess(['stream', '--verbose'], { input });
      assert.equal(r.code, 2, `${JSON.stringify(input)}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /POST /);
    }
    const r = await runTtsInProcess(['stream', '-f', join(dir, 'missing.txt')]);
    assert.equal(r.code, 2);
  });

  it('prints a --json summary on stderr and only audio on stdout', async () => {
    const r = await runTtsInProcess(['stream', '--json', '--voice', 'en-man-1', 'Hi']);
    assert.equal(r.code, 0, r.stderr);
    const line = r.stderr.trim().split('\n').at(-1) ?? '';
    const s = JSON.parse(line) as Record<string, unknown>;
    assert.equal(s['ok'], true);
    assert.equal(s['bytes'], r.stdout.length);
    assert.equal(s['requests'], 1);
    assert.equal(s['output'], '-');
    assert.ok(typeof s['ttfa_ms'] === 'number' && typeof s['elapsed_ms'] === 'number');
    assert.ok(Math.abs((s['audio_seconds'] as number) - r.stdout.length / 48000) < 0.01);
    assert.match(String((s['item_ids'] as string[])[0]), /^item_[0-9a-f]+$/);
  });

  describe('playback through speaker (ALSA file plugin)', () => {
    let home: string;
    let played: string;
    before(async () => {
      home = await mkdtemp(join(tmpdir(), 'tts-home-'));
      played = join(home, 'played.raw');
      await writeFile(join(home, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${played}"; format "raw" }\n`);
    });
    after(async () => {
      await rm(home, { recursive: true, force: true });
    });

    async function playedBytes(args: string[]): Promise<Buffer> {
      await rm(played, { force: true });
      const r = await runTts(args, { env: { HOME: home } });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.length, 0);
      return readFile(played);
    }

    function assertPlayed(playedAudio: Buffer, expected: Buffer): void {
      assert.ok(playedAudio.length >= expected.length, `played ${playedAudio.length} of ${expected.length} bytes`);
      assert.deepEqual(playedAudio.subarray(0, expected.length), expected);
      // ALSA may pad the last period with silence, and nothing else.
      assert.ok(playedAudio.subarray(expected.length).every((b) => b === 0));
    }

    it('plays exactly the pcm16 stream that is written beside it', async () => {
      const out = join(dir, 'ja-woman.raw');
      const bytes = await playedBytes(['say', '--play', '-o', out, '--voice', 'ja-woman-1', 'こんにちは']);
      const file = await readFile(out);
      assert.ok(file.length > 24000);
      assertPlayed(bytes, file);
    });

    it('plays µ-law decoded to 16-bit', async () => {
      const out = join(dir, 'mulaw.raw');
      const bytes = await playedBytes(['say', '--play', '-o', out, '--format', 'mulaw', '--voice', 'en-man-1', 'Hello']);
      const decoded = alawmulaw.mulaw.decode(await readFile(out));
      assert.ok(decoded.length > 6000, `${decoded.length} samples`);
      assertPlayed(bytes, Buffer.from(decoded.buffer, decoded.byteOffset, decoded.byteLength));
    });

    it('plays with no -o, on the first delta', async () => {
      const bytes = await playedBytes(['say', '--voice', 'en-man-1', 'Hello']);
      assert.ok(bytes.length > 12000, `${bytes.length} bytes played`);
    });

    it('writes the file and plays with --play -o', async () => {
      const out = join(dir, 'both.raw');
      const bytes = await playedBytes(['say', '--play', '-o', out, '--voice', 'en-man-1', 'Hello']);
      const file = await readFile(out);
      assertPlayed(bytes, file);
      assert.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.tmp')), []);
    });
  });
});
