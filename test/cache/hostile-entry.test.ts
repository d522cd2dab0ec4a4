/**
 * A cache entry whose checksum is right but whose audio is not whole samples of the format it is
 * keyed by (an odd byte count for pcm16; none at all) is not a piece any service sent: tts stores
 * only whole samples (docs/cli.md §8). Someone who can write the folder can make one (the
 * checksum is no signature). It is a corrupt entry — the piece is requested again and the run
 * writes what it wrote when the cache was filled — never a protocol error of the service
 * replayed on every later run (exit 6), nor a run that gives no audio.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { entryHeader, HEADER_BYTES } from '../../src/cache/entry.js';
import { freshCacheHome } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, patternBytes, startEventStream, withServer } from '../helpers/servers.js';

const KEY = 'test-key-hostile-entry';

/** Rewrites the one entry in `pieces` with the first `audioBytes` of its audio, under a right checksum. */
function forge(pieces: string, audioBytes: number): void {
  const [name, ...others] = readdirSync(pieces);
  assert.equal(others.length, 0);
  const path = join(pieces, name!);
  const audio = readFileSync(path).subarray(HEADER_BYTES, HEADER_BYTES + audioBytes);
  writeFileSync(path, Buffer.concat([entryHeader(audio.length, createHash('sha256').update(audio).digest()), audio]));
}

describe('a cache entry that is not whole samples', () => {
  for (const audioBytes of [1001, 0]) {
    it(`${audioBytes} bytes of pcm16: requested again, the same output as the run that filled the cache`, async () => {
      let served = 0;
      await withServer(
        (_req, res) => {
          served++;
          startEventStream(res);
          res.write(deltaEvent(patternBytes(4800)));
          res.end(doneEvent());
        },
        async (server) => {
          const home = freshCacheHome();
          const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, XDG_CACHE_HOME: home };
          const args = ['stream', '-v', 'en-man-1', '--json', '-o', '-', 'A forged entry.'];
          const first = await runTtsInProcess(args, { env });
          assert.equal(first.code, 0, first.stderr);
          forge(join(home, 'tts', 'pieces'), audioBytes);
          const second = await runTtsInProcess(args, { env });
          assert.equal(second.code, 0, second.stderr);
          assert.ok(Buffer.from(second.stdout).equals(Buffer.from(first.stdout)));
          assert.equal(served, 2);
          // The answer was stored over it: the third run replays it.
          const third = await runTtsInProcess(args, { env });
          assert.equal(third.code, 0, third.stderr);
          assert.equal((JSON.parse(third.stderr.trim().split('\n').at(-1)!) as { cache_hits: number }).cache_hits, 1);
        },
      );
    });
  }
});
