/** reportingPieceDone (src/speak/progress.ts): progress hears of each piece from the run, not from the cache. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OpenRequest } from '../../src/speak/channels.js';
import { reportingPieceDone } from '../../src/speak/progress.js';

const SPEC = { format: 'pcm16', sampleRate: 24000, channels: 1 } as const;

function opener(replayed: boolean | undefined): OpenRequest {
  return (text) => ({
    chunks: (async function* () {
      yield { data: Buffer.from(text), itemId: undefined };
    })(),
    arriving: () => SPEC,
    spoke: () => undefined,
    ...(replayed === undefined ? {} : { replayed: () => replayed }),
  });
}

describe('reportingPieceDone', () => {
  it('says each piece once, after its last chunk was handed on, and whether the cache replayed it', async () => {
    for (const [replayed, fromCache] of [[true, true], [false, false], [undefined, false]] as const) {
      const done: [string, boolean][] = [];
      const answer = reportingPieceDone(opener(replayed), (text, cached) => done.push([text, cached]))('hello', new AbortController().signal);
      const seen: string[] = [];
      for await (const chunk of answer.chunks) {
        seen.push(String(chunk.data));
        assert.deepEqual(done, [], 'not before the chunk was taken');
      }
      assert.deepEqual(seen, ['hello']);
      assert.deepEqual(done, [['hello', fromCache]]);
    }
  });
});
