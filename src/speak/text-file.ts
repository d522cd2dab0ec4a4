/**
 * A text output written beside the audio (subtitles, word timings: docs/cli.md §1, §12.1), by the
 * rule of every file tts writes (§2): into a temporary file in the same folder, renamed over the
 * target only when complete; an aborted or failed run leaves the target as it was.
 */
import { commitAtomicFile, discardAtomicFile, openAtomicFile, type AtomicFile } from '../audio/file-sink.js';
import { TtsError } from '../errors.js';

/** One text file being written. */
export interface TextFile {
  /** Appends UTF-8 text. @throws TtsError `io_error` (exit 7). */
  write(text: string): Promise<void>;
  /** Puts the file in place. @throws TtsError `io_error` (exit 7); the temporary file is removed. */
  finish(): Promise<void>;
  /** Drops the temporary file; the target is untouched. Never throws; a no-op once finished. */
  abort(): Promise<void>;
}

/**
 * Opens `path` for writing as a {@link TextFile}.
 * @param what how errors name it: `the subtitles`, `the word timings`.
 * @throws TtsError `io_error` (exit 7) when the folder cannot be written or the target is a folder.
 */
export async function openTextFile(path: string, what: string): Promise<TextFile> {
  const ioError = (cause: unknown): TtsError => {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    return new TtsError('io_error', `cannot write ${what} to ${path} (${code})`, { cause, hint: 'check the folder exists and can be written' });
  };
  let file: AtomicFile;
  try {
    file = await openAtomicFile(path);
  } catch (error) {
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
