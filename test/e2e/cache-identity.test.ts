/**
 * The piece cache names who spoke (issue 18.2, docs/cli.md §8), against the built-in engine run by
 * `bin/tts.js`: audio of a fallback (eSpeak NG when Flite cannot start, a voice package's fallback
 * voice when its model cannot load) is never stored under the primary's key, so a repaired
 * install speaks with its own voice again; a voice package's upgrade (version and code) misses.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';

const NO_FLITE_HOOK = fileURLToPath(new URL('../../bench/no-flite-hook.js', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../../../test/fixtures/voice-package', import.meta.url));
const BROKEN = fileURLToPath(new URL('../../../test/fixtures/voice-package-broken', import.meta.url));

interface Summary {
  requests: number;
  cache_hits: number;
}

function summaryOf(stderr: string): Summary {
  return JSON.parse(stderr.trim().split('\n').at(-1)!) as Summary;
}

/** Entries in the piece cache under `cacheHome` (none when it was never made). */
async function entries(cacheHome: string): Promise<number> {
  try {
    return (await readdir(join(cacheHome, 'tts', 'pieces'))).filter((n) => /^[0-9a-f]{64}$/.test(n)).length;
  } catch {
    return 0;
  }
}

describe('the piece cache names the engine that spoke', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-cache-identity-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `stream … -o out --json` offline; returns the file and the summary. */
  const run = async (name: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []): Promise<{ audio: Buffer; summary: Summary }> => {
    const out = join(dir, name);
    const r = await runTts(['stream', ...args, '-o', out, '--json'], { env, nodeArgs });
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    return { audio: await readFile(out), summary: summaryOf(r.stderr) };
  };

  it('eSpeak NG standing in for Flite is not stored: after the repair, the run speaks with Flite', async () => {
    const cacheHome = await mkdtemp(join(dir, 'flite-'));
    const env = { XDG_CACHE_HOME: cacheHome };
    const text = ['--voice', 'en-man-1', 'The morning was cold and bright. She walked to the station.'];
    const broken = await run('broken.wav', text, env, ['--import', NO_FLITE_HOOK]);
    assert.ok(broken.summary.requests >= 1);
    assert.equal(await entries(cacheHome), 0, `the fallback audio was stored: ${(await readdir(join(cacheHome, 'tts', 'pieces'))).join(' ')}`);
    const repaired = await run('repaired.wav', text, env);
    const fresh = await run('fresh.wav', [...text, '--no-cache'], env);
    assert.ok(!fresh.audio.equals(broken.audio), 'the hook did not make Flite fail');
    assert.equal(repaired.summary.cache_hits, 0);
    assert.ok(repaired.audio.equals(fresh.audio), `the repaired run replayed eSpeak NG (${repaired.audio.length} vs ${fresh.audio.length} bytes)`);
    // Flite's own audio is stored, and replayed even while Flite is broken.
    assert.ok((await entries(cacheHome)) >= 1);
    const replay = await run('replay.wav', text, env, ['--import', NO_FLITE_HOOK]);
    assert.equal(replay.summary.requests, 0);
    assert.ok(replay.summary.cache_hits >= 1);
    assert.ok(replay.audio.equals(fresh.audio));
  });

  it('a voice package that cannot load speaks with its fallback, which is not stored under its voice', async () => {
    const cacheHome = await mkdtemp(join(dir, 'broken-'));
    const env = { XDG_CACHE_HOME: cacheHome, TTS_VOICE_PACKAGES: BROKEN };
    const first = await run('pkg-broken.wav', ['--voice', 'ja-broken-1', 'こんにちは。'], env);
    assert.ok(first.audio.length > 1000);
    assert.equal(await entries(cacheHome), 0, 'the fallback voice\'s audio was stored under the package voice');
  });

  it('a voice package upgrade (1.0.0 → 2.0.0, other code) misses the old pieces', async () => {
    const cacheHome = await mkdtemp(join(dir, 'upgrade-'));
    const pkg = join(dir, 'pkg');
    await cp(PACKAGE, pkg, { recursive: true });
    const env = { XDG_CACHE_HOME: cacheHome, TTS_VOICE_PACKAGES: pkg };
    const text = ['--voice', 'ja-test-1', 'こんにちは。'];
    const v1 = await run('v1.wav', text, env);
    assert.ok((await entries(cacheHome)) >= 1, 'the package voice\'s own audio was not stored');
    const again = await run('v1-again.wav', text, env);
    assert.equal(again.summary.requests, 0);
    assert.ok(again.summary.cache_hits >= 1);
    const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as { version: string };
    manifest.version = '2.0.0';
    await writeFile(join(pkg, 'package.json'), JSON.stringify(manifest));
    await writeFile(join(pkg, 'index.js'), (await readFile(join(pkg, 'index.js'), 'utf8')).replaceAll('440', '880'));
    const v2 = await run('v2.wav', text, env);
    const v2fresh = await run('v2-fresh.wav', [...text, '--no-cache'], env);
    assert.equal(v2.summary.cache_hits, 0, 'the upgraded package replayed the old audio');
    assert.ok(v2.audio.equals(v2fresh.audio));
    assert.ok(!v2.audio.equals(v1.audio), 'the upgrade did not change the audio');
  });
});
