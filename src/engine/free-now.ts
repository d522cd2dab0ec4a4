/**
 * Memory given back at once (issue 20): a large buffer read only to be copied or compiled (Flite's
 * 17 MB of WebAssembly, kuromoji's target map) is otherwise garbage until the collector's next full
 * collection, and adds to a one-shot's peak RSS in the meantime.
 */

/** Buffers smaller than this are left to the collector (64 KiB; Node's Buffer pool is 8 KiB). */
const MIN_BYTES = 64 * 1024;

/**
 * Frees the bytes behind each of `views` now, where the runtime can: `ArrayBuffer.prototype.
 * transfer(0)` (ES2024; Node 21 and later) detaches the buffer and releases its memory at once.
 * On Node 20, which has no `transfer`, they wait for the garbage collector, as before. Only for
 * buffers nothing reads any more: each view, and every other view of its buffer, is left empty.
 * A view that covers only part of its buffer (a slice, a pooled Buffer), a buffer under 64 KiB,
 * a SharedArrayBuffer and a buffer already detached are left alone.
 * @returns how many buffers were freed (0 on Node 20).
 */
export function freeNow(...views: ArrayBufferView[]): number {
  let freed = 0;
  for (const view of views) {
    // ES2024's transfer, not in the ES2023 library this project compiles against.
    const buffer = view.buffer as ArrayBufferLike & { transfer?: (length: number) => ArrayBuffer };
    if (!(buffer instanceof ArrayBuffer) || typeof buffer.transfer !== 'function') continue;
    if (view.byteOffset !== 0 || view.byteLength !== buffer.byteLength || buffer.byteLength < MIN_BYTES) continue;
    buffer.transfer(0);
    freed++;
  }
  return freed;
}
