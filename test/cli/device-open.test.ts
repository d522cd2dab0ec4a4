/**
 * A stop signal while the open of a character device sleeps (docs/cli.md §1 "into a pipe or a
 * device", "Text input", §3; src/audio/special-files.ts openDeviceForWriting, src/text/read.ts
 * openDevice): `-o DEVICE` and the side outputs open a device as a shell's `>` does, `-f DEVICE`
 * as its `<` does, and open(2) may sleep in the kernel until the device is
 * ready (a serial line without carrier), in a thread of libuv's pool that Node's exit waits for.
 * Ctrl-C or SIGTERM must still end the run: it cleans up, then the process ends by the signal.
 * The sleep is made by test/helpers/slow-open-hook.ts (the device's open held behind a FIFO's);
 * each test runs the real `bin/tts.js`, waits until a thread of it sleeps in that open (/proc
 * wchan), then signals it.
 */
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';
import { untilFifoOpenWaits } from '../helpers/fifo.js';

/** No service is reached: the run never gets past opening its outputs. */
const NO_SERVICE = { TTS_BASE_URL: 'http://127.0.0.1:9', TTS_API_KEY: 'sk-device-0123456789abcdef' };
const HOOK = new URL('../helpers/slow-open-hook.js', import.meta.url).href;

describe('a stop signal while the open of a device sleeps', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-device-open-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cases: { what: string; args: (device: string, run: string) => string[]; signal: NodeJS.Signals; said: RegExp }[] = [
    { what: '-o DEVICE (the audio)', args: (device) => ['stream', '--json', '-o', device, 'Hello there.'], signal: 'SIGINT', said: /error: interrupted/ },
    {
      what: '--word-timings DEVICE, with the audio into a file',
      args: (device, run) => ['stream', '--json', '-o', join(run, 'out.wav'), '--word-timings', device, 'Hello there.'],
      signal: 'SIGTERM',
      said: /stopped by SIGTERM/,
    },
    // The text's device, opened as a shell's `<` opens it (docs/cli.md §1 "Text input").
    { what: '-f DEVICE (the text)', args: (device, run) => ['stream', '--json', '-f', device, '-o', join(run, 'out.wav')], signal: 'SIGINT', said: /error: interrupted/ },
    { what: '-f DEVICE (the text)', args: (device, run) => ['stream', '--json', '-f', device, '-o', join(run, 'out.wav')], signal: 'SIGTERM', said: /stopped by SIGTERM/ },
  ];
  for (const { what, args, signal, said } of cases) {
    it(`${signal} ends the run while the open of ${what} sleeps: it cleans up, writes its --json line, then dies of ${signal}; no file left`, { timeout: 40_000 }, async () => {
      const run = await mkdtemp(join(dir, 'run-'));
      // A character device by a name of the run's own: /dev/null behind a link.
      const device = join(run, 'line');
      await symlink('/dev/null', device);
      const gate = join(run, 'gate.fifo');
      execFileSync('mkfifo', [gate]);
      let driving: Promise<void> = Promise.resolve();
      const r = await runTts(args(device, run), {
        timeoutMs: 30_000,
        nodeArgs: ['--import', HOOK],
        env: { ...NO_SERVICE, TTS_TEST_SLOW_OPEN: device, TTS_TEST_SLOW_OPEN_FIFO: gate },
        onSpawn: (child: ChildProcess) => {
          driving = (async () => {
            await untilFifoOpenWaits(child.pid!, () => child.exitCode !== null || child.signalCode !== null);
            child.kill(signal);
          })();
        },
      });
      await driving.catch((error: unknown) => {
        throw new Error(`${String(error)}; its stderr:\n${r.stderr}`);
      });
      assert.equal(r.signal, signal, `code ${r.code}, signal ${r.signal}:\n${r.stderr}`);
      assert.match(r.stderr, said);
      assert.match(r.stderr.trim().split('\n').at(-1)!, /^\{"ok":false,.*\}$/);
      assert.deepEqual((await readdir(run)).sort(), ['gate.fifo', 'line'], 'no output, no temporary file');
      assert.ok((await lstat(device)).isSymbolicLink(), 'the device\'s name is as it was');
    });
  }
});
