/**
 * `--play -o copy.wav` (docs/cli.md §2): a failure to play — no player at all, or a player that
 * dies midway — never loses the file. The file is written whole, and the run exits 7 saying
 * what could not play and that the file was kept. In-process through `main` against a fake
 * service, with PATH holding only the players the test puts there.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runMain } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, patternBytes, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

const PCM_BYTES = 48_000;

describe('--play with -o: playback that fails keeps the file', () => {
  let home: string;
  let server: TestServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-play-file-'));
    server = await startServer((_req, res) => {
      startEventStream(res);
      // Several deltas, so a player that dies after the first is seen to fail midway.
      for (let i = 0; i < 8; i++) res.write(deltaEvent(patternBytes(PCM_BYTES / 8, i + 1)));
      res.end(doneEvent());
    });
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  const env = (path: string): NodeJS.ProcessEnv => ({ HOME: home, PATH: path, TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-play', TTS_NO_CACHE: '1' });
  const wavData = async (name: string): Promise<number> => {
    const bytes = await readFile(join(home, name));
    assert.equal(bytes.subarray(0, 4).toString('latin1'), 'RIFF');
    return bytes.length - 44;
  };

  it('no player on PATH: copy.wav is written whole, exit 7 names what could not play and the kept file', async () => {
    const r = await runMain(['say', '--play', '--player', 'aplay', '-q', '-o', join(home, 'copy.wav'), 'hello there'], env(join(home, 'empty-bin')));
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /could not play the audio \(.*aplay.*\); the file .*copy\.wav was written and kept/);
    assert.equal(await wavData('copy.wav'), PCM_BYTES);
  });

  it('a player that dies midway: the file is still written whole, exit 7', async () => {
    const bin = join(home, 'bin');
    await mkdir(bin, { recursive: true });
    // Takes the first bytes, then exits: later writes to its pipe fail (EPIPE).
    await writeFile(join(bin, 'aplay'), '#!/bin/sh\nhead -c 2000 > /dev/null\nexit 1\n');
    await chmod(join(bin, 'aplay'), 0o755);
    const r = await runMain(['say', '--play', '--player', 'aplay', '-q', '-o', join(home, 'mid.wav'), 'hello there'], env(`${bin}:/usr/bin:/bin`));
    assert.equal(r.code, 7, r.stderr);
    assert.match(r.stderr, /could not play the audio .*; the file .*mid\.wav was written and kept/);
    assert.equal(await wavData('mid.wav'), PCM_BYTES);
  });
});
