/**
 * The playback backends `tts` knows (docs/cli.md §2 "Playback"): the `speaker` package, then
 * system players that read raw signed 16-bit little-endian PCM on stdin. No imports, so the
 * flag definitions can list the names without loading any audio code.
 */

/** A system player: its program name and the arguments that make it play s16le PCM from stdin. */
export interface PlayerCommand {
  name: string;
  /** Arguments for audio at `rate` Hz with `channels` channels, read from stdin. */
  args(rate: number, channels: number): string[];
  /** Where it comes from (a Debian package), for messages. */
  from: string;
  /** Stderr that means it failed even though it exited 0. */
  failedWhen?: RegExp;
}

/**
 * The system players, in the order `--player auto` tries them. PipeWire's and PulseAudio's own
 * clients come first (they share the card with other programs), then ALSA's aplay, then sox's
 * play and ffplay, which are also the ones that work on macOS (afplay cannot read stdin).
 */
export const SYSTEM_PLAYERS: readonly PlayerCommand[] = [
  { name: 'pw-play', from: 'pipewire-bin', args: (r, c) => ['--raw', '--format', 's16', '--rate', String(r), '--channels', String(c), '-'] },
  { name: 'pw-cat', from: 'pipewire-bin', args: (r, c) => ['--playback', '--raw', '--format', 's16', '--rate', String(r), '--channels', String(c), '-'] },
  { name: 'paplay', from: 'pulseaudio-utils', args: (r, c) => ['--raw', '--format=s16le', `--rate=${r}`, `--channels=${c}`] },
  { name: 'aplay', from: 'alsa-utils', args: (r, c) => ['-q', '-t', 'raw', '-f', 'S16_LE', '-r', String(r), '-c', String(c), '-'] },
  { name: 'play', from: 'sox', args: (r, c) => ['-q', '-t', 'raw', '-e', 'signed-integer', '-b', '16', '-L', '-r', String(r), '-c', String(c), '-'] },
  // ffplay exits 0 even when it could not open the device: its stderr tells (failedWhen).
  {
    name: 'ffplay',
    from: 'ffmpeg',
    args: (r, c) => ['-nodisp', '-autoexit', '-loglevel', 'error', '-probesize', '32', '-analyzeduration', '0', '-f', 's16le', '-ar', String(r), '-ch_layout', c === 1 ? 'mono' : c === 2 ? 'stereo' : `${c}c`, '-i', '-'],
    failedWhen: /audio open failed|Failed to open|Could not open/i,
  },
];

/** Values of `--player`: `auto` (the default), `speaker`, or a system player's name. */
export const PLAYER_NAMES: readonly string[] = ['auto', 'speaker', ...SYSTEM_PLAYERS.map((p) => p.name)];
