/**
 * A text output written beside the audio (subtitles, word timings, chapters: docs/cli.md §1,
 * §10, §12.1). A file, by the rule of every file tts writes (§2): into a temporary file in the
 * same folder, renamed over the target only when complete; an aborted or failed run leaves the
 * target as it was. A FIFO or pipe, a socket or a character device (`/dev/stdout | jq`,
 * `/dev/stderr`, `/dev/null`, a named FIFO) is written in place instead, as the audio of
 * `-o FIFO` is (§2): opened for writing — a FIFO once it has a reader —, never created, renamed
 * over or unlinked, the same bytes as the file gets, each write leaving as it is made; and so is
 * the regular file standard error goes to (`2>log`), through descriptor 2, with tts's messages,
 * and the one standard output goes to (`>>log`) while the audio goes to `-o`, through descriptor 1.
 */
import { commitAtomicFile, discardAtomicFile, openAtomicFile, ReplaceRefused, type AtomicFile } from '../audio/file-sink.js';
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { crossesProtectedLink } from '../audio/output-target.js';
import { inPlaceKind, isStandardErrorFile, isStandardOutputFile, type InPlaceKind } from '../audio/special-files.js';
import { TtsError } from '../errors.js';

/** One text output being written. */
export interface TextFile {
  /**
   * Appends UTF-8 text. In place, once a write failed, the text is dropped: see
   * {@link openTextFile}. @throws TtsError `io_error` (exit 7) for a file; never in place.
   */
  write(text: string): Promise<void>;
  /**
   * Puts the file in place (in place: every byte handed to the system, the descriptor closed).
   * @throws TtsError `io_error` (exit 7); the temporary file is removed. In place: the first
   *   failure of a write other than a reader that went away (see {@link openTextFile}).
   */
  finish(): Promise<void>;
  /**
   * Drops the temporary file; the target is untouched (in place: stops writing and closes; what
   * was written stays written, as on stdout). Never throws; a no-op once finished.
   */
  abort(): Promise<void>;
}

/** What {@link openTextFile} needs for an output written in place. */
export interface TextFileOptions {
  /** Stops the wait for a FIFO's reader (Ctrl-C): its reason is thrown. */
  signal?: AbortSignal | undefined;
  /** `--verbose` lines: the wait for a FIFO's reader, a reader that went away. */
  verbose?: ((line: string) => void) | undefined;
  /**
   * Called once when the wait for a FIFO's reader begins (the first try found none), after the
   * `--verbose` line: the player reads its keys from then on (player/interactive.ts `listen`).
   */
  waiting?: (() => void) | undefined;
}

/**
 * Whether `path` is written in place ({@link InPlaceKind}: a FIFO or pipe, a socket, a character
 * device; or the file standard error goes to: {@link textInPlace}), links followed. Never throws.
 */
export async function writtenInPlace(path: string): Promise<boolean> {
  const found = await textInPlace(path);
  return found !== undefined && found.kind !== 'block device';
}

/**
 * What a text output `path` is written into in place: what audio/special-files.ts `inPlaceKind`
 * says, or `standard error` for the regular file standard error goes to (`2>log`, by any name:
 * `/dev/stderr`, `/dev/fd/2`, `log`; `isStandardErrorFile`). tts's own messages go there too: it
 * is written through descriptor 2, after what the file holds and before what follows, as a pipe
 * on stderr is — renamed over, the file would lose the messages before, and those after (the
 * `--json` line) would go to a file no longer there. Likewise `standard output` for the regular
 * file standard output goes to (`>>log`, a shell group's `{ …; } > log`; `isStandardOutputFile`),
 * through descriptor 1: the audio goes to `-o` then (an output that is standard output while the
 * audio goes there was refused before: speak/output-checks.ts). Undefined for an atomic file.
 * Never throws.
 */
async function textInPlace(path: string): Promise<{ kind: InPlaceKind | 'block device' | 'standard error' | 'standard output'; info: Stats } | undefined> {
  const found = await inPlaceKind(path);
  if (found !== undefined) return found;
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || !(isStandardErrorFile(info) || isStandardOutputFile(info)) || (await crossesProtectedLink(path))) return undefined;
  return { kind: isStandardErrorFile(info) ? 'standard error' : 'standard output', info };
}

/**
 * Opens `path` for writing as a {@link TextFile}: atomically when it is a file or nothing yet;
 * in place when it is a FIFO, a socket, a character device, or the file standard error goes to
 * (`2>log`: through descriptor 2, with tts's messages; {@link textInPlace}). In place, a FIFO
 * with no reader is waited for (every 50 ms, until `options.signal` aborts: audio/special-files.ts
 * `openFifoForWriting`, as `-o FIFO`), a socket is written through the descriptor of this
 * process that is it (`/dev/stdout` when stdout is a socket: `ownSocketDescriptor`). A failed
 * write there never stops the run: its audio has a destination of its own and is written whole.
 * A reader that went away (EPIPE) is no failure — as on stdout (docs/cli.md §2), the reader took
 * what it wanted —: the rest of the text is dropped, quietly. Any other error (ENOSPC of
 * /dev/full, EIO of a terminal gone) drops the rest too, and `finish` throws it (exit 7) once the
 * audio is complete, as playback failing beside a file does (docs/cli.md §2).
 * @param what how errors name it: `the subtitles`, `the word timings`, `the chapters`.
 * @throws TtsError `io_error` (exit 7) when the folder cannot be written, the target is a folder,
 *   or the FIFO, socket or device cannot be opened; `usage` (exit 2) for a block device or a
 *   socket no descriptor of this process leads to (speak/output-checks.ts refuses both earlier);
 *   `options.signal`'s reason when it aborts the wait for a reader.
 */
export async function openTextFile(path: string, what: string, options: TextFileOptions = {}): Promise<TextFile> {
  const ioError = (cause: unknown): TtsError => {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    return new TtsError('io_error', `cannot write ${what} to ${path} (${code})`, { cause, hint: 'check the folder exists and can be written' });
  };
  const special = await textInPlace(path);
  if (special !== undefined) return openInPlace(path, what, special, options);
  let file: AtomicFile;
  try {
    file = await openAtomicFile(path);
  } catch (error) {
    // A file that cannot be replaced (read-only…): why, said for this output.
    if (error instanceof ReplaceRefused) throw new TtsError('io_error', `cannot write ${what} to ${path}: ${error.reason}`, { cause: error.cause, hint: error.hint });
    // Said as this file's own: the file system's code, not the audio file's wording.
    throw ioError(error instanceof TtsError && error.cause !== undefined ? error.cause : error);
  }
  let done = false;
  return {
    async write(text) {
      try {
        await file.fh.write(text);
      } catch (error) {
        throw ioError(error);
      }
    },
    async finish() {
      try {
        await commitAtomicFile(file);
        done = true;
      } catch (error) {
        await discardAtomicFile(file);
        throw ioError(error);
      }
    },
    async abort() {
      if (done) return;
      done = true;
      await discardAtomicFile(file);
    },
  };
}

/**
 * Opens a FIFO, socket or character device `path` ({@link openTextFile}), or takes standard
 * error for the file it goes to, and writes it through audio/stdout-sink.ts `createStreamSink`.
 * Aborted as soon as `options.signal` is (a stop signal), so that a write a reader never takes
 * cannot keep the run from ending.
 */
async function openInPlace(path: string, what: string, found: { kind: InPlaceKind | 'block device' | 'standard error' | 'standard output'; info: Stats }, options: TextFileOptions): Promise<TextFile> {
  const [{ openInPlaceStream }, { createStreamSink, isClosedPipe }] = await Promise.all([import('../audio/special-files.js'), import('../audio/stdout-sink.js')]);
  const out =
    found.kind === 'standard error'
      ? process.stderr
      : found.kind === 'standard output'
        ? process.stdout
        : await openInPlaceStream(path, { kind: found.kind, info: found.info }, what, {
          signal: options.signal ?? new AbortController().signal,
          waiting: () => {
            options.verbose?.(`${what}: ${path} is a FIFO nobody reads yet; waiting for its reader before the first request (Ctrl-C stops)`);
            options.waiting?.();
          },
        });
  const sink = createStreamSink(out);
  let state: 'open' | 'gone' | 'failed' | 'done' = 'open';
  let failure: TtsError | undefined;
  /**
   * Writing failed: the rest is dropped and the run goes on. A reader that went away is no
   * failure at all; any other error is thrown by finish, once the audio is whole (see openTextFile).
   */
  const stop = async (error: unknown): Promise<void> => {
    if (isClosedPipe(error)) {
      state = 'gone';
      options.verbose?.(`${what}: the reader of ${path} went away; the rest of ${what} is not written`);
    } else {
      state = 'failed';
      const cause = error instanceof TtsError && error.cause !== undefined ? error.cause : error;
      const code = (cause as NodeJS.ErrnoException).code ?? (cause instanceof Error ? cause.message : 'error');
      failure = new TtsError('io_error', `cannot write ${what} to ${path} (${code}); the run went on to its end without the rest of them`, { cause, hint: `check where ${path} leads (a full device? a terminal that went away?)` });
      options.verbose?.(`${what}: ${failure.message}`);
    }
    await sink.abort();
  };
  /** Stops writing and closes (TextFile.abort). */
  const abort = async (): Promise<void> => {
    options.signal?.removeEventListener('abort', onAbort);
    if (state !== 'open') return;
    state = 'done';
    await sink.abort();
  };
  // Ctrl-C or SIGTERM while a reader that takes nothing holds a write (its pipe is full): the run
  // cannot reach its clean-up while it waits, so the output is aborted at once — its stream
  // destroyed, the write let go —, as speak/run.ts aborts the audio's sink.
  const onAbort = (): void => void abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    async write(text) {
      if (state !== 'open') return;
      try {
        await sink.write(Buffer.from(text, 'utf8'));
      } catch (error) {
        // Aborted meanwhile: the abort's own error (a destroyed stream), not a reader gone.
        if (state === 'open') await stop(error);
      }
    },
    async finish() {
      if (state === 'open') {
        try {
          await sink.finish();
          state = 'done';
        } catch (error) {
          if (state === 'open') await stop(error);
        }
      }
      options.signal?.removeEventListener('abort', onAbort);
      if (failure !== undefined) throw failure;
    },
    abort,
  };
}
