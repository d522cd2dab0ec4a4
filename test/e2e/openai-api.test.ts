/**
 * `--api openai` end to end (docs/cli.md §1; docs/protocol.md §10): `tts say` against `tts serve`'s
 * own OpenAI route gives the file the native route gives; the cache keeps the dialects apart;
 * `TTS_API` and the config file's `api` choose it; a 429 with retry-after is retried;
 * `realtime` with it is exit 2.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../src/engine/index.js';
import type { SpeechEngine } from '../../src/engine/types.js';
import { freshCacheHome } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { startService, type TestService } from '../helpers/serve-http.js';
import { patternBytes, withServer } from '../helpers/servers.js';

const KEY = 'test-key-openai-e2e';
const TEXT = 'Hello from the other dialect.';

describe('tts say --api openai', () => {
  let engine: SpeechEngine;
  let service: TestService;
  let dir: string;
  before(async () => {
    engine = createEngine({ workers: 1 });
    service = await startService({ apiKeys: [KEY], engine });
    dir = mkdtempSync(join(tmpdir(), 'tts-openai-'));
  });
  after(async () => {
    await service.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the same WAV as the native route, and the piece cache keeps the two dialects apart', async () => {
    const env = { TTS_BASE_URL: service.base, TTS_API_KEY: KEY, XDG_CACHE_HOME: freshCacheHome() };
    const native = await runTtsInProcess(['say', '-v', 'en-man-1', TEXT, '-o', join(dir, 'native.wav'), '--json'], { env });
    assert.equal(native.code, 0, native.stderr);
    const openai = await runTtsInProcess(['say', '--api', 'openai', '-v', 'en-man-1', TEXT, '-o', join(dir, 'openai.wav'), '--json'], { env });
    assert.equal(openai.code, 0, openai.stderr);
    const summary = JSON.parse(openai.stderr.trim().split('\n').at(-1)!) as { requests: number; cache_hits: number };
    assert.equal(summary.cache_hits, 0, 'the native run\'s cached piece is not the OpenAI dialect\'s');
    assert.ok(readFileSync(join(dir, 'openai.wav')).equals(readFileSync(join(dir, 'native.wav'))), 'byte-identical files');
    const again = await runTtsInProcess(['say', '--api', 'openai', '--model', 'gpt-4o-mini-tts', '-v', 'en-man-1', TEXT, '-o', join(dir, 'again.wav'), '--json'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stderr.trim().split('\n').at(-1)!) as { cache_hits: number }).cache_hits, 0, 'another model is another cache identity');
    const speech = service.log.filter((l) => l.includes('POST /v1/audio/speech'));
    assert.equal(speech.length, 2, service.log.join('\n'));
    assert.match(speech[0]!, /model=tts-1$/);
    assert.match(speech[1]!, /model=gpt-4o-mini-tts$/);
  });

  it('`tts realtime --api openai` is exit 2 naming why', async () => {
    const r = await runTtsInProcess(['realtime', 'hi', '-o', join(dir, 'rt.wav')], { env: { TTS_API: 'openai', TTS_BASE_URL: service.base, TTS_API_KEY: KEY } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--api openai has no realtime channel/);
  });

  it('the config file\'s `api = "openai"` and `model` choose the dialect; voices pass through as given', async () => {
    const seen: { url: string; body: Record<string, unknown> }[] = [];
    const audio = patternBytes(4800, 3);
    await withServer(
      (req, res, body) => {
        seen.push({ url: req.url ?? '', body: JSON.parse(body) as Record<string, unknown> });
        res.writeHead(200, { 'content-type': 'audio/pcm' });
        res.end(audio);
      },
      async (server) => {
        const config = mkdtempSync(join(tmpdir(), 'tts-config-'));
        mkdirSync(join(config, 'tts'));
        writeFileSync(join(config, 'tts', 'config.toml'), 'api = "openai"\nmodel = "kokoro"\n');
        try {
          const r = await runTtsInProcess(['stream', '-v', 'af_bella', 'Hi.', '--raw', '--no-cache'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY, XDG_CONFIG_HOME: config } });
          assert.equal(r.code, 0, r.stderr);
          assert.ok(r.stdout.equals(audio), 'the raw pcm answer is the audio');
          assert.equal(seen[0]!.url, '/v1/audio/speech');
          assert.deepEqual(seen[0]!.body, { model: 'kokoro', input: 'Hi.', voice: 'af_bella', response_format: 'pcm', stream_format: 'sse' });
        } finally {
          rmSync(config, { recursive: true, force: true });
        }
      },
    );
  });

  it('retries a 429 with retry-after, then gets the audio', async () => {
    const audio = patternBytes(4800, 5);
    let calls = 0;
    await withServer(
      (_req, res) => {
        if (calls++ === 0) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
          res.end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ type: 'speech.audio.delta', audio: audio.toString('base64') })}\n\n`);
        res.end(`data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 } })}\n\n`);
      },
      async (server) => {
        const r = await runTtsInProcess(['stream', '-v', 'alloy', 'Hi.', '--raw', '--no-cache', '--json'], { env: { TTS_API: 'openai', TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 0, r.stderr);
        assert.ok(r.stdout.equals(audio));
        assert.equal(calls, 2);
        assert.ok(!r.stderr.includes(KEY), 'the key is never printed');
      },
    );
  });

  it('`tts voices` takes `api = "openai"` and `base-url` from the config file, under the flags', async () => {
    const config = mkdtempSync(join(tmpdir(), 'tts-config-'));
    mkdirSync(join(config, 'tts'));
    writeFileSync(join(config, 'tts', 'config.toml'), `api = "openai"\nbase-url = "${service.base}"\nmodel = "kokoro"\n`);
    try {
      const env = { TTS_API_KEY: KEY, XDG_CONFIG_HOME: config };
      const listed = await runTtsInProcess(['voices', '--json'], { env });
      assert.equal(listed.code, 0, listed.stderr);
      const ids = JSON.parse(listed.stdout.toString()) as unknown[];
      assert.ok(ids.includes('alloy') && ids.includes('en-man-1'), `the service's ids, not the built-in table: ${listed.stdout.toString().slice(0, 200)}`);
      assert.ok(service.log.some((l) => l.includes('GET /v1/audio/voices')), service.log.join('\n'));
      const native = await runTtsInProcess(['voices', '--api', 'native', '--json'], { env });
      assert.equal(native.code, 0, native.stderr);
      assert.equal(typeof (JSON.parse(native.stdout.toString()) as unknown[])[0], 'object', 'the flag wins over the file');
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
  });

  it('`tts voices --api openai` lists the service\'s GET /v1/audio/voices, or says it cannot know', async () => {
    const listed = await runTtsInProcess(['voices', '--api', 'openai', '--json'], { env: { TTS_BASE_URL: service.base, TTS_API_KEY: KEY } });
    assert.equal(listed.code, 0, listed.stderr);
    const ids = JSON.parse(listed.stdout.toString()) as string[];
    assert.ok(ids.includes('alloy') && ids.includes('en-man-1'), ids.join(' '));
    const wrongKey = await runTtsInProcess(['voices', '--api', 'openai'], { env: { TTS_BASE_URL: service.base, TTS_API_KEY: 'wrong-key-123' } });
    assert.equal(wrongKey.code, 3, wrongKey.stderr);
    assert.ok(!wrongKey.stderr.includes('wrong-key-123'));
    await withServer(
      (_req, res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
      },
      async (server) => {
        const r = await runTtsInProcess(['voices', '--api', 'openai'], { env: { TTS_BASE_URL: server.url, TTS_API_KEY: KEY } });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout.length, 0);
        assert.match(r.stderr, /cannot know/);
      },
    );
  });
});
