/**
 * Outputs that are not files (docs/cli.md §1, §2): a FIFO or pipe, a socket, a character device
 * (`/dev/null`, a terminal). They are written in place, as a shell's `>` writes them — opened for
 * writing, never created, truncated, renamed over or unlinked —: the audio of `-o FIFO` or
 * `-o /dev/null` (speak/open-outputs.ts), and the subtitles, word timings and chapters of
 * speak/text-file.ts ({@link openInPlaceStream}). A FIFO is opened only once it has a reader,
 * waiting for one interruptibly ({@link openFifoForWriting}); a disk is refused. Also: which
 * names are descriptors the run was not given ({@link assertGivenDescriptor}: `/dev/fd/7` with no
 * `7>…` is one of tts's own), and whether a text output is the terminal stderr draws on
 * ({@link sharesTerminal}).
 */
import { closeSync, constants, fstatSync, lstatSync, open as openCallback, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { openedUnlessAborted } from '../blocked-opens.js';
import { TtsError } from '../errors.js';
import { crossesProtectedLink, MAX_LINK_HOPS } from './output-target.js';

/**
 * What a name that is written in place is: a FIFO (also an anonymous pipe reached through
 * `/dev/stdout`, `/dev/fd/N`), a socket, a character device.
 */
export type InPlaceKind = 'fifo' | 'socket' | 'character device';

/**
 * What is at `path` (links followed, as open(2) follows them) when it is written in place
 * ({@link InPlaceKind}), `block device` for a block device (a disk: never written), or undefined
 * for a regular file, a folder or nothing (the atomic writer's: audio/file-sink.ts) — and for a
 * name that leads through a link Linux would not follow (another user's, in `/tmp`:
 * output-target.ts `crossesProtectedLink`), which the atomic writer writes as it stands
 * (docs/cli.md §2), whatever it leads to: that user's FIFO, any device. Never throws.
 */
export async function inPlaceKind(path: string): Promise<{ kind: InPlaceKind | 'block device'; info: Stats } | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return undefined;
  const kind = kindOf(info);
  if (kind === undefined || (await crossesProtectedLink(path))) return undefined;
  return { kind, info };
}

/**
 * Whether `info` (a stat of an output's name) is the regular file this process's standard error
 * (descriptor 2) writes to: `2>log` or `2>>log`, named `/dev/stderr`, `/dev/fd/2` or `log`.
 * Never throws.
 */
export function isStandardErrorFile(info: Stats): boolean {
  return isStandardStreamFile(info, 2);
}

/**
 * Whether `info` (a stat of an output's name) is the regular file this process's standard output
 * (descriptor 1) writes to: `>log`, `>>log` or a shell group's (`{ …; } > log`), named
 * `/dev/stdout`, `/dev/fd/1` or `log`. Never throws.
 */
export function isStandardOutputFile(info: Stats): boolean {
  return isStandardStreamFile(info, 1);
}

/**
 * Whether `path` (links followed, as open(2) follows them) is the regular file standard output
 * writes to ({@link isStandardOutputFile}) — not through a link Linux would not follow (another
 * user's, in `/tmp`: output-target.ts `crossesProtectedLink`), which is written as it stands.
 * Never throws.
 */
export async function isStandardOutputPath(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && isStandardOutputFile(info) && !(await crossesProtectedLink(path));
}

/** Whether `info` is the regular file descriptor `fd` (1 or 2) writes to, by device and inode. */
function isStandardStreamFile(info: Stats, fd: 1 | 2): boolean {
  try {
    const own = fstatSync(fd);
    return info.isFile() && own.isFile() && own.dev === info.dev && own.ino === info.ino;
  } catch {
    return false;
  }
}

/**
 * Refuses an output that is the pipe (or FIFO) standard input comes through (`… | tts stream
 * -o a.wav --word-timings /dev/stdin "text"`, `tts batch -` with a line's `"output":
 * "/dev/stdin"`): this run is its reader, so what went in would be lost, and once the pipe is full
 * the run would wait for itself. Compared by device and inode, links followed.
 * @param named how the message names the output: its flag, or a batch line's key.
 * @throws TtsError `usage` (exit 2) naming it and the path.
 */
export async function assertNotStandardInput(path: string, named: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || !info.isFIFO()) return;
  let input: Stats;
  try {
    input = fstatSync(0);
  } catch {
    return;
  }
  if (input.isFIFO() && input.dev === info.dev && input.ino === info.ino) {
    throw new TtsError('usage', `${named} ${path} is the pipe standard input comes through, which this run reads: what is written there would come back to it or be lost`, {
      hint: 'give a file, or a FIFO or pipe another program reads',
    });
  }
}

/** The {@link InPlaceKind} of `info`, `block device`, or undefined (a file, a folder). */
function kindOf(info: Stats): InPlaceKind | 'block device' | undefined {
  if (info.isFIFO()) return 'fifo';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice()) return 'character device';
  if (info.isBlockDevice()) return 'block device';
  return undefined;
}

/** Most time between two tries to open a FIFO that has no reader yet, in seconds. */
const FIFO_RETRY_SECONDS = 0.05;

/**
 * Opens a FIFO for writing once it has a reader: non-blocking, tried again every 50 ms while it
 * has none (ENXIO) — a plain open would block a libuv thread until a reader came, and with it the
 * process's exit even after Ctrl-C. The descriptor stays non-blocking (a libuv pipe stream takes
 * it: `new net.Socket({ fd })`).
 * @param signal stops the wait: its reason is thrown (Ctrl-C: the run ends with 130).
 * @param waiting called once, when the first try finds no reader.
 * @returns the open descriptor (the caller closes it).
 * @throws `signal.reason` once aborted; TtsError `io_error` (exit 7) when the open fails
 *   otherwise (the message names `path` and the error code), or what it opened is no longer a
 *   FIFO (the name was replaced meanwhile: nothing was written).
 */
export async function openFifoForWriting(path: string, signal: AbortSignal, waiting?: () => void): Promise<number> {
  const { sleep } = await import('../client/retry.js');
  for (let tries = 0; ; tries++) {
    signal.throwIfAborted();
    let fd: number;
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENXIO') {
        throw new TtsError('io_error', `cannot write to ${path} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
      }
      // ENXIO: nobody reads the FIFO yet.
      if (tries === 0) waiting?.();
      await sleep(FIFO_RETRY_SECONDS, signal);
      continue;
    }
    // Opened without O_CREAT or O_TRUNC; should the name have become a file meanwhile, it is let go.
    if (!fstatSync(fd).isFIFO()) {
      closeSync(fd);
      throw new TtsError('io_error', `cannot write to ${path}: it is no longer a FIFO (it changed while the run started)`);
    }
    return fd;
  }
}

/**
 * Opens a character device for writing, as it is: O_WRONLY and O_NOCTTY (a terminal never
 * becomes the process's controlling one), without O_CREAT or O_TRUNC, so nothing is made or cut
 * should the name have become something else; what was opened must still be a character device.
 * The open is a shell's `>`: it may sleep in the kernel until the device is ready (a serial line
 * with no carrier: tty_port_block_til_ready), in a thread of libuv's pool that nothing can
 * interrupt. `signal` gives it up: the wait ends with its reason, and the open is left to return
 * in its thread (its descriptor closed then, nothing written), counted by blocked-opens.ts, so
 * that a stop signal ends the run (cli/main.ts endProcess; docs/cli.md §3).
 * @param signal stops the wait (Ctrl-C, SIGTERM: the run ends with 130, 143).
 * @returns the open descriptor (the caller closes it).
 * @throws `signal.reason` once aborted; TtsError `io_error` (exit 7) when it cannot be opened, or
 *   is no longer a device.
 */
export async function openDeviceForWriting(path: string, signal?: AbortSignal): Promise<number> {
  signal?.throwIfAborted();
  const opening = new Promise<number>((resolve, reject) => openCallback(path, constants.O_WRONLY | constants.O_NOCTTY, (err, opened) => (err === null ? resolve(opened) : reject(err))));
  let fd: number;
  try {
    fd = signal === undefined ? await opening : await openedUnlessAborted(opening, signal);
  } catch (cause) {
    if (signal?.aborted === true && cause === signal.reason) throw cause;
    throw new TtsError('io_error', `cannot write to ${path} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
  }
  if (!fstatSync(fd).isCharacterDevice()) {
    closeSync(fd);
    throw new TtsError('io_error', `cannot write to ${path}: it is no longer a device (it changed while the run started)`);
  }
  return fd;
}

/**
 * The descriptor of this process that is the socket `info` describes (by device and inode), other
 * than standard input: a socket cannot be opened by its name (`/dev/stdout` when standard output
 * is a socket, as Node's `spawn` gives its children, opens with ENXIO), so it is written through
 * the descriptor the run was given. Standard output (1) and standard error (2) first, then the
 * lowest other one. Read from Linux's /proc/self/fd; elsewhere only 1 and 2 are tried.
 * @returns the descriptor, or undefined when no descriptor of ours but maybe 0 is that socket
 *   (a listening socket in the file system, another process's).
 */
export function ownSocketDescriptor(info: Stats): number | undefined {
  const same = (fd: number): boolean => {
    try {
      const own = fstatSync(fd);
      return own.isSocket() && own.dev === info.dev && own.ino === info.ino;
    } catch {
      return false;
    }
  };
  if (same(1)) return 1;
  if (same(2)) return 2;
  let fds: number[];
  try {
    fds = readdirSync('/proc/self/fd')
      .map(Number)
      .filter((fd) => Number.isInteger(fd) && fd > 2)
      .sort((a, b) => a - b);
  } catch {
    return undefined;
  }
  return fds.find(same);
}

/**
 * The number of this process's descriptor that `path` names through /proc — `/dev/fd/N`,
 * `/dev/stdout` (1), `/proc/self/fd/N`, `/proc/PID/fd/N` with our PID, a thread's
 * `/proc/thread-self/fd/N`, or a chain of links ending at one (at most MAX_LINK_HOPS, as
 * open(2)) — or undefined for any other name, one that cannot be examined, and off Linux. Cheap
 * for the names of files (one lstat: a batch checks 100,000 of them): only a folder under
 * /dev or /proc is resolved, so a folder of the user's own that links to /proc/self/fd
 * (`fds/7`) is not seen through. Never throws.
 */
export function descriptorNamed(path: string): number | undefined {
  let at = resolve(path);
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    const folder = dirname(at);
    if (/^\/(dev|proc)(\/|$)/u.test(folder)) {
      let real: string;
      try {
        real = realpathSync(folder);
      } catch {
        return undefined;
      }
      const own = /^\/proc\/(\d+)(?:\/task\/\d+)?\/fd$/u.exec(real);
      if (own !== null) return Number(own[1]) === process.pid && /^\d+$/u.test(basename(at)) ? Number(basename(at)) : undefined;
    }
    // Not a link (or not there): a name of its own. (lstat, not a failing readlink: no exception
    // to make for each file name.)
    try {
      if (lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink() !== true) return undefined;
      at = resolve(folder, readlinkSync(at));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The access mode of this process's descriptor `fd` (O_ACCMODE of /proc/self/fdinfo's octal `flags`: 0 read, 1 write, 2 both), or -1. */
function accessMode(fd: number): number {
  try {
    const flags = /^flags:\s+([0-7]+)$/mu.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    return flags === null ? -1 : Number.parseInt(flags[1]!, 8) & 3;
  } catch {
    return -1;
  }
}

/**
 * Refuses an output (or input) named by a descriptor this run was not given ({@link
 * descriptorNamed} ≥ 3): one not open when bin/tts.js started (`rememberStartedDescriptors`), or
 * no longer the same, or Node's own of then — an `anon_inode:` (epoll, eventfd, io_uring), a
 * pipe it held both a read and a write end of (its signal and wake-up pipes) — or one not open
 * for what the run does with it (an output open only for reading: a shell's `7>` opens it for
 * writing). `--word-timings /dev/fd/7` without a `7>…` named one of tts's own: a file it reads
 * (the engine's flite.wasm, which the atomic writer then replaced), a temporary file it writes,
 * Node's signal pipe (writing there crashed Node). 0, 1 and 2 are always the run's. Nothing is
 * checked where nothing was remembered (a run not started by bin/tts.js, as in-process tests;
 * off Linux).
 * @param named how the message names it: a flag (`-o`, `--word-timings`, `-f`), or a batch line's key.
 * @param use `write` for an output, `read` for an input.
 * @throws TtsError `usage` (exit 2) naming it, the path and the descriptor.
 */
export function assertGivenDescriptor(path: string, named: string, use: 'read' | 'write'): void {
  const started = (process as unknown as Record<symbol, ReadonlyMap<number, string> | undefined>)[Symbol.for('tts.started-descriptors')];
  if (started === undefined) return;
  const fd = descriptorNamed(path);
  if (fd === undefined || fd <= 2) return;
  let now: string | undefined;
  try {
    now = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // Not open.
  }
  const was = started.get(fd);
  const mode = accessMode(fd);
  const selfPipe = (): boolean =>
    was !== undefined && was.startsWith('pipe:') && [...started].some(([other, link]) => other !== fd && link === was && ((mode === 0 && accessMode(other) === 1) || (mode === 1 && accessMode(other) === 0)));
  let why: string | undefined;
  if (was === undefined || was !== now || was.startsWith('anon_inode:') || selfPipe()) why = `which this run was not given${now === undefined ? '' : ' (tts opened it itself)'}`;
  else if (use === 'write' && mode === 0) why = 'open only for reading';
  else if (use === 'read' && mode === 1) why = 'open only for writing';
  if (why === undefined) return;
  throw new TtsError('usage', `${named} ${path} is descriptor ${fd}, ${why}`, {
    hint: `open it in the command that runs tts (e.g. ${fd}${use === 'read' ? '<text.txt' : '>out.jsonl'}), or give a file name`,
  });
}

/**
 * Opens `path`, found to be written in place ({@link inPlaceKind}), as a stream to write to, now:
 * a FIFO once it has a reader ({@link openFifoForWriting}: a libuv pipe stream on its
 * descriptor), a character device as it is ({@link openDeviceForWriting}), a socket through the
 * descriptor of this process that is it ({@link ownSocketDescriptor}: process.stdout or
 * process.stderr for 1 and 2, which stay open when the stream's user is done). For the audio of
 * `-o` (speak/open-outputs.ts) and the subtitles, word timings and chapters (speak/text-file.ts).
 * @param found what {@link inPlaceKind} said of `path`.
 * @param named how a refusal names the output: its flag (`-o`), or a batch line's key.
 * @param options `signal` stops the wait for a FIFO's reader or for a device's open; `waiting` is
 *   called once when the first try finds no reader; `noTerminal` refuses a terminal (audio: its
 *   bytes would be taken for control sequences, docs/cli.md §1 — standard output refuses one too).
 * @throws TtsError `usage` (exit 2) for a block device or a socket no descriptor of this process
 *   leads to ({@link blockDevice}, {@link unreachableSocket}), or a terminal with `noTerminal`;
 *   `io_error` (exit 7) when it cannot be opened (a datagram socket: Node streams none);
 *   `options.signal`'s reason once aborted.
 */
export async function openInPlaceStream(
  path: string,
  found: { kind: InPlaceKind | 'block device'; info: Stats },
  named: string,
  options: { signal: AbortSignal; waiting?: (() => void) | undefined; noTerminal?: boolean | undefined },
): Promise<NodeJS.WritableStream> {
  if (found.kind === 'block device') throw blockDevice(path, named);
  if (found.kind === 'character device') {
    const [{ createWriteStream }, { isatty }] = await Promise.all([import('node:fs'), import('node:tty')]);
    const fd = await openDeviceForWriting(path, options.signal);
    if (options.noTerminal === true && isatty(fd)) {
      closeSync(fd);
      throw new TtsError('usage', `refusing to write audio to a terminal: ${named} ${path} is one`, {
        hint: 'write it to a file (-o speech.wav) or a pipe, or use `tts say` to play it',
      });
    }
    return createWriteStream('', { fd });
  }
  const { Socket } = await import('node:net');
  if (found.kind === 'fifo') return new Socket({ fd: await openFifoForWriting(path, options.signal, options.waiting), readable: false, writable: true });
  const fd = ownSocketDescriptor(found.info);
  if (fd === undefined) throw unreachableSocket(path, named);
  if (fd === 1) return process.stdout;
  if (fd === 2) return process.stderr;
  try {
    return new Socket({ fd, readable: false, writable: true });
  } catch (cause) {
    // A datagram socket: Node streams none (ERR_INVALID_FD_TYPE).
    throw new TtsError('io_error', `cannot write to ${path} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause, hint: 'give a file, a FIFO or a stream socket' });
  }
}

/**
 * The refusal of a socket no descriptor of this process leads to (a listening socket in the file
 * system): it cannot be opened by its name. TtsError `usage` (exit 2).
 * @param named how the message names the output: its flag, or a batch line's key.
 */
export function unreachableSocket(path: string, named: string): TtsError {
  return new TtsError('usage', `${named} ${path} is a socket that no descriptor of this run leads to: a socket cannot be opened by its name`, {
    hint: 'give a file, a FIFO or a device; a socket only as one the run was given (/dev/stdout, /dev/fd/N)',
  });
}

/**
 * The refusal of a block device (a disk) as an output: never written. TtsError `usage` (exit 2).
 * @param named how the message names the output: its flag, or a batch line's key.
 */
export function blockDevice(path: string, named: string): TtsError {
  return new TtsError('usage', `${named} ${path} is a block device (a disk), not a file`, { hint: 'give it the name of a file, a FIFO or a character device such as /dev/null' });
}

/**
 * Whether any of `paths` (links followed; undefined ones skipped) is the terminal `stderr` writes
 * to: the same character device (`/dev/stdout` or `/dev/stderr` on that terminal, its
 * `/dev/pts/N`), or `/dev/tty` (the controlling terminal, which is as a rule that one). Text
 * written in place there lands among what is drawn on stderr, so a line redrawn in place (the
 * progress line, the player's line: docs/cli.md §2 "Progress", §12.2) would tear it, as it would
 * `--verbose`'s lines. Compared by device number (`rdev`).
 * @param stderr the run's standard error: a terminal (`isTTY`) with a descriptor of this process
 *   (`fd`, 2); anything else (an in-process test's stream, a pipe) shares nothing.
 * @returns true when one of them is that terminal. Never throws.
 */
export async function sharesTerminal(paths: readonly (string | undefined)[], stderr: { isTTY?: boolean; fd?: unknown }): Promise<boolean> {
  const fd = stderr.fd;
  if (stderr.isTTY !== true || typeof fd !== 'number' || paths.every((p) => p === undefined)) return false;
  let terminal: number;
  try {
    terminal = fstatSync(fd).rdev;
  } catch {
    return false;
  }
  const controlling = (await stat('/dev/tty').catch(() => undefined))?.rdev;
  for (const path of new Set(paths)) {
    if (path === undefined) continue;
    const info = await stat(path).catch(() => undefined);
    if (info?.isCharacterDevice() === true && (info.rdev === terminal || info.rdev === controlling)) return true;
  }
  return false;
}
