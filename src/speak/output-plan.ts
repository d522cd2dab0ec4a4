/**
 * Where a run's audio goes (docs/cli.md §2): the plan of outputs from the flags and the command —
 * a file and its container, stdout, the sound card — decided before anything is opened.
 */
import { statSync } from 'node:fs';
import { CONTAINERS, assertContainerFits, bitrateFor, containerOfPath, extensionList, type Container } from '../audio/containers/registry.js';
import type { AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';

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
