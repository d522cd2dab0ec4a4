/**
 * Opening the outputs a plan names (docs/cli.md §2): the atomic file, stdout, the sound card, a
 * FIFO or a device, each with its container's encoder, behind one sink; the plan itself is made
 * in output-plan.ts, and checked against the input in output-checks.ts.
 */
import type { AudioSink } from '../audio/sink.js';
import type { FileSink } from '../audio/file-sink.js';
import { bitrateFor, isEncoded, type Container } from '../audio/containers/registry.js';
import type { AudioSpec } from '../dsp/spec.js';
import type { OutputPlan } from './output-plan.js';

/** The destinations of a plan, opened. */
export interface OpenOutputs {
  /** Where every chunk goes (a tee when there are several destinations). */
  sink: AudioSink;
  /** The atomic file, when the plan has one. */
  file: FileSink | undefined;
  /** The file when it is the only destination: then a broken piece can be cut back and redone. */
  fileOnly: FileSink | undefined;
  /**
   * Why playback failed, when it did beside a file or stdout (`--play -o copy.wav`): then the
   * other destinations went on without it and the run must still fail (exit 7) once they are
   * written (docs/cli.md §2). Undefined while playback works or when there is none.
   */
  playbackFailure: () => unknown;
}

/**
 * Opens every destination of `plan` for audio of `spec`. The sound card is opened first, so a
 * missing `speaker` or device fails (exit 7) before any request is made.
 * @param stdout where `-o -` / `stream` write.
 * @param signal aborts waiting for a FIFO's reader.
 * @param playback the environment whose PATH holds the system players, and --verbose (names the backend).
 * @throws TtsError `no_playback_device`, `io_error` (exit 7); `usage` (exit 2) for `-o` naming a
 *   block device, a terminal (`-o /dev/tty`) or a socket no descriptor of this run leads to
 *   (audio/special-files.ts `openInPlaceStream`); `signal.reason` once aborted; nothing stays
 *   open on failure.
 */
export async function openOutputs(
  plan: OutputPlan,
  spec: AudioSpec,
  stdout: NodeJS.WritableStream,
  signal: AbortSignal,
  playback: { env?: NodeJS.ProcessEnv | undefined; verbose?: ((line: string) => void) | undefined } = {},
): Promise<OpenOutputs> {
  const sinks: AudioSink[] = [];
  let file: FileSink | undefined;
  let encodedFile = false;
  let playbackFailure: unknown;
  // With a file or stdout beside it, playback that fails loses nothing they hold.
  const alongside = plan.file !== undefined || plan.stdout !== undefined;
  try {
    if (plan.play) {
      // speaker, else a system player on PATH (docs/cli.md §2 "Playback").
      const { openPlayback } = await import('../audio/playback.js');
      try {
        const player = await openPlayback(spec, { player: plan.player, env: playback.env ?? process.env, verbose: playback.verbose });
        sinks.push(alongside ? tolerantSink(player, (error) => (playbackFailure ??= error)) : player);
      } catch (error) {
        if (!alongside) throw error;
        playbackFailure = error;
      }
    }
    const { inPlaceKind, openInPlaceStream, isStandardOutputPath } = await import('../audio/special-files.js');
    const special = plan.file === undefined ? undefined : await inPlaceKind(plan.file.path);
    if (plan.file !== undefined && special === undefined && (await isStandardOutputPath(plan.file.path))) {
      // The regular file standard output goes to (`-o /dev/stdout >>log`, a shell group's
      // `{ …; } > out.wav`): written through standard output, as `-o -` writes it (a WAV header's
      // sizes set at the end where it can be), never renamed over — what the file held before and
      // what is written after the run stay.
      const { container } = plan.file;
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      const opened = await openEncoded(container, spec, plan.bitrate, async (bytes) => createStdoutSink(spec, bytes, stdout));
      sinks.push(opened.sink);
    } else if (plan.file !== undefined && special !== undefined) {
      // A FIFO, socket or device (`-o /dev/null`, `-o pipe`, `-o /dev/stdout` when that is a
      // socket) is written in place, like stdout: renaming a temporary file over it would replace
      // the node itself. Opened now, before the first request (a FIFO waits for its reader,
      // abortably); a block device (a disk) is refused (exit 2), as for the side outputs, and so
      // is a terminal, as on standard output (its audio bytes would be taken for control sequences).
      const { container, path } = plan.file;
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      const opened = await openEncoded(container, spec, plan.bitrate, async (bytes) => createStdoutSink(spec, bytes, await openInPlaceStream(path, special, '-o', { signal, noTerminal: true })));
      sinks.push(opened.sink);
    } else if (plan.file !== undefined) {
      const { container, path } = plan.file;
      const { openFileSink } = await import('../audio/file-sink.js');
      const opened = await openEncoded(container, spec, plan.bitrate, (bytes) => openFileSink(path, spec, bytes));
      file = opened.inner;
      sinks.push(opened.sink);
      // An encoded stream cannot be cut back to a piece's start and go on: no rewind for it.
      if (opened.encoded) encodedFile = true;
    }
    if (plan.stdout !== undefined) {
      const { container } = plan.stdout;
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      const opened = await openEncoded(container, spec, plan.bitrate, async (bytes) => createStdoutSink(spec, bytes, stdout));
      sinks.push(opened.sink);
    }
  } catch (error) {
    await Promise.all(sinks.map((s) => s.abort().catch(() => {})));
    throw error;
  }
  const failure = (): unknown => playbackFailure;
  if (sinks.length === 1) return { sink: sinks[0]!, file, fileOnly: encodedFile ? undefined : file, playbackFailure: failure };
  const { teeSink } = await import('../audio/sink.js');
  return { sink: teeSink(sinks), file, fileOnly: undefined, playbackFailure: failure };
}

/**
 * A playback sink that never fails the destinations beside it: its first failure (the player
 * died, the device went away) is handed to `failed`, the player is stopped, and later writes are
 * dropped — the file or stdout is still written whole.
 */
function tolerantSink(inner: AudioSink, failed: (error: unknown) => void): AudioSink {
  let broken = false;
  const guard = async (op: () => Promise<void>): Promise<void> => {
    if (broken) return;
    try {
      await op();
    } catch (error) {
      broken = true;
      failed(error);
      await inner.abort().catch(() => {});
    }
  };
  return {
    write: (chunk) => guard(() => inner.write(chunk)),
    finish: () => guard(() => inner.finish()),
    abort: () => (broken ? Promise.resolve() : inner.abort()),
  };
}

/** The byte-level container of an unencoded output (the WAV header or nothing). */
function byteContainer(container: Container): 'wav' | 'raw' {
  return container === 'wav' ? 'wav' : 'raw';
}

/**
 * Opens an output's byte sink with `open` — given the byte-level container to write: the WAV
 * header, or raw bytes (also for an encoded container, whose encoder makes the bytes) — and, for
 * an encoded container (FLAC, MP3, Opus), wraps it into a PCM sink that encodes
 * (containers/encoder.ts). The encoder starts loading before `open`, without being waited for,
 * so that compiling the codec overlaps the opening and the request (the sink's first write
 * waits); when `open` fails, the encoder is freed, once loaded, before the error is thrown (its
 * WebAssembly memory — the codec's, a libsamplerate converter's — is given back by nothing else).
 * @returns the byte sink (`inner`), the PCM sink to write (`sink`: `inner` itself when not
 *   encoded), and whether it encodes.
 * @throws TtsError `usage` for a bit rate the container refuses (checked again here); what `open` throws.
 */
async function openEncoded<S extends AudioSink>(
  container: Container,
  spec: AudioSpec,
  bitrate: number | undefined,
  open: (bytes: 'wav' | 'raw') => Promise<S>,
): Promise<{ inner: S; sink: AudioSink; encoded: boolean }> {
  if (!isEncoded(container)) {
    const inner = await open(byteContainer(container));
    return { inner, sink: inner, encoded: false };
  }
  const kbps = bitrateFor(container, spec, bitrate);
  const [{ openEncoder }, { encodedSink }] = await Promise.all([import('../audio/containers/registry.js'), import('../audio/containers/encoder.js')]);
  const encoder = openEncoder(container, spec, kbps);
  encoder.catch(() => undefined); // reported by the sink that uses it
  let inner: S;
  try {
    inner = await open('raw');
  } catch (error) {
    await encoder.then(
      (e) => e.free(),
      () => undefined,
    );
    throw error;
  }
  return { inner, sink: encodedSink(spec, encoder, inner), encoded: true };
}
