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
 * Why files in `folder` (an absolute path without symbolic links) could have been written by
 * another user than this one, or undefined when they cannot: the `own` lowest folders of the path
 * (those tts makes: `tts` and `compile` or `pieces`) must be this user's and writable by no one
 * else, and each folder above them this user's or root's and writable by no one else, unless it
 * is root's and sticky (/tmp: no one can rename or remove another's entries there). Otherwise
 * another local user could swap in files of their own: compiled code Node would run as this user
 * (the compile cache), audio a run would play (the piece cache: its checksum is no signature).
 * The rule of both caches, shared with the CLI's (src/cache/private-folder.ts).
 * @param own how many folders, from `folder` up, must be this user's (0 to 2).
 * @param ownGroup whether a folder writable by its group is writable by this user alone when that
 *   group is this user's own (user private groups with umask 002): the piece cache's rule, which
 *   must not turn the cache off with a warning on every run; the compile cache has no such
 *   exception (it warns about nothing, and its own folders are made 0700).
 * @returns the reason (`/home/me/.cache/tts is owned by user 1001`, `… is writable by others`,
 *   `… is not a folder`); always undefined where there are no user ids (Windows).
 * @throws Error when a folder cannot be read (lstat).
 */
function othersCanWrite(folder, own, ownGroup = false) {
  const { lstatSync } = require('node:fs');
  if (typeof process.getuid !== 'function') return undefined;
  const uid = process.getuid();
  for (let at = folder, left = own; ; at = path.dirname(at), left--) {
    const stats = lstatSync(at);
    if (!stats.isDirectory()) return `${at} is not a folder`;
    if (stats.uid !== uid && (left > 0 || stats.uid !== 0)) return `${at} is owned by user ${stats.uid}`;
    const groupWrites = (stats.mode & 0o020) !== 0 && !(ownGroup && stats.gid === process.getgid());
    if (((stats.mode & 0o002) !== 0 || groupWrites) && (left > 0 || stats.uid !== 0 || (stats.mode & 0o1000) === 0)) return `${at} is writable by others`;
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * The nearest folder of the path `target` that is there (links followed, as the user set them),
 * without symbolic links, and the names below it that are not.
 * @throws Error `ENOTDIR` when what is there is not a folder (no folder can be made there);
 *   `ENOENT` for a link on the way that leads nowhere (nor there); the file system's error.
 */
function nearestFolder(target) {
  const { lstatSync, realpathSync, statSync } = require('node:fs');
  const missing = [];
  for (let there = target; ; there = path.dirname(there)) {
    const stats = statSync(there, { throwIfNoEntry: false });
    if (stats !== undefined) {
      if (!stats.isDirectory()) throw Object.assign(new Error(`not a folder: ${there}`), { code: 'ENOTDIR' });
      return { there: realpathSync(there), missing };
    }
    if (path.dirname(there) === there || lstatSync(there, { throwIfNoEntry: false }) !== undefined) {
      throw Object.assign(new Error(`no folder can be made at ${there}`), { code: 'ENOENT' });
    }
    missing.unshift(path.basename(there));
  }
}

/**
 * Why tts's folder `names` below `base` (`tts/compile`, `tts/pieces`) would not be used, judged
 * before anything is made, as {@link privateFolder} judges it: when the folders are there, what
 * {@link othersCanWrite} says of them; when some are not, what the nearest folder that is there
 * says, at its place in the path (a run would make the rest, this user's, 0700).
 * @param base absolute: `$XDG_CACHE_HOME`, else `~/.cache`.
 * @param names the folders below `base` tts makes, each of them this user's.
 * @param ownGroup as for {@link othersCanWrite}.
 * @returns the reason, or undefined when the folder is (or, once made, would be) used.
 * @throws as {@link nearestFolder}; the file system's error.
 */
function privateFolderRefusal(base, names, ownGroup = false) {
  const { there, missing } = nearestFolder(path.join(base, ...names));
  return othersCanWrite(there, Math.max(0, names.length - missing.length), ownGroup);
}

/**
 * tts's folder `names` below `base` (the compile cache's `tts/compile`, {@link
 * enableCompileCache}; the piece cache's `tts/pieces`, src/cache/store.ts), without symbolic
 * links, made where it is missing — but only where it will be used: the nearest folder of that
 * path that is there already is judged first ({@link privateFolderRefusal}: those of `names`
 * that are there must be this user's), so that nothing is made in a folder others can write (not
 * root's and sticky), nor in another user's `tts`. Each missing folder is then made on its own
 * (mode 0700, set again should the umask have taken bits; never through a name that is there
 * already: one made meanwhile — in a sticky folder such as /tmp, a `tts` someone else made first
 * — is judged before anything is made in it, and someone else's is refused), and the last is
 * given mode 0700 when it is this user's with another. When the folder is refused after all
 * (something changed meanwhile), or making it fails, the folders made are removed again.
 * @param base absolute: `$XDG_CACHE_HOME`, else `~/.cache`.
 * @param names the folders below `base` tts makes (`['tts', 'compile']`).
 * @param ownGroup as for {@link othersCanWrite}.
 * @param made receives the folders made (absolute, outermost first) when the folder is used, so
 *   that they can be removed should it be declined after all (Node's compile cache).
 * @returns `{ folder }` to use, or `{ refused }`: why not (nothing made then).
 * @throws as {@link nearestFolder}; the file system's error (a folder that cannot be made or
 *   read; what was made is removed).
 */
function privateFolder(base, names, ownGroup = false, made = []) {
  const { chmodSync, lstatSync, mkdirSync } = require('node:fs');
  const { there, missing } = nearestFolder(path.join(base, ...names));
  let refused = othersCanWrite(there, Math.max(0, names.length - missing.length), ownGroup);
  if (refused !== undefined) return { refused };
  const mine = [];
  try {
    let folder = there;
    for (const [index, name] of missing.entries()) {
      folder = path.join(folder, name);
      try {
        mkdirSync(folder, { mode: 0o700 });
      } catch (error) {
        if (error?.code !== 'EEXIST') throw error;
        // Made meanwhile (by another run, ours or not): judged as if it had been there.
        refused = othersCanWrite(folder, Math.max(0, names.length - (missing.length - 1 - index)), ownGroup);
        if (refused !== undefined) break;
        continue;
      }
      mine.push(folder);
      // A umask that takes the owner's bits would leave a folder nothing can be made in.
      if ((lstatSync(folder).mode & 0o777) !== 0o700) chmodSync(folder, 0o700);
    }
    if (refused === undefined) {
      // An older folder of ours left 0755 (by an earlier tts, or by hand): 0700. Never another's.
      const last = lstatSync(folder);
      if (last.isDirectory() && last.uid === process.getuid?.() && (last.mode & 0o777) !== 0o700) chmodSync(folder, 0o700);
      refused = othersCanWrite(folder, names.length, ownGroup);
    }
    if (refused === undefined) {
      made.push(...mine);
      return { folder };
    }
  } catch (error) {
    removeFolders(mine);
    throw error;
  }
  removeFolders(mine);
  return { refused };
}

/** Removes the (empty) `folders`, innermost first; one that is not empty, or gone, is left. Never throws. */
function removeFolders(folders) {
  const { rmdirSync } = require('node:fs');
  for (const folder of [...folders].reverse()) {
    try {
      rmdirSync(folder);
    } catch {
      // Not empty (someone else's now), or gone: left as it is.
    }
  }
}

/**
 * Turns on Node's module compile cache (Node 22.8 and later; nothing on Node 20): V8's compiled
 * code of the JavaScript a run loads, kept on disk so later runs skip compiling it (issue 20's
 * eighth round: an English one-shot's first byte 252 → 227 ms on Node 24). It goes where
 * NODE_COMPILE_CACHE says when that is set, else in tts's own cache folder, `compile/` beside the
 * piece cache (`$XDG_CACHE_HOME/tts`, absolute, else `~/.cache/tts`; docs/cli.md §8), mode 0700,
 * and only when no one but this user can write there ({@link privateFolder}, which makes no
 * folder it would not use): not Node's default, the shared temporary folder, where another
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
    // Where there are no user ids (Windows), no folder can be judged: none is used.
    if (typeof process.getuid !== 'function') return;
    const xdg = process.env.XDG_CACHE_HOME;
    const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(homeFolder(), '.cache');
    if (!path.isAbsolute(base)) return;
    const { folder } = privateFolder(base, ['tts', 'compile'], false, made);
    if (folder !== undefined && enable(folder).directory !== undefined) {
      process.env.NODE_COMPILE_CACHE = folder;
      return;
    }
  } catch {
    // No cache: the run compiles its code as before.
  }
  removeFolders(made);
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

// The folder rules, for the piece cache (src/cache/private-folder.ts): the bundle requires this
// file, already loaded as the process's main module, so that a run loads nothing more for them.
module.exports = { privateFolder, privateFolderRefusal };

// Required rather than run (test/cli/stdout-full.test.ts, src/cache/private-folder.ts), it only
// sets the handler above.
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
