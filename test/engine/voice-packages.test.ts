/**
 * Optional voice packages (src/engine/voice-packages.ts, docs/voices.md): absent, nothing breaks
 * and `tts voices` says "not installed"; present, its voices are listed, accepted and spoken; a
 * package that fails to load falls back to the built-in voice it names.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { runTts } from '../helpers/cli.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/voice-package', import.meta.url));
const BROKEN = fileURLToPath(new URL('../../../test/fixtures/voice-package-broken', import.meta.url));

test('with the package absent: tts voices lists it as not installed, built-in voices still speak, its voice is refused', async () => {
  const env = { TTS_VOICE_PACKAGES: 'tts-voice-not-installed-anywhere' };
  const list = await runTts(['voices'], { env });
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout.toString(), /package tts-voice-not-installed-anywhere \(not installed\)/);
  assert.match(list.stdout.toString(), /^en-man-1 +en +male +yes +CMU Flite rms/m);
  const said = await runTts(['stream', '-q', '--offline', '-v', 'ja-man-1', 'こんにちは'], { env });
  assert.equal(said.code, 0, said.stderr);
  assert.ok(said.stdout.length > 10_000);
  const refused = await runTts(['stream', '-q', '--offline', '-v', 'ja-test-1', 'こんにちは'], { env });
  assert.equal(refused.code, 4, refused.stderr);
  assert.match(refused.stderr, /voice_not_found/);
});

test('with the package present: listed as installed with its engine, and speaks through the engine at the requested rate', async () => {
  const env = { TTS_VOICE_PACKAGES: FIXTURE };
  const list = await runTts(['voices', '--json'], { env });
  assert.equal(list.code, 0, list.stderr);
  const voices = JSON.parse(list.stdout.toString()) as { id: string; installed: boolean; engine: string; package?: string }[];
  const voice = voices.find((v) => v.id === 'ja-test-1');
  assert.deepEqual({ installed: voice?.installed, engine: voice?.engine, package: voice?.package }, { installed: true, engine: 'test tone (fixture) (fallback ja-woman-1)', package: FIXTURE });
  // Three characters → 0.3 s of tone at 16000 Hz → 7200 frames at 24000 Hz, pcm16.
  const said = await runTts(['stream', '-q', '--offline', '-v', 'ja-test-1', 'テスト'], { env });
  assert.equal(said.code, 0, said.stderr);
  assert.equal(said.stdout.length, 7200 * 2);
});

test('a package that cannot load its model speaks with its fallback voice (same bytes as that voice)', async () => {
  const env = { TTS_VOICE_PACKAGES: BROKEN };
  const [broken, fallback] = await Promise.all([
    runTts(['stream', '-q', '--offline', '-v', 'ja-broken-1', 'こんにちは'], { env }),
    runTts(['stream', '-q', '--offline', '-v', 'ja-man-1', 'こんにちは'], { env }),
  ]);
  assert.equal(broken.code, 0, broken.stderr);
  assert.ok(broken.stdout.length > 10_000);
  assert.ok(broken.stdout.equals(fallback.stdout));
});
