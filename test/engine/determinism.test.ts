/**
 * Determinism through the real service (issue 12 §12, docs/cli.md §5): `tts serve` gives the same
 * audio bytes for the same request whatever it served before, and fresh `tts stream` processes
 * (each with its own built-in engine) give those same bytes — for every voice. Before the fix,
 * Japanese differed by a few samples from run to run in one server (eSpeak NG's wavegen state
 * carried over between jobs) and the female voices differed in every fresh process (eSpeak's
 * random generator was seeded from the clock).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { engineVoices } from '../../src/engine/catalogue.js';
import { runTts } from '../helpers/cli.js';
import { allEvents, audioOf, postSse } from '../helpers/serve-http.js';
import { startServeInProcess, type InProcessServe } from '../helpers/in-process.js';

const KEY = 'determinism-test-key';
const TEXT: Record<string, string> = {
  ja: '明日は雨が降りそうです。東京駅で3時に会いましょう。',
  en: 'See you at the station tomorrow. Bring an umbrella.',
};
/** Other requests served in between, on the same single worker (some timing their words). */
const OTHERS: { input: string; voice: string; word_timings?: boolean }[] = [
  { input: 'まったく違う文章を、別の声で読みます。Pythonも。', voice: 'ja-woman-1', word_timings: true },
  { input: 'Something else entirely, 12345.', voice: 'en-woman-1', word_timings: true },
  { input: 'きょうは いい てんき。', voice: 'ja-man-1' },
  { input: 'One more, quickly.', voice: 'en-man-1' },
];

// `tts serve` in this process (its engine's workers are threads): the child processes are only
// the fresh `tts stream` runs, in one test (issue 19 §5).
let srv: InProcessServe;
before(async () => {
  // One worker: every request goes through the same eSpeak NG and Flite, so any state left
  // behind by one request would reach the next.
  srv = await startServeInProcess(['--port', '0', '--workers', '1', '--rate-limit', '1000/s'], { TTS_SERVER_API_KEYS: KEY });
});
after(async () => {
  await srv.stop('SIGTERM');
});

async function served(body: { input: string; voice: string; word_timings?: boolean }): Promise<Buffer> {
  return (await servedWithDone(body)).audio;
}

/** The audio of one SSE request and its `done` event's data. */
async function servedWithDone(body: { input: string; voice: string; word_timings?: boolean }): Promise<{ audio: Buffer; done: Record<string, unknown> }> {
  const res = await postSse(srv.base, body, KEY);
  assert.equal(res.status, 200);
  const events = await allEvents(res);
  const audio = audioOf(events);
  assert.ok(audio.length > 0);
  const done = events.at(-1);
  assert.equal(done?.event, 'done');
  return { audio, done: done.data };
}

for (const voice of engineVoices().map((v) => v.id)) {
  test(`${voice}: same request → same bytes after other requests in one server`, async () => {
    const input = TEXT[voice.slice(0, 2)]!;
    const first = await served({ input, voice });
    for (const other of OTHERS) await served(other);
    const again = await served({ input, voice });
    assert.ok(again.equals(first), `${voice}: ${again.length} vs ${first.length} bytes, not identical after other requests`);
  });
}

// Word timings are work of their own (a second Flite run per sentence, a second kuromoji and eSpeak
// NG pass per Japanese job), done only when asked (docs/protocol.md §2.1 `word_timings`): asking
// must not change a byte of the audio, and not asking sends no `words`.
for (const [label, input, voice] of [
  ['English (Flite)', TEXT['en']!, 'en-woman-1'],
  ['Japanese with kanji and a Latin word (eSpeak NG, kuromoji, Flite)', `${TEXT['ja']!}Pythonも。`, 'ja-man-1'],
  ['Japanese kana only', 'きょうは いい てんき。', 'ja-woman-1'],
] as const) {
  test(`${label}: the same bytes with and without word_timings; words only when asked`, async () => {
    const plain = await servedWithDone({ input, voice });
    const timed = await servedWithDone({ input, voice, word_timings: true });
    const again = await servedWithDone({ input, voice, word_timings: false });
    assert.ok(timed.audio.equals(plain.audio), `${timed.audio.length} vs ${plain.audio.length} bytes`);
    assert.ok(again.audio.equals(plain.audio));
    assert.equal(plain.done['words'], undefined, 'no words without word_timings');
    assert.equal(again.done['words'], undefined, 'no words with word_timings: false');
    assert.ok(Array.isArray(timed.done['words']) && timed.done['words'].length > 0, 'words with word_timings: true');
    assert.equal(plain.done['engine'], timed.done['engine']);
  });
}

test('every voice: fresh `tts stream` processes give the bytes the server gives', async () => {
  for (const voice of engineVoices().map((v) => v.id)) {
    const input = TEXT[voice.slice(0, 2)]!;
    const reference = await served({ input, voice });
    // One fresh process per voice: its engine is another instance than the server's, started at
    // another time (a seed from the clock differs from the server's); a second process started in
    // the same moment would add no other case.
    const runs = [await runTts(['stream', '-q', '--offline', '-v', voice, input])];
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      // Nothing on the terminal but what tts says (no ExperimentalWarning from WebAssembly/WASI).
      assert.doesNotMatch(run.stderr, /Warning/);
      assert.ok(run.stdout.equals(reference), `${voice}: a fresh process made ${run.stdout.length} bytes, the server ${reference.length}`);
    }
  }
});
