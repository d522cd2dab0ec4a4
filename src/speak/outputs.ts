/**
 * Where the audio goes (docs/cli.md §1, §2): the sound card, a file (WAV or raw by its name, or
 * forced by --wav/--raw), stdout, or a file and the card together (--play) — planned from the
 * flags, then opened as sinks (FIFOs and devices written in place, several joined by a tee).
 */
import type { Stats } from 'node:fs';
import type { AudioSink } from '../audio/sink.js';
import type { FileSink } from '../audio/file-sink.js';
import type { AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';

/** Which command is running: it sets the default destination. */
export type CommandName = 'say' | 'stream' | 'realtime';

/** The destinations of one run. */
export interface OutputPlan {
  /** A file to write atomically, with its container. */
  file: { path: string; container: 'wav' | 'raw' } | undefined;
  /** Stdout, with its container (raw unless --wav). */
  stdout: { container: 'wav' | 'raw' } | undefined;
  /** Play on the sound card. */
  play: boolean;
  /** How to play (--player): `auto`, `speaker` or a system player (docs/cli.md §2). */
  player?: string | undefined;
}

/** The flags that decide the destinations. */
export interface OutputFlags {
  output?: string | undefined;
  wav?: boolean | undefined;
  raw?: boolean | undefined;
  play?: boolean | undefined;
  player?: string | undefined;
}

/**
 * Decides the destinations.
 * @param stdoutIsTerminal whether stdout is a TTY: `stream` refuses to write audio to one.
 * @throws TtsError `usage` (exit 2) when audio would go to a terminal, or `-o` ends with `/`.
 */
export function planOutput(command: CommandName, flags: OutputFlags, stdoutIsTerminal: boolean): OutputPlan {
  const forced = flags.wav === true ? 'wav' : flags.raw === true ? 'raw' : undefined;
  if (flags.output !== undefined && flags.output !== '-' && /[\\/]$/.test(flags.output)) {
    throw new TtsError('usage', `-o ${flags.output} names a folder, not a file`, { hint: `give a file name, e.g. -o ${flags.output}speech.wav` });
  }
  let file: OutputPlan['file'];
  let stdout: OutputPlan['stdout'];
  if (flags.output !== undefined && flags.output !== '-') {
    file = { path: flags.output, container: forced ?? (/\.wav$/i.test(flags.output) ? 'wav' : 'raw') };
  } else if (flags.output === '-' || command === 'stream') {
    stdout = { container: forced ?? 'raw' };
  }
  const play = flags.play === true || (command !== 'stream' && flags.output === undefined);
  if (stdout !== undefined && stdoutIsTerminal) {
    throw new TtsError('usage', 'refusing to write audio to a terminal', {
      hint: 'redirect stdout (tts stream "…" > out.raw), or use -o FILE, or `tts say` to play it',
    });
  }
  return flags.player === undefined ? { file, stdout, play } : { file, stdout, play, player: flags.player };
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
  try {
    if (plan.play) {
      // speaker, else a system player on PATH (docs/cli.md §2 "Playback").
      const { openPlayback } = await import('../audio/playback.js');
      sinks.push(await openPlayback(spec, { player: plan.player, env: playback.env ?? process.env, verbose: playback.verbose }));
    }
    const special = plan.file === undefined ? undefined : await specialFile(plan.file.path);
    if (plan.file !== undefined && special !== undefined) {
      // A FIFO or device (`-o /dev/null`, `-o pipe`) is written in place, like stdout: renaming
      // a temporary file over it would replace the node itself.
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      sinks.push(createStdoutSink(spec, plan.file.container, await openSpecialFile(plan.file.path, special, signal)));
    } else if (plan.file !== undefined) {
      const { openFileSink } = await import('../audio/file-sink.js');
      file = await openFileSink(plan.file.path, spec, plan.file.container);
      sinks.push(file);
    }
    if (plan.stdout !== undefined) {
      const { createStdoutSink } = await import('../audio/stdout-sink.js');
      sinks.push(createStdoutSink(spec, plan.stdout.container, stdout));
    }
  } catch (error) {
    await Promise.all(sinks.map((s) => s.abort().catch(() => {})));
    throw error;
  }
  if (sinks.length === 1) return { sink: sinks[0]!, file, fileOnly: file };
  const { teeSink } = await import('../audio/sink.js');
  return { sink: teeSink(sinks), file, fileOnly: undefined };
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
 * Refuses to write the audio over the text it is made from: `-o` naming the `-f` file (or the
 * file stdin was redirected from), compared by device and inode, so another name for the same
 * file (a link, `./x`) is caught too.
 * @param output the `-o` path; nothing to check when it does not exist yet.
 * @param input the `-f` path, `-` for stdin (checked through its descriptor), or undefined when
 *   the text comes from the command line.
 * @throws TtsError `usage` (exit 2) when they are the same file.
 */
export async function assertOutputIsNotInput(output: string, input: string | undefined): Promise<void> {
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
    throw new TtsError('usage', `-o ${output} is the file the text is read from`, { hint: 'write the audio to another file' });
  }
}
