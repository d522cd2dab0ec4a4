/**
 * Stop signals while `tts stream -f FIFO` waits for the FIFO's writer (docs/cli.md §1 "Text
 * input", §3; src/text/fifo-open.ts): the open blocks a thread of libuv's pool, which Node's exit
 * waits for. Each test runs the real `bin/tts.js`, waits until a thread of it sleeps in the
 * kernel's open of the FIFO (/proc wchan), does something to the FIFO's path, then signals it:
 * the run must end at once, with its exit code and no file left — whether the path still names
 * the FIFO, was removed, or was replaced by another file.
 */
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTts, type CliResult, type RunOptions } from '../helpers/cli.js';
import { untilFifoOpenWaits, untilHoldsForReading } from '../helpers/fifo.js';

/** No service is reached: the run never gets past reading its text. */
const NO_SERVICE = { TTS_BASE_URL: 'http://127.0.0.1:9', TTS_API_KEY: 'sk-fifo-0123456789abcdef' };

/**
 * Runs `tts stream -f FIFO -o out.wav --json` and, once its open of the FIFO waits, calls
 * `meanwhile` and sends `signal`. A run that does not end is killed after 30 s (and fails).
 */
async function interruptWhileOpenWaits(fifo: string, out: string, signal: NodeJS.Signals, meanwhile: () => Promise<void>, options: RunOptions = {}): Promise<CliResult> {
  let driving: Promise<void> = Promise.resolve();
  const r = await runTts(['stream', '-f', fifo, '-o', out, '--json'], {
    timeoutMs: 30_000,
    ...options,
    env: { ...NO_SERVICE, ...options.env },
    onSpawn: (child: ChildProcess) => {
      driving = (async () => {
        await untilFifoOpenWaits(child.pid!, () => child.exitCode !== null || child.signalCode !== null);
        await meanwhile();
        child.kill(signal);
      })();
    },
  });
  await driving.catch((error: unknown) => {
    throw new Error(`${String(error)}; its stderr:\n${r.stderr}`);
  });
  return r;
}

describe('a stop signal while -f FIFO waits for its writer', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-fifo-input-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cases: { fate: string; signal: NodeJS.Signals; code: number; meanwhile: (fifo: string) => Promise<void>; left: string[] }[] = [
    { fate: 'still named by its path', signal: 'SIGINT', code: 130, meanwhile: async () => {}, left: ['in.fifo'] },
    { fate: 'removed', signal: 'SIGINT', code: 130, meanwhile: (fifo) => unlink(fifo), left: [] },
    {
      fate: 'replaced by a regular file',
      signal: 'SIGINT',
      code: 130,
      meanwhile: async (fifo) => {
        await unlink(fifo);
        await writeFile(fifo, 'another text');
      },
      left: ['in.fifo'],
    },
    {
      fate: 'replaced by another FIFO',
      signal: 'SIGTERM',
      code: 143,
      meanwhile: async (fifo) => {
        await unlink(fifo);
        execFileSync('mkfifo', [fifo]);
      },
      left: ['in.fifo'],
    },
  ];
  for (const { fate, signal, code, meanwhile, left } of cases) {
    it(`${signal} ends the run (exit ${code}, no file left) when the FIFO was ${fate}`, { timeout: 40_000 }, async () => {
      const run = await mkdtemp(join(dir, 'run-'));
      const fifo = join(run, 'in.fifo');
      execFileSync('mkfifo', [fifo]);
      const r = await interruptWhileOpenWaits(fifo, join(run, 'out.wav'), signal, () => meanwhile(fifo));
      assert.equal(r.signal, null, `ended by ${r.signal ?? ''}, not by its own exit:\n${r.stderr}`);
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, signal === 'SIGINT' ? /error: interrupted/ : /stopped by SIGTERM/);
      assert.match(r.stderr.trim().split('\n').at(-1)!, /^\{"ok":false,.*"error":"interrupted"\}$/);
      assert.deepEqual(await readdir(run), left, 'no output, no temporary file');
      if (fate === 'replaced by a regular file') assert.equal(await readFile(fifo, 'utf8'), 'another text');
    });
  }

  it('SIGINT ends the run even when this user may read the FIFO but not write it (no wake-up can reach it): it cleans up, writes its --json line, then dies of SIGINT ($? 130)', { timeout: 40_000 }, async () => {
    // Root may write anything: the run then goes as nobody, for whom the FIFO is read-only.
    const asRoot = process.getuid?.() === 0;
    const run = await mkdtemp(join(dir, 'run-'));
    await chmod(dir, 0o755);
    await chmod(run, 0o777);
    const fifo = join(run, 'in.fifo');
    execFileSync('mkfifo', ['-m', '444', fifo]);
    const r = await interruptWhileOpenWaits(fifo, join(run, 'out.wav'), 'SIGINT', async () => {}, {
      prefix: asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [],
      env: { XDG_CACHE_HOME: join(run, 'cache'), XDG_CONFIG_HOME: join(run, 'config') },
    });
    assert.equal(r.signal, 'SIGINT', `code ${r.code}:\n${r.stderr}`);
    assert.match(r.stderr, /error: interrupted/);
    assert.match(r.stderr.trim().split('\n').at(-1)!, /^\{"ok":false,.*"error":"interrupted"\}$/);
    assert.deepEqual((await readdir(run)).filter((name) => name !== 'cache'), ['in.fifo'], 'no output, no temporary file');
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} ends the run (exit ${code}, no file left) while the FIFO's writer is there but has written nothing yet`, { timeout: 40_000 }, async () => {
      const run = await mkdtemp(join(dir, 'run-'));
      const fifo = join(run, 'in.fifo');
      execFileSync('mkfifo', [fifo]);
      // The test is the writer (opened read and write, so without waiting for a reader): it writes nothing and stays.
      const writer = openSync(fifo, 'r+');
      let driving: Promise<void> = Promise.resolve();
      try {
        const r = await runTts(['stream', '-f', fifo, '-o', join(run, 'out.wav'), '--json'], {
          timeoutMs: 30_000,
          env: NO_SERVICE,
          onSpawn: (child: ChildProcess) => {
            driving = (async () => {
              await untilHoldsForReading(child.pid!, [fifo], () => child.exitCode !== null || child.signalCode !== null);
              child.kill(signal);
            })();
          },
        });
        await driving.catch((error: unknown) => {
          throw new Error(`${String(error)}; its stderr:\n${r.stderr}`);
        });
        assert.equal(r.signal, null, `ended by ${r.signal ?? ''}, not by its own exit:\n${r.stderr}`);
        assert.equal(r.code, code, r.stderr);
        assert.match(r.stderr.trim().split('\n').at(-1)!, /^\{"ok":false,.*"error":"interrupted"\}$/);
        assert.deepEqual(await readdir(run), ['in.fifo'], 'no output, no temporary file');
      } finally {
        closeSync(writer);
      }
    });
  }
});
