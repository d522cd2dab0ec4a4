/**
 * Flag parsing and validation (src/cli/options.ts, main.ts), in-process through `main` with
 * injected streams: a value that cannot be right is exit 2 before anything else happens.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { main } from '../../src/cli/main.js';
import type { CommandIo } from '../../src/cli/report.js';

async function run(...argv: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  const stderr = new PassThrough();
  const stdout = new PassThrough();
  let err = '';
  let out = '';
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  const io: CommandIo = { stdin: new PassThrough(), stdout, stderr, env: {} };
  const code = await main(argv, io);
  return { code, stderr: err, stdout: out };
}

describe('synthesis flags', () => {
  const bad: [string[], RegExp][] = [
    [['--concurrency', '0'], /--concurrency must be between 1 and 32/],
    [['--concurrency', 'two'], /--concurrency must be a whole number/],
    [['--max-chars', '-5'], /--max-chars must be a whole number/],
    [['--retries', '21'], /--retries must be between 0 and 20/],
    [['--timeout', '0'], /--timeout must be a number of seconds above 0/],
    [['--timeout', 'abc'], /--timeout must be a number of seconds above 0/],
    [['--sample-rate', '999'], /--sample-rate must be between 1000 and 384000/],
    [['--channels', '9'], /--channels must be between 1 and 8/],
    [['--format', 'mp3'], /--format is the encoding the service sends \(pcm16\|float32\|mulaw\); for MP3 output use --container mp3/],
    [['--format', 'ogg'], /--container opus/],
    [['--format', 'aiff'], /--format must be one of pcm16, float32, mulaw/],
    [['--container', 'aac'], /Allowed choices are wav, raw, flac, mp3, opus/],
    [['--bitrate', '0'], /--bitrate must be between 1 and 1000/],
    [['--wav', '--raw'], /cannot be used with/],
  ];
  for (const [flags, message] of bad) {
    it(`refuses ${flags.join(' ')} with exit 2`, async () => {
      for (const command of ['say', 'stream', 'realtime']) {
        const r = await run(command, ...flags, 'hello');
        assert.equal(r.code, 2, `${command}: ${r.stderr}`);
        assert.match(r.stderr, message);
        assert.equal(r.stdout, '');
      }
    });
  }

  it('an unknown command or flag is exit 2, and --help exit 0', async () => {
    assert.equal((await run('sya', 'hi')).code, 2);
    assert.equal((await run('say', '--bogus', 'hi')).code, 2);
    assert.equal((await run('--help')).code, 0);
  });
});

describe('serve flags', () => {
  it('refuses a port out of range and a bad rate', async () => {
    const port = await run('serve', '--port', '70000');
    assert.equal(port.code, 2);
    assert.match(port.stderr, /--port must be between 0 and 65535/);
  });
});
