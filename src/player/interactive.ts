/**
 * When `tts say` plays interactively, and the wiring of its parts (docs/cli.md §12.2): the
 * {@link Player} between the run's audio and the sound card, its {@link PlayerDisplay} on
 * stderr, the keys from `/dev/tty`, and job control — Ctrl-Z suspends the run as in any terminal
 * program, `fg` and `bg` continue it.
 */
import type { AudioSink } from '../audio/sink.js';
import type { AudioSpec } from '../dsp/spec.js';
import type { PlayerAction } from './keys.js';
import { PlayerDisplay } from './display.js';
import { Player } from './player.js';
import { PlayerStopped } from './stopped.js';
import type { InteractiveMode } from './mode.js';
import type { KeyInput } from './terminal.js';

/**
 * How often (ms) a run continued by `bg` asks whether `fg` brought it to the foreground: the
 * player is back at most this long after `fg` (docs/cli.md §12.2). Each asking is one read of
 * /proc/self/stat on Linux, one `ps` elsewhere (mode.ts inBackground).
 */
export const FOREGROUND_POLL_MS = 100;

/** The interactive parts of one run. */
export interface InteractiveSession {
  /** Aborted with a {@link PlayerStopped} when `q` is pressed: combine it with the run's signal. */
  stopped: AbortSignal;
  /** Wraps the playback sink (deliverSpeech's `player` option); the keys are read from then on. */
  wrap(sink: AudioSink, spec: AudioSpec): Player;
  /**
   * Reads the keys now, before the player exists: while the run waits before its first request
   * (for the writer of a `-f` FIFO, the reader of a `--chapters` FIFO), so that `q` ends that wait as it ends a run (its
   * {@link stopped} aborts: exit 0), Ctrl-C as always, Ctrl-Z suspends. A no-op once the keys
   * are read (or were, and a suspension closed them), once closed, and without keys.
   */
  listen(): void;
  /** Gives the terminal back and clears the line; idempotent. */
  close(): void;
}

/**
 * Starts the interactive parts: the keys are opened once the player exists (the first audio is
 * on its way), or earlier when the run waits before its first request
 * ({@link InteractiveSession.listen}), and closed by {@link InteractiveSession.close} — and by
 * signal-exit on any way out (terminal.ts).
 *
 * Ctrl-Z (a byte in raw mode, so the terminal sends no SIGTSTP) and a SIGTSTP from elsewhere
 * suspend the run as less, mpv or vim do: the player stops writing to the sink once the slice
 * in flight was handed over ({@link Player.hold}), the terminal gets its mode back and the line
 * is cleared, and SIGTSTP goes to the process group — what the terminal's Ctrl-Z does, so a
 * system player (aplay) stops with us — with its default action (stop). Continued by `fg`, the
 * keys are opened again (raw mode), the line is redrawn and playing goes on where it stopped (a
 * pause the user made stays). Continued by `bg`, the run is a background job of the terminal,
 * and as for one started with `&` (mode.ts) there is no player: no raw mode (the kernel would
 * stop us with SIGTTOU), no keys (SIGTTIN), no line — the audio plays on, a pause made before
 * Ctrl-Z lifted (no key could lift it). A later `fg` brings the player back as after a
 * suspension: bash and zsh send no SIGCONT to a job that is running already, and nothing else
 * tells a process that its group became the terminal's foreground one, so while a background
 * job the run asks every {@link FOREGROUND_POLL_MS} ms. When the stop is discarded (an orphaned
 * process group, POSIX kill()), the run goes on as before.
 * @param stderr where the display draws.
 * @param openKeys terminal.ts openKeys (injected so in-process tests feed keys themselves).
 * @param background whether the process is now in a background job of its terminal (mode.ts
 *   inBackground), asked each time the run is continued after a suspension, and every
 *   {@link FOREGROUND_POLL_MS} ms while it is a background job after `bg`.
 */
export function startInteractive(
  mode: InteractiveMode,
  stderr: NodeJS.WritableStream & { columns?: number },
  env: NodeJS.ProcessEnv,
  openKeys: (onAction: (action: PlayerAction) => void) => KeyInput | undefined,
  background: () => boolean,
): InteractiveSession {
  const stop = new AbortController();
  const display = new PlayerDisplay(stderr, { mode: mode.display, columns: () => stderr.columns ?? 80 });
  let keys: KeyInput | undefined;
  let player: Player | undefined;
  let crashArmed = env['TTS_TEST_PLAYER_CRASH'] === '1';
  /** False while suspended and in a background job: nothing is drawn then. */
  let foreground = true;
  let suspending = false;
  let closed = false;
  /** Whether the keys were opened and SIGTSTP is caught ({@link listen}): from then on, until closed. */
  let listening = false;
  /** While a background job after `bg`: the timer asking whether `fg` brought it back. */
  let watch: NodeJS.Timeout | undefined;
  const unwatch = (): void => {
    clearInterval(watch);
    watch = undefined;
  };
  /** In the foreground again (`fg`): raw mode and keys, and the line redrawn. */
  const takeUp = (): void => {
    foreground = true;
    if (mode.keys) keys = openKeys(onAction);
    if (player !== undefined && player.state.sentence >= 0) display.show(player.state);
  };
  /** Continued as a background job (`bg`): no player until `fg` brings the run back (see above). */
  const watchForeground = (): void => {
    watch = setInterval(() => {
      if (closed || suspending || background()) return;
      unwatch();
      takeUp();
    }, FOREGROUND_POLL_MS);
    // Not a reason to keep the process alive: the run ends when its audio was played.
    watch.unref();
  };

  const onAction = (action: PlayerAction): void => {
    // Raw mode turns Ctrl-C into a byte: raise the signal it would have been (exit 130, docs/cli.md §3).
    if (action === 'interrupt') return void process.kill(process.pid, 'SIGINT');
    if (action === 'suspend') return void suspend();
    player?.act(action);
    if (action === 'quit') stop.abort(new PlayerStopped());
  };
  const onStopSignal = (): void => void suspend();
  /** Raw mode and the keys, and SIGTSTP caught (so that a suspension gives the terminal its mode back), once. */
  const listen = (): void => {
    if (listening || closed) return;
    listening = true;
    if (mode.keys) keys = openKeys(onAction);
    process.on('SIGTSTP', onStopSignal);
  };

  /** Suspends the process (see above) and takes up again once it is continued. */
  const suspend = async (): Promise<void> => {
    // Before the player exists (listen), there is nothing to hold: the rest is the same.
    if (suspending || closed || !listening) return;
    suspending = true;
    // A background job after `bg` stopped again (`kill -TSTP %1`): asked again once continued.
    unwatch();
    // With no listener, SIGTSTP takes its default action again: stopping the process.
    process.off('SIGTSTP', onStopSignal);
    try {
      await player?.hold();
      if (closed) return;
      keys?.close();
      keys = undefined;
      foreground = false;
      display.stop();
      try {
        process.kill(0, 'SIGTSTP');
      } catch {
        process.kill(process.pid, 'SIGTSTP');
      }
      // kill() returns once the process was continued (the stop takes the sending thread first).
      if (closed) return;
      if (!background()) takeUp();
      else {
        // `bg`: the audio plays on to the end, as in a job started with `&`; no key could lift a pause.
        if (player?.state.paused === true) player.act('pause');
        watchForeground();
      }
    } finally {
      player?.release();
      suspending = false;
      if (!closed) process.on('SIGTSTP', onStopSignal);
    }
  };

  return {
    stopped: stop.signal,
    wrap: (sink, spec) => {
      player = new Player(sink, spec, {
        onState: (state) => {
          if (foreground) display.show(state);
          if (crashArmed) {
            // Test hook (test/e2e/player-tmux.test.ts): an uncaught exception while the terminal is raw.
            crashArmed = false;
            setImmediate(() => {
              throw new Error('TTS_TEST_PLAYER_CRASH: the player crashed on purpose');
            });
          }
        },
      });
      listen();
      return player;
    },
    listen,
    close: () => {
      closed = true;
      unwatch();
      process.off('SIGTSTP', onStopSignal);
      keys?.close();
      keys = undefined;
      display.stop();
    },
  };
}
