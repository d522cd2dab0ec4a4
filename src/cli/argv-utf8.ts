/**
 * Command-line arguments that were not UTF-8 (docs/cli.md §1 "Text input"). Node decodes its
 * arguments leniently, each bad byte becoming U+FFFD, so a word would be spoken, and a file name
 * (`-o`, `-f`, `--subtitles`) would name another file than the one given: such an argument is
 * refused. Its bytes are read back from `/proc/self/cmdline` (Linux), whose last arguments are this
 * run's, position for position.
 */
import { readFileSync } from 'node:fs';
import { strictUtf8Document } from '../text/utf8.js';

/** Where the first argument that was not UTF-8 is. */
export interface InvalidArgument {
  /** Its position among the arguments after `tts`, from 1. */
  position: number;
  /** The byte offset (from 0) of its first bad byte. */
  offset: number;
}

/**
 * The first of `argv` (the arguments after `tts`, as Node decoded them) whose bytes on the command
 * line were not strict UTF-8 (WHATWG Encoding, fatal), when `argv` is this process's own command
 * line (`processArgv` after the program and the script; an in-process run's `argv` is not, and is
 * never refused). Only arguments holding U+FFFD are looked at; one whose U+FFFD was given as such
 * passes. Where `/proc/self/cmdline` cannot be read (other systems), nothing is refused.
 * @param cmdline the process's arguments as bytes, each NUL-terminated; undefined when unreadable.
 * @returns the argument's position and first bad byte, or undefined.
 */
export function invalidUtf8Argument(argv: readonly string[], processArgv: readonly string[] = process.argv, cmdline: () => Buffer | undefined = procCmdline): InvalidArgument | undefined {
  if (!argv.some((a) => a.includes('\uFFFD'))) return undefined;
  const own = processArgv.slice(2);
  if (own.length !== argv.length || own.some((a, i) => a !== argv[i])) return undefined;
  const raw = cmdline();
  if (raw === undefined) return undefined;
  const all: Buffer[] = [];
  for (let start = 0; start < raw.length; ) {
    let end = raw.indexOf(0, start);
    if (end === -1) end = raw.length;
    all.push(raw.subarray(start, end));
    start = end + 1;
  }
  if (all.length < argv.length) return undefined;
  const tail = all.slice(all.length - argv.length);
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i]!.includes('\uFFFD')) continue;
    // Position for position, or nothing is said: the bytes must decode to the argument.
    if (tail[i]!.toString('utf8') !== argv[i]) return undefined;
    const decoded = strictUtf8Document(tail[i]!);
    if ('problem' in decoded) return { position: i + 1, offset: decoded.problem.offset };
  }
  return undefined;
}

/** `/proc/self/cmdline`'s bytes, or undefined where it cannot be read. */
function procCmdline(): Buffer | undefined {
  try {
    return readFileSync('/proc/self/cmdline');
  } catch {
    return undefined;
  }
}
