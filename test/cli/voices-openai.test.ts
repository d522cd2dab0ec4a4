/**
 * `tts voices --api openai` against a hostile OpenAI-shaped server (docs/cli.md §1, §2): the ids
 * come from the service, so their control characters are escaped before they reach a terminal —
 * a voice id can neither drive the terminal nor fake a line of the list — and the notice for a
 * server without a list is one `tts:` line.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runTtsInProcess } from '../helpers/in-process.js';
import { withServer } from '../helpers/servers.js';

const KEY = 'test-key-voices-openai';

describe('tts voices --api openai, ids from the service', () => {
  it('escapes control and bidirectional characters of the ids, one id a line, and in --json', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ voices: ['good', 'evil\u001b[2J\u001b]0;title\u0007', 'two\nlines', 'bidi\u202eright', 'c1\u009b31m'] }));
      },
      async (server) => {
        const env = { TTS_BASE_URL: server.url, TTS_API_KEY: KEY };
        const listed = await runTtsInProcess(['voices', '--api', 'openai'], { env });
        assert.equal(listed.code, 0, listed.stderr);
        const out = listed.stdout.toString();
        assert.doesNotMatch(out, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/, JSON.stringify(out));
        assert.deepEqual(out.split('\n'), ['good', 'evil\\x1b[2J\\x1b]0;title\\x07', 'two\\x0alines', 'bidi\\u202eright', 'c1\\x9b31m', '']);
        const json = await runTtsInProcess(['voices', '--api', 'openai', '--json'], { env });
        assert.equal(json.code, 0, json.stderr);
        const text = json.stdout.toString();
        assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/, JSON.stringify(text));
        assert.deepEqual(JSON.parse(text), ['good', 'evil\u001b[2J\u001b]0;title\u0007', 'two\nlines', 'bidi\u202eright', 'c1\u009b31m']);
      },
    );
  });

  it('a server without a list gets one notice line with one `tts:` prefix', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{}');
      },
      async (server) => {
        const r = await runTtsInProcess(['voices', '--api', 'openai'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /^tts: the service does not list its voices/);
        assert.doesNotMatch(r.stderr, /tts: tts:/);
      },
    );
  });

  it('a list over 1 MiB is a protocol error (exit 6), not a service without a list', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ voices: Array.from({ length: 120_000 }, (_, i) => `voice-${i}`) }));
      },
      async (server) => {
        const r = await runTtsInProcess(['voices', '--api', 'openai'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 6, r.stderr);
        assert.match(r.stderr, /voice list .* is over 1 MiB/);
        assert.equal(r.stdout.length, 0);
      },
    );
  });
});
