/**
 * An in-memory connection: two `Duplex` ends where what one writes the other reads, with the
 * backpressure and the abrupt close of a socket. The embedded service hands one end to its HTTP
 * server (`server.emit('connection', end)`, which Node documents for any Duplex) and the client
 * speaks HTTP/1.1 over the other (`http.request`'s `createConnection`), so a one-shot run reaches
 * the built-in engine with the same request and event-stream bytes as over TCP, without a socket
 * or undici (issue 20). Node 22.6 has `stream.duplexPair`; `engines` says Node 20, hence ours,
 * written after it.
 */
import { Duplex } from 'node:stream';

/** Bytes an end's readable side buffers before the writer's callback is held (a socket's 16 KiB). */
const HIGH_WATER_BYTES = 16 * 1024;

/** One end of {@link duplexPair}. */
class PairEnd extends Duplex {
  peer!: PairEnd;
  /** The callback of a write held until the peer's reader wants more (backpressure). */
  private held: ((error?: Error | null) => void) | undefined;

  constructor() {
    super({ allowHalfOpen: true, readableHighWaterMark: HIGH_WATER_BYTES, writableHighWaterMark: HIGH_WATER_BYTES });
  }

  /** The reader wants more: release the peer's held write, if any. */
  override _read(): void {
    const held = this.peer.held;
    this.peer.held = undefined;
    held?.();
  }

  /** Hands the bytes to the peer's reader; the write completes at once unless the peer is full. */
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.peer.destroyed) {
      callback(Object.assign(new Error('write after the other end closed'), { code: 'EPIPE' }));
      return;
    }
    if (this.peer.push(chunk)) callback();
    else this.held = callback;
  }

  /** `end()` here is the end of the peer's input (a FIN). */
  override _final(callback: (error?: Error | null) => void): void {
    if (!this.peer.destroyed) this.peer.push(null);
    callback();
  }

  /**
   * Destroying one end closes the other at once, as a reset connection does: a peer still reading
   * sees its input stop without an end (an HTTP parser calls that an aborted message).
   */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const held = this.held;
    this.held = undefined;
    held?.(error ?? null);
    if (!this.peer.destroyed) this.peer.destroy();
    callback(error);
  }
}

/**
 * Makes a connected pair of in-memory ends.
 * @returns `[a, b]`: bytes written to `a` are read from `b` and the other way round, in order;
 *   a write completes when the other end's buffer (16 KiB) has room; `end()` on one side ends the
 *   other's readable side; `destroy()` on either closes both.
 */
export function duplexPair(): [Duplex, Duplex] {
  const a = new PairEnd();
  const b = new PairEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
