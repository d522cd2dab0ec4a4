/**
 * Containers (docs/cli.md §2 "Containers"), judged by ffprobe/ffmpeg: `bin/tts.js` writes FLAC,
 * MP3 and Ogg Opus by the file's extension or --container, to files and through pipes, at
 * several rates and channel counts; the audio lasts what the WAV of the same text lasts; a pipe
 * gets its first bytes while the service is still sending; bad names and `--format mp3` are
 * usage errors; a failed run leaves an existing file as it was.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TTS_BIN, cleanEnv } from '../helpers/cli.js';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';
import { decodedSeconds, haveFfmpeg, probe } from '../helpers/ffprobe.js';
import { deltaEvent, doneEvent, startEventStream, withServer } from '../helpers/servers.js';

const KEY = 'sk-test-containers-0a1b2c';
const TEXT = 'Good morning. This sentence is long enough to measure how long each container lasts. A second one makes sure that even at a high rate the audio is several seconds long.';
const skip = haveFfmpeg ? false : 'ffmpeg/ffprobe not installed';

/** 100 ms of a 440 Hz tone, pcm16 mono at 24 kHz, starting at sample `from` (so deltas join smoothly). */
function tone(from: number, frames = 2400): Buffer {
  const b = Buffer.alloc(frames * 2);
  for (let i = 0; i < frames; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * (from + i)) / 24000)), i * 2);
  return b;
}

describe('containers by extension, judged by ffprobe and ffmpeg', { skip }, () => {
  let dir: string;
  /**
   * One built-in service for the file's synthesis runs: one engine start instead of one per run
   * (what is judged here is the container writer; the embedded default is the piped run's).
   */
  let srv: InProcessServe;
  let builtin: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-containers-'));
    srv = await startServeInProcess(['--port', '0', '--rate-limit', '100000/min', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY });
    builtin = { TTS_BASE_URL: srv.base, TTS_API_KEY: KEY };
  });
  after(async () => {
    await srv.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const configs = [
    { rate: 24000, channels: 1, format: 'pcm16' },
    { rate: 16000, channels: 2, format: 'mulaw' },
    { rate: 44100, channels: 2, format: 'float32' },
  ] as const;
  for (const { rate, channels, format } of configs) {
    it(`writes FLAC, MP3 and Ogg Opus at ${rate} Hz × ${channels} (${format}) lasting what the WAV lasts`, async () => {
      const flags = ['--voice', 'en-woman-1', '-r', String(rate), '-c', String(channels), '--format', format, '-q'];
      const wav = join(dir, `ref-${rate}-${channels}.wav`);
      const ref = await runTtsInProcess(['stream', ...flags, '-o', wav, TEXT], { env: builtin });
      assert.equal(ref.code, 0, ref.stderr);
      const seconds = decodedSeconds(wav).seconds;
      assert.ok(seconds > 1.5, `reference lasts ${seconds} s`);
      const expected = {
        flac: { codec: 'flac', format: 'flac', sampleRate: rate },
        mp3: { codec: 'mp3', format: 'mp3', sampleRate: rate },
        opus: { codec: 'opus', format: 'ogg', sampleRate: 48000 },
        ogg: { codec: 'opus', format: 'ogg', sampleRate: 48000 },
      } as const;
      for (const [ext, want] of Object.entries(expected)) {
        const out = join(dir, `out-${rate}-${channels}.${ext}`);
        const r = await runTtsInProcess(['stream', ...flags, '-o', out, TEXT], { env: builtin });
        assert.equal(r.code, 0, `${ext}: ${r.stderr}`);
        const p = probe(out);
        assert.deepEqual({ codec: p.codec, format: p.format, sampleRate: p.sampleRate, channels: p.channels }, { ...want, channels }, ext);
        const got = decodedSeconds(out);
        assert.equal(got.errors, '', `${ext}: ffmpeg complained`);
        assert.ok(Math.abs(got.seconds - seconds) <= seconds * 0.05, `${ext}: ${got.seconds} s decoded vs WAV ${seconds} s`);
        // The file's own header tells the length too (FLAC: STREAMINFO patched at the end).
        assert.ok(Math.abs(p.duration - seconds) <= seconds * 0.05, `${ext}: ffprobe says ${p.duration} s vs WAV ${seconds} s`);
      }
    });
  }

  it('--container overrides the name, and MP3 goes through a pipe into ffprobe', async () => {
    const forced = join(dir, 'forced.wav');
    const r = await runTtsInProcess(['stream', '--voice', 'en-man-1', '--container', 'flac', '-o', forced, 'Hello there.'], { env: builtin });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(probe(forced).codec, 'flac');
    const piped = spawnSync('bash', ['-o', 'pipefail', '-c', `"${process.execPath}" "${TTS_BIN}" stream --voice en-man-1 --container mp3 "${TEXT}" | ffprobe -v error -show_entries stream=codec_name,channels -of csv=p=0 -`], {
      env: cleanEnv(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(piped.status, 0, piped.stderr);
    assert.equal(piped.stdout.trim(), 'mp3,1');
    // FLAC and Opus on a pipe cannot be patched afterwards: what went out must decode as it is.
    for (const container of ['flac', 'opus']) {
      const s = await runTtsInProcess(['stream', '--voice', 'en-man-1', '--container', container, TEXT], { env: builtin });
      assert.equal(s.code, 0, s.stderr);
      const got = decodedSeconds(s.stdout);
      assert.equal(got.errors, '', container);
      assert.ok(got.seconds > 2, `${container} from a pipe: ${got.seconds} s`);
    }
  });

  for (const container of ['mp3', 'opus', 'flac']) {
    it(`${container} to a pipe: the first bytes leave before the service is done`, async () => {
      let firstBytes!: () => void;
      const seen = new Promise<void>((resolve) => (firstBytes = resolve));
      let doneSent = false;
      let bytesBeforeDone = 0;
      await withServer(
        async (_req, res) => {
          startEventStream(res);
          // One second of audio in ten deltas, 50 ms apart, then nothing until the client's
          // first encoded bytes show up on its stdout (or 15 s pass), and only then `done`.
          for (let i = 0; i < 10; i++) {
            res.write(deltaEvent(tone(i * 2400)));
            await new Promise((r) => setTimeout(r, 50));
          }
          await Promise.race([seen, new Promise((r) => setTimeout(r, 15_000))]);
          res.write(deltaEvent(tone(10 * 2400)));
          doneSent = true;
          res.end(doneEvent());
        },
        async (server) => {
          const child = spawn(process.execPath, [TTS_BIN, 'stream', '--container', container, 'Hello'], {
            env: cleanEnv({ TTS_BASE_URL: server.url, TTS_API_KEY: KEY }),
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          const out: Buffer[] = [];
          let err = '';
          child.stdout.on('data', (d: Buffer) => {
            if (!doneSent) bytesBeforeDone += d.length;
            out.push(d);
            firstBytes();
          });
          child.stderr.on('data', (d: Buffer) => (err += d.toString()));
          const code = await new Promise((resolve) => child.on('close', resolve));
          assert.equal(code, 0, err);
          assert.ok(bytesBeforeDone > 0, `no ${container} byte arrived before done`);
          const got = decodedSeconds(Buffer.concat(out));
          assert.ok(Math.abs(got.seconds - 1.1) < 0.1, `${container}: ${got.seconds} s decoded, 1.1 s sent`);
        },
      );
    });
  }

  it('refuses a name with no container (exit 2, listing them) and --format mp3 (exit 2, pointing to --container)', async () => {
    await withServer(
      (_req, res) => void res.end(),
      async (server) => {
        const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY };
        for (const name of ['notes.txt', 'speech.m4a', 'noextension']) {
          const r = await runTtsInProcess(['stream', '-o', join(dir, name), 'Hello'], { env });
          assert.equal(r.code, 2, r.stderr);
          assert.match(r.stderr, /\.wav, \.raw, \.pcm, \.flac, \.mp3, \.ogg, \.opus/);
          assert.match(r.stderr, /--container wav\|raw\|flac\|mp3\|opus/);
        }
        const f = await runTtsInProcess(['stream', '--format', 'mp3', '-o', join(dir, 'x.mp3'), 'Hello'], { env });
        assert.equal(f.code, 2, f.stderr);
        assert.match(f.stderr, /--format is the encoding the service sends \(pcm16\|float32\|mulaw\)/);
        assert.match(f.stderr, /--container mp3/);
        const b = await runTtsInProcess(['stream', '--bitrate', '33', '-o', join(dir, 'x.mp3'), 'Hello'], { env });
        assert.equal(b.code, 2, b.stderr);
        assert.match(b.stderr, /not an MP3 bit rate/);
        const c = await runTtsInProcess(['stream', '-c', '3', '-o', join(dir, 'x.opus'), 'Hello'], { env });
        assert.equal(c.code, 2, c.stderr);
        assert.equal(server.requests.length, 0, 'nothing was requested');
        assert.deepEqual((await readdir(dir)).filter((n) => /^(notes|speech|noextension|x)\b/.test(n)), []);
      },
    );
  });

  it('a failed run leaves an existing MP3/FLAC/Opus file untouched and no temporary file', async () => {
    const keep = await mkdtemp(join(dir, 'keep-'));
    await withServer(
      async (_req, res) => {
        startEventStream(res);
        for (let i = 0; i < 5; i++) res.write(deltaEvent(tone(i * 2400)));
        res.end(); // no `done`: the stream ended early
      },
      async (server) => {
        for (const ext of ['mp3', 'flac', 'opus']) {
          const target = join(keep, `good.${ext}`);
          await writeFile(target, 'precious old content');
          const r = await runTtsInProcess(['stream', '--retries', '0', '-o', target, 'Hello'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
          assert.equal(r.code, 6, r.stderr);
          assert.equal(await readFile(target, 'utf8'), 'precious old content', ext);
        }
        assert.deepEqual((await readdir(keep)).sort(), ['good.flac', 'good.mp3', 'good.opus']);
      },
    );
  });
});
