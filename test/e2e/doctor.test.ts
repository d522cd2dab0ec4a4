/**
 * `tts doctor` (docs/cli.md §1): one screen for a bug report, exit 0 when `tts say` can work and
 * 1 when it cannot — and never the API key, whatever is configured.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';

const KEY = 'sk-test-SENTINEL-doctor-4242';
const NO_SPEAKER = ['--import', fileURLToPath(new URL('../helpers/audio-no-speaker.js', import.meta.url))];

/**
 * Whether the optional `speaker` package is installed and its native binding built for this
 * Node (npm skips or fails the build quietly on a machine without ALSA headers or a compiler),
 * with HOME `home` (whose .asoundrc gives ALSA a device). Loaded in a child, as tts does it:
 * loading speaker opens ALSA, which aborts the process where no device is found.
 */
function speakerLoads(home: string): boolean {
  let resolved: string;
  try {
    resolved = createRequire(import.meta.url).resolve('speaker');
  } catch {
    return false;
  }
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(resolved)})`], { env: { ...process.env, HOME: home }, stdio: 'ignore', timeout: 30_000 });
  return probe.status === 0;
}

describe('tts doctor', () => {
  let home: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-doctor-'));
    await writeFile(join(home, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${join(home, 'played.raw')}"; format "raw" }\n`);
  });
  after(() => rm(home, { recursive: true, force: true }));

  it('everything in place: exit 0, with Node, playback, service, engine, config and cache', async (t) => {
    const r = await runTts(['doctor'], { env: { HOME: home, XDG_CACHE_HOME: undefined } });
    assert.equal(r.code, 0, r.stderr + r.stdout.toString());
    const out = r.stdout.toString();
    assert.match(out, new RegExp(`^node +${process.version.replace(/\./g, '\\.')} \\(`, 'm'));
    if (speakerLoads(home)) {
      assert.match(out, /^playback +speaker will be used/m);
    } else {
      // `speaker` is optional (README): where npm did not build it, the report names the
      // fallback that will play, and says why speaker cannot.
      t.diagnostic('`speaker` is not built here: the fallback report is checked');
      assert.match(out, /^playback +aplay will be used/m);
      assert.match(out, /^ +no +speaker: \S/m);
    }
    assert.match(out, /ok +aplay: \/usr\/bin\/aplay starts/);
    assert.match(out, /no +paplay: not on PATH \(pulseaudio-utils\)/);
    assert.match(out, /^service +the built-in offline engine/m);
    assert.match(out, /^engine +built-in engine started in \d+ ms, first audio after \d+ ms/m);
    assert.match(out, new RegExp(`^config +${join(home, '.config/tts/config.toml')} \\(does not exist`, 'm'));
    assert.match(out, new RegExp(`^cache +${join(home, '.cache/tts')}`, 'm'));
    // Node's compile cache: in tts's cache folder where Node has one (22.8 and later), else none.
    const compileCache = typeof (await import('node:module') as { getCompileCacheDir?: unknown }).getCompileCacheDir === 'function';
    assert.match(out, compileCache ? new RegExp(`^ +compiled code: ${join(home, '.cache/tts/compile')}`, 'm') : /^ +compiled code: not kept: Node v\d+\.\d+\.\d+ has no compile cache$/m);
    assert.match(out, /^result +`tts say` can work here/m);
  });

  it('a service with a key file: names where the key comes from and its mode, never the key', async () => {
    const keyFile = join(home, 'key');
    await writeFile(keyFile, `${KEY}\n`);
    await chmod(keyFile, 0o644);
    const r = await runTts(['doctor', '--profile', 'hosted'], { env: { HOME: home, XDG_CONFIG_HOME: join(home, 'cfg') } });
    // No such profile yet: a usage error naming the file.
    assert.equal(r.code, 2, r.stderr);
    await mkdir(join(home, 'cfg', 'tts'), { recursive: true });
    await writeFile(join(home, 'cfg', 'tts', 'config.toml'), `[profile.hosted]\nbase-url = "https://tts.example.com/x"\napi-key-file = "${keyFile}"\n`);
    const ok = await runTts(['doctor', '--profile', 'hosted'], { env: { HOME: home, XDG_CONFIG_HOME: join(home, 'cfg') } });
    const out = ok.stdout.toString();
    assert.equal(ok.code, 0, ok.stderr + out);
    assert.match(out, /^service +https:\/\/tts\.example\.com \(from profile/m);
    assert.match(out, new RegExp(`^api key +from the file ${keyFile}`, 'm'));
    assert.match(out, /mode 644 — others can read it; chmod 600/);
    assert.ok(!out.includes(KEY) && !ok.stderr.includes(KEY), 'the key is never printed');
  });

  it('a TTS_API_KEY no HTTP header can carry: exit 1, saying it cannot be used (tts say would exit 2), never the key', async () => {
    const r = await runTts(['doctor'], { env: { HOME: home, TTS_BASE_URL: 'https://tts.example.com', TTS_API_KEY: `${KEY}\u0007` } });
    const out = r.stdout.toString();
    assert.equal(r.code, 1, r.stderr + out);
    assert.match(out, /^ +cannot be used: the API key in TTS_API_KEY holds a character that cannot be sent in an HTTP header \(U\+0007/m);
    assert.match(out, /^result +`tts say` cannot work yet: .*the API key in TTS_API_KEY cannot be used/m);
    assert.ok(!out.includes(KEY) && !r.stderr.includes(KEY), 'the key is never printed');
  });

  it('a key file with an empty first line: exit 1, saying it cannot be used (tts say would exit 3)', async () => {
    const keyFile = join(home, 'empty-key');
    await writeFile(keyFile, `\n${KEY}\n`);
    await chmod(keyFile, 0o600);
    await mkdir(join(home, 'cfg-empty', 'tts'), { recursive: true });
    await writeFile(join(home, 'cfg-empty', 'tts', 'config.toml'), `api-key-file = "${keyFile}"\n`);
    const withFile = await runTts(['doctor'], { env: { HOME: home, TTS_BASE_URL: 'https://tts.example.com', XDG_CONFIG_HOME: join(home, 'cfg-empty') } });
    const out = withFile.stdout.toString();
    assert.equal(withFile.code, 1, withFile.stderr + out);
    assert.match(out, new RegExp(`^ +cannot be used: the API key file ${keyFile} is empty`, 'm'));
    assert.match(out, /^result +`tts say` cannot work yet: the API key file cannot be used/m);
    assert.ok(!out.includes(KEY) && !withFile.stderr.includes(KEY), 'the key is never printed');
  });

  it('a service without a key: exit 1, saying so', async () => {
    const r = await runTts(['doctor'], { env: { HOME: home, TTS_BASE_URL: 'https://tts.example.com' } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout.toString(), /^api key +none/m);
    assert.match(r.stdout.toString(), /^result +`tts say` cannot work yet: a service is configured but no API key/m);
  });

  it('a cache folder others can write: the cache line says it is off and why, as a run warns, not its piece count', async () => {
    const cache = join(home, 'open-cache');
    await mkdir(join(cache, 'tts', 'pieces'), { recursive: true, mode: 0o700 });
    const env = { HOME: home, TTS_BASE_URL: 'https://tts.example.com', XDG_CACHE_HOME: cache };
    const privateRun = await runTts(['doctor'], { env });
    assert.match(privateRun.stdout.toString(), new RegExp(`^cache +${join(cache, 'tts')} \\(0 piece\\(s\\)\\)$`, 'm'));
    await chmod(join(cache, 'tts'), 0o777);
    const r = await runTts(['doctor'], { env });
    const out = r.stdout.toString();
    assert.match(out, new RegExp(`^cache +${join(cache, 'tts')} \\(off: ${join(cache, 'tts')} is writable by others; runs go on without it\\)$`, 'm'));
    assert.doesNotMatch(out, /piece\(s\)/);
  });

  it('a cache not made yet in a folder others can write: off and why, not `0 piece(s)`, and doctor makes no folder', async () => {
    const shared = join(home, 'shared-cache');
    await mkdir(shared);
    await chmod(shared, 0o777);
    const cache = join(shared, 'xdg');
    const r = await runTts(['doctor'], { env: { HOME: home, TTS_BASE_URL: 'https://tts.example.com', XDG_CACHE_HOME: cache } });
    const out = r.stdout.toString();
    assert.match(out, new RegExp(`^cache +${join(cache, 'tts')} \\(off: ${shared} is writable by others; runs go on without it\\)$`, 'm'));
    assert.doesNotMatch(out, /piece\(s\)/);
    // Nothing for the piece cache, nor for the compile cache (bin/tts.js on Node 22.8 and later,
    // docs/cli.md §6), which would not be used here: others can write the folder above.
    const { readdir } = await import('node:fs/promises');
    assert.deepEqual(await readdir(shared, { recursive: true }), [], 'doctor made nothing, and neither did bin/tts.js');
  });

  it('nothing can play: exit 1, why for each backend, and what to install', async () => {
    const r = await runTts(['doctor'], { env: { HOME: home, PATH: join(home, 'no-bin') }, nodeArgs: NO_SPEAKER });
    assert.equal(r.code, 1, r.stderr);
    const out = r.stdout.toString();
    assert.match(out, /^playback +nothing can play: nothing to play with \(speaker is not installed; no system player on PATH\)/m);
    assert.match(out, /no +speaker: not installed: npm left it out/);
    assert.match(out, /no +aplay: not on PATH \(alsa-utils\)/);
    assert.match(out, /fix: install a player: apt-get install alsa-utils/);
    assert.match(out, /to build speaker: cd .* && npm install --include=optional --foreground-scripts/);
    assert.match(out, /^result +`tts say` cannot work yet: nothing to play with/m);
  });

  it('speaker built but no sound device: says so, and the fix installs nothing (issue 19 §9)', async (t) => {
    const { speakerBuild } = await import('../../src/audio/playback-diagnosis.js');
    if (speakerBuild().state !== 'built') return t.skip('speaker is not built here (npm could not build it)');
    const nocard = join(home, 'nocard');
    const bin = join(nocard, 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(nocard, '.asoundrc'), 'pcm.!default { type hw; card "tts_no_such_card" }\n');
    const { symlink } = await import('node:fs/promises');
    await symlink('/usr/bin/aplay', join(bin, 'aplay')).catch(() => {});
    const r = await runTts(['doctor'], { env: { HOME: nocard, PATH: bin } });
    const out = r.stdout.toString();
    assert.equal(r.code, 1, r.stderr + out);
    assert.match(out, /no +speaker: built, but no sound device: cannot open the default sound device \(ALSA: /);
    assert.match(out, /^playback +nothing can play: no (sound device \(ALSA has no sound card\)|player could open the sound device \(tried speaker, aplay\))/m);
    const fix = /fix: (.*)/.exec(out)?.[1] ?? '';
    assert.doesNotMatch(fix, /alsa-utils|libasound2-dev|npm /, 'aplay is there and speaker is built: nothing to install');
    assert.doesNotMatch(out, /to build speaker/);
  });

  it('TTS_API_KEY: named as the source, masked', async () => {
    const r = await runTts(['doctor'], { env: { HOME: home, TTS_BASE_URL: 'https://tts.example.com', TTS_API_KEY: KEY } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.toString(), /^api key +from TTS_API_KEY \(\*\*\*\)/m);
    assert.ok(!r.stdout.toString().includes(KEY));
  });
});
