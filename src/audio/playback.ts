/**
 * Choosing how to play (docs/cli.md §2 "Playback"): the `speaker` package when it loads and
 * opens the card, else the first system player on PATH that starts (pw-play, pw-cat, paplay,
 * aplay, ffplay, sox's play), or exactly the one `--player NAME` names. Only when none works
 * does playback fail (exit 7), with commands that fix it on this system.
 */
import type { AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';
import { SYSTEM_PLAYERS } from './players.js';
import { alsaCards, failedState, playbackError, speakerBuild, speakerDetail, type BackendReport } from './playback-diagnosis.js';
import type { AudioSink } from './sink.js';

/** Options of {@link openPlayback}. */
export interface PlaybackOptions {
  /** `auto` (default), `speaker`, or a system player's name (`--player`). */
  player?: string | undefined;
  /** Environment whose PATH is searched. */
  env: NodeJS.ProcessEnv;
  /** --verbose: names the backend chosen and why the others were not. */
  verbose?: ((line: string) => void) | undefined;
  /** Opens speaker (default: the speaker package, probed in a child process); tests inject failures. */
  openSpeaker?: ((spec: AudioSpec) => Promise<AudioSink>) | undefined;
  /** ALSA's sound cards (default: alsaCards(), from /proc/asound/cards); tests inject a count. */
  cards?: (() => number | undefined) | undefined;
}

export type { BackendReport } from './playback-diagnosis.js';
export { playbackFixHint } from './playback-diagnosis.js';

/**
 * Opens the sound card through the chosen backend for audio of `spec`.
 * @throws TtsError `no_playback_device` (exit 7): the named player is missing or cannot play;
 *   with `auto`, when neither speaker nor any system player works: one short line naming the
 *   cause (playback-diagnosis.ts: no sound card, no player could open the device, nothing
 *   installed), the hint the fix for that case; each backend's own error goes to `verbose`.
 *   Later failures while playing are `io_error` (exit 7).
 */
export async function openPlayback(spec: AudioSpec, options: PlaybackOptions): Promise<AudioSink> {
  const choice = options.player ?? 'auto';
  const verbose = options.verbose ?? ((): void => {});
  const speaker = options.openSpeaker ?? openSpeaker;
  if (choice === 'speaker') {
    const sink = await speaker(spec);
    verbose('playback: speaker (the speaker package, ALSA)');
    return sink;
  }
  const [{ findOnPath, openSystemPlayerSink }] = await Promise.all([import('./system-player.js')]);
  /** Opens one system player: its sink, or its failure (said under --verbose). */
  const trySystemPlayer = async (player: (typeof SYSTEM_PLAYERS)[number], path: string): Promise<{ sink: AudioSink } | { failure: BackendReport }> => {
    try {
      const sink = await openSystemPlayerSink(spec, player, path);
      verbose(`playback: ${player.name} (${path})`);
      return { sink };
    } catch (error) {
      if (!(error instanceof TtsError)) throw error;
      verbose(`playback: ${error.message}`);
      return { failure: { name: player.name, ok: false, state: 'no-device', detail: error.message } };
    }
  };
  if (choice !== 'auto') {
    const player = SYSTEM_PLAYERS.find((p) => p.name === choice);
    if (player === undefined) throw new TtsError('usage', `--player ${choice} is not a player tts knows`, { hint: `use one of: speaker, ${SYSTEM_PLAYERS.map((p) => p.name).join(', ')}` });
    const path = findOnPath(player.name, options.env);
    if (path === undefined) {
      throw new TtsError('no_playback_device', `--player ${choice}: ${choice} is not on PATH`, { hint: `install ${player.from}, or choose another --player` });
    }
    const opened = await trySystemPlayer(player, path);
    if ('sink' in opened) return opened.sink;
    // The same short cause as with `auto`; the player's own words under --verbose.
    throw playbackError([opened.failure], (options.cards ?? alsaCards)());
  }
  // Each failure is kept for the one-line cause; the details go to --verbose (and `tts doctor`).
  const failures: BackendReport[] = [];
  try {
    const sink = await speaker(spec);
    verbose('playback: speaker (the speaker package, ALSA)');
    return sink;
  } catch (error) {
    if (!(error instanceof TtsError)) throw error;
    const detail = error.message.replace(/^cannot play audio: /, '');
    failures.push({ name: 'speaker', ok: false, state: failedState('speaker', error.message), detail });
    verbose(`playback: speaker cannot be used: ${detail}`);
  }
  for (const player of SYSTEM_PLAYERS) {
    const path = findOnPath(player.name, options.env);
    if (path === undefined) continue;
    const opened = await trySystemPlayer(player, path);
    if ('sink' in opened) return opened.sink;
    failures.push(opened.failure);
  }
  if (failures.length === 1) verbose(`playback: no system player on PATH (${SYSTEM_PLAYERS.map((p) => p.name).join(', ')})`);
  throw playbackError(failures, (options.cards ?? alsaCards)());
}

/**
 * What each backend can do here, without playing a sound: speaker is loaded (in a child
 * process, as for playback); each system player on PATH is started for 24 kHz mono and stopped
 * again once it has held the device open (so a player without a usable device shows as such).
 */
export async function playbackBackends(env: NodeJS.ProcessEnv): Promise<BackendReport[]> {
  const reports: BackendReport[] = [];
  const build = speakerBuild();
  try {
    const { loadSpeaker } = await import('./speaker-sink.js');
    await loadSpeaker();
    reports.push({ name: 'speaker', ok: true, state: 'ok', detail: 'built, loads, and ALSA has a default device' });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const state = failedState('speaker', message);
    reports.push({ name: 'speaker', ok: false, state, detail: speakerDetail(build, state, message) });
  }
  const { findOnPath, openSystemPlayerSink } = await import('./system-player.js');
  for (const p of SYSTEM_PLAYERS) {
    const path = findOnPath(p.name, env);
    if (path === undefined) {
      reports.push({ name: p.name, ok: false, state: 'missing', detail: `not on PATH (${p.from})` });
      continue;
    }
    try {
      const sink = await openSystemPlayerSink({ format: 'pcm16', sampleRate: 24000, channels: 1 }, p, path);
      await sink.abort();
      reports.push({ name: p.name, ok: true, state: 'ok', detail: `${path} starts and keeps the device open` });
    } catch (error) {
      reports.push({ name: p.name, ok: false, state: 'no-device', detail: `${path}: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return reports;
}

async function openSpeaker(spec: AudioSpec): Promise<AudioSink> {
  const { openSpeakerSink } = await import('./speaker-sink.js');
  return openSpeakerSink(spec);
}
