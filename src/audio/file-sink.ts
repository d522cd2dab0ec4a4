/**
 * The atomic file sink of docs/cli.md §2: audio goes to a temporary file in the target's folder,
 * which is renamed over the target only when the output is complete. On failure or abort the
 * temporary file is removed, so an existing file at the target is never touched and no partial
 * file is left.
 *
 * Why not a library: write-file-atomic, atomically and steno take the whole content at once,
 * and fs-write-stream-atomic streams but only appends. We need to stream, then go back and
 * patch the WAV header's sizes (known only at the end), and cut the file back for a rewritten
 * piece (truncateAudio). Positional writes on a FileHandle from fs/promises do all three with
 * the same rename-into-place discipline those libraries use.
 */
import { constants, lstatSync, statSync, type Stats } from 'node:fs';
import { access, lstat, open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { TtsError } from '../errors.js';
import { outputTarget } from './output-target.js';
import type { AudioSink } from './sink.js';
import { removeStaleTempFiles, tempPathFor, trackTempFile, untrackTempFile } from './temp-files.js';
import { assertAudioSpec, type AudioSpec } from '../dsp/spec.js';
import { WAV_UNKNOWN_SIZE, wavHeader, wavHeaderLength, wavPadLength } from './wav.js';

/** Container of a file: `wav` = WAV header + audio, `raw` = the audio bytes alone. */
export type FileContainer = 'wav' | 'raw';

/** An {@link AudioSink} writing one file atomically. */
export interface FileSink extends AudioSink {
  /** The target path as given to {@link openFileSink}. */
  readonly path: string;
  /** The temporary file being written (`.<base>.tts-<pid>-<random>.tmp` next to the target; temp-files.ts). */
  readonly tempPath: string;
  /** Audio bytes written so far (header and pad byte excluded). */
  readonly audioBytes: number;
  /**
   * Cuts the file back to its first `audioBytes` bytes of audio, so the following writes
   * continue from there (to rewrite a piece that has to be fetched again).
   * @param audioBytes 0 ≤ audioBytes ≤ the current {@link FileSink.audioBytes}, in bytes.
   * @throws RangeError for a value out of that range; TtsError `io_error` if the file system
   *   fails (the temporary file is then removed).
   */
  truncateAudio(audioBytes: number): Promise<void>;
  /**
   * Overwrites `data.length` bytes at byte `offset` of the audio written so far (for a raw file:
   * of the file), e.g. a FLAC STREAMINFO whose totals are known only at the end (containers/).
   * @throws RangeError when the range is not inside what was written; TtsError `io_error` if
   *   the file system fails (the temporary file is then removed).
   */
  patch(offset: number, data: Buffer): Promise<void>;
}

/**
 * Opens an atomic file sink for `path`.
 *
 * The temporary file `.<base>.tts-<pid>-<random>.tmp` is created next to the target (same folder, so the
 * final rename is atomic) with the mode of a normal new file (0666 less the umask). For `wav`
 * the header is written first with 0xFFFFFFFF placeholder sizes. `finish()` appends the pad
 * byte for an odd µ-law data size, writes the exact sizes and `fact` count into the header,
 * fsyncs, closes and renames over the target. `abort()`, and any failure, closes and deletes
 * the temporary file. If `path` is a symbolic link, the file it points to is replaced (as
 * write-file-atomic does), or created when it does not exist yet (output-target.ts), not the link.
 *
 * @param path file to write; an existing file there is replaced only by a successful finish().
 * @param spec encoding, rate (Hz) and channels of the chunks that will be written.
 * @param container `wav` for a WAV file, `raw` for the bare audio bytes.
 * @throws TtsError `io_error` (exit 7) naming `path`, with a hint and the fs error as cause,
 *   when the folder does not exist, is not writable, the target is a folder, the disk is full…
 *   Every later write/finish/truncate failure is reported the same way.
 * @throws RangeError for an invalid spec (see assertAudioSpec).
 */
export async function openFileSink(path: string, spec: AudioSpec, container: FileContainer): Promise<FileSink> {
  assertAudioSpec(spec);
  const { target, tempPath, fh, sweep } = await openAtomicFile(path);
  const sink = new AtomicFileSink(path, target, tempPath, fh, spec, container, sweep);
  if (container === 'wav') {
    try {
      await writeAll(fh, wavHeader(spec), 0);
    } catch (err) {
      await sink.abort();
      throw ioError(err, path);
    }
  }
  return sink;
}

/** A file being written atomically: a temporary file beside its target (docs/cli.md §2). */
export interface AtomicFile {
  /** The target with links resolved: what the temporary file is renamed over. */
  target: string;
  /** The temporary file, tracked for removal at exit (temp-files.ts). */
  tempPath: string;
  /** Open for writing at the start of the temporary file. */
  fh: FileHandle;
  /**
   * The sweep of temporary files killed runs left for the same name (removeStaleTempFiles), under
   * way beside the writing; {@link commitAtomicFile} and {@link discardAtomicFile} wait for it.
   * Never rejects.
   */
  sweep?: Promise<unknown> | undefined;
}

/**
 * Opens the temporary file of an atomic write of `path`: the target's links resolved (also a
 * dangling link's: its target is created, the link stays; output-target.ts), a folder there
 * refused now (rather than at the final rename, after all the synthesis), the new one created
 * exclusively with the mode of a new file — or of the file it will replace (a 0600 file must not
 * come back 0644) — and the temporary files a killed run left for the same name removed beside
 * the writing ({@link AtomicFile.sweep}).
 * Complete it with {@link commitAtomicFile}, or drop it with {@link discardAtomicFile}.
 * An existing file that could not be written in place is refused before anything is made
 * ({@link assertReplaceable}: read-only to this user), unless `options.ownFile` says it is the
 * file this run has just written (chapters put into it, chapter-files.ts).
 * @param options.ownFile true when `path` is a file this run wrote itself and now rewrites
 *   (its mode is the umask's choice, not a user's refusal).
 * @throws TtsError `io_error` (exit 7) naming `path` (and the link's target when it is a link
 *   whose target cannot be written: its folder does not exist, a loop of links…).
 */
export async function openAtomicFile(path: string, options: { ownFile?: boolean } = {}): Promise<AtomicFile> {
  const target = await outputTarget(path);
  let existing: Stats | undefined;
  try {
    existing = await stat(target);
  } catch (err) {
    if (codeOf(err) !== 'ENOENT') throw ioError(err, path, target);
  }
  if (existing?.isDirectory() === true) throw ioError(Object.assign(new Error(`${path} is a folder`), { code: 'EISDIR' }), path);
  if (options.ownFile !== true) await assertReplaceable(path, target);
  const tempPath = tempPathFor(dirname(target), basename(target));
  let fh: FileHandle | undefined;
  try {
    // 'wx' = O_CREAT | O_EXCL: never reuse or follow something already there.
    fh = await open(tempPath, 'wx', 0o666);
    trackTempFile(tempPath);
    if (existing !== undefined) await fh.chmod(existing.mode & 0o7777).catch(() => {});
  } catch (err) {
    if (fh !== undefined) await discardAtomicFile({ tempPath, fh });
    throw ioError(err, path, target);
  }
  // A run that was killed outright (SIGKILL, out of memory) left its temporary file: take it
  // away, beside the writing rather than before it: reading a folder of 100,000 files took
  // 70–80 ms, which every run writing there waited for before its first request (found in issue
  // 20's sixteenth round). Our own file is never swept: its process runs.
  const sweep = removeStaleTempFiles(dirname(target), basename(target));
  return { target, tempPath, fh, sweep };
}

/**
 * The refusal of {@link assertReplaceable}: an `io_error` (exit 7) whose `reason` says why the
 * file cannot be replaced, for callers that name the output their own way (speak/text-file.ts:
 * `cannot write the subtitles to PATH: REASON`).
 */
export class ReplaceRefused extends TtsError {
  /**
   * @param name the output as messages name it (`path`, or `path (a link to TARGET)`).
   * @param reason why, e.g. `permission denied (the file is read-only, mode 0444)`.
   */
  constructor(
    name: string,
    readonly reason: string,
    options: { hint: string; cause?: unknown },
  ) {
    super('io_error', `cannot write ${name}: ${reason}`, options);
  }
}

/**
 * Refuses, before anything is written or requested, an existing file at `target` that a shell's
 * `>` could not write (docs/cli.md §2: every output is written "as a shell's `>` does"): one this
 * user may not write by its permissions — access(2) `W_OK`, so a 0444 file, or another user's
 * 0644 one, is refused and root may write it, as with the shell. The atomic writer would
 * otherwise replace it regardless, as renaming over a file asks the folder's permission, not the
 * file's. A name that is not there yet, a folder (refused by the caller), a FIFO or a device
 * (written in place, special-files.ts) and a symbolic link (only a link Linux would not follow
 * comes here: output-target.ts) pass that. Refused too: another user's file or link in a sticky
 * folder that is not this user's, for anyone but root ({@link assertNotStickyOthers}): the rename
 * over it would fail (EPERM) only at the end, after all the synthesis.
 * @param path the output as the user gave it, for the message.
 * @param target where it is written ({@link outputTarget}).
 * @throws ReplaceRefused (`io_error`, exit 7): `cannot write PATH: permission denied (…)`, saying
 *   whose file it is and its mode; TtsError `io_error` for a read-only file system (EROFS), as
 *   {@link ioError} says it.
 */
export async function assertReplaceable(path: string, target: string): Promise<void> {
  let info: Stats;
  try {
    info = await lstat(target);
  } catch {
    return; // not there: a new file
  }
  if (info.isSymbolicLink()) return assertNotStickyOthers(path, target, info);
  if (!info.isFile()) return;
  try {
    await access(target, constants.W_OK);
  } catch (err) {
    const code = codeOf(err);
    if (code === 'EACCES' || code === 'EPERM') {
      const mode = (info.mode & 0o7777).toString(8).padStart(4, '0');
      const ours = info.uid === process.geteuid?.();
      throw new ReplaceRefused(outputName(path, target), `permission denied (${ours ? 'the file is read-only' : `the file is user ${info.uid}'s`}, mode ${mode})`, {
        hint: ours ? `write to another name, or make the file writable first (chmod u+w ${path})` : 'write to another name',
        cause: err,
      });
    }
    if (code === 'EROFS') throw ioError(err, path, target);
    // Anything else (the file went away meanwhile): the open reports what there is to report.
  }
  await assertNotStickyOthers(path, target, info);
}

/**
 * Refuses `target` (lstat `info`) when it is another user's file or link in a sticky folder
 * (`/tmp`, mode 1777) that is not this user's either, and this user is not root: there the
 * kernel lets only the file's owner, the folder's owner or a privileged process remove or rename
 * over it (unlink(2), rename(2): EPERM, the sticky bit), so the final rename of the atomic writer
 * would fail — after all the synthesis. Writing into the file in place, as a shell's `>` may,
 * would break the rule that a failed run leaves the file as it was (docs/cli.md §2), so it is
 * refused at once instead.
 * @throws ReplaceRefused (`io_error`, exit 7) saying whose file it is and why it cannot be replaced.
 */
async function assertNotStickyOthers(path: string, target: string, info: Stats): Promise<void> {
  const uid = process.geteuid?.();
  if (uid === undefined || uid === 0 || info.uid === uid) return;
  const folder = await stat(dirname(target)).catch(() => undefined);
  if (folder === undefined || (folder.mode & 0o1000) === 0 || folder.uid === uid) return;
  const what = info.isSymbolicLink() ? 'link' : 'file';
  throw new ReplaceRefused(outputName(path, target), `permission denied (user ${info.uid}'s ${what} in the sticky folder ${dirname(target)}: only its owner, the folder's owner or root may replace it)`, {
    hint: info.isSymbolicLink() ? 'write to another name' : `write to another name (to fill that file itself, copy into it afterwards: cat mine.wav > ${path})`,
  });
}

/**
 * Puts a complete atomic file in place: fsync (the data is on disk before the name points at
 * it: a crash after the rename must not leave a file that has its name but not its bytes),
 * close, rename over the target, fsync of the folder (best effort).
 * @throws the fs error of the sync, close or rename; the temporary file is then still there.
 */
export async function commitAtomicFile(file: AtomicFile): Promise<void> {
  await file.sweep;
  await file.fh.sync();
  await file.fh.close();
  await rename(file.tempPath, file.target);
  untrackTempFile(file.tempPath);
  await syncFolder(dirname(file.target));
}

/** Closes and deletes an atomic file's temporary file; never rejects (there is nothing better to do). */
export async function discardAtomicFile(file: Pick<AtomicFile, 'tempPath' | 'sweep'> & { fh: FileHandle | undefined }): Promise<void> {
  await file.sweep;
  if (file.fh !== undefined) await file.fh.close().catch(() => undefined);
  await unlink(file.tempPath).catch(() => undefined);
  untrackTempFile(file.tempPath);
}

type State = 'open' | 'done' | 'failed' | 'aborted';

class AtomicFileSink implements FileSink {
  private state: State = 'open';
  private bytes = 0;
  private fh: FileHandle | undefined;
  /** Operations run one after another on the file; this is the last one queued. */
  private tail: Promise<unknown> = Promise.resolve();
  private aborting: Promise<void> | undefined;
  private failure: TtsError | undefined;
  private readonly headerLength: number;

  constructor(
    readonly path: string,
    private readonly target: string,
    readonly tempPath: string,
    fh: FileHandle,
    private readonly spec: AudioSpec,
    private readonly container: FileContainer,
    /** AtomicFile.sweep: waited for before the file is put in place or dropped. */
    private readonly sweep: Promise<unknown> | undefined,
  ) {
    this.fh = fh;
    this.headerLength = container === 'wav' ? wavHeaderLength(spec.format) : 0;
  }

  get audioBytes(): number {
    return this.bytes;
  }

  write(chunk: Buffer): Promise<void> {
    return this.run(async (fh) => {
      // The RIFF size must stay below 0xFFFFFFFF (that value means "unknown").
      if (this.container === 'wav' && this.headerLength - 8 + this.bytes + chunk.length + 1 >= WAV_UNKNOWN_SIZE) {
        throw new TtsError('io_error', `cannot write ${this.path}: the audio exceeds the 4 GiB limit of a WAV file`, {
          hint: 'write raw audio instead (--raw), or split the text',
        });
      }
      await writeAll(fh, chunk, this.headerLength + this.bytes);
      this.bytes += chunk.length;
    });
  }

  truncateAudio(audioBytes: number): Promise<void> {
    if (!Number.isSafeInteger(audioBytes) || audioBytes < 0 || audioBytes > this.bytes) {
      return Promise.reject(new RangeError(`truncateAudio(${audioBytes}): must be 0 … ${this.bytes}`));
    }
    return this.run(async (fh) => {
      await fh.truncate(this.headerLength + audioBytes);
      this.bytes = audioBytes;
    });
  }

  patch(offset: number, data: Buffer): Promise<void> {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + data.length > this.bytes) {
      return Promise.reject(new RangeError(`patch(${offset}, ${data.length} bytes): must lie within the ${this.bytes} bytes written`));
    }
    return this.run((fh) => writeAll(fh, data, this.headerLength + offset));
  }

  finish(): Promise<void> {
    if (this.state === 'done') return Promise.resolve();
    return this.run(async (fh) => {
      if (this.container === 'wav') {
        // RIFF: a chunk of odd size is followed by a pad byte its size does not count.
        if (wavPadLength(this.bytes) === 1) await writeAll(fh, Buffer.alloc(1), this.headerLength + this.bytes);
        await writeAll(fh, wavHeader(this.spec, this.bytes), 0);
      }
      // On a failure the handle stays with the sink, whose clean-up closes it (again) and deletes the file.
      await commitAtomicFile({ target: this.target, tempPath: this.tempPath, fh, sweep: this.sweep });
      this.fh = undefined;
      this.state = 'done';
    });
  }

  abort(): Promise<void> {
    if (this.state === 'done') return Promise.resolve();
    if (this.state === 'open') this.state = 'aborted';
    // Waits for the operation in progress (one fs call) so nothing writes after the unlink.
    this.aborting ??= this.tail.then(
      () => this.cleanup(),
      () => this.cleanup(),
    );
    return this.aborting;
  }

  /**
   * Runs `op` after the operations queued before it. Any failure removes the temporary file
   * and becomes the sink's error: later calls reject with it too.
   */
  private run(op: (fh: FileHandle) => Promise<void>): Promise<void> {
    const next = this.tail.then(async () => {
      if (this.state === 'aborted') throw new TtsError('io_error', `writing ${this.path} was aborted`);
      if (this.state === 'failed') throw this.failure;
      if (this.state === 'done' || this.fh === undefined) throw new Error(`${this.path} is already finished`);
      try {
        await op(this.fh);
      } catch (err) {
        // (Nothing after the rename in finish() can throw: a failure always means "not in place".)
        this.state = 'failed';
        this.failure = err instanceof TtsError ? err : ioError(err, this.path);
        await this.cleanup();
        throw this.failure;
      }
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Closes and deletes the temporary file; never rejects (there is nothing better to do). */
  private async cleanup(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    if (this.state !== 'done') await discardAtomicFile({ tempPath: this.tempPath, fh, sweep: this.sweep });
    else untrackTempFile(this.tempPath);
  }
}

/** Writes all of `data` at `position`; a short write (possible in principle) continues. */
async function writeAll(fh: FileHandle, data: Uint8Array, position: number): Promise<void> {
  let off = 0;
  while (off < data.length) {
    const { bytesWritten } = await fh.write(data, off, data.length - off, position + off);
    off += bytesWritten;
  }
}

/** fsync of the folder makes the rename itself durable; best effort (not all file systems allow it). */
async function syncFolder(dir: string): Promise<void> {
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // Not supported here (some file systems refuse fsync on a folder): the file is still in place.
  }
}

/** True when `path` is an existing folder (synchronous: only on the error path). */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when `path` itself is a symbolic link (synchronous: only on the error path). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** How messages name an output: `path`, or `path (a link to TARGET)` when it is a symbolic link. */
function outputName(path: string, target: string | undefined): string {
  return target !== undefined && isLink(path) ? `${path} (a link to ${target})` : path;
}

/**
 * A file-system error as the TtsError the CLI reports (exit 7), naming the path the user gave
 * and saying what to do.
 * @param target where `path` is written ({@link outputTarget}) when known: the folder named is
 *   the target's, and when `path` is a symbolic link the message names where it leads.
 */
export function ioError(err: unknown, path: string, target?: string): TtsError {
  const folder = dirname(target ?? resolve(path));
  const name = outputName(path, target);
  const [what, hint] = ((): [string, string] => {
    switch (codeOf(err)) {
      case 'ENOENT':
        // The folder may exist and still refuse new files: /proc, /sys and other virtual file
        // systems answer ENOENT to a create. Say which of the two it is.
        if (isFolder(folder)) return [`the folder ${folder} does not allow new files to be created (a virtual file system such as /proc or /sys)`, 'write to a folder on a disk, e.g. -o ./speech.wav'];
        return [`the folder ${folder} does not exist`, 'create the folder first, or check the path'];
      case 'ENOTDIR':
        return ['a part of the path is not a folder', 'check the path'];
      case 'EISDIR':
        return ['it is a folder', 'give a file name, e.g. -o speech.wav'];
      case 'EACCES':
      case 'EPERM':
        return ['permission denied', `write somewhere you may write, or check the permissions of ${folder}`];
      case 'EROFS':
        return ['the file system is read-only', 'write to another folder'];
      case 'ENOSPC':
        return ['no space left on the device', 'free some space, or write to another disk'];
      case 'EDQUOT':
        return ['disk quota exceeded', 'free some space, or write to another disk'];
      case 'ENAMETOOLONG':
        return ['the file name is too long', 'choose a shorter name'];
      case 'ELOOP':
        return ['too many symbolic links (a link that leads back to itself?)', 'check where the links lead, e.g. with readlink -f'];
      default:
        return [err instanceof Error ? err.message : String(err), 'check the path and the disk'];
    }
  })();
  return new TtsError('io_error', `cannot write ${name}: ${what}`, { hint, cause: err });
}
