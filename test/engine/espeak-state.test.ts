/**
 * eSpeak NG's initialized state, written by the build and restored by new instances instead of
 * espeak_Initialize (src/engine/espeak-state.ts, issue 20's ninth round): a restored instance's
 * memory, every job's starting point, is the same byte for byte as that of an instance that
 * initialized itself, and so is the audio, for the voices with breath noise (whose random seed
 * the initialization sets) too; a state made under another locale (`LANG`) is restored, with the
 * same audio; a state made from another package or recipe, for another memory size, cut short
 * or damaged, or not a regular file, is not used, and the instance initializes. The bundled
 * engine worker reads the file the build writes. In-process (the engine's workers restore it
 * too: test/engine/pool.test.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readEspeakPackage } from '../../src/engine/espeak-data.js';
import { EspeakSynth } from '../../src/engine/espeak.js';
import { ESPEAK_STATE_FILE, ESPEAK_STATE_FORMAT, packageStamp, readEspeakState, stateDigest, type EspeakPackageStamp, type EspeakStateHeader } from '../../src/engine/espeak-state.js';

/** Texts and eSpeak voices: Japanese and English, the default variant and those with breath (f2, f5). */
const CASES: [voice: string, text: string][] = [
  ['ja', 'きょうは いい てんきなので、とうきょうえきから あるいて いきます。'],
  ['ja+f2', 'おはようございます。にじゅうさんにち です。'],
  ['en-us+f5', 'The build finished without errors, and all tests passed.'],
  ['en-us+adam', 'Seven eight nine, four five six.'],
];

/** Every sample `synth` makes for each case, each case from its reset state. */
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

/** Asserts that `got` is `want`, case by case. */
function sameAudio(got: Buffer[], want: Buffer[], what: string): void {
  for (const [i, [voice, text]] of CASES.entries()) {
    assert.ok(want[i]!.length > 20_000, `${voice}: ${text}`);
    assert.ok(got[i]!.equals(want[i]!), `${what}: ${voice}: ${text}`);
  }
}

/** A state file's header and the bytes after it. */
function splitStateFile(content: Buffer): { header: EspeakStateHeader; body: Buffer } {
  const newline = content.indexOf(10);
  return { header: JSON.parse(content.subarray(0, newline).toString('utf8')) as EspeakStateHeader, body: content.subarray(newline + 1) };
}

/** A state file's content of `header` and `body`. */
function stateFileContent(header: EspeakStateHeader, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]);
}

let dir: string;
/** The instance that initialized itself, and its audio: the reference. */
let initialized: EspeakSynth;
let reference: Buffer[];
let stamp: EspeakPackageStamp;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tts-espeak-state-'));
  initialized = await EspeakSynth.create(join(dir, 'none.bin'));
  reference = audio(initialized);
  const pkg = readEspeakPackage();
  assert.ok(pkg !== undefined);
  stamp = packageStamp(pkg)!;
  assert.ok(stamp !== undefined);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('with no state file the instance initializes itself', () => {
  assert.equal(initialized.initialState, 'initialized');
});

test('a state written now restores to the same memory, byte for byte, and the same audio', async () => {
  const file = join(dir, 'now.bin');
  await EspeakSynth.writeInitializedState(file);
  const restored = await EspeakSynth.create(file);
  assert.equal(restored.initialState, 'restored');
  assert.ok(Buffer.from(restored.memory()).equals(initialized.memory()), 'the memory every job starts from');
  sameAudio(audio(restored), reference, 'restored');
});

test("the build's state file (scripts/espeak-state.js) is restored, with the same audio, and the bundled engine worker reads that file", async () => {
  const { header } = splitStateFile(readFileSync(ESPEAK_STATE_FILE));
  assert.deepEqual(header.package, stamp, 'made from the installed package');
  const restored = await EspeakSynth.create();
  assert.equal(restored.initialState, 'restored');
  sameAudio(audio(restored), reference, "the build's state");
  // The bundle rewrites the compiled code's `new URL('../../espeak/initialized.bin', import.meta.url)`
  // for dist/bundle/ (scripts/bundle.js): it must name the same file.
  const bundled = new URL('../../bundle/engine-worker.cjs', import.meta.url);
  const literal = /new URL\("([^"]*initialized\.bin)", __ttsFileUrl\)/.exec(readFileSync(bundled, 'utf8'));
  assert.ok(literal !== null, 'engine-worker.cjs names the state file');
  assert.equal(fileURLToPath(new URL(literal[1]!, bundled)), ESPEAK_STATE_FILE);
});

test('a state made under another LANG is restored, with the same audio (eSpeak NG does not read LANG)', async () => {
  const file = join(dir, 'other-lang.bin');
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  const other = ['ja-JP', 'en-US'].find((l) => `${l.replace('-', '_')}.UTF-8` !== splitStateFile(readFileSync(ESPEAK_STATE_FILE)).header.lang) ?? 'ja-JP';
  Object.defineProperty(globalThis, 'navigator', { value: { languages: [other] }, configurable: true, writable: true });
  try {
    await EspeakSynth.writeInitializedState(file);
  } finally {
    if (descriptor === undefined) delete (globalThis as { navigator?: unknown }).navigator;
    else Object.defineProperty(globalThis, 'navigator', descriptor);
  }
  const { header } = splitStateFile(readFileSync(file));
  assert.equal(header.lang, `${other.replace('-', '_')}.UTF-8`);
  const restored = await EspeakSynth.create(file);
  assert.equal(restored.initialState, 'restored');
  sameAudio(audio(restored), reference, `made under LANG=${header.lang}`);
});

test('a state of another package, recipe or memory size, cut short or damaged is not used: the instance initializes, with the same audio', async () => {
  const good = readFileSync(ESPEAK_STATE_FILE);
  const { header, body } = splitStateFile(good);
  assert.ok(await readEspeakState(ESPEAK_STATE_FILE, stamp) !== undefined, 'the good file reads');
  const flipped = Buffer.from(body);
  flipped[flipped.length >> 1]! ^= 0x40;
  const variants: [string, Buffer][] = [
    ['another version', stateFileContent({ ...header, package: { ...stamp, version: `${stamp.version}-other` } }, body)],
    ['another data file', stateFileContent({ ...header, package: { ...stamp, dataBytes: stamp.dataBytes + 1 } }, body)],
    ['another JavaScript file', stateFileContent({ ...header, package: { ...stamp, jsSha256: '0'.repeat(64) } }, body)],
    ['another recipe', stateFileContent({ ...header, format: ESPEAK_STATE_FORMAT + 1 }, body)],
    ['an address outside its bytes', stateFileContent({ ...header, pointer: body.length }, body)],
    ['another address', stateFileContent({ ...header, pointer: header.pointer + 8 }, body)],
    ['another LANG than the hash was made with', stateFileContent({ ...header, lang: `${header.lang}x` }, body)],
    ['another byte count', stateFileContent({ ...header, bytes: header.bytes - 1 }, body.subarray(0, body.length - 1))],
    ['cut short', good.subarray(0, good.length - 1000)],
    ['a changed byte', stateFileContent(header, flipped)],
    ['more bytes than its memory', stateFileContent({ ...header, heapBytes: body.length - 1 }, body)],
    ['no header', body],
    ['a header that is not an object', Buffer.concat([Buffer.from('null\n'), body])],
    ['empty', Buffer.alloc(0)],
  ];
  for (const [name, content] of variants) {
    const file = join(dir, `${name}.bin`);
    writeFileSync(file, content);
    assert.equal(await readEspeakState(file, stamp), undefined, name);
  }
  // Not a regular file: a folder, and a FIFO, which must not block (nothing ever writes it).
  mkdirSync(join(dir, 'folder.bin'));
  assert.equal(await readEspeakState(join(dir, 'folder.bin'), stamp), undefined, 'a folder');
  execFileSync('mkfifo', [join(dir, 'fifo.bin')]);
  assert.equal(await readEspeakState(join(dir, 'fifo.bin'), stamp), undefined, 'a FIFO');
  // Nor read through a symbolic link, as the piece cache's entries are not (cache/safe-fs.ts).
  symlinkSync(ESPEAK_STATE_FILE, join(dir, 'link.bin'));
  assert.equal(await readEspeakState(join(dir, 'link.bin'), stamp), undefined, 'a symbolic link');
  // Whole, for another memory size (as a build of another module would write): create() compares
  // it with the module's and initializes.
  const file = join(dir, 'another memory size.bin');
  await EspeakSynth.writeInitializedState(file);
  const written = splitStateFile(readFileSync(file));
  writeFileSync(file, stateFileContent({ ...written.header, heapBytes: written.header.heapBytes + 65_536, sha256: stateDigest({ ...written.header, heapBytes: written.header.heapBytes + 65_536 }, written.body) }, written.body));
  assert.ok(await readEspeakState(file, stamp) !== undefined);
  const synth = await EspeakSynth.create(file);
  assert.equal(synth.initialState, 'initialized');
  sameAudio(audio(synth), reference, 'another memory size');
});
