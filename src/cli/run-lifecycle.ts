/**
 * The life of one command run, shared by `say`/`stream`/`realtime` (synthesis.ts) and `tts batch`
 * (batch-run.ts): stop signals abort the run and set the exit code (docs/cli.md §3: 130 for
 * SIGINT, 128 + the signal's number for the others), a second signal leaves at once, a failure is
 * reported once, whatever ended the run stops everything of it, and `--json` gets its summary
 * line (docs/cli.md §1, §9).
 */
import { constants } from 'node:os';
import { EXIT, TtsError } from '../errors.js';
import { jsonLine } from './escape.js';
import { reportError, type CommandIo, type Reporter } from './report.js';

/** Signals that stop a run cleanly: Ctrl-C, `kill`/`timeout`/systemd, a closed terminal. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Exit code after a signal (docs/cli.md §3): 128 + its number, so 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? EXIT.interrupted : 128 + constants.signals[signal];
}

/** What the body of a run gets from its lifecycle. */
export interface RunContext {
  /** Aborted by a stop signal (its reason a TtsError `interrupted`) or when the run ends. */
  signal: AbortSignal;
  /** Registers what to close once the run is over (after `signal` is aborted), e.g. the service. */
  atEnd(close: () => Promise<void>): void;
}

/** How one command ends beside its body. */
export interface RunEnding {
  /** Reports on stderr and to `--json`. */
  reporter: Reporter;
  io: CommandIo;
  /**
   * An error that is not a failure: its exit code, reported by nobody (e.g. 0 for a reader that
   * closed stdout); undefined for a real failure.
   */
  quietEnd?: (error: unknown) => number | undefined;
  /** Called after a failure was reported (not after a quiet end), e.g. to say where the run stopped. */
  afterFailure?: () => void;
  /** The `--json` line (docs/cli.md §1) for how the run ended; none when undefined or absent. */
  summary?: (ok: boolean, error: unknown) => object | undefined;
}

/**
 * Runs `body` within the lifecycle: the stop signals are handled while it runs (and only then).
 * @returns the body's exit code, or on failure the error's (docs/cli.md §3) — the signal's when a
 *   signal stopped the run; never throws.
 */
export async function runLifecycle(ending: RunEnding, body: (run: RunContext) => Promise<number>): Promise<number> {
  const controller = new AbortController();
  const closers: (() => Promise<void>)[] = [];
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted !== undefined) {
      // A second signal: leave now; process.exit takes the temporary files away (docs/cli.md §2;
      // temp-files.ts hooks the exit with signal-exit).
      process.exit(signalExitCode(signal));
    }
    interrupted = signal;
    controller.abort(new TtsError('interrupted', signal === 'SIGINT' ? 'interrupted' : `stopped by ${signal}`));
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  let code: number;
  let failure: { error: unknown } | undefined;
  try {
    code = await body({ signal: controller.signal, atEnd: (close) => closers.push(close) });
  } catch (error) {
    const err = interrupted !== undefined ? controller.signal.reason : error;
    failure = { error: err };
    const quiet = ending.quietEnd?.(err);
    if (quiet !== undefined) {
      code = quiet;
    } else {
      code = reportError(err, ending.reporter);
      ending.afterFailure?.();
      if (interrupted !== undefined) code = signalExitCode(interrupted);
    }
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    // Whatever ended the run, nothing of it may keep going (requests, stdin for --lines).
    if (!controller.signal.aborted) controller.abort(new TtsError('interrupted', 'finished'));
    for (const close of closers) await close().catch(() => {});
  }
  const line = ending.summary?.(failure === undefined || code === EXIT.ok, failure?.error);
  if (line !== undefined) ending.io.stderr.write(`${jsonLine(line)}\n`);
  return code;
}
