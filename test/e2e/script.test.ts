/**
 * A dialogue script stopped by Ctrl-C and run again (docs/cli.md §11.2, §8): the real binary,
 * since the signal matters. A fake service counts the requests; the run gets SIGINT once half
 * the turns were served, leaves no output, and the same command then asks only for the turns
 * not stored and writes the same bytes as a clean run.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, patternBytes, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

const TURNS = 12;

describe('a dialogue script resumed after Ctrl-C', () => {
  let dir: string;
  let server: TestServer;
  /** Requests whose response has ended. */
  let answered = 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-script-e2e-'));
    server = await startServer((_req, res, body) => {
      startEventStream(res);
      // Each turn's audio differs (seeded by a hash of the request), so a turn out of place would change the file.
      let seed = 1;
      for (let i = 0; i < body.length; i++) seed = (seed * 31 + body.charCodeAt(i)) >>> 0;
      res.write(deltaEvent(patternBytes(9600, seed)));
      res.end(doneEvent(), () => answered++);
    });
    const lines = Array.from({ length: TURNS }, (_, i) => `${i % 2 === 0 ? 'Alice' : 'Bob'}: Line number ${i + 1} of the talk.`);
    await writeFile(join(dir, 'talk.script.txt'), lines.join('\n') + '\n');
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const env = (cacheHome: string): Record<string, string> => ({ TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-script-e2e', XDG_CACHE_HOME: cacheHome, XDG_CONFIG_HOME: join(dir, 'no-config') });
  const args = (out: string): string[] => ['stream', '-f', join(dir, 'talk.script.txt'), '--cast', 'Alice=en-woman-1,Bob=en-man-1', '--concurrency', '1', '-o', out, '--json'];
  const summary = (stderr: string): { requests: number; cache_hits: number } => JSON.parse(stderr.trim().split('\n').at(-1)!) as { requests: number; cache_hits: number };

  it('asks only for the turns not stored, and writes the same file as a clean run', async () => {
    const clean = join(dir, 'clean.wav');
    const rc = await runTtsInProcess(args(clean), { env: env(await mkdtemp(join(dir, 'home-'))) });
    assert.equal(rc.code, 0, rc.stderr);
    assert.equal(summary(rc.stderr).requests, TURNS);

    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const out = join(dir, 'talk.wav');
    const start = answered;
    const r1 = await runTts(args(out), {
      env: env(cacheHome),
      onSpawn: (child: ChildProcess) => {
        const poll = setInterval(() => {
          if (answered - start >= TURNS / 2) {
            clearInterval(poll);
            child.kill('SIGINT');
          }
        }, 5);
        child.once('exit', () => clearInterval(poll));
      },
    });
    assert.equal(r1.code, 130, r1.stderr);
    assert.equal(existsSync(out), false, 'an interrupted run left its output');
    const stored = (await readdir(join(cacheHome, 'tts', 'pieces'))).filter((n) => !n.endsWith('.tmp')).length;
    assert.ok(stored >= TURNS / 2 - 1 && stored < TURNS, `${stored} of ${TURNS} turns stored before Ctrl-C`);

    const r2 = await runTtsInProcess(args(out), { env: env(cacheHome) });
    assert.equal(r2.code, 0, r2.stderr);
    assert.deepEqual(summary(r2.stderr), { ...summary(r2.stderr), cache_hits: stored, requests: TURNS - stored });
    assert.ok((await readFile(out)).equals(await readFile(clean)), 'the resumed file differs from a clean run');
  });
});
