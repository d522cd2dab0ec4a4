/**
 * The commander program (docs/style.md: the entry only assembles commands; one file per command).
 * Actions return exit codes; `bin/tts.js` ends the process with it once, through {@link endProcess}
 * (docs/style.md §5).
 * Modules beyond commander are imported only on the path that needs them, to keep start-up fast:
 * of the commands, only those the run needs (commands.ts); the others are listed from its table.
 */
import type { EventEmitter } from 'node:events';
import { closeSync, readFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import { Command, CommanderError, Help } from 'commander';
import { EXIT, TtsError } from '../errors.js';
import { COMMANDS, commandsToLoad, synthesisOptionsOf } from './commands.js';
import { nearMissCommand } from './default-command.js';
import { createReporter, reportError, type CommandIo } from './report.js';
import { escapeControls, quoteInput } from './escape.js';
import { helpWidth } from './help-text.js';
import { signalExitCode, STOP_SIGNALS } from './run-lifecycle.js';
import { opensLeftBlocked } from '../blocked-opens.js';

let fatalHandlerInstalled = false;

/**
 * A bug that escapes every handler (an uncaught exception, an unhandled rejection) still takes
 * the temporary files with it (docs/cli.md §2: no partial file is ever left), says what happened
 * on one line plus the stack, and exits 1.
 */
function installFatalHandler(io: CommandIo): void {
  // Only for the real process: a test calling main() in-process keeps its runner's own handling.
  if (fatalHandlerInstalled || io.stderr !== process.stderr) return;
  fatalHandlerInstalled = true;
  // Standard error that cannot be written has nowhere to say so: a terminal that went away (EIO;
  // its SIGHUP ends the run, exit 129), a reader that is done (`2>&1 | head`: EPIPE), a full disk.
  // What was to be said there is lost and the run goes on; it is not an internal error (exit 1).
  process.stderr.on('error', () => {});
  forgetHungUpTerminal();
  process.on('uncaughtException', (error: unknown) => {
    // process.exit below takes the temporary files with it (temp-files.ts, signal-exit).
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.stderr.write(`tts: internal error: ${escapeControls(text.split('\n')[0] ?? '')}\n`);
    io.stderr.write('tts:   this is a bug in tts; please report it with the lines below\n');
    for (const line of text.split('\n').slice(1)) io.stderr.write(`tts: ${escapeControls(line)}\n`);
    process.exit(EXIT.internal);
  });
}

/**
 * On its way out, Node sets the mode of stdin, stdout and stderr back when they are terminals
 * (its ResetStdio), and before Node 24 it aborts when that fails (exit 134, or a segfault as it
 * reports it; nodejs/node#58200): as it does when the terminal went away (a closed window, a
 * dropped ssh connection, tmux killed) and the run ends on its SIGHUP, which should be exit 129
 * (docs/cli.md §3). So, at exit, each of them that was a terminal and is one no more (the
 * hung-up terminal answers EIO) is closed: Node skips a closed one. Nothing can be written to a
 * hung-up terminal anyway.
 */
function forgetHungUpTerminal(): void {
  const terminals = [0, 1, 2].filter((fd) => isatty(fd));
  if (terminals.length === 0) return;
  process.on('exit', () => {
    for (const fd of terminals) {
      if (isatty(fd)) continue;
      try {
        closeSync(fd);
      } catch {
        // Closed already: Node skips it too.
      }
    }
  });
}

/** The version in package.json. */
function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** What a repeated short flag was probably meant as (`-vv` is verbosity in many tools; here `-v` is --voice). */
const REPEAT_MEANT: Readonly<Record<string, string>> = { v: '--verbose', q: '-q (--quiet)' };

/**
 * The first argument before `--` made of one short flag's letter repeated (`-vv`, `-qqq`), which
 * commander would read as the flag with the rest as its value (`-vv` = `--voice v`), if any.
 * Refused with exit 2 (docs/cli.md §3) rather than run with a voice nobody asked for.
 */
export function repeatedShortFlag(argv: readonly string[]): { arg: string; meant: string | undefined } | undefined {
  for (const arg of argv) {
    if (arg === '--') return undefined;
    const m = /^-([a-zA-Z])\1+$/.exec(arg);
    if (m !== null) return { arg, meant: REPEAT_MEANT[m[1]!] };
  }
  return undefined;
}

/**
 * Commander reads an option's environment variable (`Option.env`: TTS_API for --api) from
 * `process.env`, but main's environment is `io.env` (a test runs main in this process with an
 * environment of its own). Reads those options again from `env`, by commander's own rule: a flag
 * on the command line wins, a variable beats the default (docs/cli.md §7: flag > environment >
 * config file > default); a variable only in `process.env` falls back to the default. Does
 * nothing when `env` is `process.env`. A bad value throws commander's usage error (exit 2).
 */
function readOptionEnv(command: Command, env: NodeJS.ProcessEnv): void {
  if (env === process.env) return;
  for (const option of command.options) {
    const variable = option.envVar;
    if (variable === undefined) continue;
    const key = option.attributeName();
    const source = command.getOptionValueSource(key);
    if (source !== undefined && source !== 'default' && source !== 'env') continue;
    if (env[variable] === undefined) {
      if (source === 'env') command.setOptionValueWithSource(key, option.defaultValue, 'default');
    } else {
      // Commander's Command is an EventEmitter (its typings omit it); this event runs the option's parser.
      const emitter = command as unknown as EventEmitter;
      if (option.required || option.optional) emitter.emit(`optionEnv:${option.name()}`, env[variable]);
      else emitter.emit(`optionEnv:${option.name()}`);
    }
  }
}

/**
 * Adds the commands in `load` for real and the others as names and summaries for `tts --help`
 * only (commands.ts), in the table's order; the help lists every command by the table's term.
 */
async function addCommands(program: Command, io: CommandIo, done: (code: number) => void, load: ReadonlySet<string>): Promise<void> {
  const adders = await Promise.all(COMMANDS.map((c) => (load.has(c.name) ? c.load() : undefined)));
  COMMANDS.forEach((entry, i) => {
    const add = adders[i];
    if (add !== undefined) add(program, io, done);
    else program.command(entry.name).description(entry.summary);
  });
  const terms = new Map(COMMANDS.map((c) => [c.name, c.term]));
  const help = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? help.subcommandTerm(cmd) });
}

/**
 * Runs the CLI.
 * @param argv arguments after `node bin/tts.js`.
 * @param io the process's streams (tests may inject their own).
 * @param options.load the commands to load for real (default: those the arguments need,
 *   commands.ts); the others are listed in the help only. Tests load them all.
 * @returns the exit code of docs/cli.md §3.
 */
export async function main(
  argv: string[],
  io: CommandIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env },
  options: { load?: ReadonlySet<string> } = {},
): Promise<number> {
  installFatalHandler(io);
  let exitCode: number = EXIT.ok;
  const program = new Command('tts')
    .description('Text to speech from the terminal, through a streaming TTS service or the built-in offline engine')
    .version(version(), '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', '\n`tts "text"` is `tts say "text"` (say is the default command). `tts doctor` checks the set-up.')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // At most HELP_WIDTH columns, so that bin/tts.js can print the help written ahead (help-text.ts).
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
      outputError: (s, write) => write(`tts: ${s.replace(/^error: /, 'error: ')}`),
    });

  const done = (code: number): void => {
    exitCode = code;
  };
  await addCommands(program, io, done, options.load ?? commandsToLoad(argv));
  // The config file and its profiles, under the flags (docs/cli.md §7), for every synthesis command.
  program.hook('preAction', async (_program, action) => {
    readOptionEnv(action, io.env);
    if (!action.options.some((o) => o.long === '--voice')) return;
    const { applyConfig, synthesisCommands } = await import('./config.js');
    // The command runs alone (commands.ts): the file's keys are every synthesis command's.
    if (synthesisCommands(program).includes(action)) await applyConfig(program, action, io.env, undefined, () => synthesisOptionsOf(program, io, done));
  });

  // `say` is the default command (docs/cli.md §1), but not for a near miss of a command's name,
  // and `tts` alone on a terminal shows the help rather than waiting for text.
  const names = program.commands.flatMap((c) => [c.name(), ...c.aliases()]);
  const miss = nearMissCommand(argv[0], names);
  if (miss !== undefined) {
    const reporter = createReporter(io.stderr, {});
    reporter.error(`error: "${argv[0]}" is not a command; did you mean \`tts ${miss}\`?`);
    reporter.error(`  to speak the word, write: tts say ${argv.join(' ')}`);
    return EXIT.usage;
  }
  if (argv.length === 0 && io.stdin.isTTY === true) {
    program.outputHelp({ error: true });
    return EXIT.usage;
  }
  // An argument that was not UTF-8: Node made its bad bytes U+FFFD, so a word would be spoken
  // and a file name would name another file (docs/cli.md §1).
  const notUtf8 = argv.some((a) => a.includes('\uFFFD')) ? (await import('./argv-utf8.js')).invalidUtf8Argument(argv) : undefined;
  if (notUtf8 !== undefined) {
    const reporter = createReporter(io.stderr, {});
    reporter.error(`error: argument ${notUtf8.position} (${quoteInput(argv[notUtf8.position - 1]!)}) is not valid UTF-8 (first bad byte at offset ${notUtf8.offset})`);
    reporter.error('  tts reads its arguments as UTF-8: give text in another encoding through iconv and -f or stdin, and a file by a name in UTF-8 (a link)');
    return EXIT.usage;
  }
  const stuck = repeatedShortFlag(argv);
  if (stuck !== undefined) {
    const reporter = createReporter(io.stderr, {});
    reporter.error(`error: ${stuck.arg} is not a flag (short flags take no repeats)${stuck.meant === undefined ? '' : `; did you mean ${stuck.meant}?`}`);
    reporter.error(`  to speak it, write: tts say -- ${stuck.arg}`);
    return EXIT.usage;
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with code 0; every other commander error is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    // A bad config file or profile, found before any action ran.
    if (error instanceof TtsError) return reportError(error, createReporter(io.stderr, {}));
    throw error;
  }
  return exitCode;
}

/**
 * How long a stopped run gives standard error's reader to take what is still waiting in its
 * buffer (the last messages, the `--json` line) before {@link endProcess} drops it: a reader that
 * reads takes it at once; one that takes nothing (`2>&1 | sleep 1000`) never would.
 */
const STDERR_GRACE_MS = 500;

/**
 * Ends the process with `code`, the exit code {@link main} returned (docs/cli.md §3), by setting
 * `process.exitCode`: Node exits once nothing is left to do. Except after a stop signal (`code`
 * 130 SIGINT, 143 SIGTERM, 129 SIGHUP), which must end the run promptly:
 * - when an open was left blocked in libuv's thread pool (blocked-opens.ts: a FIFO this user may
 *   read but not write, text/fifo-open.ts; a device whose open sleeps, audio/special-files.ts),
 *   Node's exit would wait for that thread — `process.exit` too. The run has cleaned up by then,
 *   so the process dies of the stop signal itself, with the signal's default action, after
 *   removing any temporary file still tracked (audio/temp-files.ts): a shell reports the same
 *   status (`$?` is 130), a parent process sees the signal;
 * - when standard output or standard error (a pipe or a socket) still holds bytes for a reader
 *   that takes nothing (`tts stream … | sleep 60`, `2>&1 | sleep 1000`, then SIGTERM), Node
 *   would not exit before they were written: standard error is given {@link STDERR_GRACE_MS} to
 *   drain (its last lines are the run's error and `--json` line), then what is left of either is
 *   dropped, as the rest of the audio is, by `process.exit(code)`.
 * Call it once, in the real process only.
 */
export async function endProcess(code: number): Promise<void> {
  process.exitCode = code;
  const signal = STOP_SIGNALS.find((s) => signalExitCode(s) === code);
  if (signal === undefined) return;
  if (opensLeftBlocked() > 0) {
    const { removeTempFilesSync } = await import('../audio/temp-files.js');
    removeTempFilesSync();
    // No listener left to catch it (signal-exit's would re-raise it anyway): the default action ends the process.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  if (process.stderr.writableLength > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, STDERR_GRACE_MS);
      function done(): void {
        clearTimeout(timer);
        process.stderr.off('drain', done);
        resolve();
      }
      process.stderr.once('drain', done);
    });
  }
  if (process.stdout.writableLength > 0 || process.stderr.writableLength > 0) process.exit(code);
}
