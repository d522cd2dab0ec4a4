#!/usr/bin/env node
// Entry point: runs the bundled CLI, dist/bundle/tts.cjs, which `npm install` builds through the
// `prepare` script (tsc compiles src/ to dist/src/, then scripts/bundle.js bundles that with
// esbuild; commands and worker threads are chunks loaded only when a run needs them).
// `--version` is answered here, before anything is loaded: scripts call it to probe for tts; and
// so is the help, written ahead by the build (src/cli/help-text.ts; issue 20: 1.96 → 1.18 times
// `node -e 0`).
// This file is CommonJS (bin/package.json), and so is the bundle it requires: Node's ES module
// loader cost `--version` its start before the first line (46 → 40 ms, `node -e 0` 35 ms; issue
// 20), and an English one-shot about 50 ms of CPU to resolve, read and link the bundle's 76 files
// (issue 20's tenth round: first byte 211 → 182 ms on Node 20). Packages that are ES modules are
// still reached with import() when needed.
'use strict';
const { existsSync, readFileSync } = require('node:fs');
const path = require('node:path');

// A reader that goes away (`tts voices | head -1`) is not an error: no stack trace, ever.
// The audio sinks watch for it themselves and end the command quietly. Any other write error
// (ENOSPC of a full disk or /dev/full, EIO) is local I/O, exit 7 (docs/cli.md §3), not a bug:
// an audio sink writing stdout reports it itself, with its clean-up and --json line, while it
// is open — it counts itself under this symbol on stdout (src/audio/stdout-sink.ts
// STDOUT_AUDIO_SINKS) —; text (the help below, `tts voices`, …) is said failed here, also after
// a sink ended.
const STDOUT_AUDIO_SINKS = Symbol.for('tts.stdout-audio-sinks');
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE' || process.stdout[STDOUT_AUDIO_SINKS] > 0) return;
  process.stderr.write(`tts: error: cannot write to standard output: ${error.message} [io_error]\n`);
  process.stderr.write('tts:   check where the output goes (disk full?)\n');
  process.exit(7);
});

/**
 * The home folder, as src/home-folder.ts gives it to the CLI: `$HOME`, else the password
 * database's, else `/nonexistent` (no HOME and no entry for the user id: `os.homedir()` throws).
 * Never throws.
 */
function homeFolder() {
  if (process.env.HOME) return process.env.HOME;
  try {
    return require('node:os').homedir();
  } catch {
    return '/nonexistent';
  }
}

/**
 * The help text `args` asks for, from dist/bundle/help.json (src/cli/help-text.ts: written by the
 * build with commander, for `tts --help`, `-h`, `help` and each command's `--help`, `-h`,
 * `help NAME`, at 80 columns), when it asks for nothing else and stdout is not a terminal
 * narrower than that, and no variable commander reads (TTS_API) holds a value it refuses;
 * undefined otherwise (also without the file, or with one that is not as the build writes it),
 * and commander answers.
 */
function helpWrittenAhead(args) {
  const help = (arg) => arg === '--help' || arg === '-h';
  let key;
  if (args.length === 1 && (help(args[0]) || args[0] === 'help')) key = '';
  else if (args.length === 2 && args[0] === 'help') key = args[1];
  else if (args.length === 2 && help(args[1])) key = args[0];
  // A command's name is never empty: `tts help ''` is commander's to answer.
  if (key === undefined || (args.length === 2 && key === '')) return undefined;
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  if (columns !== undefined && columns > 0 && columns < 80) return undefined;
  try {
    const { texts, environment } = JSON.parse(readFileSync(path.join(__dirname, '..', 'dist', 'bundle', 'help.json'), 'utf8'));
    // A variable commander reads for an option, holding a value it refuses, makes it refuse the
    // help too (exit 2): that is commander's to say.
    for (const [name, accepted] of Object.entries(environment)) {
      const value = process.env[name];
      if (value !== undefined && !(Array.isArray(accepted) && accepted.includes(value))) return undefined;
    }
    return Object.hasOwn(texts, key) && typeof texts[key] === 'string' ? texts[key] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether code Node reads from `folder` (an absolute path without symbolic links) can only have
 * been written by this user: the `own` lowest folders of the path (`compile` and `tts`, the
 * folders tts makes) are this user's and no one else can write them, and each folder above them
 * is this user's or root's and no one else can write it, unless it is root's and sticky (/tmp: no
 * one can rename or remove another's entries there). Otherwise another local user could swap in
 * compiled code of their own that Node would run as this user.
 * @param own how many folders, from `folder` up, must be this user's (0 to 2).
 * @throws Error when a folder cannot be read (lstat).
 */
function writableOnlyByUs(folder, own) {
  const { lstatSync } = require('node:fs');
  const uid = process.getuid();
  for (let at = folder, left = own; ; at = path.dirname(at), left--) {
    const stats = lstatSync(at);
    if (!stats.isDirectory()) return false;
    if (stats.uid !== uid && (left > 0 || stats.uid !== 0)) return false;
    if ((stats.mode & 0o022) !== 0 && (left > 0 || stats.uid !== 0 || (stats.mode & 0o1000) === 0)) return false;
    if (path.dirname(at) === at) return true;
  }
}

/**
 * The compile cache's folder `<base>/tts/compile` ({@link enableCompileCache}), without symbolic
 * links, made where it is missing — but only where it will be used: the nearest folder of that
 * path that is there already is judged first ({@link writableOnlyByUs}: `tts` and `compile`, when
 * there, must be this user's), so that nothing is made in a folder others can write (not root's
 * and sticky), nor in another user's `tts`. Each missing folder is then made on its own (mode
 * 0700, never through a name that is there already: in a sticky folder such as /tmp, a `tts`
 * someone else made first is theirs, and refused), and `compile` is given mode 0700 when it is
 * this user's with another. `made` receives the folders made, so that they can be removed should
 * Node decline the folder after all.
 * @param base absolute: `$XDG_CACHE_HOME`, else `~/.cache`.
 * @returns the folder, or undefined when there is none this user alone can write (nothing made).
 * @throws Error of the file system (a folder that cannot be read or made); `made` lists what was
 *   made until then.
 */
function privateCompileFolder(base, made) {
  const { chmodSync, lstatSync, mkdirSync, realpathSync, statSync } = require('node:fs');
  const target = path.join(base, 'tts', 'compile');
  // The names missing below the nearest folder that is there (links followed, as the user set them).
  const missing = [];
  let there = target;
  for (;;) {
    const stats = statSync(there, { throwIfNoEntry: false });
    if (stats !== undefined) {
      if (!stats.isDirectory()) return undefined;
      break;
    }
    if (path.dirname(there) === there) return undefined;
    missing.unshift(path.basename(there));
    there = path.dirname(there);
  }
  // How many of `tts` and `compile` are there already: those must be this user's.
  let folder = realpathSync(there);
  if (!writableOnlyByUs(folder, Math.max(0, 2 - missing.length))) return undefined;
  for (const name of missing) {
    folder = path.join(folder, name);
    mkdirSync(folder, { mode: 0o700 });
    made.push(folder);
  }
  // A umask that takes the owner's bits, or an older compile/ of ours left 0755: 0700.
  if ((lstatSync(folder).mode & 0o777) !== 0o700) chmodSync(folder, 0o700);
  return writableOnlyByUs(folder, 2) ? folder : undefined;
}

/**
 * Turns on Node's module compile cache (Node 22.8 and later; nothing on Node 20): V8's compiled
 * code of the JavaScript a run loads, kept on disk so later runs skip compiling it (issue 20's
 * eighth round: an English one-shot's first byte 252 → 227 ms on Node 24). It goes where
 * NODE_COMPILE_CACHE says when that is set, else in tts's own cache folder, `compile/` beside the
 * piece cache (`$XDG_CACHE_HOME/tts`, absolute, else `~/.cache/tts`; docs/cli.md §8), mode 0700,
 * and only when no one but this user can write there ({@link privateCompileFolder}, which makes
 * no folder it would not use): not Node's default, the shared temporary folder, where another
 * local user could plant compiled code (Node itself checks only that it may make the folder: it
 * adds a folder of its own, named by its version and the user id, inside).
 * NODE_DISABLE_COMPILE_CACHE (any value) turns it off. Worker threads get it through
 * NODE_COMPILE_CACHE. Never throws and prints nothing: without a usable folder the run compiles
 * as before, and the folders made for it are removed again.
 */
function enableCompileCache() {
  const { enableCompileCache: enable } = require('node:module');
  if (typeof enable !== 'function' || process.env.NODE_DISABLE_COMPILE_CACHE !== undefined) return;
  const made = [];
  try {
    if (process.env.NODE_COMPILE_CACHE) {
      enable();
      return;
    }
    const xdg = process.env.XDG_CACHE_HOME;
    const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(homeFolder(), '.cache');
    if (!path.isAbsolute(base)) return;
    const dir = privateCompileFolder(base, made);
    if (dir !== undefined && enable(dir).directory !== undefined) {
      process.env.NODE_COMPILE_CACHE = dir;
      return;
    }
  } catch {
    // No cache: the run compiles its code as before.
  }
  const { rmdirSync } = require('node:fs');
  for (const folder of made.reverse()) {
    try {
      rmdirSync(folder);
    } catch {
      // Not empty (someone else's now), or gone: left as it is.
    }
  }
}

/**
 * The descriptors this run had open as it started, from 3 up (docs/cli.md §1 "into a pipe or a
 * device"): before it opens any of its own (the engine's files, the cache's, the outputs'), by
 * number, each with what /proc/self/fd says it is. Those the command gave it are among them, and
 * so are Node's own — its event loops' epoll, eventfd and io_uring (`anon_inode:`), its signal
 * and wake-up pipes —, which src/audio/special-files.ts `assertGivenDescriptor` tells apart when
 * an output or input is named by a descriptor (`/dev/fd/N`, `/proc/self/fd/N`, a link to one):
 * the name of one tts opened itself led the atomic writer to replace the file open there (the
 * engine's flite.wasm), or its bytes into Node's signal pipe (a crash). Kept on `process` under
 * `Symbol.for('tts.started-descriptors')` as a Map from number to link text (0.35 ms). Linux only
 * (/proc); elsewhere nothing is kept, and nothing is checked. Never throws.
 */
function rememberStartedDescriptors() {
  const { readdirSync, readlinkSync } = require('node:fs');
  let names;
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return;
  }
  const open = new Map();
  for (const name of names) {
    const fd = Number(name);
    if (!(fd >= 3)) continue;
    try {
      open.set(fd, readlinkSync(`/proc/self/fd/${name}`));
    } catch {
      // The listing's own descriptor, closed by now.
    }
  }
  process[Symbol.for('tts.started-descriptors')] = open;
}

/**
 * Every name commander takes as a command (src/cli/commands.ts, and `help`) but the ones that
 * speak a text once (`say`, `stream`, `realtime`): a first argument that is none of these starts a
 * one-shot, or is the default command's (`tts "text"` is `say`).
 * test/cli/early-worker.test.ts checks the list against the command table.
 */
const OTHER_COMMANDS = ['serve', 'voices', 'doctor', 'config', 'completion', 'cache', 'batch', 'lexicon', 'help'];

/** Largest config file {@link readConfigEarly} reads (the CLI takes up to 4 MiB: config-file.ts MAX_CONFIG_BYTES). */
const EARLY_CONFIG_MAX_BYTES = 256 * 1024;

/**
 * The config file (src/cli/config-file.ts configPath: `$XDG_CONFIG_HOME/tts/config.toml` when
 * that is absolute, else `~/.config/tts/config.toml`), read once for the run: read here, for
 * {@link likelyBuiltInRun}'s guess, its text is left on `globalThis` under
 * `Symbol.for('tts.early-config-file')` as `{ path, text }` (text undefined: there is no file,
 * ENOENT or ENOTDIR), and the CLI takes it instead of reading the file again
 * (src/cli/config-file.ts takeEarlyConfig). Read whole, as the CLI reads it (UTF-8), and only when
 * it is a regular file (opened without blocking, so a FIFO there cannot stall the start) of at
 * most {@link EARLY_CONFIG_MAX_BYTES}. Anything else — unreadable, not a regular file, larger,
 * grown while read, or not UTF-8 — is left alone (nothing on `globalThis`): the CLI opens it
 * itself and accepts or refuses it as it does any file. Never throws.
 * @returns the file's text; undefined when there is none or it was left to the CLI.
 */
function readConfigEarly() {
  const fs = require('node:fs');
  const xdg = process.env.XDG_CONFIG_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(homeFolder(), '.config');
  const file = path.join(base, 'tts', 'config.toml');
  const early = Symbol.for('tts.early-config-file');
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const stats = fs.fstatSync(fd);
    if (!stats.isFile() || stats.size > EARLY_CONFIG_MAX_BYTES) return undefined;
    // One byte more than the file holds: a read that fills it means the file grew meanwhile.
    const buffer = Buffer.allocUnsafe(stats.size + 1);
    let length = 0;
    for (let read; length < buffer.length && (read = fs.readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += read;
    if (length === buffer.length) return undefined;
    // Not UTF-8 (TOML requires it): left to the CLI, which refuses it naming the bad byte.
    if (!require('node:buffer').isUtf8(buffer.subarray(0, length))) return undefined;
    const text = buffer.subarray(0, length).toString('utf8');
    globalThis[early] = { path: file, text };
    return text;
  } catch (error) {
    if (fd === undefined && (error?.code === 'ENOENT' || error?.code === 'ENOTDIR')) globalThis[early] = { path: file, text: undefined };
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Whether `args` (after `node bin/tts.js`) is a run of a one-shot command that will likely speak
 * through the built-in engine: `say`, `stream`, `realtime` or the default command, without an
 * argument that makes it speak nothing (`--help`, `-h`, `--version`, `-V`, `--print-text`,
 * `--dry-run`), not a bare `tts` on a terminal (which only says how to give it text), and with no
 * service configured by `--base-url`, `TTS_BASE_URL` or, it seems, the config file
 * (whose text, {@link readConfigEarly}, mentions `base-url`: only a guess, a comment or a profile
 * the run does not use counts too), unless `--offline`. A guess from the arguments as written, for
 * {@link startEngineWorker}: the CLI decides everything later (the config file's keys and
 * profiles, text after `--`), and a wrong guess costs one thread's start, or the gain of one,
 * never a different run.
 */
function likelyBuiltInRun(args) {
  // `tts -- voices` runs `voices`: commander takes the command from the word after a leading `--`.
  const command = args[0] === '--' ? args[1] : args[0];
  if (command !== undefined && OTHER_COMMANDS.includes(command)) return false;
  if (args.length === 0 && require('node:tty').isatty(0)) return false;
  const flag = (name) => args.some((arg) => arg === name || arg.startsWith(`${name}=`));
  if (['--help', '-h', '--print-text', '--dry-run', '--version', '-V'].some((name) => args.includes(name))) return false;
  if (args.includes('--offline')) return true;
  return !flag('--base-url') && (process.env.TTS_BASE_URL ?? '').trim() === '' && readConfigEarly()?.includes('base-url') !== true;
}

/**
 * Starts the built-in engine's worker thread now, before the bundle loads (issue 20, twelfth
 * round), for a run {@link likelyBuiltInRun} says will speak through it: the thread's start (a
 * second V8 isolate and Node in it, 35–55 ms) then overlaps the CLI's own. It runs
 * dist/bundle/engine-worker.cjs, which waits for the pool's first message (what to serve with),
 * so it guesses nothing the CLI decides. It is left on `globalThis` under
 * `Symbol.for('tts.early-engine-worker')` for the run's pool to take (src/engine/early-worker.ts),
 * unref'd so that it never keeps the process running. Only when Node runs with no options of its
 * own (`process.execArgv` empty), as the pool's thread would. Never throws: without it the pool
 * starts its thread as before.
 */
function startEngineWorker(args) {
  if (process.execArgv.length > 0 || !likelyBuiltInRun(args)) return;
  try {
    const { Worker } = require('node:worker_threads');
    const file = path.join(__dirname, '..', 'dist', 'bundle', 'engine-worker.cjs');
    const early = { worker: new Worker(file, { execArgv: [] }), file, execArgv: [], stopped: false };
    // A thread that fails or ends before the pool takes it is not taken; its error is not this run's.
    const stop = () => {
      early.stopped = true;
    };
    early.worker.on('error', stop);
    early.worker.on('exit', stop);
    early.worker.unref();
    globalThis[Symbol.for('tts.early-engine-worker')] = early;
  } catch {
    // The pool starts its own thread.
  }
}

// Required rather than run (test/cli/stdout-full.test.ts), it only sets the handler above.
const args = require.main === module ? process.argv.slice(2) : undefined;
const helpText = args === undefined ? undefined : helpWrittenAhead(args);
if (args === undefined) {
  // Nothing to run.
} else if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else if (helpText !== undefined) {
  process.stdout.write(helpText);
} else {
  // First: before this run opens anything of its own.
  rememberStartedDescriptors();
  enableCompileCache();
  // After the compile cache: the thread inherits NODE_COMPILE_CACHE through the environment.
  startEngineWorker(args);
  const bundle = path.join(__dirname, '..', 'dist', 'bundle', 'tts.cjs');
  let cli;
  try {
    cli = require(bundle);
  } catch (error) {
    if (error?.code !== 'MODULE_NOT_FOUND' || existsSync(bundle)) throw error;
    process.stderr.write(`tts: error: ${bundle} is missing: tts is not built\n`);
    process.stderr.write(`tts:   run \`npm install\` (or \`npm run build\`) in ${path.join(__dirname, '..')}\n`);
    process.exit(1);
  }
  cli.main(args).then(cli.endProcess);
}
