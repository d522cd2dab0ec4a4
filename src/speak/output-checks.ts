/**
 * Checks of a planned output against the run's input, before anything is opened (docs/cli.md §1,
 * §2): `-o` or `--subtitles` never names the text's own file (same inode, any name), and no two
 * outputs of a run are one file.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { outputTarget } from '../audio/output-target.js';
import { TtsError } from '../errors.js';
import { subtitleFormat } from './subtitles.js';
import type { OutputPlan } from './output-plan.js';

/**
 * Who a file is, to compare two names of it (docs/cli.md §1, §9): device and inode when it
 * exists (so a hard link, a symbolic link or `./x` is the same file — the atomic writer of
 * audio/file-sink.ts follows links, so a link to the audio is where the audio is), else the path
 * it would be written at (audio/output-target.ts: links resolved, a dangling link's target
 * too). Undefined for what is neither a regular file nor absent (a FIFO or a device such as
 * `/dev/null` may be written by several outputs: nothing is replaced there).
 * @param folders resolved folders already seen, to resolve each folder once over many names.
 */
export async function fileIdentity(path: string, folders: Map<string, Promise<string>> = new Map()): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info !== undefined) return info.isFile() ? `inode ${info.dev}:${info.ino}` : undefined;
  return `path ${await outputTarget(path, folders)}`;
}

/** True when `a` and `b` name one regular file, or one path not yet made ({@link fileIdentity}). */
export async function sameFile(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([fileIdentity(a), fileIdentity(b)]);
  return x !== undefined && x === y;
}

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
 * Refuses to write the audio to standard output when that is the file the text is read from
 * (`tts stream -f notes.txt >> notes.txt`, `tts stream < notes.txt 1<> notes.txt`): as `-o`
 * naming it (docs/cli.md §1; GNU cat refuses the same: "input file is output file"), compared by
 * device and inode. Nothing to check when stdout is not a regular file (a pipe, a terminal).
 * @param stdoutFd the descriptor of the run's standard output (1), undefined when it has none.
 * @param input the `-f` path, `-` for stdin, or undefined when the text comes from the command line.
 * @throws TtsError `usage` (exit 2) when they are the same file.
 */
export async function assertStdoutIsNotInput(stdoutFd: number | undefined, input: string | undefined): Promise<void> {
  if (input === undefined || stdoutFd === undefined) return;
  const { fstatSync } = await import('node:fs');
  let out: Stats;
  let inp: Stats;
  try {
    out = fstatSync(stdoutFd);
    inp = input === '-' ? fstatSync(0) : await stat(input);
  } catch {
    return; // Unreadable input is reported when it is read.
  }
  if (out.isFile() && inp.isFile() && inp.dev === out.dev && inp.ino === out.ino) {
    throw new TtsError('usage', `standard output is ${input === '-' ? 'the file standard input is read from' : `${input}, the file the text is read from`}`, {
      hint: 'redirect the audio to another file, or write it with -o FILE',
    });
  }
}

/**
 * Refuses a subtitle, word-timing or chapter file that is standard output while the audio goes
 * there (docs/cli.md §2: nothing but audio on stdout): `--word-timings /dev/stdout`, or a link
 * to it, would put text into the audio stream, or — stdout redirected to a file — replace the
 * audio with the text when the side file is renamed into place. Compared by device and inode
 * with descriptor `stdoutFd`, for a regular file, a pipe or a socket; a device (`/dev/null`)
 * takes both harmlessly and is not compared.
 * @param stdoutFd the descriptor the audio is written to (1), undefined when it has none.
 * @throws TtsError `usage` (exit 2) when they are one.
 */
export async function assertSideOutputIsNotStdout(path: string, stdoutFd: number | undefined, flag: '--subtitles' | '--word-timings' | '--chapters'): Promise<void> {
  if (stdoutFd === undefined) return;
  const { fstatSync } = await import('node:fs');
  let out: Stats;
  try {
    out = fstatSync(stdoutFd);
  } catch {
    return;
  }
  const side = await stat(path).catch(() => undefined);
  if (side === undefined || !(side.isFile() || side.isFIFO() || side.isSocket())) return;
  if (side.dev === out.dev && side.ino === out.ino) {
    throw new TtsError('usage', `${flag} ${path} is standard output, where the audio goes`, { hint: 'write it to a file of its own, or the audio with -o FILE' });
  }
}

/**
 * Refuses `--words` without `--subtitles`, and a `--word-timings` path that is the audio output,
 * the subtitles or the file the text is read from (docs/cli.md §12.1), by any name
 * ({@link sameFile}: a link to the audio would have the audio replaced by the word timings).
 * @throws TtsError `usage` (exit 2).
 */
export async function checkWordOptions(flags: { words?: boolean; wordTimings?: string; subtitles?: string }, plan: OutputPlan, input: string | undefined): Promise<void> {
  if (flags.words === true && flags.subtitles === undefined) {
    throw new TtsError('usage', '--words times the words of the --subtitles file, and there is none', { hint: 'add --subtitles FILE.vtt (or .srt), or use --word-timings FILE.jsonl' });
  }
  const path = flags.wordTimings;
  if (path === undefined) return;
  if (plan.file !== undefined && (await sameFile(plan.file.path, path))) throw new TtsError('usage', `--word-timings ${path} is the audio output (-o)`, { hint: 'give the word timings a name of their own, e.g. speech.jsonl' });
  if (flags.subtitles !== undefined && (await sameFile(flags.subtitles, path))) throw new TtsError('usage', `--word-timings ${path} is the --subtitles file`, { hint: 'give the word timings a name of their own, e.g. speech.jsonl' });
  await assertOutputIsNotInput(path, input, '--word-timings');
}

/**
 * Refuses a `--subtitles` path that is not `.srt`/`.vtt`, that is the audio output (by any name,
 * {@link sameFile}), or that is the file the text is read from (docs/cli.md §1).
 * @throws TtsError `usage` (exit 2).
 */
export async function checkSubtitlesPath(path: string, plan: OutputPlan, input: string | undefined): Promise<void> {
  subtitleFormat(path);
  if (plan.file !== undefined) {
    if (await sameFile(plan.file.path, path)) throw new TtsError('usage', `--subtitles ${path} is the audio output (-o)`, { hint: 'give the subtitles a name of their own, e.g. speech.srt' });
  }
  await assertOutputIsNotInput(path, input, '--subtitles');
}
