/**
 * A compressed container as an {@link AudioSink} (docs/cli.md §2 "Containers"): PCM chunks of the
 * spec go in, are cut into whole frames and encoded as they come, and the encoded bytes go on
 * at once to a byte sink — the atomic file (src/audio/file-sink.ts, `raw`) or a stream (stdout,
 * a FIFO; src/audio/stdout-sink.ts, `raw`). Nothing is buffered beyond what the codec itself
 * needs for its next frame, so a pipe gets its first bytes while the text is still being spoken.
 */
import type { AudioSpec } from '../../dsp/spec.js';
import { TtsError } from '../../errors.js';
import type { AudioSink } from '../sink.js';
import { FrameAligner } from './pcm.js';

/**
 * One stream's encoder. All calls are synchronous (the WebAssembly codecs run in this thread;
 * one 100 ms chunk costs well under a millisecond to a few milliseconds).
 */
export interface AudioEncoder {
  /**
   * Encodes whole sample frames of the spec's encoding.
   * @param pcm a multiple of bytesPerFrame(spec) bytes, possibly empty.
   * @returns the container bytes ready now (copies the caller owns; possibly empty).
   */
  encode(pcm: Buffer): Buffer;
  /** Ends the stream: flushes the codec and returns the last bytes (end-of-stream marks included). */
  finish(): Buffer;
  /**
   * After {@link finish}: bytes to write over the start of a seekable file, now that the length
   * is known (FLAC STREAMINFO's total samples and MD5). Undefined when there is nothing to patch.
   * A pipe never gets them: what it received is already a valid stream.
   */
  headerPatch(): { offset: number; bytes: Buffer } | undefined;
  /** Frees the codec's WebAssembly memory; idempotent, safe at any time. */
  free(): void;
}

/** A byte sink that can overwrite bytes it already took (the atomic file; FileSink.patch). */
export interface PatchableSink extends AudioSink {
  /**
   * Overwrites `data.length` bytes at byte `offset` of what was written so far.
   * @throws RangeError when the range is not inside what was written; TtsError `io_error`.
   */
  patch(offset: number, data: Buffer): Promise<void>;
}

/**
 * Wraps `inner` (which takes the container's bytes as they are) into a sink that takes PCM of
 * `spec` and encodes it with `encoder`.
 *
 * `encoder` may still be loading: compiling a codec's WebAssembly and warming it up takes tens
 * of milliseconds, which then overlap the request instead of preceding it; the first `write`
 * (or `finish`) waits for it. `finish` flushes the encoder, writes its last bytes, patches the
 * header when `inner` can (`PatchableSink`), then finishes `inner`. `abort` frees the encoder
 * (once loaded) and aborts `inner` (an atomic file is then removed, so no half-written file
 * replaces a good one).
 * @throws from write/finish: what `inner` throws (io_error, a closed pipe), TtsError `internal`
 *   (exit 1) when the codec fails, or the error `encoder` was rejected with (openEncoder:
 *   `internal`); the caller then aborts the output.
 */
export function encodedSink(spec: AudioSpec, encoder: AudioEncoder | Promise<AudioEncoder>, inner: AudioSink | PatchableSink): AudioSink {
  const ready = Promise.resolve(encoder);
  // A load failure is reported by the write or finish that needs the encoder, not as an
  // unhandled rejection when the run ends before any (an abort).
  ready.catch(() => undefined);
  const aligner = new FrameAligner(spec);
  // The first chunk's first 20 ms are encoded and written on their own, so the stream's first
  // bytes (headers, Opus's first packet) leave before the rest of that chunk is encoded.
  let firstSlice = Math.max(1, Math.round(spec.sampleRate * 0.02)) * aligner.frameBytes;
  let state: 'open' | 'done' | 'aborted' = 'open';
  const codec = <T>(what: string, op: () => T): T => {
    try {
      return op();
    } catch (cause) {
      throw new TtsError('internal', `the ${what} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    }
  };
  const abort = async (): Promise<void> => {
    if (state === 'done') return;
    state = 'aborted';
    void ready.then(
      (e) => e.free(),
      () => undefined,
    );
    await inner.abort();
  };
  return {
    async write(chunk) {
      if (state !== 'open') throw new TtsError('io_error', 'the output was already closed');
      const encoder = await ready;
      if (state !== 'open') throw new TtsError('io_error', 'the output was already closed');
      let pcm = aligner.take(chunk);
      if (firstSlice > 0 && pcm.length > firstSlice) {
        const head = pcm.subarray(0, firstSlice);
        pcm = pcm.subarray(firstSlice);
        firstSlice = 0;
        const bytes = codec('encoder', () => encoder.encode(head));
        if (bytes.length > 0) await inner.write(bytes);
      }
      const bytes = codec('encoder', () => encoder.encode(pcm));
      if (bytes.length > 0) await inner.write(bytes);
    },
    async finish() {
      if (state === 'done') return;
      if (state !== 'open') throw new TtsError('io_error', 'the output was aborted');
      const encoder = await ready;
      if (state !== 'open') throw new TtsError('io_error', 'the output was aborted');
      const tail = codec('encoder', () => encoder.finish());
      if (tail.length > 0) await inner.write(tail);
      const patch = encoder.headerPatch();
      if (patch !== undefined && 'patch' in inner) await inner.patch(patch.offset, patch.bytes);
      encoder.free();
      await inner.finish();
      state = 'done';
    },
    abort,
  };
}
