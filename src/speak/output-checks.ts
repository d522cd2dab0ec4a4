/**
 * Checks of a planned output against the run's input, before anything is opened (docs/cli.md §1,
 * §2): `-o` or `--subtitles` never names the text's own file (same inode, any name).
 */
import type { Stats } from 'node:fs';
import { resolve } from 'node:path';
import { TtsError } from '../errors.js';
import { subtitleFormat } from './subtitles.js';
import type { OutputPlan } from './output-plan.js';

/**
 * Refuses to write the audio (or the subtitles) over the text it is made from: `-o` or
 * `--subtitles` naming the `-f` file (or the file stdin was redirected from), compared by device
 * and inode, so another name for the same file (a link, `./x`) is caught too.
 * @param output the path written; nothing to check when it does not exist yet.
 * @param input the `-f` path, `-` for stdin (checked through its descriptor), or undefined when
 *   the text comes from the command line.
 * @param flag the flag that named `output`, for the message: `-o` (default), `--subtitles`,
 *   `--word-timings`, `--split-chapters` (a chapter's file in its folder) or `--chapters`.
 * @throws TtsError `usage` (exit 2) when they are the same file.
 */
export async function assertOutputIsNotInput(output: string, input: string | undefined, flag: '-o' | '--subtitles' | '--word-timings' | '--split-chapters' | '--chapters' = '-o'): Promise<void> {
  if (input === undefined) return;
  const { fstatSync } = await import('node:fs');
  const { stat } = await import('node:fs/promises');
  const out = await stat(output).catch(() => undefined);
  if (out === undefined || !out.isFile()) return;
  let inp: Stats | undefined;
  try {
    inp = input === '-' ? fstatSync(0) : await stat(input);
  } catch {
    return; // Unreadable input is reported when it is read.
  }
  if (inp.isFile() && inp.dev === out.dev && inp.ino === out.ino) {
    throw new TtsError('usage', `${flag} ${output} is the file the text is read from`, { hint: flag === '-o' || flag === '--split-chapters' ? 'write the audio to another file (--split-chapters: another folder)' : flag === '--subtitles' ? 'write the subtitles to another file' : flag === '--chapters' ? 'write the chapters to another file, e.g. book.chapters.vtt' : 'write the word timings to another file' });
  }
}

/**
 * Refuses `--words` without `--subtitles`, and a `--word-timings` path that is the audio output,
 * the subtitles or the file the text is read from (docs/cli.md §12.1).
 * @throws TtsError `usage` (exit 2).
 */
export async function checkWordOptions(flags: { words?: boolean; wordTimings?: string; subtitles?: string }, plan: OutputPlan, input: string | undefined): Promise<void> {
  if (flags.words === true && flags.subtitles === undefined) {
    throw new TtsError('usage', '--words times the words of the --subtitles file, and there is none', { hint: 'add --subtitles FILE.vtt (or .srt), or use --word-timings FILE.jsonl' });
  }
  const path = flags.wordTimings;
  if (path === undefined) return;
  if (plan.file !== undefined && resolve(plan.file.path) === resolve(path)) throw new TtsError('usage', `--word-timings ${path} is the audio output (-o)`, { hint: 'give the word timings a name of their own, e.g. speech.jsonl' });
  if (flags.subtitles !== undefined && resolve(flags.subtitles) === resolve(path)) throw new TtsError('usage', `--word-timings ${path} is the --subtitles file`, { hint: 'give the word timings a name of their own, e.g. speech.jsonl' });
  await assertOutputIsNotInput(path, input, '--word-timings');
}

/**
 * Refuses a `--subtitles` path that is not `.srt`/`.vtt`, that is the audio output, or that is
 * the file the text is read from (docs/cli.md §1).
 * @throws TtsError `usage` (exit 2).
 */
export async function checkSubtitlesPath(path: string, plan: OutputPlan, input: string | undefined): Promise<void> {
  subtitleFormat(path);
  if (plan.file !== undefined) {
    if (resolve(plan.file.path) === resolve(path)) throw new TtsError('usage', `--subtitles ${path} is the audio output (-o)`, { hint: 'give the subtitles a name of their own, e.g. speech.srt' });
  }
  await assertOutputIsNotInput(path, input, '--subtitles');
}
