/**
 * A minimal WASI preview1 host (https://github.com/WebAssembly/WASI/blob/main/legacy/preview1/docs.md)
 * for running a command-line WebAssembly program once, with its arguments, an empty stdin, stdout
 * kept (up to {@link MAX_STDOUT_BYTES}, see {@link MemoryWasi.stdout}), stderr discarded, writes to
 * other descriptors the caller names passed on as they happen ({@link MemoryWasi.stream}), and one
 * preopened directory `.` that lives in memory: files the program
 * creates there are kept in this object, never on disk.
 *
 * Why not `node:wasi`: in Node 20 a WASI object garbage-collected while another one allocates
 * aborts the whole process (uvwasi_destroy → uv_mutex_destroy on a locked mutex, seen in gdb when
 * Flite ran once per sentence in a worker); it is also experimental and warns on stderr, and it
 * would need a temporary folder on disk. Flite (flite.ts) imports only the 13 functions below.
 */

/** WASI errno values used here. */
const ERRNO = { success: 0, badf: 8, canceled: 11, inval: 28, noent: 44, notsup: 58 } as const;
const FILETYPE = { characterDevice: 2, directory: 3, regularFile: 4 } as const;
const PREOPEN_FD = 3;
/** Bytes of a run's standard output kept (1 MiB); more is dropped (Flite prints ~10 bytes a phone). */
export const MAX_STDOUT_BYTES = 1024 * 1024;

/** Thrown by proc_exit to unwind the program; carries its exit code. */
class ProcExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** An open file in the in-memory folder. */
interface OpenFile {
  name: string;
  position: number;
}

/** One run of a WASI command with an in-memory folder. */
export class MemoryWasi {
  /** Files in the preopened folder, by name: storage (with spare room) and length in bytes. */
  private readonly files = new Map<string, { data: Uint8Array; length: number }>();
  private readonly open = new Map<number, OpenFile>();
  private nextFd = PREOPEN_FD + 1;
  private memory: { buffer: ArrayBuffer } | undefined;
  private encoded: Buffer[] = [];
  /** What the current run wrote to standard output, in pieces (at most MAX_STDOUT_BYTES in all). */
  private out: Buffer[] = [];
  private outBytes = 0;
  /** Where writes to descriptors that are neither files nor stdio go (see {@link stream}). */
  private readonly streams = new Map<number, (bytes: Uint8Array) => boolean>();

  /** @param args the program's argv, argv[0] included. */
  constructor(private args: readonly string[]) {}

  /**
   * Makes this host ready for another run of the same instance: new arguments, no files, no open
   * files (the caller restores the instance's memory itself).
   */
  reset(args: readonly string[]): void {
    this.args = args;
    this.files.clear();
    this.open.clear();
    this.nextFd = PREOPEN_FD + 1;
    this.out = [];
    this.outBytes = 0;
    this.streams.clear();
  }

  /**
   * Passes what the current run writes to descriptor `fd` (one the program did not open: Flite's
   * chunk callback writes its samples to flite-streaming.ts's FLITE_STREAM_FD) to `write`, one
   * call per buffer written, as a view of the instance's memory that is valid only during the call.
   * When `write` returns true, that `fd_write` fails with ECANCELED, which Flite's replaced
   * callback turns into CST_AUDIO_STREAM_STOP: the program stops speaking and exits normally.
   * Whatever `write` throws unwinds the program (the caller drops the instance). Until the next
   * {@link reset}.
   */
  stream(fd: number, write: (bytes: Uint8Array) => boolean): void {
    this.streams.set(fd, write);
  }

  /**
   * What the last run wrote to standard output (fd 1), as UTF-8 text: its first
   * {@link MAX_STDOUT_BYTES} bytes.
   */
  stdout(): string {
    return Buffer.concat(this.out).toString('utf8');
  }

  /** The content of file `name` in the preopened folder (`out.wav`), or undefined if never created. */
  file(name: string): Uint8Array | undefined {
    const f = this.files.get(name);
    return f === undefined ? undefined : f.data.subarray(0, f.length);
  }

  /** The import object to instantiate the module with (`wasi_snapshot_preview1`). */
  imports(): Record<string, Record<string, unknown>> {
    return { wasi_snapshot_preview1: this.functions() };
  }

  /**
   * Runs the instance's `_start` to its end.
   * @returns the exit code (0 when `_start` returns without calling proc_exit).
   * @throws whatever the program traps with (WebAssembly.RuntimeError).
   */
  start(instance: { exports: Record<string, unknown> }): number {
    this.memory = instance.exports['memory'] as { buffer: ArrayBuffer };
    this.encoded = this.args.map((a) => Buffer.from(`${a}\0`, 'utf8'));
    try {
      (instance.exports['_start'] as () => void)();
      return 0;
    } catch (error) {
      if (error instanceof ProcExit) return error.code;
      throw error;
    }
  }

  private view(): DataView {
    return new DataView(this.memory!.buffer);
  }

  private bytes(): Uint8Array {
    return new Uint8Array(this.memory!.buffer);
  }

  private functions(): Record<string, unknown> {
    return {
      args_sizes_get: (argcPtr: number, bufSizePtr: number): number => {
        this.view().setUint32(argcPtr, this.encoded.length, true);
        this.view().setUint32(bufSizePtr, this.encoded.reduce((n, b) => n + b.length, 0), true);
        return ERRNO.success;
      },
      args_get: (argvPtr: number, bufPtr: number): number => {
        let at = bufPtr;
        this.encoded.forEach((b, i) => {
          this.view().setUint32(argvPtr + i * 4, at, true);
          this.bytes().set(b, at);
          at += b.length;
        });
        return ERRNO.success;
      },
      // Time stands still: the program only uses it to report its own speed.
      clock_time_get: (_id: number, _precision: bigint, timePtr: number): number => {
        this.view().setBigUint64(timePtr, 0n, true);
        return ERRNO.success;
      },
      fd_close: (fd: number): number => (this.open.delete(fd) || fd <= PREOPEN_FD ? ERRNO.success : ERRNO.badf),
      fd_fdstat_get: (fd: number, ptr: number): number => {
        const type = fd <= 2 ? FILETYPE.characterDevice : fd === PREOPEN_FD ? FILETYPE.directory : this.open.has(fd) ? FILETYPE.regularFile : undefined;
        if (type === undefined) return ERRNO.badf;
        const v = this.view();
        v.setUint8(ptr, type);
        v.setUint16(ptr + 2, 0, true);
        v.setBigUint64(ptr + 8, 0xffffffffffffffffn, true);
        v.setBigUint64(ptr + 16, 0xffffffffffffffffn, true);
        return ERRNO.success;
      },
      fd_fdstat_set_flags: (): number => ERRNO.success,
      fd_prestat_get: (fd: number, ptr: number): number => {
        if (fd !== PREOPEN_FD) return ERRNO.badf;
        this.view().setUint8(ptr, 0);
        this.view().setUint32(ptr + 4, 1, true);
        return ERRNO.success;
      },
      fd_prestat_dir_name: (fd: number, pathPtr: number, pathLen: number): number => {
        if (fd !== PREOPEN_FD || pathLen < 1) return ERRNO.badf;
        this.bytes()[pathPtr] = 0x2e; // "."
        return ERRNO.success;
      },
      fd_read: (fd: number, iovs: number, iovsLen: number, nreadPtr: number): number => {
        const file = this.open.get(fd);
        if (file === undefined && fd !== 0) return ERRNO.badf;
        let total = 0;
        if (file !== undefined) {
          const data = this.file(file.name)!;
          for (let i = 0; i < iovsLen; i++) {
            const buf = this.view().getUint32(iovs + i * 8, true);
            const len = this.view().getUint32(iovs + i * 8 + 4, true);
            const part = data.subarray(file.position, file.position + len);
            this.bytes().set(part, buf);
            file.position += part.length;
            total += part.length;
            if (part.length < len) break;
          }
        }
        this.view().setUint32(nreadPtr, total, true);
        return ERRNO.success;
      },
      fd_seek: (fd: number, offset: bigint, whence: number, newOffsetPtr: number): number => {
        const file = this.open.get(fd);
        if (file === undefined) return ERRNO.badf;
        const size = this.files.get(file.name)!.length;
        const base = whence === 0 ? 0 : whence === 1 ? file.position : whence === 2 ? size : Number.NaN;
        const next = base + Number(offset);
        if (!Number.isFinite(next) || next < 0) return ERRNO.inval;
        file.position = next;
        this.view().setBigUint64(newOffsetPtr, BigInt(next), true);
        return ERRNO.success;
      },
      fd_write: (fd: number, iovs: number, iovsLen: number, nwrittenPtr: number): number => {
        const file = this.open.get(fd);
        const stream = file === undefined ? this.streams.get(fd) : undefined;
        if (file === undefined && stream === undefined && fd !== 1 && fd !== 2) return ERRNO.badf;
        const buffers = this.iovecs(iovs, iovsLen);
        let total = 0;
        for (const [buf, len] of buffers) {
          if (file !== undefined) this.writeAt(file, this.bytes().subarray(buf, buf + len));
          else if (stream !== undefined) {
            if (stream(this.bytes().subarray(buf, buf + len))) return ERRNO.canceled;
          } else if (fd === 1 && this.outBytes < MAX_STDOUT_BYTES) {
            const kept = Buffer.from(this.bytes().subarray(buf, buf + Math.min(len, MAX_STDOUT_BYTES - this.outBytes)));
            this.out.push(kept);
            this.outBytes += kept.length;
          }
          total += len;
        }
        this.view().setUint32(nwrittenPtr, total, true);
        return ERRNO.success;
      },
      path_open: (dirFd: number, _dirFlags: number, pathPtr: number, pathLen: number, oflags: number, _rb: bigint, _ri: bigint, _fdFlags: number, fdPtr: number): number => {
        if (dirFd !== PREOPEN_FD) return ERRNO.badf;
        const name = Buffer.from(this.bytes().subarray(pathPtr, pathPtr + pathLen)).toString('utf8');
        const create = (oflags & 1) !== 0;
        const truncate = (oflags & 8) !== 0;
        if ((oflags & 2) !== 0) return ERRNO.notsup;
        if (!this.files.has(name)) {
          if (!create) return ERRNO.noent;
          this.files.set(name, { data: new Uint8Array(0), length: 0 });
        } else if (truncate) {
          this.files.get(name)!.length = 0;
        }
        const fd = this.nextFd++;
        this.open.set(fd, { name, position: 0 });
        this.view().setUint32(fdPtr, fd, true);
        return ERRNO.success;
      },
      proc_exit: (code: number): never => {
        throw new ProcExit(code);
      },
    };
  }

  /**
   * The `iovsLen` (address, length) pairs of an iovec array at `iovs` (WASI `ciovec`: two
   * little-endian u32 each), every buffer checked to lie inside the instance's memory first.
   * @throws RangeError when the array or a buffer does not (a broken program: it traps).
   */
  private iovecs(iovs: number, iovsLen: number): [number, number][] {
    const size = this.memory!.buffer.byteLength;
    const out: [number, number][] = [];
    for (let i = 0; i < iovsLen; i++) {
      const buf = this.view().getUint32(iovs + i * 8, true);
      const len = this.view().getUint32(iovs + i * 8 + 4, true);
      if (buf + len > size) throw new RangeError(`WASI fd_write of bytes ${buf}–${buf + len} outside the instance's ${size} bytes of memory`);
      out.push([buf, len]);
    }
    return out;
  }

  /** Writes `data` at the file's position, growing the file (capacity doubling) as needed. */
  private writeAt(file: OpenFile, data: Uint8Array): void {
    const f = this.files.get(file.name)!;
    const end = file.position + data.length;
    if (end > f.data.length) {
      const grown = new Uint8Array(Math.max(end, f.data.length * 2, 4096));
      grown.set(f.data.subarray(0, f.length));
      f.data = grown;
    }
    // A seek past the end leaves a gap of zeros, as POSIX files do (new storage is zeroed).
    if (file.position > f.length) f.data.fill(0, f.length, file.position);
    f.data.set(data, file.position);
    f.length = Math.max(f.length, end);
    file.position = end;
  }
}
