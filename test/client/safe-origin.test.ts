/**
 * A user name and password written into a base URL are never sent (tts sends only its API key)
 * and never shown: `--verbose` names what it asks by scheme, host, port and path, and
 * `tts config show` lists the URL with them masked (docs/cli.md §1, §7).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeLocation, safeOrigin, withoutCredentials } from '../../src/client/safe-origin.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { withServer } from '../helpers/servers.js';

const PASSWORD = 'URLPASSWORD-9876';

describe('safe-origin', () => {
  it('safeLocation keeps scheme, host, port and path, and drops the user, password, query and fragment', () => {
    assert.equal(safeLocation(new URL(`https://me:${PASSWORD}@api.example.com:8443/v1/tts/sse?token=T#x`)), 'https://api.example.com:8443/v1/tts/sse');
    assert.equal(safeLocation(new URL(`wss://me:${PASSWORD}@api.example.com/v1/realtime_tts`)), 'wss://api.example.com/v1/realtime_tts');
  });

  it('withoutCredentials masks a user name and password and keeps the rest; other strings pass unchanged', () => {
    assert.equal(withoutCredentials(`http://me:${PASSWORD}@127.0.0.1:9/base?q=1`), 'http://***@127.0.0.1:9/base?q=***');
    assert.equal(withoutCredentials(`https://${PASSWORD}@example.com`), 'https://***@example.com/');
    assert.equal(withoutCredentials('https://example.com/v1'), 'https://example.com/v1');
    assert.equal(withoutCredentials('not a url'), 'not a url');
    assert.equal(safeOrigin(`https://me:${PASSWORD}@example.com/x`), 'https://example.com');
  });

  it('withoutCredentials masks them in a URL that does not parse too (a port over 65535, a space in the host)', () => {
    assert.equal(withoutCredentials(`https://me:${PASSWORD}@host:99999/v1`), 'https://***@host:99999/v1');
    assert.equal(withoutCredentials(`https://me:${PASSWORD}@exa mple.com/v1?q=a@b`), 'https://***@exa mple.com/v1?q=***');
    assert.equal(withoutCredentials('https://host:99999/v1?to=a@b'), 'https://host:99999/v1?to=***');
  });

  it('withoutCredentials masks query values and a fragment, which may carry a key, and keeps the names', () => {
    assert.equal(withoutCredentials(`http://127.0.0.1:18787/?api_key=${PASSWORD}`), 'http://127.0.0.1:18787/?api_key=***');
    assert.equal(withoutCredentials(`https://h/v1?a=1&${PASSWORD}&b=&c=x=y#${PASSWORD}`), 'https://h/v1?a=***&***&b=***&c=***#***');
    assert.equal(withoutCredentials(`https://me:${PASSWORD}@h/v1?k=${PASSWORD}`), 'https://***@h/v1?k=***');
    assert.equal(withoutCredentials(`https://h:99999/v1?k=${PASSWORD}#f`), 'https://h:99999/v1?k=***#***');
    assert.equal(withoutCredentials('https://h/v1?'), 'https://h/v1?');
    assert.equal(withoutCredentials('https://h/v1#'), 'https://h/v1#');
    assert.equal(withoutCredentials('https://h/a#b?c=d'), 'https://h/a#***');
  });
});

describe('a base URL with a user name and password', () => {
  it('shows neither when the URL does not parse: the invalid base URL message masks them (SSE and WebSocket)', async () => {
    const bad = `https://me:${PASSWORD}@host:99999/v1`;
    const sse = await runTtsInProcess(['stream', '--no-cache', '-o', '-', '--base-url', bad, 'Hello.'], { env: { TTS_API_KEY: 'sk-test-0123456789' } });
    assert.equal(sse.code, 2, sse.stderr);
    assert.match(sse.stderr, /invalid base URL: https:\/\/\*\*\*@host:99999\/v1/u, sse.stderr);
    assert.ok(!sse.stderr.includes(PASSWORD), sse.stderr);
    const ws = await runTtsInProcess(['realtime', '--no-cache', '-o', '-', '--base-url', 'https://example.com', '--ws-base-url', bad.replace('https', 'wss'), 'Hello.'], { env: { TTS_API_KEY: 'sk-test-0123456789' } });
    assert.equal(ws.code, 2, ws.stderr);
    assert.ok(!ws.stderr.includes(PASSWORD), ws.stderr);
  });

  it('shows neither in --verbose, nor in tts config show', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'invalid_api_key', message: 'no' } }));
      },
      async (server) => {
        const url = server.url.replace('http://', `http://me:${PASSWORD}@`);
        const r = await runTtsInProcess(['stream', '--no-cache', '--verbose', '-o', '-', 'Hello.'], { env: { TTS_BASE_URL: url, TTS_API_KEY: 'sk-test-0123456789' } });
        assert.equal(r.code, 3, r.stderr);
        assert.match(r.stderr, new RegExp(`POST ${server.url.replace(/\/$/, '')}/v1/tts/sse`), r.stderr);
        assert.ok(!r.stderr.includes(PASSWORD), r.stderr);
        const shown = await runTtsInProcess(['config', 'show'], { env: { TTS_BASE_URL: url } });
        assert.equal(shown.code, 0, shown.stderr);
        assert.match(shown.stdout.toString(), /base-url\s+= "http:\/\/\*\*\*@127\.0\.0\.1:/, shown.stdout.toString());
        assert.ok(!shown.stdout.includes(PASSWORD) && !shown.stderr.includes(PASSWORD), shown.stdout.toString());
        // A key in the query (`?api_key=…`), which the run does not send either.
        const inQuery = await runTtsInProcess(['config', 'show'], { env: { TTS_BASE_URL: `${server.url}?api_key=${PASSWORD}` } });
        assert.equal(inQuery.code, 0, inQuery.stderr);
        assert.match(inQuery.stdout.toString(), /base-url\s+= "http:\/\/127\.0\.0\.1:\d+\/?\?api_key=\*\*\*"/u, inQuery.stdout.toString());
        assert.ok(!inQuery.stdout.includes(PASSWORD) && !inQuery.stderr.includes(PASSWORD), inQuery.stdout.toString());
      },
    );
  });
});
