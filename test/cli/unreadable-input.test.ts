/**
 * An input file whose read fails (docs/cli.md §3: an unreadable input file is exit 2, `cannot read
 * …`): not only its open (EACCES) but a read after it — EIO, as `/proc/self/mem` gives at offset 0
 * — for `-f` (text, or a document read whole), a batch line's `"file"`, `tts lexicon check -f` and `--api-key-file`. In-process.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTtsInProcess } from '../helpers/in-process.js';
import { startPatternServer, type TestServer } from '../helpers/servers.js';

/** A file whose open succeeds and whose first read fails with EIO (Linux: nothing is mapped at address 0). */
const EIO_FILE = '/proc/self/mem';

describe('an input file whose read fails (EIO)', { skip: process.platform !== 'linux' && '/proc/self/mem is Linux\'s' }, () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-unreadable-'));
    server = await startPatternServer(4800);
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const env = (): Record<string, string> => ({ TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-unreadable', HOME: dir, XDG_CONFIG_HOME: dir });

  it('-f (text or a document), standard input, lexicon check -f and --api-key-file: exit 2 "cannot read … (EIO)", no internal error, no request, no output', async () => {
    const cases: [string[], RegExp][] = [
      [['stream', '--no-cache', '-f', EIO_FILE, '-o', join(dir, 'x.wav')], /cannot read \/proc\/self\/mem: .*EIO/],
      [['lexicon', 'check', '-f', EIO_FILE], /cannot read \/proc\/self\/mem: .*EIO/],
      // A document is read whole (src/text/documents): the same refusal.
      [['stream', '--no-cache', '-f', EIO_FILE, '--input-format', 'markdown', '-o', join(dir, 'x.wav')], /cannot read \/proc\/self\/mem: .*EIO/],
      [['stream', '--no-cache', '--api-key-file', EIO_FILE, '-o', join(dir, 'x.wav'), 'Hello.'], /cannot read the API key file \/proc\/self\/mem: .*EIO/],
      // Standard input redirected from such a file (`< FILE`), read whole or as `-f -`.
      [['stream', '--no-cache', '-o', join(dir, 'x.wav')], /cannot read standard input: .*EIO/],
      [['stream', '--no-cache', '-f', '-', '-o', join(dir, 'x.wav')], /cannot read standard input: .*EIO/],
      [['stream', '--no-cache', '--lines', '-o', join(dir, 'x.wav')], /cannot read standard input: .*EIO/],
    ];
    for (const [args, message] of cases) {
      server.requests.length = 0;
      const fromStdin = !args.includes(EIO_FILE);
      const r = await runTtsInProcess(args, { env: env(), ...(fromStdin ? { stdinPath: EIO_FILE } : {}) });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.doesNotMatch(r.stderr, /internal error|bug in tts/);
      assert.equal(server.requests.length, 0, `${args.join(' ')}: no request`);
    }
    await assert.rejects(import('node:fs/promises').then((fs) => fs.stat(join(dir, 'x.wav'))), { code: 'ENOENT' });
  });

  it('a batch line\'s "file": that line fails with exit 2 "cannot read …", the others are written', async () => {
    const jobs = join(dir, 'jobs.jsonl');
    await writeFile(jobs, `${JSON.stringify({ file: EIO_FILE, output: join(dir, 'bad.wav') })}\n${JSON.stringify({ text: 'Fine.', output: join(dir, 'good.wav') })}\n`);
    const r = await runTtsInProcess(['batch', '--no-cache', jobs], { env: env() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /line 1: .*cannot read \/proc\/self\/mem: .*EIO/);
    assert.doesNotMatch(r.stderr, /internal error|bug in tts/);
  });
});
