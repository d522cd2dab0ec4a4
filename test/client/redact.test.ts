/**
 * The key never shows (docs/cli.md §1: "never printed, logged or included in an error message"),
 * also where the service's message is clipped (client/error-body.ts keeps 500 characters and
 * adds `…`): a key cut by the clip must not leave its first characters on stderr.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redact } from '../../src/client/auth.js';
import { parseErrorPayload } from '../../src/client/error-body.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { withServer } from '../helpers/servers.js';

const KEY = 'sk-test-SECRET-0123456789';

describe('redact', () => {
  it('replaces every whole occurrence of the key', () => {
    assert.equal(redact(`a ${KEY} b ${KEY}`, KEY), 'a *** b ***');
  });

  it('replaces the start of a key cut off by a clipped message', () => {
    for (const cut of [4, 10, KEY.length - 1]) {
      const message = parseErrorPayload(`${'x'.repeat(500 - cut)}${KEY} and more`).message!;
      assert.ok(message.endsWith(`${KEY.slice(0, cut)}…`), message.slice(-40));
      const shown = redact(message, KEY);
      assert.ok(!shown.includes(KEY.slice(0, 4)), `${cut}: ${shown.slice(-40)}`);
      assert.ok(shown.endsWith('***…'), shown.slice(-40));
    }
  });

  it('leaves text alone that only ends like the key starts, without a clip', () => {
    assert.equal(redact('my sk-test-', KEY), 'my sk-test-');
  });
});

describe('a service that echoes the key in a long error message', () => {
  it('shows no part of it on stderr', async () => {
    await withServer(
      (req, res) => {
        const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'bad_request', message: `${'x'.repeat(490)}${key}` } }));
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '--no-cache', '-o', '-', 'Hello.'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 4, r.stderr);
        assert.ok(!r.stderr.includes(KEY.slice(0, 6)), r.stderr);
      },
    );
  });
});
