/**
 * When `tts say` plays interactively, and the wiring of its parts (docs/cli.md §12.2): the
 * {@link Player} between the run's audio and the sound card, its {@link PlayerDisplay} on
 * stderr, and the keys from `/dev/tty`.
 */
import type { AudioSink } from '../audio/sink.js';
import type { AudioSpec } from '../dsp/spec.js';
import type { PlayerAction } from './keys.js';
import { PlayerDisplay } from './display.js';
import { Player } from './player.js';
import { PlayerStopped } from './stopped.js';
import type { InteractiveMode } from './mode.js';
import type { KeyInput } from './terminal.js';

/** The interactive parts of one run. */
export interface InteractiveSession {
  /** Aborted with a {@link PlayerStopped} when `q` is pressed: combine it with the run's signal. */
  stopped: AbortSignal;
  /** Wraps the playback sink (deliverSpeech's `player` option). */
  wrap(sink: AudioSink, spec: AudioSpec): Player;
  /** Gives the terminal back and clears the line; idempotent. */
  close(): void;
}

/**
 * Starts the interactive parts: the keys are opened once the player exists (the first audio is
 * on its way), and closed by {@link InteractiveSession.close} — and by signal-exit on any way
 * out (terminal.ts).
 * @param stderr where the display draws.
 * @param openKeys terminal.ts openKeys (injected so in-process tests feed keys themselves).
 */
export function startInteractive(
  mode: InteractiveMode,
  stderr: NodeJS.WritableStream & { columns?: number },
  env: NodeJS.ProcessEnv,
  openKeys: (onAction: (action: PlayerAction) => void) => KeyInput | undefined,
): InteractiveSession {
  const stop = new AbortController();
  const display = new PlayerDisplay(stderr, { mode: mode.display, columns: () => stderr.columns ?? 80 });
  let keys: KeyInput | undefined;
  let crashArmed = env['TTS_TEST_PLAYER_CRASH'] === '1';
  return {
    stopped: stop.signal,
    wrap: (sink, spec) => {
      const player = new Player(sink, spec, {
        onState: (state) => {
          display.show(state);
          if (crashArmed) {
            // Test hook (test/e2e/player-tmux.test.ts): an uncaught exception while the terminal is raw.
            crashArmed = false;
            setImmediate(() => {
              throw new Error('TTS_TEST_PLAYER_CRASH: the player crashed on purpose');
            });
          }
        },
      });
      if (mode.keys) {
        keys = openKeys((action) => {
          // Raw mode turns Ctrl-C into a byte: raise the signal it would have been (exit 130, docs/cli.md §3).
          if (action === 'interrupt') return void process.kill(process.pid, 'SIGINT');
          player.act(action);
          if (action === 'quit') stop.abort(new PlayerStopped());
        });
      }
      return player;
    },
    close: () => {
      keys?.close();
      keys = undefined;
      display.stop();
    },
  };
}
