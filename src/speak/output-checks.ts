/**
 * Checks of a planned output against the run's input, before anything is opened (docs/cli.md §1,
 * §2): `-o` or `--subtitles` never names the text's own file (same inode, any name) or the FIFO
 * it is read from, no two outputs of a run are one file or one pipe, and a subtitle, word-timing
 * or chapter output can be written (a file, a FIFO, a device; not a disk, nor a socket no
 * descriptor of the run leads to).
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { outputTarget } from '../audio/output-target.js';
import { TtsError } from '../errors.js';
import { subtitleFormat } from './subtitles.js';
import { writtenInPlace } from './text-file.js';
import { assertGivenDescriptor, assertNotStandardInput, blockDevice, inPlaceKind, ownSocketDescriptor, unreachableSocket } from '../audio/special-files.js';
import type { OutputPlan } from './output-plan.js';

/**
 * Who a file is, to compare two names of it (docs/cli.md §1, §9): device and inode when it
 * exists (so a hard link, a symbolic link or `./x` is the same file — the atomic writer of
 * audio/file-sink.ts follows links, so a link to the audio is where the audio is), else the path
 * it would be written at (audio/output-target.ts: links resolved, a dangling link's target
 * too). Undefined for what is neither a regular file nor absent (a FIFO or a device such as
 * `/dev/null` may be written by several outputs: nothing is replaced there) — unless `streams`.
 * @param folders resolved folders already seen, to resolve each folder once over many names.
 * @param streams also tell a FIFO (a pipe: `/dev/stdout` in `… | cat`) or a socket by device and
 *   inode, as `stream DEV:INO` — what the name opens, whatever its spelling (`/dev/fd/1`,
 *   `/proc/self/fd/1`, a link): two outputs there would interleave in one stream. Devices and
 *   folders stay undefined.
 * @returns `inode DEV:INO`, `stream DEV:INO`, `path ABSOLUTE`, or undefined.
 */
export async function fileIdentity(path: string, folders: Map<string, Promise<string>> = new Map(), streams = false): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info !== undefined) {
    if (info.isFile()) return `inode ${info.dev}:${info.ino}`;
    return streams && (info.isFIFO() || info.isSocket()) ? `stream ${info.dev}:${info.ino}` : undefined;
  }
  return `path ${await outputTarget(path, folders)}`;
}

/**
 * True when two outputs of one run (or an output and an input) `a` and `b` are one: one regular
 * file, one pipe or socket (`-o /dev/stdout --word-timings /dev/fd/1` with stdout a pipe: the
 * text would go into the audio stream), or one path not yet made ({@link fileIdentity} with
 * `streams`). Devices (`/dev/null`) are never the same.
 */
export async function sameFile(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([fileIdentity(a, undefined, true), fileIdentity(b, undefined, true)]);
  return x !== undefined && x === y;
}

/**
 * Refuses an output that is a file the run reads besides its text (docs/cli.md §1 "Text input"):
 * the config file, the lexicon, the API key file — by any name ({@link sameFile}: a link, another
 * spelling; by path when neither exists yet). Written over, it would be lost (a key), and every
 * later run would read word timings or subtitles as its settings (exit 2 until mended by hand).
 * @param outputs each output: how messages name it (its flag, or a batch line's key) and its
 *   path; undefined paths are skipped (no such output).
 * @param inputs each file read: what it is (`the lexicon`) and its path; undefined ones skipped.
 * @throws TtsError `usage` (exit 2) naming both.
 */
export async function assertOutputsAreNotSettings(outputs: readonly { named: string; path: string | undefined }[], inputs: readonly { what: string; path: string | undefined }[]): Promise<void> {
  for (const output of outputs) {
    if (output.path === undefined) continue;
    for (const input of inputs) {
      if (input.path === undefined || !(await sameFile(output.path, input.path))) continue;
      throw new TtsError('usage', `${output.named} ${output.path} is ${input.what} (${input.path}), which this run reads`, { hint: 'give the output a name of its own' });
    }
  }
}

/**
 * Refuses to write the audio (or the subtitles) over the text it is made from: `-o` or
 * `--subtitles` naming the `-f` file (or the file stdin was redirected from), or the FIFO or pipe
 * the text comes through (`--word-timings /dev/stdin` with the text on a pipe), compared by
 * device and inode, so another name for the same file (a link, `./x`) is caught too.
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
  // A FIFO the text comes through would get the output in its text (or wait for a reader forever).
  if (out === undefined || !(out.isFile() || out.isFIFO())) return;
  let inp: Stats | undefined;
  try {
    inp = input === '-' ? fstatSync(0) : await stat(input);
  } catch {
    return; // Unreadable input is reported when it is read.
  }
  if ((inp.isFile() || inp.isFIFO()) && inp.isFIFO() === out.isFIFO() && inp.dev === out.dev && inp.ino === out.ino) {
    throw new TtsError('usage', `${flag} ${output} is the ${out.isFIFO() ? 'pipe' : 'file'} the text is read from`, { hint: flag === '-o' || flag === '--split-chapters' ? 'write the audio to another file (--split-chapters: another folder)' : flag === '--subtitles' ? 'write the subtitles to another file' : flag === '--chapters' ? 'write the chapters to another file, e.g. book.chapters.vtt' : 'write the word timings to another file' });
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
export async function assertSideOutputIsNotStdout(path: string, stdoutFd: number | undefined, flag: SideOutputFlag): Promise<void> {
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

/** The side outputs of a run: written whole to a temporary file renamed into place, or in place (speak/text-file.ts). */
export type SideOutputFlag = '--subtitles' | '--word-timings' | '--chapters';

/**
 * Refuses a subtitle, word-timing or chapter output named by a descriptor this run was not given
 * (`/dev/fd/7` with no `7>…`: audio/special-files.ts `assertGivenDescriptor`), that is the pipe
 * standard input comes through (`assertNotStandardInput`: this run reads it), or that exists and
 * cannot be written: a block device (a disk), or a socket that no descriptor of this process leads to (a listening socket in
 * the file system: a socket cannot be opened by its name; `/dev/stdout` when standard output is a
 * socket is written through descriptor 1: audio/special-files.ts `ownSocketDescriptor`). A file,
 * a FIFO or pipe, a character device (`/dev/null`, a terminal) and a name not made yet pass: a
 * file is written atomically, the others in place (speak/text-file.ts). Checked before anything
 * is synthesized; links are followed, as the open follows them. A folder is left to the writer
 * (exit 7 when it opens it).
 * @param path the output as given.
 * @param named how the message names it: its flag, or a batch line's key (`line 3: the "subtitles"`).
 * @throws TtsError `usage` (exit 2) naming it, the path and what is there.
 */
export async function assertSideOutputCanBeWritten(path: string, named: SideOutputFlag | `line ${number}: the "${'subtitles' | 'word-timings'}"`): Promise<void> {
  assertGivenDescriptor(path, named, 'write');
  await assertNotStandardInput(path, named);
  const found = await inPlaceKind(path);
  if (found?.kind === 'block device') throw blockDevice(path, named);
  if (found?.kind === 'socket' && ownSocketDescriptor(found.info) === undefined) throw unreachableSocket(path, named);
}

/**
 * Refuses `--words` without `--subtitles`, and a `--word-timings` path that is the audio output,
 * the subtitles or the file (or FIFO) the text is read from (docs/cli.md §12.1), by any name
 * ({@link sameFile}: a link to the audio would have the audio replaced by the word timings; a
 * pipe that is also `-o` would get the text in its audio), or that cannot be written
 * ({@link assertSideOutputCanBeWritten}).
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
  await assertSideOutputCanBeWritten(path, '--word-timings');
}

/**
 * Refuses a `--subtitles` path that is not `.srt`/`.vtt` (unless written in place: then WebVTT,
 * subtitles.ts `subtitleFormat`), that is the audio output (by any name, {@link sameFile}: also
 * one pipe), that is the file (or FIFO) the text is read from (docs/cli.md §1), or that cannot be
 * written ({@link assertSideOutputCanBeWritten}).
 * @throws TtsError `usage` (exit 2).
 */
export async function checkSubtitlesPath(path: string, plan: OutputPlan, input: string | undefined): Promise<void> {
  subtitleFormat(path, await writtenInPlace(path));
  if (plan.file !== undefined) {
    if (await sameFile(plan.file.path, path)) throw new TtsError('usage', `--subtitles ${path} is the audio output (-o)`, { hint: 'give the subtitles a name of their own, e.g. speech.srt' });
  }
  await assertOutputIsNotInput(path, input, '--subtitles');
  await assertSideOutputCanBeWritten(path, '--subtitles');
}
