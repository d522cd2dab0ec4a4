/**
 * The engine's floor for a one-shot (issue 20): a Node program that does nothing but the work the
 * built-in engine's synthesizer itself must do for one sentence, and writes the samples to stdout
 * as the synthesizer makes them (16-bit little-endian mono at its own rate: Flite 16000 Hz,
 * eSpeak NG 22050 Hz). No CLI, no commander, no configuration, no worker thread, no HTTP or SSE,
 * no resampling, no WAV header, no piece cache. bench/oneshot.ts times it beside `tts stream`,
 * less the time this program spent loading its modules, which it reports: a lower bound for
 * running the synthesizer as tts runs it (one cold run, with no thread to start and no module to
 * load), which no change outside the synthesizer removes. Not a bound for running it otherwise:
 * a throwaway run of "a" first, for instance, takes about 30 ms off Flite's whole run and adds
 * about 10 ms before its first block (README, issue 20's eleventh round). Since issue 20's
 * fifteenth round Flite's binary asks V8 to optimize its once-per-utterance functions as it
 * compiles (flite.ts FLITE_EAGERLY_OPTIMIZED), here as in tts, which makes such a run pointless.
 *
 * Usage: `node dist/bench/engine-floor-program.js en TEXT` or `… ja KANA`.
 * - `en`: Flite (voice rms, en-man-1's), compiled from the same stripped file as tts
 *   (src/engine/flite.ts), one cold run of TEXT.
 * - `ja`: eSpeak NG restored from its state file (src/engine/espeak.ts), one cold run of KANA
 *   with ja-man-1's eSpeak voice. KANA is what tts's readings make of the sentence (the bench
 *   computes them: speechSegments); kuromoji's dictionary is left out, because a one-shot can load
 *   it on another thread while eSpeak NG starts, as tts does.
 * On stderr, one line: `imports MS`, the milliseconds its import() of tts's modules took, timed
 * around the import() itself: not from performance.timeOrigin, which on Node 20 reads 60–90 ms at
 * a script's first line, more than a whole `node -e 0` takes. han.js, a few lines its argument
 * check needs, is imported before and counted in the floor.
 * Exits 2 on bad arguments (another language, a missing or extra argument, a text over
 * {@link MAX_CHARS} characters, kanji for `ja`), 1 when the synthesizer fails (the message on
 * stderr).
 */
import { writeSync } from 'node:fs';
import { containsKanji } from '../src/engine/han.js';

/**
 * Longest text taken, in UTF-16 code units: one sentence. tts hands Flite pieces of a budget of
 * phones (flite.ts flitePieces), and this program hands it the whole text; a 20,000-character
 * word overflowed its stack.
 */
export const MAX_CHARS = 1000;

/**
 * Writes one block of samples (16-bit, native byte order: little-endian on every machine tts runs
 * on) to stdout, whole (fd 1 may be a pipe: writeSync can write less).
 * @returns false: the synthesizer goes on (a sink's true stops it).
 * @throws the write's error (EPIPE when the reader is gone).
 */
function write(samples: Int16Array): boolean {
  const bytes = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  for (let at = 0; at < bytes.length; ) at += writeSync(1, bytes, at);
  return false;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [lang, text] = args;
  if (args.length !== 2 || (lang !== 'en' && lang !== 'ja') || text === undefined || text === '' || text.length > MAX_CHARS || (lang === 'ja' && containsKanji(text))) {
    process.stderr.write(`usage: engine-floor-program.js en TEXT | ja KANA (one sentence, at most ${MAX_CHARS} characters; kana, not kanji, for ja)\n`);
    process.exitCode = 2;
    return;
  }
  const started = performance.now();
  const imported = (): void => {
    process.stderr.write(`imports ${(performance.now() - started).toFixed(1)}\n`);
  };
  if (lang === 'en') {
    const { fliteSpeak, loadFlite } = await import('../src/engine/flite.js');
    imported();
    fliteSpeak(await loadFlite(), 'rms', text, write);
    return;
  }
  const [{ EspeakSynth }, { espeakVoiceName }] = await Promise.all([import('../src/engine/espeak.js'), import('../src/engine/voices.js')]);
  imported();
  (await EspeakSynth.create()).synthesize(espeakVoiceName('ja-man-1', 'ja'), text, write);
}

main().catch((error: unknown) => {
  process.stderr.write(`engine-floor-program: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
