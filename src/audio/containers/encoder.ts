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
 * `finish` flushes the encoder, writes its last bytes, patches the header when `inner` can
 * (`PatchableSink`), then finishes `inner`. `abort` frees the encoder and aborts `inner` (an
 * atomic file is then removed, so no half-written file replaces a good one).
 * @throws from write/finish: what `inner` throws (io_error, a closed pipe), or TtsError
 *   `internal` (exit 1) when the codec fails, after which the output is aborted.
 */
export function encodedSink(spec: AudioSpec, encoder: AudioEncoder, inner: AudioSink | PatchableSink): AudioSink {
  const aligner = new FrameAligner(spec);
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
    encoder.free();
    await inner.abort();
  };
  return {
    async write(chunk) {
      if (state !== 'open') throw new TtsError('io_error', 'the output was already closed');
      const bytes = codec('encoder', () => encoder.encode(aligner.take(chunk)));
      if (bytes.length > 0) await inner.write(bytes);
    },
    async finish() {
      if (state === 'done') return;
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
