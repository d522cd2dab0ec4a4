/**
 * Choosing how to play (docs/cli.md §2 "Playback"): the `speaker` package when it loads and
 * opens the card, else the first system player on PATH that starts (pw-play, pw-cat, paplay,
 * aplay, ffplay, sox's play), or exactly the one `--player NAME` names. Only when none works
 * does playback fail (exit 7), with commands that fix it on this system.
 */
import type { AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';
import { SYSTEM_PLAYERS } from './players.js';
import type { AudioSink } from './sink.js';

/** Options of {@link openPlayback}. */
export interface PlaybackOptions {
  /** `auto` (default), `speaker`, or a system player's name (`--player`). */
  player?: string | undefined;
  /** Environment whose PATH is searched. */
  env: NodeJS.ProcessEnv;
  /** --verbose: names the backend chosen and why the others were not. */
  verbose?: ((line: string) => void) | undefined;
}

/** What one backend can do here, for `tts doctor` and for messages. */
export interface BackendReport {
  name: string;
  ok: boolean;
  /** A path, or why it cannot be used. */
  detail: string;
}

/**
 * Commands that give this system a way to play, one line: a system player's package, or what
 * builds `speaker` (`speakerHint`, from the speaker failure), or a file instead.
 */
export function playbackFixHint(speakerHint: string | undefined): string {
  const speaker = speakerHint === undefined ? '' : `; or build speaker: ${speakerHint}`;
  if (process.platform === 'darwin') return `install sox (brew install sox, gives \`play\`)${speaker}; or write a file: -o speech.wav`;
  if (process.platform === 'linux') return `install a player: apt-get install alsa-utils (gives aplay)${speaker}; or write a file: -o speech.wav`;
  return `install sox or ffmpeg (gives \`play\` or \`ffplay\`)${speaker}; or write a file: -o speech.wav`;
}

/**
 * Opens the sound card through the chosen backend for audio of `spec`.
 * @throws TtsError `no_playback_device` (exit 7): the named player is missing or cannot play;
 *   with `auto`, when neither speaker nor any system player works (the message says why for
 *   each, the hint how to fix it). Later failures while playing are `io_error` (exit 7).
 */
export async function openPlayback(spec: AudioSpec, options: PlaybackOptions): Promise<AudioSink> {
  const choice = options.player ?? 'auto';
  const verbose = options.verbose ?? ((): void => {});
  if (choice === 'speaker') {
    const sink = await openSpeaker(spec);
    verbose('playback: speaker (the speaker package, ALSA)');
    return sink;
  }
  const [{ findOnPath, openSystemPlayerSink }] = await Promise.all([import('./system-player.js')]);
  if (choice !== 'auto') {
    const player = SYSTEM_PLAYERS.find((p) => p.name === choice);
    if (player === undefined) throw new TtsError('usage', `--player ${choice} is not a player tts knows`, { hint: `use one of: speaker, ${SYSTEM_PLAYERS.map((p) => p.name).join(', ')}` });
    const path = findOnPath(player.name, options.env);
    if (path === undefined) {
      throw new TtsError('no_playback_device', `--player ${choice}: ${choice} is not on PATH`, { hint: `install ${player.from}, or choose another --player` });
    }
    const sink = await openSystemPlayerSink(spec, player, path);
    verbose(`playback: ${player.name} (${path})`);
    return sink;
  }
  const failures: string[] = [];
  let speakerHint: string | undefined;
  try {
    const sink = await openSpeaker(spec);
    verbose('playback: speaker (the speaker package, ALSA)');
    return sink;
  } catch (error) {
    if (!(error instanceof TtsError)) throw error;
    failures.push(`speaker: ${error.message.replace(/^cannot play audio: /, '')}`);
    // A device problem is not fixed by building speaker: then only its missing build is hinted.
    if (/speaker/.test(error.hint ?? '')) speakerHint = error.hint;
    verbose(`playback: speaker cannot be used: ${error.message}`);
  }
  for (const player of SYSTEM_PLAYERS) {
    const path = findOnPath(player.name, options.env);
    if (path === undefined) continue;
    try {
      const sink = await openSystemPlayerSink(spec, player, path);
      verbose(`playback: ${player.name} (${path})`);
      return sink;
    } catch (error) {
      if (!(error instanceof TtsError)) throw error;
      failures.push(error.message);
      verbose(`playback: ${error.message}`);
    }
  }
  const none = SYSTEM_PLAYERS.filter((p) => findOnPath(p.name, options.env) === undefined).map((p) => p.name);
  if (none.length === SYSTEM_PLAYERS.length) {
    failures.push(`no system player on PATH (${none.join(', ')})`);
    throw new TtsError('no_playback_device', `cannot play audio: ${failures.join('; ')}`, { hint: playbackFixHint(speakerHint) });
  }
  // Players are there but none could open a device: installing more would not help.
  throw new TtsError('no_playback_device', `cannot play audio: ${failures.join('; ')}`, {
    hint: 'no sound device is usable here (check the sound card, or PipeWire/PulseAudio); write a file instead (-o speech.wav) or pipe `tts stream` to a player',
  });
}

/**
 * What each backend can do here, without playing a sound: speaker is loaded (in a child
 * process, as for playback); each system player on PATH is started for 24 kHz mono and stopped
 * again once it has held the device open (so a player without a usable device shows as such).
 */
export async function playbackBackends(env: NodeJS.ProcessEnv): Promise<BackendReport[]> {
  const reports: BackendReport[] = [];
  try {
    const { loadSpeaker } = await import('./speaker-sink.js');
    await loadSpeaker();
    reports.push({ name: 'speaker', ok: true, detail: 'the speaker package loads and ALSA has a default device' });
  } catch (error) {
    const hint = error instanceof TtsError && /speaker/.test(error.hint ?? '') ? ` (to build it: ${error.hint})` : '';
    reports.push({ name: 'speaker', ok: false, detail: `${error instanceof Error ? error.message : String(error)}${hint}` });
  }
  const { findOnPath, openSystemPlayerSink } = await import('./system-player.js');
  for (const p of SYSTEM_PLAYERS) {
    const path = findOnPath(p.name, env);
    if (path === undefined) {
      reports.push({ name: p.name, ok: false, detail: `not on PATH (${p.from})` });
      continue;
    }
    try {
      const sink = await openSystemPlayerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, p, path);
      await sink.abort();
      reports.push({ name: p.name, ok: true, detail: `${path} starts and keeps the device open` });
    } catch (error) {
      reports.push({ name: p.name, ok: false, detail: `${path}: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return reports;
}

async function openSpeaker(spec: AudioSpec): Promise<AudioSink> {
  const { openSpeakerSink } = await import('./speaker-sink.js');
  return openSpeakerSink(spec);
}
