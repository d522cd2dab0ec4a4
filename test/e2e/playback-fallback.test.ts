/**
 * Playback that finds a way (docs/cli.md §2 "Playback"): with `speaker` unloadable (the
 * audio-no-speaker hook, as when npm could not build it) `tts say` streams into a system player
 * on PATH; `--player` forces one; only when nothing works does it exit 7, saying what to install.
 * The sound card is ALSA's file plugin, so the bytes played are compared with those served.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';
import { deltaEvent, doneEvent, patternBytes, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

const KEY = 'sk-test-SENTINEL-playback-77';
const NO_SPEAKER = ['--import', fileURLToPath(new URL('../helpers/audio-no-speaker.js', import.meta.url))];
/** 0.5 s of 24 kHz pcm16 mono, in three deltas. */
const AUDIO = [patternBytes(9600, 3), patternBytes(4802, 4), patternBytes(9598, 5)];

/** `played` must be `expected`, then nothing but zero bytes (ALSA may pad the last period). */
function assertPlayed(played: Buffer, expected: Buffer): void {
  assert.ok(played.length >= expected.length, `played ${played.length} bytes, expected ≥ ${expected.length}`);
  const i = played.subarray(0, expected.length).findIndex((b, k) => b !== expected[k]);
  assert.equal(i, -1, `played audio differs from the served audio at byte ${i}`);
  assert.ok(played.subarray(expected.length).every((b) => b === 0), 'only silence after the audio');
}

describe('playback falls back to a system player', () => {
  let home: string;
  let played: string;
  let server: TestServer;
  let env: Record<string, string>;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-fallback-'));
    played = join(home, 'played.raw');
    await writeFile(join(home, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${played}"; format "raw" }\n`);
    server = await startServer(async (_req, res) => {
      startEventStream(res);
      for (const a of AUDIO) res.write(deltaEvent(a));
      res.end(doneEvent());
    });
    env = { HOME: home, TTS_BASE_URL: server.url, TTS_API_KEY: KEY };
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });

  it('speaker missing: `tts say` plays through aplay, byte for byte, and --verbose names it', async () => {
    await rm(played, { force: true });
    const r = await runTts(['say', '--verbose', 'Hello'], { env, nodeArgs: NO_SPEAKER });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /playback: speaker cannot be used: .*not installed/);
    assert.match(r.stderr, /playback: aplay \(\/usr\/bin\/aplay\)/);
    assertPlayed(await readFile(played), Buffer.concat(AUDIO));
  });

  it('--player aplay is used even when speaker would load', async () => {
    await rm(played, { force: true });
    const r = await runTts(['say', '--verbose', '--player', 'aplay', 'Hello'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /playback: aplay/);
    assert.doesNotMatch(r.stderr, /playback: speaker/);
    assertPlayed(await readFile(played), Buffer.concat(AUDIO));
  });

  it("--player play (sox) plays the same bytes", async () => {
    await rm(played, { force: true });
    const r = await runTts(['say', '--verbose', '--player', 'play', 'Hello'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /playback: play \(/);
    assertPlayed(await readFile(played), Buffer.concat(AUDIO));
  });

  it('µ-law is decoded to 16-bit before it reaches the player', async () => {
    await rm(played, { force: true });
    const r = await runTts(['say', '--format', 'mulaw', 'Hello'], { env, nodeArgs: NO_SPEAKER });
    assert.equal(r.code, 0, r.stderr);
    const pcm = await readFile(played);
    // Every µ-law byte becomes one 16-bit sample.
    assert.ok(pcm.length >= Buffer.concat(AUDIO).length * 2, `${pcm.length} bytes played`);
  });

  it('nothing works: exit 7 naming each failure and the commands that fix it', async () => {
    const r = await runTts(['say', 'Hello'], { env: { ...env, PATH: join(home, 'no-bin') }, nodeArgs: NO_SPEAKER });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /^tts: error: cannot play audio: nothing to play with \(speaker is not installed; no system player on PATH\) \[no_playback_device\]$/m);
    assert.match(r.stderr, /apt-get install alsa-utils \(gives aplay\)/);
    assert.match(r.stderr, /npm install --include=optional --foreground-scripts/);
  });

  it('players there but no usable device: exit 7 saying so, before any request', async () => {
    const { mkdir, symlink } = await import('node:fs/promises');
    const nocard = join(home, 'nocard');
    const bin = join(nocard, 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(nocard, '.asoundrc'), 'pcm.!default { type hw; card "tts_no_such_card" }\n');
    for (const p of ['aplay', 'play']) await symlink(`/usr/bin/${p}`, join(bin, p)).catch(() => {});
    const before = server.requests.length;
    const r = await runTts(['say', '--verbose', 'Hello'], { env: { ...env, HOME: nocard, PATH: bin }, nodeArgs: NO_SPEAKER });
    assert.equal(r.code, 7, r.stderr);
    // One short line naming the cause (issue 19 §10); each player's own error under --verbose.
    const error = r.stderr.split('\n').find((l) => l.startsWith('tts: error:')) ?? '';
    assert.match(error, /^tts: error: cannot play audio: no (sound device \(ALSA has no sound card\)|player could open the sound device \(tried aplay, play\)) \[no_playback_device\]$/);
    assert.match(r.stderr, /playback: aplay cannot play here \(exit 1: .*\)/);
    assert.match(r.stderr, /playback: play cannot play here/);
    assert.doesNotMatch(r.stderr, /alsa-utils/, 'aplay is installed');
    assert.equal(server.requests.length, before, 'no request was sent');
  });

  it('ffplay, which exits 0 when it cannot open the device, is still seen to fail (exit 7)', { skip: spawnSync('sh', ['-c', 'command -v ffplay']).status === 0 ? false : 'ffplay is not installed' }, async () => {
    const { mkdir } = await import('node:fs/promises');
    const nocard = join(home, 'nocard-ffplay');
    await mkdir(nocard, { recursive: true });
    await writeFile(join(nocard, '.asoundrc'), 'pcm.!default { type hw; card "tts_no_such_card" }\n');
    // Seen at once (no_playback_device), or — on a loaded machine, after its first second —
    // at the end of playback (io_error): never a success.
    const r = await runTts(['say', '--verbose', '--player', 'ffplay', 'Hello'], { env: { ...env, HOME: nocard } });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /ffplay (cannot play here|failed) \(exit 0: .*(Failed|failed)/);
  });

  it('--player speaker with speaker missing: exit 7 with how to build it', async () => {
    const r = await runTts(['say', '--player', 'speaker', 'Hello'], { env, nodeArgs: NO_SPEAKER });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /npm install --include=optional --foreground-scripts/);
  });

  it('--player paplay that is not on PATH: exit 7 naming its package', async () => {
    const r = await runTts(['say', '--player', 'paplay', 'Hello'], { env: { ...env, PATH: join(home, 'no-bin') } });
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /paplay is not on PATH/);
    assert.match(r.stderr, /pulseaudio-utils/);
  });

  it('a player that cannot open the device is skipped for the next one', async () => {
    const bin = join(home, 'bin');
    const { mkdir, symlink, chmod } = await import('node:fs/promises');
    await mkdir(bin, { recursive: true });
    // A fake aplay that refuses at once, as aplay does without a card; sox's play comes next.
    await writeFile(join(bin, 'aplay'), '#!/bin/sh\necho "aplay: main:831: audio open error: No such device" >&2\nexit 1\n');
    await chmod(join(bin, 'aplay'), 0o755);
    await symlink('/usr/bin/play', join(bin, 'play')).catch(() => {});
    await rm(played, { force: true });
    const r = await runTts(['say', '--verbose', 'Hello'], { env: { ...env, PATH: bin }, nodeArgs: NO_SPEAKER });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /aplay cannot play here \(exit 1: aplay: main:831: audio open error: No such device\)/);
    assert.match(r.stderr, /playback: play \(/);
    assertPlayed(await readFile(played), Buffer.concat(AUDIO));
  });
});
