/**
 * Why playback cannot work here, and the one fix for the case at hand (docs/cli.md §2
 * "Playback", §1 `tts doctor`): is `speaker` missing, installed but not built, or built with no
 * sound device behind it; does ALSA see a card at all; are the ALSA headers there to build it.
 * Facts are read from the file system (never by loading speaker here: that is
 * speaker-sink.ts's child-process probe), so `tts doctor` and the playback error agree.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TtsError } from '../errors.js';

/** tts's own folder (dist/src/audio → the package root): npm must run there to build `speaker`. */
export const PACKAGE_DIR = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '');

/** The header speaker's build needs on Linux (Debian's libasound2-dev, Fedora's alsa-lib-devel). */
const ALSA_HEADER = '/usr/include/alsa/asoundlib.h';

/**
 * Where a backend stands: `ok`; `missing` (not installed, not on PATH); `unbuilt` (speaker's
 * folder is there but its native binding is not, or does not load); `no-device` (it started and
 * could not open a sound device).
 */
export type BackendState = 'ok' | 'missing' | 'unbuilt' | 'no-device';

/** What one backend can do here, for `tts doctor`, --verbose and the playback error. */
export interface BackendReport {
  /** `speaker` or a system player's name. */
  name: string;
  ok: boolean;
  state: BackendState;
  /** A path, or why it cannot be used (one line, for `tts doctor` and --verbose). */
  detail: string;
}

/**
 * How the `speaker` package stands, without loading it: `absent` (npm left it out — a failed
 * optional build, or `--omit=optional`), `unbuilt` (its folder has no `build/…/binding.node`;
 * `buildFailed` when node-gyp left a `build/` folder without it, i.e. the build ran and failed),
 * or `built`.
 * @param resolve finds `speaker/package.json` (tests pass their own); throws when absent.
 */
export function speakerBuild(resolve: (id: string) => string = createRequire(import.meta.url).resolve): { state: 'absent' | 'unbuilt' | 'built'; dir?: string; buildFailed?: boolean } {
  let dir: string;
  try {
    dir = dirname(resolve('speaker/package.json'));
  } catch {
    return { state: 'absent' };
  }
  // node-bindings (what speaker loads through) looks in build/Release first, then build/Debug.
  if (['Release', 'Debug'].some((d) => existsSync(join(dir, 'build', d, 'binding.node')))) return { state: 'built', dir };
  return { state: 'unbuilt', dir, buildFailed: existsSync(join(dir, 'build')) };
}

/** True when the ALSA headers are installed (Linux); undefined elsewhere, where speaker needs none. */
export function alsaHeadersInstalled(exists: (path: string) => boolean = existsSync): boolean | undefined {
  return process.platform === 'linux' ? exists(ALSA_HEADER) : undefined;
}

/**
 * Sound cards ALSA knows (Linux, `/proc/asound/cards`): 0 when the file is missing (no ALSA
 * driver) or says `--- no soundcards ---`; undefined off Linux or when it cannot be read.
 * A user's ~/.asoundrc may still route the default device elsewhere (PipeWire, a file): 0 cards
 * names the cause only once a backend failed to open the device.
 */
export function alsaCards(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return read('/proc/asound/cards').split('\n').filter((l) => /^\s*\d+\s+\[/.test(l)).length;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 0 : undefined;
  }
}

/**
 * The command that builds `speaker` in tts's folder, as tried with npm 11 (package.json
 * `allowScripts` lets its install script run): when npm left it out, `npm install
 * --include=optional` adds it back and builds it; when its folder is there, `npm install speaker`
 * only says "up to date", and `npm rebuild speaker` is what builds it. `--foreground-scripts`
 * shows the compiler's output instead of hiding a failure. Prefixed by the ALSA headers' package
 * when they are missing.
 */
export function speakerFix(state: 'absent' | 'unbuilt' | 'built', headers: boolean | undefined = alsaHeadersInstalled()): string {
  const npm = state === 'absent' ? 'npm install --include=optional --foreground-scripts' : 'npm rebuild speaker --foreground-scripts';
  const first = headers === false ? 'apt-get install libasound2-dev (Fedora: dnf install alsa-lib-devel), then: ' : '';
  return `${first}cd ${PACKAGE_DIR} && ${npm}`;
}

/**
 * speaker's line in `tts doctor`: not installed, not built (and why: the build never ran, or ran
 * and failed; the ALSA headers missing), built but not loading (the load error), or built with
 * no sound device (ALSA's complaint).
 * @param message the error loadSpeaker() threw.
 */
export function speakerDetail(build: ReturnType<typeof speakerBuild>, state: BackendState, message: string): string {
  const why = message.replace(/^cannot play audio: /, '');
  const headers = alsaHeadersInstalled() === false ? '; the ALSA headers are missing (libasound2-dev)' : '';
  if (state === 'missing' || build.state === 'absent') return `not installed: npm left it out (its build failed, or optional dependencies were omitted)${headers}`;
  if (build.state === 'unbuilt') {
    return `not built: ${build.buildFailed === true ? 'its build ran and failed (build/ has no binding.node)' : 'its build never ran (no build/ folder; were install scripts allowed?)'}${headers}`;
  }
  if (state === 'unbuilt') return `built but does not load: ${why}`;
  return `built, but no sound device: ${why}`;
}

/** The state of a backend from the error it failed with (speaker-sink.ts, system-player.ts). */
export function failedState(name: string, message: string): BackendState {
  if (name !== 'speaker') return 'no-device';
  if (/not installed/.test(message)) return 'missing';
  if (/failed to load|not built/.test(message)) return 'unbuilt';
  return 'no-device';
}

/**
 * The cause and the fix of "nothing can play", each one short line, from what each backend did:
 * - one that reached the device and failed, with no ALSA card: "no sound device (ALSA has no
 *   sound card)" — installing players or building speaker would not help, so neither is said;
 * - one that reached the device, with cards (or off Linux): "no player could open the sound device";
 * - none installed: "no way to play is installed", fixed by a player's package or speaker's build.
 * @param cards {@link alsaCards}.
 */
export function playbackDiagnosis(reports: readonly BackendReport[], cards: number | undefined): { cause: string; fix: string } {
  const file = 'write a file instead (-o speech.wav) or pipe `tts stream` to a player';
  const reached = reports.filter((r) => r.state === 'no-device').map((r) => r.name);
  if (reached.length > 0 && cards === 0) {
    return { cause: 'no sound device (ALSA has no sound card)', fix: file };
  }
  if (reached.length > 0) {
    return {
      cause: `no player could open the sound device (tried ${reached.join(', ')})`,
      fix: `check the sound card or PipeWire/PulseAudio; or ${file}`,
    };
  }
  const speaker = reports.find((r) => r.name === 'speaker');
  const build = speaker?.state === 'unbuilt' ? speakerFix('unbuilt') : speaker?.state === 'missing' ? speakerFix('absent') : undefined;
  const unbuiltWhy = speaker?.state === 'unbuilt' ? 'speaker is not built' : 'speaker is not installed';
  return { cause: `nothing to play with (${unbuiltWhy}; no system player on PATH)`, fix: playbackFixHint(build) };
}

/**
 * Commands that give this system a way to play, one line: a system player's package, or what
 * builds `speaker` (`speakerHint`), or a file instead.
 */
export function playbackFixHint(speakerHint: string | undefined): string {
  const speaker = speakerHint === undefined ? '' : `; or build speaker: ${speakerHint}`;
  if (process.platform === 'darwin') return `install sox (brew install sox, gives \`play\`)${speaker}; or write a file: -o speech.wav`;
  if (process.platform === 'linux') return `install a player: apt-get install alsa-utils (gives aplay)${speaker}; or write a file: -o speech.wav`;
  return `install sox or ffmpeg (gives \`play\` or \`ffplay\`)${speaker}; or write a file: -o speech.wav`;
}

/** The error of "nothing can play" (exit 7): the cause on the first line, the fix as its hint. */
export function playbackError(reports: readonly BackendReport[], cards: number | undefined = alsaCards()): TtsError {
  const { cause, fix } = playbackDiagnosis(reports, cards);
  const details = reports.some((r) => r.state === 'no-device') ? ' (--verbose or `tts doctor` shows what each player said)' : '';
  return new TtsError('no_playback_device', `cannot play audio: ${cause}`, { hint: `${fix}${details}` });
}
