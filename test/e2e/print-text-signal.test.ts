/**
 * A stop signal while `--print-text` prints a big input into a regular file (docs/cli.md §10
 * `--print-text`, §3): `tts stream --print-text -f big.txt > out.txt`. Node writes a file on
 * standard output synchronously, so every write is taken at once and the printing never waited:
 * the event loop did not run until the whole text was printed, and SIGTERM was seen only then
 * (exit 0, the whole text printed). Each test runs the real `bin/tts.js` with standard output a
 * file of the test's (as a shell's `>` gives it), waits until the first bytes are in it, sends
 * SIGTERM and waits for the end: exit 143, the printing stopped well before the end of the text.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, TTS_BIN } from '../helpers/cli.js';

/** Size of the input, in MiB: about a second of printing, far more than a signal needs. */
const SIZE_MIB = 40;

/** `unit` repeated until the text is {@link SIZE_MIB} MiB (ASCII), inside `first` and `last`. */
function repeated(unit: string, first = '', last = ''): string {
  return first + unit.repeat(Math.ceil((SIZE_MIB * 1024 * 1024) / unit.length)) + last;
}

describe('SIGTERM while --print-text prints into a regular file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-print-signal-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [kind, name, text] of [
    ['plain text', 'big.txt', repeated('Apples ripen slowly in the autumn sun. ')],
    ['SSML', 'big.ssml', repeated('<s>Go on, go on.</s>', '<speak>', '</speak>')],
  ] as const) {
    it(`${kind}: the run stops promptly, exit 143, the rest not printed`, { timeout: 120_000 }, async () => {
      const file = join(dir, name);
      await writeFile(file, text);
      const printed = join(dir, `${name}.out`);
      const out = openSync(printed, 'w');
      try {
        const child = spawn(process.execPath, [TTS_BIN, 'stream', '-f', file, '--print-text'], { env: cleanEnv(), stdio: ['ignore', out, 'pipe'] });
        let stderr = '';
        child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
        const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
        let ended = false;
        void closed.then(() => (ended = true));
        // The printing has begun: its first block is in the file.
        while (statSync(printed).size === 0) {
          assert.equal(ended, false, `the run ended before it printed anything: ${stderr}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        child.kill('SIGTERM');
        // A run that does not end is killed, and the test fails on its exit code, not on its timeout.
        const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
        const code = await closed;
        clearTimeout(guard);
        assert.equal(code, 143, `the run did not stop on SIGTERM: ${stderr}`);
        assert.match(stderr, /stopped by SIGTERM/);
        // One sentence a line, spaces collapsed: about the input's size when printed whole.
        assert.ok(statSync(printed).size < (SIZE_MIB * 1024 * 1024) / 2, `${statSync(printed).size} bytes printed: the printing went on`);
      } finally {
        closeSync(out);
      }
    });
  }
});
