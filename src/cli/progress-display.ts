/**
 * The progress display on stderr (docs/cli.md §2 "Progress"): a spinner redrawn in place on a
 * terminal, a plain line now and then where redrawing is unwelcome, nothing otherwise.
 */
import type { CommandIo, ReporterFlags } from './report.js';

/**
 * How progress is shown on stderr (docs/cli.md §2 "Progress"): `animate` (a spinner line redrawn
 * in place) on a terminal that reports its width, unless NO_COLOR or TERM=dumb ask for plain
 * output — then `plain` (a line now and then); `off` when stderr is not a terminal, with -q, or
 * with --verbose (whose lines would tear a redrawn one).
 */
export function progressMode(stderr: NodeJS.WritableStream & { isTTY?: boolean }, flags: ReporterFlags, env: NodeJS.ProcessEnv): 'animate' | 'plain' | 'off' {
  if (stderr.isTTY !== true || flags.quiet === true || flags.verbose === true) return 'off';
  const columns = (stderr as { columns?: number }).columns;
  // A terminal that reports no width (some CI and container ptys) would make a spinner's
  // line-wrapping arithmetic divide by zero and redraw forever: never animate there.
  const noColor = env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '';
  if (columns === undefined || !(columns > 0) || noColor || env['TERM'] === 'dumb') return 'plain';
  return 'animate';
}

/** A progress line on stderr: redrawn in place (ora), or printed now and then. */
export interface ProgressDisplay {
  /** The progress text now (shown at once when animated; at most every 5 s when plain). */
  update(text: string): void;
  /** Prints a whole line above the progress line (clears it first, draws it again after). */
  log(line: string): void;
  /** Removes the progress line. */
  stop(): void;
}

/** Seconds between two plain progress lines (NO_COLOR, TERM=dumb, or a terminal of no width). */
const PLAIN_PROGRESS_EVERY_MS = 5000;

/**
 * Shows progress on stderr as docs/cli.md §2 says: animated with ora on a terminal that reports
 * its width (and that ora deems interactive: not with CI set); a plain line at most every 5 s where
 * animation is unwelcome; nothing off a terminal, with -q or with --verbose (then undefined).
 */
export async function startProgressDisplay(io: CommandIo, flags: ReporterFlags, text: string): Promise<ProgressDisplay | undefined> {
  const mode = progressMode(io.stderr, flags, io.env);
  if (mode === 'off') return undefined;
  const { default: ora } = mode === 'animate' ? await import('ora') : { default: undefined };
  const spinner = ora?.({ text, stream: io.stderr as NodeJS.WritableStream & { isTTY: boolean } as never, discardStdin: false });
  // ora declines to animate where it judges the terminal non-interactive (e.g. with CI set):
  // then plain lines, as for TERM=dumb.
  if (spinner === undefined || !spinner.isEnabled) {
    let last = performance.now();
    return {
      update: (line) => {
        const now = performance.now();
        if (now - last < PLAIN_PROGRESS_EVERY_MS) return;
        last = now;
        io.stderr.write(`tts: ${line}\n`);
      },
      log: (line) => io.stderr.write(`${line}\n`),
      stop: () => {},
    };
  }
  spinner.start();
  return {
    update: (line) => {
      spinner.text = line;
    },
    log: (line) => {
      spinner.clear();
      io.stderr.write(`${line}\n`);
      spinner.render();
    },
    stop: () => spinner.stop(),
  };
}
