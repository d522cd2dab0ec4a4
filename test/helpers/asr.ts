/**
 * The intelligibility judge (issue 14): pocketsphinx (CMU Sphinx; Debian packages `pocketsphinx`
 * + `pocketsphinx-en-us`) transcribes speech with its general US English language model, and the
 * word error rate against what was said measures how well a listener would understand a voice.
 * Input is resampled to the recognizer's 16 kHz by sox with its repeatable dither (`sox -R`), so
 * the figure is the same on every run.
 *
 * Debian bookworm ships pocketsphinx 0.8+5prealpha: `pocketsphinx_continuous -infile F.wav`
 * prints one hypothesis per utterance on stdout. The 5.x CLI (`pocketsphinx single F.wav`,
 * JSON with the text in "t") is used where that is what is installed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { wavFile, which, wordErrors } from './engine-audio.js';

const run = promisify(execFile);

/** Words of `text` for scoring: lower case, letters, digits and inner apostrophes only. */
export function scoringWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’]/g, "'")
    .split(/[^a-z0-9']+/)
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter((w) => w !== '');
}

/**
 * Transcribes pcm16 mono audio at `sampleRate` Hz: writes it as WAV, resamples it to 16 kHz mono
 * with `sox -R`, and runs pocketsphinx on it with the default US English model.
 * @returns the recognized text (lower case words separated by spaces).
 * @throws Error naming the packages to install when sox or pocketsphinx is missing.
 */
export async function transcribe(pcm16: Buffer, sampleRate: number): Promise<string> {
  const continuous = await which('pocketsphinx_continuous');
  const modern = continuous === undefined ? await which('pocketsphinx') : undefined;
  if (continuous === undefined && modern === undefined) {
    throw new Error('pocketsphinx is not installed: apt-get install pocketsphinx pocketsphinx-en-us');
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'tts-asr-'));
  try {
    const input = path.join(dir, 'in.wav');
    const wav = path.join(dir, '16k.wav');
    await writeFile(input, wavFile(pcm16, sampleRate));
    await run('sox', ['-R', input, '-r', '16000', '-c', '1', '-b', '16', wav], { timeout: 30_000 });
    if (continuous !== undefined) {
      const { stdout } = await run(continuous, ['-infile', wav, '-logfn', '/dev/null'], { timeout: 120_000 });
      return stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '').join(' ');
    }
    const { stdout } = await run(modern!, ['single', wav], { timeout: 120_000 });
    return stdout
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => String((JSON.parse(l) as { t?: unknown }).t ?? ''))
      .join(' ');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Word errors (substitutions + deletions + insertions) and reference words of one transcription. */
export function scoreTranscript(said: string, heard: string): { errors: number; words: number } {
  const ref = scoringWords(said);
  return { errors: wordErrors(ref, scoringWords(heard)), words: ref.length };
}
