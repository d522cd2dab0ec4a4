/**
 * Standard error that cannot be written — a full disk (`/dev/full` fails every write with
 * ENOSPC), a reader that went away (EPIPE), a terminal that hung up (EIO) — has nowhere to say
 * anything: the run goes on and writes its output, exit 0 (docs/cli.md §3), instead of dying as
 * an "internal error" (exit 1) with the output discarded.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TTS_BIN, cleanEnv } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tts-stderr-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `--verbose` writes to stderr before, during and after the request. */
const args = (out: string): string[] => ['stream', '--verbose', '--offline', '-o', out, 'Hello.'];

describe('standard error that cannot be written', () => {
  it('on a full disk (/dev/full): the run goes on, the file is written, exit 0', { skip: !existsSync('/dev/full') && 'no /dev/full' }, () => {
    const out = join(dir, 'full.wav');
    const full = openSync('/dev/full', 'w');
    try {
      const r = spawnSync(process.execPath, [TTS_BIN, ...args(out)], { env: cleanEnv(), stdio: ['ignore', 'ignore', full], timeout: 60_000 });
      assert.equal(r.status, 0);
    } finally {
      closeSync(full);
    }
    assert.ok(statSync(out).size > 44, 'the audio was written');
  });

  it('a pipe whose reader is gone (2>&1 | head): the run goes on, the file is written, exit 0', async () => {
    const out = join(dir, 'pipe.wav');
    const child = spawn(process.execPath, [TTS_BIN, ...args(out)], { env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    // The reader goes away before tts writes its first line: every write to stderr fails (EPIPE).
    child.stderr!.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.equal(code, 0);
    assert.ok(statSync(out).size > 44, 'the audio was written');
  });
});
