/**
 * Where the audio goes (DESIGN.md §1, §2): the sound card, a file (WAV or raw by its name, or
 * forced by --wav/--raw), stdout, or a file and the card together (--play).
 */
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
}

/** The flags that decide the destinations. */
export interface OutputFlags {
  output?: string | undefined;
  wav?: boolean | undefined;
  raw?: boolean | undefined;
  play?: boolean | undefined;
}

/**
 * Decides the destinations.
 * @param stdoutIsTerminal whether stdout is a TTY: `stream` refuses to write audio to one.
 * @throws TtsError `usage` (exit 2) when audio would go to a terminal.
 */
export function planOutput(command: CommandName, flags: OutputFlags, stdoutIsTerminal: boolean): OutputPlan {
  const forced = flags.wav === true ? 'wav' : flags.raw === true ? 'raw' : undefined;
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
  return { file, stdout, play };
}

/** An `aplay` command that plays raw audio of this spec (DESIGN.md §2 raw-output notice). */
export function aplayCommand(format: 'pcm16' | 'float32' | 'mulaw', sampleRate: number, channels: number): string {
  const f = format === 'pcm16' ? 'S16_LE' : format === 'float32' ? 'FLOAT_LE' : 'MU_LAW';
  return `aplay -f ${f} -r ${sampleRate} -c ${channels}`;
}
