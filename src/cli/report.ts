/**
 * Errors → one clear stderr message and an exit code (docs/cli.md §3; docs/style.md §5). Every message
 * names the service's code when there is one, says what to do next, and never shows the key.
 * Escaping is in escape.ts, the progress and summary lines in run-lines.ts, the spinner in
 * progress-display.ts.
 */
import { redact } from '../client/auth.js';
import { TtsError } from '../errors.js';
import { EXIT } from '../errors.js';
import { escapeControls } from './escape.js';

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
