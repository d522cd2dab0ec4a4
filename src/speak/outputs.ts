/**
 * Where the audio goes (docs/cli.md §1, §2): the sound card, a file (its container — WAV, raw,
 * FLAC, MP3 or Ogg Opus — by its name's extension, or chosen by --container/--wav/--raw),
 * stdout, or a file and the card together (--play) — planned from the flags, then opened as
 * sinks (FIFOs and devices written in place, several joined by a tee; compressed containers
 * encode on the way, src/audio/containers).
 */
import { statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import type { AudioSink } from '../audio/sink.js';
import type { FileSink } from '../audio/file-sink.js';
import { CONTAINERS, assertContainerFits, bitrateFor, containerOfPath, extensionList, isEncoded, type Container } from '../audio/containers/registry.js';
import type { AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';
import { subtitleFormat } from './subtitles.js';

/** Which command is running: it sets the default destination. */
export type CommandName = 'say' | 'stream' | 'realtime';

/** The destinations of one run. */
export interface OutputPlan {
  /** A file to write atomically, with its container. */
  file: { path: string; container: Container } | undefined;
  /** Stdout, with its container (raw unless --container/--wav). */
  stdout: { container: Container } | undefined;
  /** Play on the sound card (PCM, whatever the container). */
  play: boolean;
  /** How to play (--player): `auto`, `speaker` or a system player (docs/cli.md §2). */
  player?: string | undefined;
  /** --bitrate in kbit/s for MP3/Opus; undefined = the container's speech default. */
  bitrate?: number | undefined;
}

/** The flags that decide the destinations. */
export interface OutputFlags {
  output?: string | undefined;
  wav?: boolean | undefined;
  raw?: boolean | undefined;
  /** --container: the file's or stdout's container, whatever the name. */
  container?: Container | undefined;
  /** --bitrate, kbit/s. */
  bitrate?: number | undefined;
  play?: boolean | undefined;
  player?: string | undefined;
}

/**
 * Decides the destinations and their containers (docs/cli.md §1, §2 "Containers").
 * @param stdoutIsTerminal whether stdout is a TTY: `stream` refuses to write audio to one.
 * @param spec the audio written; when given, the container and bit rate are checked against it.
 * @throws TtsError `usage` (exit 2) when audio would go to a terminal, `-o` ends with `/`, the
 *   file's extension is not one of the containers' (the message lists them), --container
 *   contradicts --wav/--raw, --container/--bitrate have no file or stdout to apply to, or the
 *   container cannot hold `spec` / takes no such bit rate.
 */
export function planOutput(command: CommandName, flags: OutputFlags, stdoutIsTerminal: boolean, spec?: AudioSpec): OutputPlan {
  const shorthand = flags.wav === true ? 'wav' : flags.raw === true ? 'raw' : undefined;
  if (flags.container !== undefined && shorthand !== undefined && flags.container !== shorthand) {
    throw new TtsError('usage', `--container ${flags.container} contradicts --${shorthand}`, { hint: 'give one of them' });
  }
  const forced = flags.container ?? shorthand;
  if (flags.output !== undefined && flags.output !== '-' && /[\\/]$/.test(flags.output)) {
    throw new TtsError('usage', `-o ${flags.output} names a folder, not a file`, { hint: `give a file name, e.g. -o ${flags.output}speech.wav` });
  }
  let file: OutputPlan['file'];
  let stdout: OutputPlan['stdout'];
  if (flags.output !== undefined && flags.output !== '-') {
    file = { path: flags.output, container: forced ?? containerOfName(flags.output) };
  } else if (flags.output === '-' || command === 'stream') {
    stdout = { container: forced ?? 'raw' };
  }
  const play = flags.play === true || (command !== 'stream' && flags.output === undefined);
  if (file === undefined && stdout === undefined && (flags.container !== undefined || flags.bitrate !== undefined)) {
    throw new TtsError('usage', `${flags.container !== undefined ? '--container' : '--bitrate'} applies to a file (-o) or stdout; playback takes PCM`, {
      hint: 'add -o FILE (e.g. -o speech.mp3), or drop the flag',
    });
  }
  if (stdout !== undefined && stdoutIsTerminal) {
    throw new TtsError('usage', 'refusing to write audio to a terminal', {
      hint: 'redirect stdout (tts stream "…" > out.raw), or use -o FILE, or `tts say` to play it',
    });
  }
  const container = file?.container ?? stdout?.container;
  if (spec !== undefined && container !== undefined) {
    assertContainerFits(container, spec);
    bitrateFor(container, spec, flags.bitrate);
  }
  const plan: OutputPlan = { file, stdout, play };
  if (flags.player !== undefined) plan.player = flags.player;
  if (flags.bitrate !== undefined) plan.bitrate = flags.bitrate;
  return plan;
}

/**
 * The container a file name gives (docs/cli.md §2): by its extension; a FIFO or device with
 * none of the extensions (`-o /dev/null`, `-o fifo`) gets raw, like stdout.
 * @throws TtsError `usage` (exit 2) listing the extensions, for any other name: never silent raw.
 */
function containerOfName(path: string): Container {
  const container = containerOfPath(path);
  if (container !== undefined) return container;
  try {
    const info = statSync(path);
    if (!info.isFile() && !info.isDirectory()) return 'raw';
  } catch {
    // Does not exist yet: a file to create, which needs a known extension.
  }
  throw new TtsError('usage', `-o ${path}: the name does not say which container to write`, {
    hint: `end the name with ${extensionList()}, or choose with --container ${CONTAINERS.join('|')}`,
  });
}

/** An `aplay` command that plays raw audio of this spec (docs/cli.md §2 raw-output notice). */
export function aplayCommand(format: 'pcm16' | 'float32' | 'mulaw', sampleRate: number, channels: number): string {
  const f = format === 'pcm16' ? 'S16_LE' : format === 'float32' ? 'FLOAT_LE' : 'MU_LAW';
  return `aplay -f ${f} -r ${sampleRate} -c ${channels}`;
}

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
 * @throws TtsError `no_playback_device`, `io_error` (exit 7); nothing stays open on failure.
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
    const special = plan.file === undefined ? undefined : await specialFile(plan.file.path);
    if (plan.file !== undefined && special !== undefined) {
      // A FIFO or device (`-o /dev/null`, `-o pipe`) is written in place, like stdout: renaming
      // a temporary file over it would replace the node itself.
      const { container } = plan.file;
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      const encoder = await encoderOf(container, spec, plan.bitrate);
      const inner = createStdoutSink(spec, encoder === undefined ? byteContainer(container) : 'raw', await openSpecialFile(plan.file.path, special, signal));
      sinks.push(encoder === undefined ? inner : encoder(inner));
    } else if (plan.file !== undefined) {
      const { container } = plan.file;
      const { openFileSink } = await import('../audio/file-sink.js');
      const encoder = await encoderOf(container, spec, plan.bitrate);
      file = await openFileSink(plan.file.path, spec, encoder === undefined ? byteContainer(container) : 'raw');
      sinks.push(encoder === undefined ? file : encoder(file));
      // An encoded stream cannot be cut back to a piece's start and go on: no rewind for it.
      if (encoder !== undefined) encodedFile = true;
    }
    if (plan.stdout !== undefined) {
      const { container } = plan.stdout;
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      const encoder = await encoderOf(container, spec, plan.bitrate);
      const inner = createStdoutSink(spec, encoder === undefined ? byteContainer(container) : 'raw', stdout);
      sinks.push(encoder === undefined ? inner : encoder(inner));
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
 * For an encoded container: starts loading its encoder — without waiting for it, so that
 * compiling the codec overlaps the request (the sink's first write waits) — and returns what
 * wraps a byte sink into a PCM sink that encodes (containers/encoder.ts). Undefined for WAV and raw.
 * @throws TtsError `usage` for a bit rate the container refuses (checked again here).
 */
async function encoderOf(container: Container, spec: AudioSpec, bitrate: number | undefined): Promise<((inner: AudioSink) => AudioSink) | undefined> {
  if (!isEncoded(container)) return undefined;
  const kbps = bitrateFor(container, spec, bitrate);
  const [{ openEncoder }, { encodedSink }] = await Promise.all([import('../audio/containers/registry.js'), import('../audio/containers/encoder.js')]);
  const encoder = openEncoder(container, spec, kbps);
  encoder.catch(() => undefined); // reported by the sink that uses it (none if opening failed)
  return (inner) => encodedSink(spec, encoder, inner);
}

/** What is at `path` when it exists and is neither a regular file nor a folder (a FIFO, a device). */
async function specialFile(path: string): Promise<'fifo' | 'device' | undefined> {
  const { stat } = await import('node:fs/promises');
  try {
    const info = await stat(path);
    if (info.isFIFO()) return 'fifo';
    return info.isFile() || info.isDirectory() ? undefined : 'device';
  } catch {
    return undefined;
  }
}

/**
 * Opens a FIFO or device for writing. A FIFO is opened non-blocking, waiting (abortably) for a
 * reader: a plain open would block a libuv thread until one came, and with it the process's exit
 * even after Ctrl-C. Its descriptor becomes a libuv pipe stream, as stdout's would.
 * @throws TtsError `io_error` (exit 7) when it cannot be opened.
 */
async function openSpecialFile(path: string, kind: 'fifo' | 'device', signal: AbortSignal): Promise<NodeJS.WritableStream> {
  const [{ constants, createWriteStream, openSync }, { Socket }, { sleep }] = await Promise.all([import('node:fs'), import('node:net'), import('../client/retry.js')]);
  if (kind === 'device') return createWriteStream(path, { flags: 'w' });
  for (;;) {
    try {
      const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
      return new Socket({ fd, readable: false, writable: true });
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENXIO') {
        throw new TtsError('io_error', `cannot write to ${path} (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
      }
      // ENXIO: nobody reads the FIFO yet.
      await sleep(0.05, signal);
    }
  }
}

/**
 * Refuses to write the audio (or the subtitles) over the text it is made from: `-o` or
 * `--subtitles` naming the `-f` file (or the file stdin was redirected from), compared by device
 * and inode, so another name for the same file (a link, `./x`) is caught too.
 * @param output the path written; nothing to check when it does not exist yet.
 * @param input the `-f` path, `-` for stdin (checked through its descriptor), or undefined when
 *   the text comes from the command line.
 * @param flag the flag that named `output`, for the message: `-o` (default) or `--subtitles`.
 * @throws TtsError `usage` (exit 2) when they are the same file.
 */
export async function assertOutputIsNotInput(output: string, input: string | undefined, flag: '-o' | '--subtitles' = '-o'): Promise<void> {
  if (input === undefined) return;
  const { fstatSync } = await import('node:fs');
  const { stat } = await import('node:fs/promises');
  const out = await stat(output).catch(() => undefined);
  if (out === undefined || !out.isFile()) return;
  let inp: Stats | undefined;
  try {
    inp = input === '-' ? fstatSync(0) : await stat(input);
  } catch {
    return; // Unreadable input is reported when it is read.
  }
  if (inp.isFile() && inp.dev === out.dev && inp.ino === out.ino) {
    throw new TtsError('usage', `${flag} ${output} is the file the text is read from`, { hint: flag === '-o' ? 'write the audio to another file' : 'write the subtitles to another file' });
  }
}

/**
 * Refuses a `--subtitles` path that is not `.srt`/`.vtt`, that is the audio output, or that is
 * the file the text is read from (docs/cli.md §1).
 * @throws TtsError `usage` (exit 2).
 */
export async function checkSubtitlesPath(path: string, plan: OutputPlan, input: string | undefined): Promise<void> {
  subtitleFormat(path);
  if (plan.file !== undefined) {
    if (resolve(plan.file.path) === resolve(path)) throw new TtsError('usage', `--subtitles ${path} is the audio output (-o)`, { hint: 'give the subtitles a name of their own, e.g. speech.srt' });
  }
  await assertOutputIsNotInput(path, input, '--subtitles');
}
