/**
 * Audio to standard output (docs/cli.md §2): raw bytes chunk by chunk as deltas arrive, or a WAV
 * stream whose sizes are 0xFFFFFFFF because the length is not known when the header leaves —
 * written again with the exact sizes at the end when standard output is a regular file that
 * takes it (`tts stream --wav > x.wav`: {@link stdoutHeaderPlace}); there, too, an encoder's
 * header is patched as in a file (FLAC's STREAMINFO: containers/encoder.ts `PatchableSink`).
 * A reader that goes away (`tts stream | head -c 1000`) is not a crash: the sink reports a
 * {@link ClosedPipeError} that the CLI recognises with {@link isClosedPipe} and ends quietly.
 */
import { fstatSync, readFileSync, writeSync } from 'node:fs';
import { TtsError } from '../errors.js';
import type { FileContainer } from './file-sink.js';
import type { AudioSink } from './sink.js';
import type { PatchableSink } from './containers/encoder.js';
import { assertAudioSpec, type AudioSpec } from '../dsp/spec.js';
import { wavHeader, wavPadLength, WAV_UNKNOWN_SIZE, wavHeaderLength } from './wav.js';

/**
 * The reader of our output closed it (EPIPE): not a failure of tts, so the CLI stops quietly
 * with no message. Code `io_error` so that anything not expecting it still exits 7.
 */
export class ClosedPipeError extends TtsError {
  /** Always true: tells this apart from other `io_error`s without instanceof. */
  readonly closedPipe = true;

  constructor(cause?: unknown) {
    super('io_error', 'the output pipe was closed by its reader', {
      hint: 'nothing to do: the program reading the audio stopped early',
      cause,
    });
  }
}

/**
 * True when `err` (or an error in its `cause` chain) means the reader closed the pipe:
 * a {@link ClosedPipeError}, or a raw Node error with code `EPIPE` or `ERR_STREAM_DESTROYED`.
 */
export function isClosedPipe(err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    if ((e as { closedPipe?: unknown }).closedPipe === true) return true;
    const code = (e as { code?: unknown }).code;
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Creates a sink writing to `out` (standard output by default).
 *
 * - `raw`: each chunk is written as it comes, unchanged; nothing is buffered beyond the
 *   stream's own buffer.
 * - `wav`: a header with 0xFFFFFFFF RIFF/data sizes (and `fact` count) goes out with the
 *   first chunk (or at finish() when there was none); no pad byte is written at the end, as
 *   the size is not declared. When `out` is process.stdout and that is a regular file where the
 *   header can be written again ({@link stdoutHeaderPlace}), finish() writes the pad byte an odd
 *   size needs and then the header with the exact sizes, in place, as for a file (`-o x.wav`);
 *   audio past what a WAV header can declare (4 GiB) keeps the unknown sizes.
 * - Where that place is known, the sink is a {@link PatchableSink}: `patch(offset, bytes)`
 *   writes over bytes it already wrote (counted from the first byte after the WAV header, or the
 *   first byte for `raw`), in place, once every byte before has been handed to the system — what
 *   an encoded container's finish does to its header (FLAC's STREAMINFO: the total samples and
 *   the MD5), so `> x.flac` gets the bytes `-o x.flac` gets. Elsewhere it has no `patch`, and
 *   the stream keeps what it was sent (valid as it is: RFC 9639 allows an unknown total).
 *
 * `write` resolves once `out` accepted the chunk, waiting for 'drain' when the stream's buffer
 * is full. `finish` resolves when every byte has been handed to the system, and ends `out`
 * unless it is process.stdout or process.stderr (which stay open, like `stream.pipe` leaves
 * them). `abort` stops writing; it destroys `out` unless it is one of those. A do-nothing 'error'
 * listener stays on `out` for good, so a late EPIPE never becomes an uncaught exception.
 *
 * @param spec encoding, rate (Hz) and channels, for the WAV header.
 * @param container `raw` (default on stdout, docs/cli.md §1) or `wav`.
 * @param out the stream to write to.
 * @throws from write/finish: {@link ClosedPipeError} (io_error, `closedPipe: true`) when the
 *   reader went away; TtsError `io_error` for any other write error (e.g. ENOSPC when stdout is
 *   a file). After the first error every call rejects with it.
 */
export function createStdoutSink(
  spec: AudioSpec,
  container: FileContainer,
  out: NodeJS.WritableStream = process.stdout,
): AudioSink | PatchableSink {
  assertAudioSpec(spec);
  const header = container === 'wav' ? wavHeader(spec) : undefined;
  const place = out === process.stdout ? stdoutHeaderPlace() : undefined;
  return place === undefined ? new StreamSink(out, header) : new PlacedStreamSink(out, header, { ...place, spec });
}

/**
 * A sink writing bytes to `out` as they come, unchanged, with what {@link createStdoutSink} does
 * for a pipe: backpressure ('drain'), a reader that went away reported as a {@link ClosedPipeError},
 * any other write error as TtsError `io_error`. For text written in place (subtitles, word timings
 * and chapters into a FIFO, a socket or a device: speak/text-file.ts). `finish` ends `out` and
 * `abort` destroys it, unless it is process.stdout or process.stderr, which stay open.
 * @param out the stream to write to.
 */
export function createStreamSink(out: NodeJS.WritableStream): AudioSink {
  return new StreamSink(out, undefined);
}

/** Linux's O_APPEND (octal, as /proc/PID/fdinfo prints `flags`). */
const O_APPEND = 0o2000;

/**
 * Where bytes written to standard output from now on can be written again later (a WAV header's
 * sizes, FLAC's STREAMINFO): file descriptor 1 and its current offset (bytes), when it is a
 * regular file not opened for appending (with O_APPEND a positioned write appends on Linux).
 * Read from Linux's /proc/self/fdinfo/1; undefined for a pipe, a terminal, a device, a file
 * opened with `>>`, or where /proc says nothing (another system). Never throws.
 */
export function stdoutHeaderPlace(): { fd: number; at: number } | undefined {
  try {
    if (!fstatSync(1).isFile()) return undefined;
    const info = readFileSync('/proc/self/fdinfo/1', 'utf8');
    const pos = /^pos:\s+(\d+)$/mu.exec(info);
    const flags = /^flags:\s+([0-7]+)$/mu.exec(info);
    if (pos === null || flags === null || (parseInt(flags[1]!, 8) & O_APPEND) !== 0) return undefined;
    return { fd: 1, at: Number(pos[1]) };
  } catch {
    return undefined;
  }
}

/**
 * The property of process.stdout that counts the audio sinks writing it now (a number; absent
 * when none ever did): each {@link createStdoutSink} on process.stdout adds one until it has
 * finished or aborted. bin/tts.js reads it (by `Symbol.for('tts.stdout-audio-sinks')`: it loads
 * before this module) to tell a write error a sink reports, with its clean-up and `--json` line,
 * from one of its own to report (exit 7), also after a sink ended.
 */
export const STDOUT_AUDIO_SINKS: unique symbol = Symbol.for('tts.stdout-audio-sinks') as never;

/** Adds `by` (1 or -1) to process.stdout's {@link STDOUT_AUDIO_SINKS}. */
function countStdoutSinks(by: 1 | -1): void {
  const stdout = process.stdout as NodeJS.WriteStream & { [STDOUT_AUDIO_SINKS]?: number };
  stdout[STDOUT_AUDIO_SINKS] = (stdout[STDOUT_AUDIO_SINKS] ?? 0) + by;
}

const guarded = new WeakSet<NodeJS.WritableStream>();

/**
 * Leaves a do-nothing 'error' listener on `out` for good: a stream with no 'error' listener
 * turns an EPIPE that arrives after we are done (stdout is flushed late) into an uncaught
 * exception with a stack trace, which docs/cli.md §2 rules out.
 */
function guard(out: NodeJS.WritableStream): void {
  if (guarded.has(out)) return;
  guarded.add(out);
  out.on('error', () => undefined);
}

class StreamSink implements AudioSink {
  private state: 'open' | 'done' | 'aborted' = 'open';
  private failure: TtsError | undefined;
  /** Settles when the callback of the last write ran. */
  protected lastWrite: Promise<void> = Promise.resolve();
  private readonly ownsStream: boolean;
  /** Set once {@link release} ran. */
  private released = false;
  /** Audio bytes written (the header not counted). */
  protected audioBytes = 0;
  /** Bytes of the WAV header before the audio (0 for `raw`). */
  protected readonly headerLength: number;

  /**
   * @param place where the bytes written can be written again (descriptor, byte offset of the
   *   first one, the audio's spec): then the WAV header gets its exact sizes at finish();
   *   undefined: they cannot.
   */
  constructor(
    private readonly out: NodeJS.WritableStream,
    private header: Buffer | undefined,
    protected readonly place?: { fd: number; at: number; spec: AudioSpec },
  ) {
    this.headerLength = header?.length ?? 0;
    this.ownsStream = out !== process.stdout && out !== process.stderr;
    guard(out);
    out.on('error', this.onError);
    if (out === process.stdout) countStdoutSinks(1);
  }

  private readonly onError = (err: unknown): void => this.fail(err);

  /**
   * Our part is over (once): the stream keeps only the permanent guard, so sinks made one after
   * another on process.stdout do not pile up listeners, and its errors are no longer ours
   * ({@link STDOUT_AUDIO_SINKS}).
   */
  private release(): void {
    if (this.released) return;
    this.released = true;
    this.out.removeListener('error', this.onError);
    if (this.out === process.stdout) countStdoutSinks(-1);
  }

  async write(chunk: Buffer): Promise<void> {
    this.check();
    this.audioBytes += chunk.length;
    let data = chunk;
    if (this.header !== undefined) {
      data = Buffer.concat([this.header, chunk]);
      this.header = undefined;
    }
    await this.put(data);
  }

  async finish(): Promise<void> {
    if (this.state === 'done') return;
    this.check();
    if (this.header !== undefined) {
      await this.put(this.header);
      this.header = undefined;
    }
    await this.lastWrite;
    this.check();
    if (this.place !== undefined && this.headerLength > 0) await this.declareSizes(this.place);
    if (this.ownsStream) {
      await new Promise<void>((resolve) => {
        // end()'s callback does not run if the stream fails while flushing, so 'error' wakes us too.
        const done = (): void => {
          this.out.removeListener('error', done);
          resolve();
        };
        this.out.once('error', done);
        this.out.end(done);
      });
      this.check();
    }
    this.state = 'done';
    this.release();
  }

  /**
   * The pad byte an odd size needs, then the header again with the exact sizes at its place
   * (every byte before it has been written: `lastWrite` settled). Past 4 GiB nothing changes.
   */
  private async declareSizes(place: { fd: number; at: number; spec: AudioSpec }): Promise<void> {
    if (wavHeaderLength(place.spec.format) - 8 + this.audioBytes + wavPadLength(this.audioBytes) >= WAV_UNKNOWN_SIZE) return;
    if (wavPadLength(this.audioBytes) > 0) {
      await this.put(Buffer.alloc(wavPadLength(this.audioBytes)));
      await this.lastWrite;
      this.check();
    }
    this.writeAt(place, wavHeader(place.spec, this.audioBytes), 0);
  }

  /**
   * Writes `data` over what was written, at byte `offset` from the first byte this sink wrote (the
   * header's, if any), with positioned writes that leave the descriptor's offset alone. A failure
   * becomes the sink's, and is thrown.
   */
  protected writeAt(place: { fd: number; at: number }, data: Buffer, offset: number): void {
    try {
      for (let done = 0; done < data.length; ) done += writeSync(place.fd, data, done, data.length - done, place.at + offset + done);
    } catch (err) {
      this.fail(err);
      this.check();
    }
  }

  async abort(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'aborted';
    this.release();
    if (this.ownsStream) (this.out as NodeJS.WritableStream & { destroy?: () => void }).destroy?.();
    // Standard output is not ours to destroy: a write waiting for a reader that reads nothing
    // (`tts stream … | sleep 60`, then SIGTERM) is let go, or the run could never end.
    this.wake?.();
  }

  /** Ends the wait of {@link drained} now (abort), if a write waits. */
  private wake: (() => void) | undefined;

  /** Writes `data`, waiting for 'drain' (or the failure that replaces it) when the buffer is full. */
  private async put(data: Buffer): Promise<void> {
    let written!: () => void;
    this.lastWrite = new Promise<void>((resolve) => (written = resolve));
    let ok: boolean;
    try {
      ok = this.out.write(data, (err?: Error | null) => {
        if (err) this.fail(err);
        written();
      });
    } catch (err) {
      this.fail(err);
      written();
      throw this.failure;
    }
    if (!ok && this.failure === undefined) await this.drained();
    this.check();
  }

  private drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.out.removeListener('drain', done);
        this.out.removeListener('error', done);
        this.out.removeListener('close', closed);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      // Closed while we still have bytes to write: for the writer that is a closed pipe.
      const closed = (): void => {
        this.fail(Object.assign(new Error('output closed'), { code: 'ERR_STREAM_DESTROYED' }));
        done();
      };
      this.out.on('drain', done);
      this.out.on('error', done);
      this.out.on('close', closed);
    });
  }

  private fail(err: unknown): void {
    this.failure ??= isClosedPipe(err)
      ? new ClosedPipeError(err)
      : new TtsError('io_error', `cannot write the output: ${err instanceof Error ? err.message : String(err)}`, {
          hint: 'check where the output goes (disk full? reader failed?)',
          cause: err,
        });
  }

  protected check(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.state === 'aborted') throw new TtsError('io_error', 'writing to standard output was aborted');
  }
}

/**
 * A {@link StreamSink} on standard output where it is a regular file that takes positioned
 * writes ({@link stdoutHeaderPlace}): it can also write over bytes it already wrote.
 */
class PlacedStreamSink extends StreamSink implements PatchableSink {
  /** @param placed as StreamSink's `place`, here always known. */
  constructor(out: NodeJS.WritableStream, header: Buffer | undefined, private readonly placed: { fd: number; at: number; spec: AudioSpec }) {
    super(out, header, placed);
  }

  /**
   * Writes `data` over the audio bytes at `offset` (from the first byte after the WAV header, or
   * the first byte for `raw`), once every byte written before has been handed to the system.
   * @throws RangeError when the range is not inside what was written; the sink's TtsError
   *   `io_error` when it failed, or fails now.
   */
  async patch(offset: number, data: Buffer): Promise<void> {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset + data.length > this.audioBytes) {
      throw new RangeError(`patch(${offset}, ${data.length} bytes): must lie within the ${this.audioBytes} bytes written`);
    }
    this.check();
    await this.lastWrite;
    this.check();
    this.writeAt(this.placed, data, this.headerLength + offset);
  }
}