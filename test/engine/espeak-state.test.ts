/**
 * eSpeak NG's initialized state, written by the build and restored by new instances instead of
 * espeak_Initialize (src/engine/espeak-state.ts, issue 20's ninth round): the memory every job
 * starts from is then the same, byte for byte, as an instance that initialized itself, and so is
 * the audio, for the voices with breath noise (whose random seed the initialization sets) too. A
 * state made from another package or recipe, for another memory size, cut short or damaged is
 * not used: the instance initializes, with the same result. In-process (the engine's workers
 * restore it too: test/engine/pool.test.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { EspeakSynth } from '../../src/engine/espeak.js';
import { ESPEAK_STATE_FILE, ESPEAK_STATE_FORMAT, readEspeakState, type EspeakStateHeader } from '../../src/engine/espeak-state.js';

/** Texts and eSpeak voices: Japanese and English, the default variant and those with breath (f2, f5). */
const CASES: [voice: string, text: string][] = [
  ['ja', 'きょうは いい てんきなので、とうきょうえきから あるいて いきます。'],
  ['ja+f2', 'おはようございます。にじゅうさんにち です。'],
  ['en-us+f5', 'The build finished without errors, and all tests passed.'],
  ['en-us+adam', 'Seven eight nine, four five six.'],
];

/** Every sample `synth` makes for each case, starting each from its reset state, concatenated per case. */
function audio(synth: EspeakSynth): Buffer[] {
  return CASES.map(([voice, text]) => {
    synth.reset();
    const blocks: Buffer[] = [];
    synth.synthesize(voice, text, (samples) => {
      blocks.push(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
      return false;
    });
    return Buffer.concat(blocks);
  });
}

/** The header and the bytes of a state file's content. */
function parts(content: Buffer): { header: EspeakStateHeader; body: Buffer } {
  const newline = content.indexOf(10);
  return { header: JSON.parse(content.subarray(0, newline).toString('utf8')) as EspeakStateHeader, body: content.subarray(newline + 1) };
}

/** A state file's content with `header` and `body`. */
function join2(header: EspeakStateHeader, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]);
}

test("a new instance restores the build's initialized state: the same memory and audio as one that ran espeak_Initialize", async () => {
  assert.ok(existsSync(ESPEAK_STATE_FILE), `${ESPEAK_STATE_FILE}: the build (scripts/espeak-state.js) writes it`);
  const restored = await EspeakSynth.create();
  const initialized = await EspeakSynth.create(join(tmpdir(), 'no-such-tts-espeak-state.bin'));
  assert.equal(restored.start, 'restored');
  assert.equal(initialized.start, 'initialized');
  assert.ok(Buffer.from(restored.memory()).equals(initialized.memory()), 'the memory every job starts from');
  const a = audio(restored);
  const b = audio(initialized);
  for (const [i, [voice, text]] of CASES.entries()) {
    assert.ok(a[i]!.length > 20_000, `${voice}: ${text}`);
    assert.ok(a[i]!.equals(b[i]!), `${voice}: ${text}`);
  }
});

test('a state written now, by EspeakSynth.writeInitializedState, is the one the build wrote', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-espeak-state-'));
  try {
    const file = join(dir, 'initialized.bin');
    await EspeakSynth.writeInitializedState(file);
    assert.ok(readFileSync(file).equals(readFileSync(ESPEAK_STATE_FILE)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a state of another package, recipe or memory size, cut short or damaged is not used: the instance initializes, with the same audio', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-espeak-state-'));
  try {
    const good = readFileSync(ESPEAK_STATE_FILE);
    const { header, body } = parts(good);
    const stamp = header.package;
    assert.ok(readEspeakState(ESPEAK_STATE_FILE, stamp, header.lang) !== undefined, 'the good file reads');
    const flipped = Buffer.from(body);
    flipped[flipped.length >> 1]! ^= 0x40;
    const variants: [string, Buffer][] = [
      ['another version', join2({ ...header, package: { ...stamp, version: `${stamp.version}-other` } }, body)],
      ['another data file', join2({ ...header, package: { ...stamp, dataBytes: stamp.dataBytes + 1 } }, body)],
      ['another JavaScript file', join2({ ...header, package: { ...stamp, jsBytes: stamp.jsBytes - 1 } }, body)],
      ['another recipe', join2({ ...header, format: ESPEAK_STATE_FORMAT + 1 }, body)],
      ['another LANG', join2({ ...header, lang: header.lang === 'C.UTF-8' ? 'ja_JP.UTF-8' : 'C.UTF-8' }, body)],
      ['another memory size', join2({ ...header, heapBytes: header.heapBytes + 65_536 }, body)],
      ['cut short', good.subarray(0, good.length - 1000)],
      ['a changed byte', join2(header, flipped)],
      ['no header', body],
      ['empty', Buffer.alloc(0)],
    ];
    const reference = audio(await EspeakSynth.create(join(dir, 'none.bin')));
    for (const [name, content] of variants) {
      const file = join(dir, `${name}.bin`);
      writeFileSync(file, content);
      const synth = await EspeakSynth.create(file);
      assert.equal(synth.start, 'initialized', name);
      const got = audio(synth);
      for (const [i, [voice]] of CASES.entries()) assert.ok(got[i]!.equals(reference[i]!), `${name}: ${voice}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
