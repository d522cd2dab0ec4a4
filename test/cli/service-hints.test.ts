/**
 * The hints of failures that send the user to a setting (docs/cli.md §3): a connection failure
 * names the setting that gave the service's URL (`--base-url`, `TTS_BASE_URL`, the config file's
 * line, its profile's), and `voice_not_found` names the command that lists that service's voices
 * (`tts voices --api openai …` for an OpenAI-compatible one). In-process, against a closed port
 * and a loopback server.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { interpretOpenAiEvent, openAiRefusal } from '../../src/client/openai.js';
import { errorFromResponse, hintFor } from '../../src/client/service-error.js';
import { transportError } from '../../src/client/transport-error.js';
import { openAiVoicesCommand } from '../../src/cli/speak-settings.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { withServer } from '../helpers/servers.js';

const KEY = 'test-key-service-hints';
/** Nothing listens on port 2 of loopback: the connection is refused at once. */
const CLOSED = 'http://127.0.0.1:2/';

/** The hint of a run's error: the indented `tts:` line under `tts: error: …` (cli/report.ts). */
function hintOf(stderr: string): string {
  const line = stderr.split('\n').find((l) => l.startsWith('tts:   '));
  assert.ok(line !== undefined, stderr);
  return line.slice('tts:   '.length);
}

describe('a connection failure names where the base URL came from', () => {
  let home: string;
  let config: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-hints-'));
    config = join(home, 'cfg', 'tts', 'config.toml');
    await mkdir(join(home, 'cfg', 'tts'), { recursive: true });
    await writeFile(config, `[profile.p]\nbase-url = "${CLOSED}"\n\n[profile.q]\nvoice = "en-man-1"\n`);
  });
  after(() => rm(home, { recursive: true, force: true }));

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({ HOME: home, XDG_CONFIG_HOME: join(home, 'cfg'), TTS_API_KEY: KEY, ...extra });

  it('the profile\'s base-url: its table and line', async () => {
    const r = await runTtsInProcess(['stream', 'hi', '--profile', 'p', '--retries', '0'], { env: env() });
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stderr, /cannot connect to http:\/\/127\.0\.0\.1:2: connection refused/);
    assert.equal(hintOf(r.stderr), `is the service running? check base-url in [profile.p] (${config}:2)`);
  });

  it('--base-url, and TTS_BASE_URL: each named', async () => {
    const flag = await runTtsInProcess(['stream', 'hi', '--profile', 'q', '--base-url', CLOSED, '--retries', '0'], { env: env() });
    assert.equal(flag.code, 6, flag.stderr);
    assert.equal(hintOf(flag.stderr), 'is the service running? check --base-url');
    const fromEnv = await runTtsInProcess(['stream', 'hi', '--retries', '0'], { env: env({ TTS_BASE_URL: CLOSED }) });
    assert.equal(fromEnv.code, 6, fromEnv.stderr);
    assert.equal(hintOf(fromEnv.stderr), 'is the service running? check TTS_BASE_URL');
  });

  it('the top level of the config file: its line', async () => {
    const top = join(home, 'top', 'tts', 'config.toml');
    await mkdir(join(home, 'top', 'tts'), { recursive: true });
    await writeFile(top, `base-url = "${CLOSED}"\n`);
    const r = await runTtsInProcess(['stream', 'hi', '--retries', '0'], { env: env({ XDG_CONFIG_HOME: join(home, 'top') }) });
    assert.equal(r.code, 6, r.stderr);
    assert.equal(hintOf(r.stderr), `is the service running? check base-url in the config file (${top}:1)`);
  });

  it('tts realtime: the WebSocket base URL\'s own setting, else the base URL\'s', async () => {
    const fromBase = await runTtsInProcess(['realtime', 'hi', '-o', '-', '--base-url', CLOSED, '--retries', '0'], { env: env() });
    assert.equal(fromBase.code, 6, fromBase.stderr);
    assert.equal(hintOf(fromBase.stderr), 'is the service running? check --base-url');
    const own = await runTtsInProcess(['realtime', 'hi', '-o', '-', '--base-url', 'http://127.0.0.1:3/', '--retries', '0'], { env: env({ TTS_WS_BASE_URL: 'ws://127.0.0.1:2/' }) });
    assert.equal(own.code, 6, own.stderr);
    assert.equal(hintOf(own.stderr), 'is the service running? check TTS_WS_BASE_URL');
  });

  it('tts voices --api openai: the same', async () => {
    const r = await runTtsInProcess(['voices', '--api', 'openai', '--profile', 'p'], { env: env() });
    assert.equal(r.code, 6, r.stderr);
    assert.equal(hintOf(r.stderr), `is the service running? check base-url in [profile.p] (${config}:2)`);
  });

  it('not known (the client alone): the three places a base URL is set', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    assert.equal(transportError(refused, new URL(CLOSED)).hint, 'is the service running? check the base URL (--base-url, TTS_BASE_URL or base-url in the config file)');
    const other = Object.assign(new Error('odd'), { code: 'EWHATEVER' });
    assert.equal(transportError(other, new URL(CLOSED), '--base-url').hint, 'check --base-url, and the network');
  });
});

describe('voice_not_found names the command listing that service\'s voices', () => {
  /** An OpenAI-shaped refusal of the voice (docs/protocol.md §10.5). */
  const refuseVoice = (_req: unknown, res: import('node:http').ServerResponse): void => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'no such voice', type: 'invalid_request_error', param: 'voice', code: null } }));
  };

  it('--api openai --base-url URL: `tts voices --api openai --base-url URL`', async () => {
    await withServer(refuseVoice, async (server) => {
      const r = await runTtsInProcess(['stream', 'hi', '--api', 'openai', '--base-url', server.url, '--retries', '0'], { env: { TTS_API_KEY: KEY } });
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, /voice_not_found/);
      assert.equal(hintOf(r.stderr), `run \`tts voices --api openai --base-url ${server.url}\` to list voice ids`);
      // From the environment, `tts voices` finds it there too.
      const fromEnv = await runTtsInProcess(['stream', 'hi', '--api', 'openai', '--retries', '0'], { env: { TTS_API_KEY: KEY, TTS_BASE_URL: server.url } });
      assert.equal(fromEnv.code, 4, fromEnv.stderr);
      assert.equal(hintOf(fromEnv.stderr), 'run `tts voices --api openai` to list voice ids');
    });
  });

  it('the command keeps the profile, key file and --allow-insecure, hides a password and quotes what a shell would read otherwise', () => {
    assert.equal(openAiVoicesCommand({ baseUrl: 'http://me:pw@host:8880/v1?x=1', profile: 'my work', apiKeyFile: '/k/key', allowInsecure: true }), "tts voices --api openai --base-url 'http://***@host:8880/v1?x=***' --profile 'my work' --api-key-file /k/key --allow-insecure");
    assert.equal(openAiVoicesCommand({ baseUrl: 'http://host/', baseUrlFrom: 'base-url in [profile.p] (c:1)', profile: "it's" }), "tts voices --api openai --profile 'it'\\''s'");
  });

  it('the client alone: the OpenAI dialect\'s refusals and stream errors name `tts voices --api openai`; the native service\'s `tts voices`', () => {
    const body = JSON.stringify({ error: { message: 'x', param: 'voice' } });
    assert.equal(openAiRefusal(400, {}, body).hint, 'run `tts voices --api openai` to list voice ids');
    const event = interpretOpenAiEvent({ event: 'error', data: JSON.stringify({ type: 'error', error: { code: 'voice_not_found', message: 'x' } }), id: undefined });
    assert.equal(event.kind, 'error');
    assert.equal(event.kind === 'error' ? event.error.hint : undefined, 'run `tts voices --api openai` to list voice ids');
    assert.equal(errorFromResponse(400, {}, '{"error":{"code":"voice_not_found"}}').hint, 'run `tts voices` to list voice ids');
    assert.equal(hintFor('voice_not_found'), 'run `tts voices` to list voice ids');
  });
});
