/**
 * The benchmark's engine floor (bench/engine-floor-program.ts, issue 20) does the synthesizer's
 * whole work and nothing else: run as a process, it writes exactly the samples the built-in
 * engine makes for the same input at the synthesizer's own rate (no resampling on either side),
 * byte for byte. Were it to do less, the bench's floor rows would understate what a one-shot must
 * take, and a target would look within reach when it is not.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { createEngine } from '../../src/engine/index.js';
import { speechSegments } from '../../src/engine/japanese.js';

const PROGRAM = fileURLToPath(new URL('../../bench/engine-floor-program.js', import.meta.url));
const engine = createEngine();
after(() => engine.close());

/** The engine's pcm16 audio for `text`, at `sampleRate` Hz mono. */
async function engineAudio(voice: string, language: 'en' | 'ja', text: string, sampleRate: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of engine.synthesize({ voice, language, format: 'pcm16', sampleRate, channels: 1, text })) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Runs the floor program with `args`: its stdout, stderr and exit code. */
function floor(...args: string[]): { stdout: Buffer; stderr: string; status: number | null } {
  const run = spawnSync(process.execPath, [PROGRAM, ...args], { maxBuffer: 64 * 1024 * 1024 });
  return { stdout: run.stdout, stderr: run.stderr.toString(), status: run.status };
}

test('English: the floor writes the samples of Flite rms (en-man-1) at 16000 Hz, and its import time', async () => {
  const text = 'The build finished without errors, and all tests passed.';
  const run = floor('en', text);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /^imports \d+\.\d\n$/);
  const ours = await engineAudio('en-man-1', 'en', text, 16000);
  assert.ok(ours.length > 16000 * 2, 'over a second of speech');
  assert.ok(run.stdout.equals(ours), `floor ${run.stdout.length} bytes, engine ${ours.length} bytes`);
});

test("Japanese: the floor writes eSpeak NG's samples (ja-man-1) of the readings tts makes, at 22050 Hz", async () => {
  const sentence = '今日は良い天気なので、東京駅から歩いて行きます。';
  const segments = await speechSegments(sentence, 'ja');
  assert.equal(segments.length, 1);
  const kana = segments[0]!.text;
  const run = floor('ja', kana);
  assert.equal(run.status, 0, run.stderr);
  const fromKana = await engineAudio('ja-man-1', 'ja', kana, 22050);
  // The readings are the sentence's: the engine speaks the kanji sentence with the same samples.
  assert.ok(fromKana.equals(await engineAudio('ja-man-1', 'ja', sentence, 22050)));
  assert.ok(run.stdout.equals(fromKana), `floor ${run.stdout.length} bytes, engine ${fromKana.length} bytes`);
});

test('bad arguments: usage on stderr, exit 2, no audio', () => {
  for (const args of [[], ['fr', 'Bonjour'], ['en'], ['en', ''], ['en', 'Hello.', 'extra'], ['en', 'a'.repeat(1001)], ['ja', '今日は']]) {
    const run = floor(...args);
    assert.equal(run.status, 2, args.join(' '));
    assert.match(run.stderr, /^usage: /);
    assert.equal(run.stdout.length, 0);
  }
});
