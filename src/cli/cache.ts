/**
 * `tts cache stats|clear` (docs/cli.md §8): what the piece cache holds, and emptying it. A listing,
 * not audio, so it goes to stdout like `tts voices`.
 */
import { formatByteSize } from '../byte-size.js';
import type { Command } from 'commander';
import { EXIT } from '../errors.js';
import type { CommandDone } from './flags.js';
import { escapeControls } from './escape.js';
import type { CommandIo } from './report.js';

/** Adds `cache` with its subcommands `stats` and `clear` to the program. */
export function addCacheCommand(program: Command, io: CommandIo, done: CommandDone): void {
  const cache = program.command('cache').description('the piece cache: `stats` shows what it holds, `clear` empties it');
  cache
    .command('stats')
    .description('where the piece cache is, how many pieces and bytes it holds')
    .option('--json', 'one JSON object on stdout: {dir, entries, bytes}')
    .action(async (flags: { json?: boolean }) => done(await cacheStats(flags, io)));
  cache
    .command('clear')
    .description('remove every piece from the cache')
    .action(async () => done(await cacheClear(io)));
}

/**
 * Prints the cache's folder, entries and size.
 * @returns exit code 0 (an absent cache is an empty one); 7 (`io_error`) when the folder cannot
 *   be read (not a folder, no permission).
 */
export async function cacheStats(flags: { json?: boolean }, io: CommandIo): Promise<number> {
  const [{ cacheDir }, { PieceCache }] = await Promise.all([import('../cache/dir.js'), import('../cache/store.js')]);
  let stats: Awaited<ReturnType<InstanceType<typeof PieceCache>['stats']>>;
  try {
    stats = await new PieceCache(cacheDir(io.env), 0, () => {}).stats();
  } catch (error) {
    io.stderr.write(`tts: error: cannot read the cache in ${escapeControls(cacheDir(io.env))} (${escapeControls((error as NodeJS.ErrnoException).code ?? String(error))}) [io_error]\n`);
    return EXIT.io;
  }
  if (flags.json === true) {
    io.stdout.write(`${JSON.stringify(stats)}\n`);
  } else {
    io.stdout.write(`${escapeControls(stats.dir)}\n${stats.entries} piece(s), ${formatByteSize(stats.bytes)}\n`);
  }
  return EXIT.ok;
}

/**
 * Removes every entry.
 * @returns exit code 0; 7 (`io_error`) when the folder cannot be read or an entry removed (then
 *   nothing but entries was touched).
 */
export async function cacheClear(io: CommandIo): Promise<number> {
  const [{ cacheDir }, { PieceCache }] = await Promise.all([import('../cache/dir.js'), import('../cache/store.js')]);
  try {
    const removed = await new PieceCache(cacheDir(io.env), 0, () => {}).clear();
    io.stdout.write(`removed ${removed.entries} piece(s), ${formatByteSize(removed.bytes)} from ${escapeControls(removed.dir)}\n`);
    return EXIT.ok;
  } catch (error) {
    io.stderr.write(`tts: error: cannot clear the cache (${escapeControls((error as NodeJS.ErrnoException).code ?? String(error))}) [io_error]\n`);
    return EXIT.io;
  }
}
