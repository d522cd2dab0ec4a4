/**
 * A fallback's audio is never stored under the primary's key (docs/cli.md §8; docs/protocol.md
 * §2.3), also when it comes from a remote service — another machine's `tts serve`, whose `done`
 * names `fallback:<engines>` exactly as the in-process one does. A remote service that names no
 * engine, or its own, is trusted and its pieces replayed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freshCacheHome } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { deltaEvent, patternBytes, sse, startEventStream, withServer } from '../helpers/servers.js';

const KEY = 'test-key-remote-fallback';

/** Runs `tts stream` twice against a service whose `done` carries `engine`; the second run's summary. */
async function twice(engine: string | undefined): Promise<{ requests: number; cache_hits: number; served: number }> {
  let served = 0;
  let summary: { requests: number; cache_hits: number } | undefined;
  await withServer(
    (_req, res) => {
      served++;
      startEventStream(res);
      res.write(deltaEvent(patternBytes(4800)));
      res.end(sse('done', { type: 'speech.audio.done', item_id: 'item_test', ...(engine === undefined ? {} : { engine }) }));
    },
    async (server) => {
      const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, XDG_CACHE_HOME: freshCacheHome() };
      for (let run = 0; run < 2; run++) {
        const r = await runTtsInProcess(['stream', '-v', 'en-man-1', '--json', '-o', '-', 'Who spoke this?'], { env });
        assert.equal(r.code, 0, r.stderr);
        summary = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { requests: number; cache_hits: number };
      }
    },
  );
  return { ...summary!, served };
}

describe('the piece cache and a remote service that names who spoke', () => {
  it('does not store a piece whose done says a fallback spoke: the next run asks again', async () => {
    const second = await twice('fallback:espeak');
    assert.equal(second.cache_hits, 0);
    assert.equal(second.served, 2);
  });

  it('stores a piece of a service that names no engine, or its own', async () => {
    for (const engine of [undefined, 'builtin']) {
      const second = await twice(engine);
      assert.equal(second.cache_hits, 1, String(engine));
      assert.equal(second.served, 1, String(engine));
    }
  });
});
