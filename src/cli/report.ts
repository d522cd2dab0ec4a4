/**
 * Errors → one clear stderr message and an exit code (docs/cli.md §3; docs/style.md §5). Every message
 * names the service's code when there is one, says what to do next, and never shows the key.
 */
import { redact } from '../client/auth.js';
import { TtsError } from '../errors.js';
import { EXIT } from '../errors.js';

/** The process's streams and environment (injectable for tests). */
export interface CommandIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Writes lines to stderr with the key redacted. */
export interface Reporter {
  /** Always printed (errors, warnings that matter). */
  error(line: string): void;
  /** Printed unless -q. */
  warn(line: string): void;
  /** Printed only when stderr is a terminal and not -q (docs/cli.md §2 notices). */
  notice(line: string): void;
  /** Printed only with --verbose. */
  verbose(line: string): void;
  /** The key to redact from now on (known once the service is resolved). */
  setSecret(secret: string): void;
}

/** Flags that shape what is printed. */
export interface ReporterFlags {
  quiet?: boolean | undefined;
  verbose?: boolean | undefined;
}

/**
 * Control characters, which a terminal would obey rather than show: C0 (but tab) and DEL, C1
 * (U+0080–U+009F; U+009B is a one-byte CSI), line and paragraph separators, and the bidirectional
 * overrides and isolates that can make text read in another order (CVE-2021-42574).
 */
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Makes text safe to print on a terminal: every control character becomes visible as `\xHH` or
 * `\uHHHH`, so text that came from a service (an error message, a code, an item id) can never
 * move the cursor, set the title, clear the screen or fake a line of output.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON for one line on stderr: JSON.stringify already escapes C0 controls, but leaves C1 and
 * the bidirectional controls as they are; those are written as `\uHHHH` escapes too.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Creates the stderr reporter for one command. */
export function createReporter(stderr: NodeJS.WritableStream & { isTTY?: boolean }, flags: ReporterFlags): Reporter {
  let secret: string | undefined;
  // Every line goes through here, ours and the service's words alike: one line, no controls.
  const write = (line: string): void => {
    stderr.write(`${escapeControls(redact(line, secret))}\n`);
  };
  const quiet = flags.quiet === true;
  return {
    error: (line) => write(`tts: ${line}`),
    warn: (line) => {
      if (!quiet) write(`tts: ${line}`);
    },
    notice: (line) => {
      if (!quiet && stderr.isTTY === true) write(`tts: ${line}`);
    },
    verbose: (line) => {
      if (flags.verbose === true) write(`tts: ${line}`);
    },
    setSecret: (s) => {
      secret = s;
    },
  };
}

/**
 * Reports a failure and returns its exit code: a {@link TtsError} with its code and hint; any
 * other error as an internal error (exit 1) with its message only (no stack unless --verbose).
 */
export function reportError(error: unknown, reporter: Reporter): number {
  if (error instanceof TtsError) {
    const code = error.code === 'usage' ? '' : ` [${error.code}]`;
    reporter.error(`error: ${error.message}${code}`);
    if (error.hint !== undefined) reporter.error(`  ${error.hint}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  reporter.error(`internal error: ${message}`);
  reporter.error('  this is a bug in tts; rerun with --verbose and report it');
  if (error instanceof Error && error.stack !== undefined) for (const line of error.stack.split('\n')) reporter.verbose(line);
  return EXIT.internal;
}

/** Seconds as `m:ss`, or `h:mm:ss` from an hour on (rounded down to the second). */
export function formatClock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

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

/** What a progress line shows (a subset of src/speak/progress.ts ProgressSnapshot). */
export interface ProgressLine {
  doneChars: number;
  fraction: number | undefined;
  audioSeconds: number;
  elapsedSeconds: number;
  leftSeconds: number | undefined;
  /** Pieces whose audio all arrived. */
  pieces: number;
}

/**
 * One progress line: `42% · 1234 chars · 75.3 s audio · 0:12 elapsed · ~0:16 left`; without a
 * known total (stdin) no share and no estimate. Text counts only once a piece's audio all
 * arrived, so while the first piece (up to --max-chars) still streams, the line says so instead
 * of "0% · 0 chars" beside a minute of audio: `first piece · 46.2 s audio · 0:05 elapsed`.
 */
export function formatProgress(p: ProgressLine): string {
  const parts: string[] = [];
  if (p.pieces === 0 && p.fraction !== 1) {
    return ['first piece', `${p.audioSeconds.toFixed(1)} s audio`, `${formatClock(p.elapsedSeconds)} elapsed`].join(' · ');
  }
  if (p.fraction !== undefined) parts.push(`${Math.floor(p.fraction * 100)}%`);
  parts.push(`${p.doneChars} chars`, `${p.audioSeconds.toFixed(1)} s audio`, `${formatClock(p.elapsedSeconds)} elapsed`);
  if (p.leftSeconds !== undefined && p.fraction !== undefined && p.fraction > 0) parts.push(`~${formatClock(p.leftSeconds)} left`);
  return parts.join(' · ');
}

/** What the end-of-run summary line names. */
export interface RunSummaryLine {
  /** `wrote book.wav`, `played`, `wrote book.wav and played`, `wrote stdout`. */
  what: string;
  audioSeconds: number;
  /** Container and encoding, e.g. `WAV pcm16`, `raw mulaw`. */
  encoding: string;
  sampleRate: number;
  channels: number;
  elapsedSeconds: number;
  /** Requests made to the service. */
  requests: number;
  /** Pieces replayed from the cache. */
  cacheHits: number;
}

/**
 * The one summary line at the end of a run on a terminal (docs/cli.md §2): e.g.
 * `wrote book.wav · 4:12 audio · WAV pcm16 · 24000 Hz · 1 ch · 0:38 elapsed · 23 requests, 12 from cache`.
 */
export function formatRunSummary(s: RunSummaryLine): string {
  return [
    s.what,
    `${formatClock(s.audioSeconds)} audio`,
    s.encoding,
    `${s.sampleRate} Hz`,
    `${s.channels} ch`,
    `${formatClock(s.elapsedSeconds)} elapsed`,
    `${s.requests} request${s.requests === 1 ? '' : 's'}, ${s.cacheHits} from cache`,
  ].join(' · ');
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
