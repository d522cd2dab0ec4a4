/**
 * Why nothing can play, and the fix for the case at hand (src/audio/playback-diagnosis.ts,
 * playback.ts; issue 19 points 9 and 10): speaker missing / not built / built with no device;
 * ALSA with no card; one short first line, the per-player details only under --verbose.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openPlayback } from '../../src/audio/playback.js';
import { findOnPath, openSystemPlayerSink } from '../../src/audio/system-player.js';
import { alsaCards, playbackDiagnosis, speakerBuild, speakerDetail, speakerFix, type BackendReport } from '../../src/audio/playback-diagnosis.js';
import { TtsError } from '../../src/errors.js';

const SPEC = { format: 'pcm16', sampleRate: 24000, channels: 1 } as const;
const noDevice = (name: string): BackendReport => ({ name, ok: false, state: 'no-device', detail: `${name} cannot play here (exit 1: ${'x'.repeat(300)})` });

describe('playback diagnosis (issue 19 §9, §10)', () => {
  it('tells speaker absent, never built, built-and-failed and built apart, from its folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-speaker-'));
    try {
      const resolve = (): string => join(dir, 'package.json');
      assert.deepEqual(speakerBuild(() => { throw new Error('Cannot find module'); }), { state: 'absent' });
      assert.deepEqual(speakerBuild(resolve), { state: 'unbuilt', dir, buildFailed: false });
      await mkdir(join(dir, 'build'));
      assert.deepEqual(speakerBuild(resolve), { state: 'unbuilt', dir, buildFailed: true });
      await mkdir(join(dir, 'build', 'Release'));
      await writeFile(join(dir, 'build', 'Release', 'binding.node'), '');
      assert.deepEqual(speakerBuild(resolve), { state: 'built', dir });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives the npm 11 command that really builds it, and blames the ALSA headers only when missing', () => {
    assert.match(speakerFix('absent', true), /&& npm install --include=optional --foreground-scripts$/);
    assert.match(speakerFix('unbuilt', true), /&& npm rebuild speaker --foreground-scripts$/);
    assert.doesNotMatch(speakerFix('unbuilt', true), /libasound2-dev/);
    assert.doesNotMatch(speakerFix('absent', true), /npm install speaker/, '"up to date" when its folder is there');
    assert.match(speakerFix('unbuilt', false), /^apt-get install libasound2-dev .*then: cd .* && npm rebuild speaker/);
  });

  it('doctor\'s speaker line: "not built (why)" is not "built, but no sound device"', () => {
    const device = "cannot open the default sound device (ALSA: cannot find card '0')";
    assert.equal(speakerDetail({ state: 'built', dir: '/x' }, 'no-device', device), `built, but no sound device: ${device}`);
    assert.match(speakerDetail({ state: 'unbuilt', dir: '/x', buildFailed: true }, 'unbuilt', 'cannot play audio: the `speaker` package failed to load (Error: Could not locate the bindings file)'), /^not built: its build ran and failed/);
    assert.match(speakerDetail({ state: 'unbuilt', dir: '/x', buildFailed: false }, 'unbuilt', 'failed to load'), /^not built: its build never ran/);
    assert.match(speakerDetail({ state: 'built', dir: '/x' }, 'unbuilt', 'cannot play audio: the `speaker` package failed to load (NODE_MODULE_VERSION 115)'), /^built but does not load: .*NODE_MODULE_VERSION/);
    assert.match(speakerDetail({ state: 'absent' }, 'missing', 'not installed'), /^not installed/);
  });

  it('counts ALSA cards from /proc/asound/cards', { skip: process.platform === 'linux' ? false : 'ALSA is Linux only' }, () => {
    assert.equal(alsaCards(() => '--- no soundcards ---\n'), 0);
    assert.equal(alsaCards(() => { throw Object.assign(new Error('no'), { code: 'ENOENT' }); }), 0);
    assert.equal(alsaCards(() => ' 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xf7f10000 irq 33\n 1 [NVidia         ]: HDA-Intel - HDA NVidia\n'), 2);
  });

  it('no card: the cause is the missing sound device, and the fix installs nothing', () => {
    const d = playbackDiagnosis([{ name: 'speaker', ok: false, state: 'no-device', detail: '' }, noDevice('aplay'), noDevice('play')], 0);
    assert.equal(d.cause, 'no sound device (ALSA has no sound card)');
    assert.doesNotMatch(d.fix, /alsa-utils|libasound2-dev|npm /);
    const c = playbackDiagnosis([noDevice('aplay')], 1);
    assert.equal(c.cause, 'no player could open the sound device (tried aplay)');
    assert.doesNotMatch(c.fix, /alsa-utils/);
  });

  it('nothing installed: a player\'s package and speaker\'s build', () => {
    const d = playbackDiagnosis([{ name: 'speaker', ok: false, state: 'unbuilt', detail: '' }], 0);
    assert.equal(d.cause, 'nothing to play with (speaker is not built; no system player on PATH)');
    if (process.platform === 'linux') assert.match(d.fix, /apt-get install alsa-utils/);
    assert.match(d.fix, /npm rebuild speaker --foreground-scripts/);
  });

  it('openPlayback: one short first line naming the cause; each player\'s ~300-character error only under --verbose', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'tts-players-'));
    try {
      // An aplay that refuses at once with a long complaint, as aplay does without a card.
      await writeFile(join(bin, 'aplay'), `#!/bin/sh\necho "aplay: main:831: audio open error: ${'No such file or directory '.repeat(12)}" >&2\nexit 1\n`);
      await chmod(join(bin, 'aplay'), 0o755);
      const verbose: string[] = [];
      const speakerFails = async (): Promise<never> => {
        throw new TtsError('no_playback_device', "cannot open the default sound device (ALSA: cannot find card '0')");
      };
      const error = await openPlayback(SPEC, { env: { PATH: bin }, openSpeaker: speakerFails, cards: () => 0, verbose: (l) => verbose.push(l) }).then(
        () => assert.fail('nothing can play here'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof TtsError);
      assert.equal(error.code, 'no_playback_device');
      assert.equal(error.message, 'cannot play audio: no sound device (ALSA has no sound card)');
      assert.ok(error.message.length <= 80);
      assert.doesNotMatch(error.hint ?? '', /alsa-utils/, 'aplay is installed: installing it would not help');
      assert.match(verbose.join('\n'), /playback: speaker cannot be used: .*cannot find card/);
      assert.match(verbose.join('\n'), /playback: aplay cannot play here \(exit 1: aplay: main:831: audio open error/);
      // --player aplay: the same short cause.
      const named = await openPlayback(SPEC, { player: 'aplay', env: { PATH: bin }, cards: () => 0 }).then(() => assert.fail('aplay cannot play'), (e: unknown) => e);
      assert.ok(named instanceof TtsError);
      assert.equal(named.message, 'cannot play audio: no sound device (ALSA has no sound card)');
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('a player whose child keeps its pipes open: stopped without waiting for that child (Ctrl-C, tts doctor)', { timeout: 30_000 }, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-player-child-'));
    const pidFile = join(dir, 'child.pid');
    // Also after a timeout: the child holds pipes of this process, which would not end otherwise.
    t.after(async () => {
      try {
        process.kill(Number(await readFile(pidFile, 'utf8')), 'SIGKILL');
      } catch {
        // Never started, or gone.
      }
      await rm(dir, { recursive: true, force: true });
    });
    // A wrapper script that ignores SIGTERM and leaves a child holding its stdin and stderr.
    const player = join(dir, 'aplay');
    await writeFile(player, `#!/bin/sh\ntrap '' TERM\nsleep 1000 &\necho $! > ${pidFile}\nwait\n`);
    await chmod(player, 0o755);
    const sink = await openSystemPlayerSink(SPEC, { name: 'aplay', args: () => [], from: 'a test' }, player);
    // Stopped (SIGTERM, then SIGKILL after 1 s): before, abort() waited for the child's end.
    await sink.abort();
  });

  it('findOnPath (the which package): absolute PATH entries only, and an empty PATH finds nothing', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'tts-path-'));
    const cwd = process.cwd();
    try {
      await writeFile(join(bin, 'tts-test-player'), '#!/bin/sh\n');
      await chmod(join(bin, 'tts-test-player'), 0o755);
      assert.equal(findOnPath('tts-test-player', { PATH: `/nonexistent:${bin}` }), join(bin, 'tts-test-player'));
      process.chdir(bin);
      // Neither an empty PATH nor a relative entry makes the current folder's files players.
      assert.equal(findOnPath('tts-test-player', {}), undefined);
      assert.equal(findOnPath('tts-test-player', { PATH: '.' }), undefined);
      assert.equal(findOnPath('tts-test-player', { PATH: '' }), undefined);
    } finally {
      process.chdir(cwd);
      await rm(bin, { recursive: true, force: true });
    }
  });
});
