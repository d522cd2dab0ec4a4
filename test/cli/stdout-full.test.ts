/**
 * Standard output that cannot be written (a full disk, here `/dev/full`, which fails every write
 * with ENOSPC) is local I/O: exit 7 with a message saying why (docs/cli.md §3), never an
 * "internal error" with a stack — for text bin/tts.js writes itself (the help), text of a command
 * (`tts voices`), and audio (`tts stream`, whose sink reports it). A closed pipe stays quiet.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { describe, it } from 'node:test';
import { TTS_BIN, cleanEnv } from '../helpers/cli.js';

function runIntoFull(args: string[]): { status: number | null; stderr: string } {
  const full = openSync('/dev/full', 'w');
  try {
    const r = spawnSync(process.execPath, [TTS_BIN, ...args], { env: cleanEnv(), stdio: ['ignore', full, 'pipe'], timeout: 60_000 });
    return { status: r.status, stderr: r.stderr.toString('utf8') };
  } finally {
    closeSync(full);
  }
}

describe('standard output on a full disk (/dev/full)', { skip: !existsSync('/dev/full') && 'no /dev/full' }, () => {
  for (const args of [['--help'], ['voices'], ['stream', '-q', '--raw', 'Hello.']]) {
    it(`tts ${args.join(' ')}: exit 7, "no space left", no internal error`, () => {
      const r = runIntoFull(args);
      assert.equal(r.status, 7, r.stderr);
      assert.match(r.stderr, /no space left/i);
      assert.match(r.stderr, /\[io_error\]/);
      assert.doesNotMatch(r.stderr, /internal error|this is a bug|    at /);
    });
  }
});
