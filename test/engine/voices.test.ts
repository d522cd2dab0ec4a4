/**
 * The voices' engines (src/engine/voices.ts, flite.ts, espeak.ts, wasi-memfs.ts): English on
 * Flite with eSpeak NG as the fallback, sentence-by-sentence streaming, and determinism — the
 * same job gives the same bytes whatever the worker did before (issue 12 §12).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createEngine, type EspeakEngine } from '../../src/engine/index.js';
import { backendsFor, engineDescription } from '../../src/engine/voices.js';
import { fliteInstanceBytes, fliteInstanceMemory, fliteInstanceUnreadVoices, flitePieces, fliteSynthesize, FLITE_SAMPLE_RATE, loadFlite } from '../../src/engine/flite.js';
import { EspeakSynth, MAX_TEXT_BYTES, byteBoundedParts } from '../../src/engine/espeak.js';
import { MemoryWasi } from '../../src/engine/wasi-memfs.js';
import type { Language } from '../../src/protocol/types.js';
import { engineVoices } from '../../src/engine/catalogue.js';
import { collect, job, medianF0, pcm16ToFloat } from '../helpers/engine-audio.js';

let engine: EspeakEngine;
before(() => {
  engine = createEngine();
});
after(async () => {
  await engine.close();
});

const TEXT: Record<Language, string> = {
  ja: '今日は良い天気です。明日は雨が降りそうなので、傘を持ってRubyの本を読みます。',
  en: 'Good morning. The weather is nice today, and the train leaves at 10:30.',
};

test('backends: English on Flite (rms for men, slt for women) with an eSpeak NG fallback; Japanese on eSpeak NG', () => {
  assert.deepEqual(backendsFor('en-man-1', 'en'), { preferred: { engine: 'flite', voice: 'rms' }, fallback: { engine: 'espeak', voice: 'en-us+adam' } });
  assert.deepEqual(backendsFor('ja-woman-1', 'en'), { preferred: { engine: 'flite', voice: 'slt' }, fallback: { engine: 'espeak', voice: 'en-us+f2' } });
  assert.deepEqual(backendsFor('ja-woman-1', 'ja'), { preferred: { engine: 'espeak', voice: 'ja+f2' }, fallback: { engine: 'espeak', voice: 'ja+f2' } });
  assert.match(engineDescription('en-woman-1', 'en'), /Flite slt/);
  assert.match(engineDescription('ja-man-1', 'ja'), /eSpeak NG ja \+ kuromoji; Latin words: CMU Flite rms/);
});

test('flitePieces: one piece per sentence; a run-on sentence or a huge token is cut to the budget', () => {
  assert.deepEqual(flitePieces('Hello there. How are you?  Fine!'), ['Hello there.', 'How are you?', 'Fine!']);
  const runOn = Array.from({ length: 300 }, () => 'word').join(' ');
  const pieces = flitePieces(runOn);
  assert.ok(pieces.length >= 2, `${pieces.length} pieces`);
  assert.equal(pieces.join(' '), runOn);
  const token = 'x'.repeat(5000);
  assert.equal(flitePieces(token).join(''), token);
  assert.ok(flitePieces(token).every((p) => p.length < 1000));
  assert.deepEqual(flitePieces(' \n '), []);
});

test('Flite through the in-memory WASI host: a one-word text is spoken (not opened as a file), 16 kHz, same samples every time', async () => {
  const module = await loadFlite();
  const a = fliteSynthesize(module, 'rms', 'Hello');
  const n = a.reduce((sum, b) => sum + b.length, 0);
  assert.ok(n > FLITE_SAMPLE_RATE * 0.2 && n < FLITE_SAMPLE_RATE * 2, `${n} samples`);
  assert.ok(a.every((b) => b.length <= 2048));
  // Another text in between, then the same text: the same samples (the instance is reused).
  fliteSynthesize(module, 'slt', 'Something else entirely.');
  assert.deepEqual(fliteSynthesize(module, 'rms', 'Hello'), a);
  // The reused instance does not grow from run to run (its memory is put back before each).
  fliteSynthesize(module, 'slt', 'The quick brown fox jumps over the lazy dog.');
  const size = fliteInstanceBytes();
  for (let i = 0; i < 20; i++) fliteSynthesize(module, 'slt', 'The quick brown fox jumps over the lazy dog.');
  fliteSynthesize(module, 'rms', 'Hello');
  assert.equal(fliteInstanceBytes(), size);
});

test('Flite never writes its .rodata, so restoring only the rest gives a fresh instance\'s samples', async () => {
  const module = await loadFlite();
  // wasm-ld's name section marks one .rodata segment of ~16 MB (the voices); the rest (.data,
  // .bss, stack: ~83 KB) is what fliteSynthesize restores between runs.
  const rodata = module.readOnly.reduce((n, r) => n + r.end - r.start, 0);
  assert.ok(rodata > 15_000_000, `${rodata} bytes of .rodata`);
  // A fresh instance of the whole binary, data section and all (the engine's module is compiled
  // without it and copies the data in itself).
  const whole = new WebAssembly.Module(readFileSync(module.file));
  const fresh = new Uint8Array((new WebAssembly.Instance(whole, new MemoryWasi([]).imports()).exports['memory'] as { buffer: ArrayBuffer }).buffer);
  const texts = [
    'Hello',
    'On 3/14/2025 at 10:45pm, Dr. Smith paid $1,234.56 for 17 items (about 72.6 each) — really?',
    "I can't believe it's not butter! AT&T, NASA, e-mail, naïve café.",
    'x'.repeat(500),
    'The quick brown fox jumps over the lazy dog. '.repeat(8).trim(),
  ];
  const reused = texts.map((text, i) => fliteSynthesize(module, i % 2 === 0 ? 'rms' : 'slt', text));
  const memory = fliteInstanceMemory();
  assert.ok(memory !== undefined);
  // The instance read only the bulk data of the voices it spoke with (flite-voice-data.test.ts):
  // the other voices' ranges are still zero, never written; everything else is the fresh instance's.
  const unreadVoices = fliteInstanceUnreadVoices() ?? [];
  assert.ok(!unreadVoices.includes('rms') && unreadVoices.includes('kal16'), unreadVoices.join());
  const unread = Object.entries(module.data?.voices ?? {}).flatMap(([name, ranges]) => (unreadVoices.includes(name) ? ranges : []));
  for (const { start, end } of unread) assert.ok(memory.subarray(start, end).every((b) => b === 0), `unread voice data ${start}–${end} was written`);
  const zeroed = fresh.slice();
  for (const { start, end } of unread) zeroed.fill(0, start, end);
  for (const { start, end } of module.readOnly) {
    const diff = memory.subarray(start, end).findIndex((b, i) => b !== zeroed[start + i]);
    assert.ok(diff < 0, `.rodata ${start}–${end} was written (at ${start + diff})`);
  }
  // A fresh instance for each text (another FliteModule object makes fliteSynthesize start anew).
  texts.forEach((text, i) => assert.deepEqual(fliteSynthesize({ ...module }, i % 2 === 0 ? 'rms' : 'slt', text), reused[i], text));
});

test('byteBoundedParts cuts long text for eSpeak at spaces, within the byte limit, losing nothing', () => {
  const text = 'あいう えお。'.repeat(1000);
  const parts = byteBoundedParts(text, 1000);
  assert.equal(parts.join(''), text);
  assert.ok(parts.every((p) => Buffer.byteLength(p) <= 1000));
  assert.deepEqual(byteBoundedParts('short', 1000), ['short']);
});

test('eSpeak NG alone: reset() makes the same text give the same samples after anything else', async () => {
  const es = await EspeakSynth.create();
  const speak = (voice: string, text: string): Int16Array => {
    const blocks: Int16Array[] = [];
    es.synthesize(voice, text, (s) => {
      blocks.push(s);
      return false;
    });
    return Int16Array.from(blocks.flatMap((b) => [...b]));
  };
  es.reset();
  const first = speak('ja+f2', 'きょうは いい てんきです。');
  speak('en-us+f5', 'Something else entirely, with breath noise.');
  es.reset();
  assert.deepEqual(speak('ja+f2', 'きょうは いい てんきです。'), first);
});

test('eSpeak NG alone: create() sizes the glue for the longest text a call takes, so such a text allocates nothing outside the restore point', async () => {
  // The WebIDL glue copies each string argument into a buffer it allocates once; a longer string
  // than that buffer gets a fresh allocation, which reset() would then undo under the glue's feet.
  // create() makes the buffer MAX_TEXT_BYTES long ("a" and NUL bytes, issue 20). Counted here at
  // the glue's own allocator (Module._webidl_malloc, looked up by the glue at each call).
  const es = await EspeakSynth.create();
  const module = (es as unknown as { module: { _webidl_malloc: (bytes: number) => number } }).module;
  const malloc = module._webidl_malloc;
  const asked: number[] = [];
  module._webidl_malloc = (bytes) => {
    asked.push(bytes);
    return malloc(bytes);
  };
  const speak = (text: string, blocksWanted = Infinity): Int16Array => {
    const blocks: Int16Array[] = [];
    es.synthesize('ja', text, (s) => {
      blocks.push(s);
      return blocks.length >= blocksWanted;
    });
    return Int16Array.from(blocks.flatMap((b) => [...b]));
  };
  es.reset();
  const first = speak('きょうは いい てんきです。');
  const long = 'あいうえお、'.repeat(Math.floor((MAX_TEXT_BYTES - 1) / Buffer.byteLength('あいうえお、')));
  assert.ok(Buffer.byteLength(long) < MAX_TEXT_BYTES && Buffer.byteLength(long) > MAX_TEXT_BYTES - 20);
  es.reset();
  assert.ok(speak(long, 2).length > 0);
  es.reset();
  assert.deepEqual(speak('きょうは いい てんきです。'), first);
  assert.deepEqual(asked, [], 'the glue allocated for a text within MAX_TEXT_BYTES');
});

for (const voice of engineVoices().map((v) => v.id)) {
  test(`${voice}: the same job gives the same bytes after other jobs in the same worker, and in a fresh engine`, async () => {
    const language: Language = voice.startsWith('en') ? 'en' : 'ja';
    const target = job({ text: TEXT[language], voice, language });
    const first = (await collect(engine, target)).audio;
    // Different voices, languages, rates and formats in between, on the same single worker.
    await collect(engine, job({ text: 'まったく別の文です。ABCも読みます。', voice: 'ja-woman-1', language: 'ja', sampleRate: 16000 }));
    await collect(engine, job({ text: 'Something else entirely, 1234.', voice: 'en-woman-1', language: 'en', sampleRate: 48000, format: 'float32' }));
    await collect(engine, job({ text: 'きょうは いい てんき。', voice: 'en-man-1', language: 'ja', channels: 2 }));
    const again = (await collect(engine, target)).audio;
    assert.ok(again.equals(first), `${voice}: ${again.length} bytes vs ${first.length}, not identical after other jobs`);
    const fresh = createEngine();
    try {
      const elsewhere = (await collect(fresh, target)).audio;
      assert.ok(elsewhere.equals(first), `${voice}: a fresh engine made other bytes`);
    } finally {
      await fresh.close();
    }
  });
}

test('the Japanese voices read English with the same Flite voices as the English ones (same bytes)', async () => {
  const en = (await collect(engine, job({ text: TEXT.en, voice: 'en-woman-1' }))).audio;
  const ja = (await collect(engine, job({ text: TEXT.en, voice: 'ja-woman-1', language: 'en' }))).audio;
  assert.ok(ja.equals(en));
});

test('when Flite cannot start, English falls back to eSpeak NG with the voice variant, and keeps its gender', async (t) => {
  const noFlite = createEngine({ workerUrl: new URL('../helpers/engine-no-flite-worker.js', import.meta.url) });
  try {
    const f0: Record<string, number> = {};
    for (const voice of ['en-man-1', 'en-woman-1']) {
      const { audio } = await collect(noFlite, job({ text: TEXT.en, voice, sampleRate: 16000 }));
      assert.ok(audio.length > 16000 * 2, `${voice}: ${audio.length} bytes`);
      assert.deepEqual(
        noFlite.stats().lastReport!.segments.map((s) => s.engine),
        ['espeak'],
      );
      f0[voice] = medianF0(pcm16ToFloat(audio), 16000);
    }
    t.diagnostic(`fallback F0: en-man-1 ${f0['en-man-1']!.toFixed(0)} Hz, en-woman-1 ${f0['en-woman-1']!.toFixed(0)} Hz`);
    assert.ok(f0['en-woman-1']! > 1.5 * f0['en-man-1']!);
    // Japanese with a Latin word still works, the word read by eSpeak's English.
    await collect(noFlite, job({ text: 'Rubyを書く', voice: 'ja-man-1', language: 'ja' }));
    assert.deepEqual(noFlite.stats().lastReport!.segments.map((s) => [s.language, s.engine]), [['en', 'espeak'], ['ja', 'espeak']]);
  } finally {
    await noFlite.close();
  }
  // With Flite working the same text is Flite's.
  await collect(engine, job({ text: TEXT.en, voice: 'en-man-1' }));
  assert.deepEqual(engine.stats().lastReport!.segments.map((s) => s.engine), ['flite']);
});

test('Flite failing partway: before a piece\'s first audio eSpeak NG speaks the piece; after it, the job fails', async () => {
  const failing = createEngine({ workerUrl: new URL('../helpers/engine-flite-fails-worker.js', import.meta.url) });
  try {
    // The first sentence's Flite run fails before any of its audio left: eSpeak NG speaks it,
    // Flite the second, and the job names the fallback.
    const early = await collect(failing, job({ text: 'This one fails-early. This one is fine.', voice: 'en-man-1', sampleRate: 16000 }));
    assert.ok(early.audio.length > 16000 * 2, `${early.audio.length} bytes`);
    assert.deepEqual(failing.stats().lastReport!.segments.map((s) => s.engine), ['espeak']);
    // Fails after two blocks (256 ms) were sent: they cannot be taken back, so the job fails.
    let received = 0;
    await assert.rejects(async () => {
      for await (const chunk of failing.synthesize(job({ text: 'This sentence fails-late, after some of its audio has been sent.', voice: 'en-man-1', sampleRate: 16000 }))) {
        received += chunk.length;
      }
    }, /speech synthesis failed/);
    assert.ok(received >= 2 * 2048 * 2, `${received} bytes before the error`);
    // The worker still speaks with Flite afterwards.
    await collect(failing, job({ text: TEXT.en, voice: 'en-man-1' }));
    assert.deepEqual(failing.stats().lastReport!.segments.map((s) => s.engine), ['flite']);
  } finally {
    await failing.close();
  }
});

test('a piece Flite fails on before its audio leaves no trace: eSpeak NG speaks it as when Flite cannot start', async () => {
  // Japanese (eSpeak NG, 22050 Hz) before and after: the fallback piece must continue eSpeak
  // NG's run, not follow a drained run and a switch to Flite's 16000 Hz that carried no sample.
  const text = '今日は晴れです。This one fails-early. 明日も晴れ。';
  const failing = createEngine({ workerUrl: new URL('../helpers/engine-flite-fails-worker.js', import.meta.url) });
  const noFlite = createEngine({ workerUrl: new URL('../helpers/engine-no-flite-worker.js', import.meta.url) });
  try {
    const fallback = await collect(failing, job({ text, voice: 'ja-man-1', language: 'ja' }));
    assert.deepEqual(failing.stats().lastReport!.segments.map((s) => [s.language, s.engine]), [['ja', 'espeak'], ['en', 'espeak'], ['ja', 'espeak']]);
    const reference = await collect(noFlite, job({ text, voice: 'ja-man-1', language: 'ja' }));
    assert.equal(fallback.audio.length, reference.audio.length);
    assert.ok(fallback.audio.equals(reference.audio), 'the same bytes');
  } finally {
    await Promise.all([failing.close(), noFlite.close()]);
  }
});

test('English streams sentence by sentence: the first chunk comes before the last sentence is made', async () => {
  const sentences = Array.from({ length: 12 }, (_, i) => `This is sentence number ${i + 1}, spoken on its own.`).join(' ');
  const result = await collect(engine, job({ text: sentences, voice: 'en-man-1' }));
  assert.ok(result.firstChunkMs < result.totalMs / 4, `first chunk after ${result.firstChunkMs.toFixed(0)} of ${result.totalMs.toFixed(0)} ms`);
});
