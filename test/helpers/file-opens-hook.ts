/**
 * Loaded through NODE_OPTIONS=--import (in the main thread; worker threads load it too and do
 * nothing): counts every open or whole-file read of the one path named by TTS_TEST_COUNT_OPENS —
 * through `fs.openSync`, `fs.open`, `fs.readFileSync`, `fs.readFile`, `fs/promises`' `open` and
 * `readFile` — by bin/tts.js or the bundle alike, and when the process exits writes one line
 * `OPENS <n>` to stderr. test/cli/config-file.test.ts: the config file is read once per run.
 */
import fs from 'node:fs';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import workerThreads from 'node:worker_threads';

const watched = process.env['TTS_TEST_COUNT_OPENS'];
if (workerThreads.isMainThread && watched !== undefined && watched !== '') {
  let opens = 0;
  const counted = <T extends object>(holder: T, name: keyof T & string): void => {
    const original = holder[name] as (...args: unknown[]) => unknown;
    (holder as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
      if (String(args[0]) === watched) opens++;
      return original.apply(this, args);
    };
  };
  for (const name of ['openSync', 'open', 'readFileSync', 'readFile'] as const) counted(fs, name);
  for (const name of ['open', 'readFile'] as const) counted(fsPromises, name);
  syncBuiltinESMExports();
  process.on('exit', () => process.stderr.write(`OPENS ${opens}\n`));
}
