/**
 * Where the text comes from (docs/cli.md §1 "Text input"): positional words, stdin, or `-f FILE`,
 * read as a stream so a book costs memory for the pieces in flight, not for the whole text, and
 * `--lines` hands on each line as soon as its line break arrives.
 *
 * Bytes are checked as they arrive and refused at the first bad one, without reading further:
 * strict UTF-8 (WHATWG Encoding "fatal" decoding) with no NUL byte (a binary file or /dev/zero is
 * not text), and at most `maxInputBytes` in all (`--max-input`). Every refusal is exit 2 and names
 * the byte offset. Reading stops at once when the run is aborted (Ctrl-C while waiting on a pipe).
 */
import { constants, createReadStream, open as openCallback, type ReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { addAbortSignal, type Readable } from 'node:stream';
import { formatByteSize } from '../byte-size.js';
import { fileProblem, TtsError } from '../errors.js';
import { openedUnlessAborted } from '../blocked-opens.js';
import { holdFifo, wakeFifoOpen } from './fifo-open.js';
import { codePointLength } from './split.js';
import { completeUtf8Length, firstInvalidUtf8Offset } from './utf8.js';

/** Size of the blocks read from a file, in bytes. */
const FILE_BLOCK_BYTES = 64 * 1024;

/** Where to read text from, as the flags said. */
export interface TextInput {
  /** Positional words (joined with single spaces). */
  words: readonly string[];
  /** `-f PATH`; `-` is stdin. */
  file: string | undefined;
  /** The process's stdin. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Largest text accepted, in bytes (`--max-input`). */
  maxInputBytes: number;
  /** Stops reading (Ctrl-C): the stream is destroyed and the reader throws `signal.reason`. */
  signal: AbortSignal;
  /**
   * Called once when the open of `-f FIFO` begins, which waits until a writer comes (fifo(7)):
   * `tts say`'s player reads its keys from then on, so that `q` ends that wait
   * (player/interactive.ts `listen`).
   */
  waiting?: (() => void) | undefined;
}

/**
 * Opens the text for reading. What can be checked before reading is checked here.
 * @returns the text in blocks of decoded UTF-8, in order (a block never splits a character).
 * @throws TtsError `usage` (exit 2): both words and -f; an unreadable file; a regular file larger than `maxInputBytes`. The blocks then
 *   throw `usage` on invalid UTF-8, a NUL byte or too much text, naming the byte offset.
 */
export async function openText(input: TextInput): Promise<AsyncIterable<string>> {
  if (input.file !== undefined) {
    if (input.words.length > 0) throw new TtsError('usage', 'give the text either as words or with -f, not both');
    if (input.file === '-') return decodeText(abortable(input.stdin, input.signal, 'standard input'), 'standard input', input.maxInputBytes, input.signal);
    return decodeText(await openTextFile(input.file, input.maxInputBytes, input.signal, input.file, input.waiting), input.file, input.maxInputBytes, input.signal);
  }
  if (input.words.length > 0) {
    const text = input.words.join(' ');
    checkSize(Buffer.byteLength(text), input.maxInputBytes, 'the text');
    return (async function* () {
      yield text;
    })();
  }
  // On a terminal too: the user types the text and ends it with Ctrl-D (the command says so).
  return decodeText(abortable(input.stdin, input.signal, 'standard input'), 'standard input', input.maxInputBytes, input.signal);
}

/**
 * `--lines` (docs/cli.md §1): each line of stdin that has something to say, as soon as its line
 * break (LF; a CR before it is dropped) arrives; the last line also without one. A byte order
 * mark at the start of the input is dropped, as {@link decodeText} drops it.
 * @throws TtsError `usage` (exit 2) on a line that is not strict UTF-8, has a NUL byte, or is
 *   longer than `maxInputBytes`, naming the line and its byte offset — as soon as the bad byte or
 *   the byte past the limit arrives, also before the line's break.
 */
export async function* readLines(stdin: NodeJS.ReadableStream, maxInputBytes: number, signal: AbortSignal): AsyncGenerator<string, void, undefined> {
  for await (const { line } of readLinesAt(stdin, maxInputBytes, signal)) yield line;
}

/** A line {@link readLinesAt} gives, and where it is in the input. */
export interface LineRead {
  /** The line, without its line break. */
  line: string;
  /**
   * Code points of the input between the end of the line given before (its start for the first)
   * and this one: line breaks (LF, CR LF) and the lines skipped for having nothing to say, so that
   * the lines' offsets in the input as read can be counted (docs/cli.md §12.1 `char_start`).
   */
  before: number;
}

/**
 * {@link readLines}, each line with the code points of the input before it that no line given holds
 * ({@link LineRead.before}).
 * @throws as {@link readLines}.
 */
export async function* readLinesAt(stdin: NodeJS.ReadableStream, maxInputBytes: number, signal: AbortSignal): AsyncGenerator<LineRead, void, undefined> {
  const lines = new LineCutter<Buffer>(0x0a, (parts) => Buffer.concat(parts), (b) => b.length);
  let lineNumber = 0;
  /** Code points since the end of the last line given. */
  let gap = 0;
  const what = (): string => `line ${lineNumber + 1} of standard input`;
  const emit = (bytes: Buffer): LineRead | undefined => {
    checkSize(bytes.length, maxInputBytes, what());
    let line = strictUtf8(bytes, what(), 0, true);
    // A byte order mark at the very start says "UTF-8"; it is not text (as decodeText drops it).
    if (lineNumber === 0 && line.startsWith('\ufeff')) line = line.slice(1);
    lineNumber++;
    if (line.trim() === '') {
      gap += codePointLength(line) + lines.lastBreak;
      return undefined;
    }
    const read = { line, before: gap };
    gap = lines.lastBreak;
    return read;
  };
  // The unfinished line is checked as its bytes arrive (/dev/zero has no line break to wait for).
  let unfinished = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  for await (const chunk of abortable(stdin, signal, 'standard input')) {
    for (const bytes of lines.cut(chunk)) {
      const line = emit(bytes);
      if (line !== undefined) yield line;
    }
    checkSize(lines.pendingSize, maxInputBytes, what());
    const lastBreak = chunk.lastIndexOf(0x0a);
    if (lastBreak !== -1) unfinished = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    const tail = chunk.subarray(lastBreak + 1);
    let bad = tail.includes(0);
    try {
      unfinished.decode(tail, { stream: true });
    } catch {
      bad = true;
    }
    // Names the first bad byte of the line so far (a sequence cut at its end is not one yet).
    if (bad) strictUtf8(lines.unfinished(), what(), 0, false);
  }
  if (signal.aborted) throw signal.reason;
  const last = lines.end();
  if (last !== undefined) {
    const line = emit(last);
    if (line !== undefined) yield line;
  }
}

/**
 * Cuts chunks of bytes or text into lines at each LF, as the chunks come; a CR before the LF is
 * dropped (CRLF files). The one line splitter of `--lines` (bytes) and `tts batch` (text).
 * Holds only the unfinished line; {@link pendingSize} lets the caller refuse one that grows too long.
 */
export class LineCutter<C extends Buffer | string> {
  private pending: C[] = [];
  /** Size of the unfinished line so far, as `size` measures it. */
  pendingSize = 0;

  /**
   * @param newline `0x0a` for bytes, `'\n'` for text.
   * @param join concatenates parts of one line.
   * @param size measures a part (bytes for both, so limits mean the same).
   */
  constructor(
    private readonly newline: C extends string ? '\n' : 0x0a,
    private readonly join: (parts: C[]) => C,
    private readonly size: (part: C) => number,
  ) {}

  /** Units of the line break (LF, and the CR dropped before it: 0 to 2) of the line last given. */
  lastBreak = 0;

  /** The lines `chunk` completes, without their line break. */
  *cut(chunk: C): Generator<C, void, undefined> {
    let start = 0;
    for (let nl = chunk.indexOf(this.newline as never); nl !== -1; nl = chunk.indexOf(this.newline as never, start)) {
      this.pending.push(chunk.slice(start, nl) as C);
      yield this.take(1);
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.slice(start) as C;
      this.pending.push(rest);
      this.pendingSize += this.size(rest);
    }
  }

  /** The unfinished line so far, left in place (for a message about it). */
  unfinished(): C {
    return this.join(this.pending);
  }

  /** The last line, when the input did not end with a line break; undefined when it did. */
  end(): C | undefined {
    return this.pending.length === 0 ? undefined : this.take(0);
  }

  /** The line held, its CR dropped; `newline`: units of the LF that ended it (0 at the end). */
  private take(newline: number): C {
    const line = this.join(this.pending);
    this.pending = [];
    this.pendingSize = 0;
    const last = line.length - 1;
    const cr = typeof line === 'string' ? line[last] === '\r' : line[last] === 0x0d;
    this.lastBreak = newline + (cr ? 1 : 0);
    return (cr ? line.slice(0, last) : line) as C;
  }
}

/**
 * Decodes a byte stream as strict UTF-8 text, block by block.
 * @param what names the input in messages (`standard input`, a path).
 * @throws TtsError `usage` (exit 2) at the first invalid sequence or NUL byte, or once more than
 *   `maxBytes` bytes arrived, naming the byte offset; `signal.reason` when aborted.
 */
export async function* decodeText(chunks: AsyncIterable<Buffer>, what: string, maxBytes: number, signal: AbortSignal): AsyncGenerator<string, void, undefined> {
  // Bytes of a character cut at the end of the previous block (at most 3).
  let carry: Buffer = Buffer.alloc(0);
  /** Offset of carry[0] in the whole input. */
  let offset = 0;
  for await (const chunk of chunks) {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    checkSize(offset + bytes.length, maxBytes, what);
    const cut = completeUtf8Length(bytes);
    let text = strictUtf8(bytes.subarray(0, cut), what, offset, false);
    // A byte order mark at the very start says "UTF-8"; it is not text (WHATWG "UTF-8 decode").
    if (offset === 0 && text.startsWith('\ufeff')) text = text.slice(1);
    carry = Buffer.from(bytes.subarray(cut));
    offset += cut;
    if (text !== '') yield text;
  }
  if (signal.aborted) throw signal.reason;
  if (carry.length > 0) strictUtf8(carry, what, offset, true);
}

/**
 * Decodes bytes as strict UTF-8 with no NUL.
 * @param offset offset of `bytes[0]` in the whole input, for the message.
 * @param final true when nothing follows: a cut-off sequence at the end is then an error too.
 * @throws TtsError `usage` naming the offset of the first bad byte.
 */
function strictUtf8(bytes: Buffer, what: string, offset: number, final: boolean): string {
  const nul = bytes.indexOf(0);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes, { stream: !final });
  } catch {
    // At the end, a sequence cut off by it is bad from its lead byte (not from past the end).
    const bad = Math.min(firstInvalidUtf8Offset(bytes), final ? completeUtf8Length(bytes) : bytes.length);
    if (nul !== -1 && nul < bad) throw nulError(what, offset + nul);
    throw new TtsError('usage', `${what} is not valid UTF-8 text (first bad byte at offset ${offset + bad})`, {
      hint: 'convert it first, e.g. iconv -f SHIFT_JIS -t UTF-8',
    });
  }
  if (nul !== -1) throw nulError(what, offset + nul);
  return text;
}

function nulError(what: string, offset: number): TtsError {
  return new TtsError('usage', `${what} is not text: it has a NUL byte at offset ${offset}`, {
    hint: 'give a text file (UTF-8); binary files and devices such as /dev/zero are refused',
  });
}

/** @throws TtsError `usage` when `bytes` exceeds `max`. */
function checkSize(bytes: number, max: number, what: string): void {
  if (bytes > max) {
    throw new TtsError('usage', `${what} is larger than --max-input (${formatByteSize(max, { exact: true })})`, {
      hint: 'split the text, or raise --max-input if you mean it',
    });
  }
}

/**
 * The first line of a file, without its line break (a CR before it dropped), reading no further
 * than that line: a file that holds a secret on its first line (`--api-key-file`). A FIFO or
 * device is read as a stream; opening and reading it stop when `signal` aborts.
 * @param what names the file in messages (`the API key file PATH`).
 * @param maxBytes longest first line accepted, in bytes.
 * @throws TtsError `usage` (exit 2): unreadable, a first line that is not strict UTF-8, has a NUL
 *   byte or is longer than `maxBytes`; `signal.reason` when aborted.
 */
export async function readFirstLine(path: string, what: string, maxBytes: number, signal: AbortSignal): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  // Bytes, cut at the first line break: what follows it is never read as text.
  for await (const chunk of await openTextFile(path, Number.MAX_SAFE_INTEGER, signal, what)) {
    const end = chunk.indexOf(0x0a);
    const part = end === -1 ? chunk : chunk.subarray(0, end);
    parts.push(part);
    size += part.length;
    // A NUL names itself at once (/dev/zero has no line break to wait for).
    if (part.includes(0)) strictUtf8(Buffer.concat(parts), what, 0, false);
    if (size > maxBytes) {
      throw new TtsError('usage', `${what}: its first line is longer than ${formatByteSize(maxBytes, { exact: true })}`, { hint: 'put only the key on the first line' });
    }
    if (end !== -1) break;
  }
  let line = strictUtf8(Buffer.concat(parts), what, 0, true);
  if (line.startsWith('\ufeff')) line = line.slice(1);
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/**
 * Opens a file for reading in blocks. A regular file larger than `maxBytes` is refused before
 * anything is read; a device or FIFO (-f /dev/stdin, -f <(cmd)) is read as a stream. A FIFO's
 * open waits for a writer, a device's may wait until it is ready; an abort ends either wait
 * ({@link openFifo}, {@link openDevice}), and the reads that wait for a FIFO's writer or a
 * terminal's next line are made by the event loop, not by a thread of libuv's pool that an abort
 * could not free (Node's exit would wait for it: {@link readFifo}, {@link readDevice}).
 * @param what names the file in messages (default: its path).
 * @param waiting called once when the open of a FIFO begins (TextInput `waiting`).
 * @throws TtsError `usage` (exit 2) when it cannot be read; `signal.reason` once aborted.
 */
async function openTextFile(path: string, maxBytes: number, signal: AbortSignal, what = path, waiting?: () => void): Promise<AsyncIterable<Buffer>> {
  if (signal.aborted) throw signal.reason;
  try {
    const info = await stat(path);
    if (info.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
    if (info.isFIFO()) {
      waiting?.();
      return abortable(await readFifo(await openFifo(path, info, signal)), signal, what);
    }
    if (!info.isFile()) return abortable(await readDevice(await openDevice(path, signal)), signal, what);
    checkSize(info.size, maxBytes, path);
    const stream = createReadStream(path, { highWaterMark: FILE_BLOCK_BYTES });
    await waitForOpen(stream, signal);
    return abortable(stream, signal, what);
  } catch (cause) {
    if (signal.aborted) throw signal.reason;
    if (cause instanceof TtsError) throw cause;
    throw new TtsError('usage', `cannot read ${what}: ${fileProblem(cause)}`, { cause });
  }
}

/**
 * Opens the FIFO `path` for reading, which waits until a writer opens it (fifo(7)), in a thread of
 * libuv's pool that no JavaScript can interrupt and Node's exit waits for: on abort,
 * fifo-open.ts `wakeFifoOpen` makes it return, or, when it cannot, it is left blocked
 * (blocked-opens.ts `openedUnlessAborted`). The FIFO is held from before the open where it can be
 * (fifo-open.ts `holdFifo`), so that the wake-up reaches it whatever became of its path.
 * @param info the FIFO's stat, from before the open.
 * @returns the open descriptor (O_RDONLY; the caller closes it).
 * @throws open(2)'s errno error; `signal.reason` once aborted.
 */
function openFifo(path: string, info: Stats, signal: AbortSignal): Promise<number> {
  const hold = holdFifo(path);
  const target = hold?.path ?? path;
  const opening = new Promise<number>((resolve, reject) => openCallback(target, constants.O_RDONLY, (error, fd) => (error === null ? resolve(fd) : reject(error))));
  // The hold is needed until the open returns, even after an abort gave up waiting for it.
  if (hold !== undefined) opening.then(hold.close, hold.close);
  return openedUnlessAborted(opening, signal, (opened) => wakeFifoOpen(target, info, opened));
}

/**
 * The bytes of the FIFO open at `fd` as a stream read by the event loop (a `net.Socket` on the
 * descriptor: libuv's pipe, non-blocking, polled), as Node reads a pipe on stdin. A read of a file
 * stream would wait for the writer's next bytes in a thread of libuv's pool, which an abort cannot
 * free and Node's exit waits for: Ctrl-C (or `q`) while the writer wrote nothing yet ended the run
 * only once it wrote or closed. The stream ends when the last writer closes; destroying it closes `fd`.
 */
async function readFifo(fd: number): Promise<Readable> {
  const { Socket } = await import('node:net');
  return new Socket({ fd, readable: true, writable: false });
}

/**
 * Opens a device (`-f /dev/ttyS0`, `-f /dev/tty`, a link to one) for reading, as a shell's `<`
 * opens it: its open may sleep in the kernel until the device is ready (a serial line without
 * carrier: tty_port_block_til_ready), in a thread of libuv's pool that no JavaScript can
 * interrupt and Node's exit waits for. On abort the open is given up (blocked-opens.ts
 * `openedUnlessAborted`): the wait ends with the abort's reason, what the open gives should it
 * return is closed then, and a stop signal ends the process once the run cleaned up (cli/main.ts
 * endProcess; docs/cli.md §3), as for a device output (audio/special-files.ts `openDeviceForWriting`).
 * @returns the open descriptor (O_RDONLY, O_NOCTTY: a terminal never becomes the process's
 *   controlling one; the caller closes it).
 * @throws open(2)'s errno error; `signal.reason` once aborted.
 */
function openDevice(path: string, signal: AbortSignal): Promise<number> {
  const opening = new Promise<number>((resolve, reject) => openCallback(path, constants.O_RDONLY | constants.O_NOCTTY, (error, fd) => (error === null ? resolve(fd) : reject(error))));
  return openedUnlessAborted(opening, signal);
}

/**
 * The bytes of the device open at `fd`. A terminal (`-f /dev/tty`, a serial line) is read by the
 * event loop (Node's tty.ReadStream: libuv's tty, non-blocking, polled), as stdin on a terminal
 * is: a read of a file stream would wait for the next line in a thread of libuv's pool, which an
 * abort cannot free and Node's exit waits for (Ctrl-C ended the run only once a line was typed).
 * Any other device (or a terminal libuv refuses) is read as a file (`/dev/zero`, `/dev/urandom`:
 * their reads do not wait). Destroying the stream closes `fd`.
 */
async function readDevice(fd: number): Promise<Readable> {
  const tty = await import('node:tty');
  if (tty.isatty(fd)) {
    try {
      return new tty.ReadStream(fd);
    } catch {
      // libuv could not take it as a terminal (ERR_TTY_INIT_FAILED): read as a file.
    }
  }
  return createReadStream('', { fd, highWaterMark: FILE_BLOCK_BYTES });
}

/**
 * Waits for `stream` (a regular file) to open. Errors of opening (EACCES) arrive as the stream's
 * first event.
 * @throws the stream's error; `signal.reason` when aborted meanwhile (the stream is then destroyed).
 */
async function waitForOpen(stream: ReadStream, signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  if (signal.aborted) {
    stream.destroy();
    throw signal.reason;
  }
}

/**
 * The chunks of a readable stream as Buffers, until its end; when `signal` aborts, the stream is
 * destroyed (so a pipe nobody writes to cannot hold the process) and `signal.reason` is thrown. A
 * failed read is said as an unreadable input (docs/cli.md §3: exit 2, `cannot read …`), as a failed
 * open is: a system error of the read (EIO of a disk or of `/proc/self/mem`, EISDIR, ENXIO…: an
 * error with a `syscall`) becomes a TtsError `usage` naming `what`; anything else (a TtsError)
 * passes as it is.
 * @param what names the input in messages (its path, `standard input`, `the API key file PATH`).
 */
async function* abortable(stream: NodeJS.ReadableStream, signal: AbortSignal, what: string): AsyncGenerator<Buffer, void, undefined> {
  if (signal.aborted) throw signal.reason;
  const readable = stream as Readable;
  addAbortSignal(signal, readable);
  try {
    for await (const chunk of readable as AsyncIterable<Buffer | string>) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof TtsError || typeof (error as NodeJS.ErrnoException | null)?.syscall !== 'string') throw error;
    throw new TtsError('usage', `cannot read ${what}: ${fileProblem(error)}`, { cause: error });
  }
  if (signal.aborted) throw signal.reason;
}
