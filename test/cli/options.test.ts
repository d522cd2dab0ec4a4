/**
 * Flag parsing and validation (src/cli/options.ts, main.ts), in-process through `main` with
 * injected streams: a value that cannot be right is exit 2 before anything else happens.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    [['--sample-rate', '999'], /--sample-rate must be between 1000 and 192000/],
    [['--sample-rate', '192001'], /--sample-rate must be between 1000 and 192000/],
    [['--speed', '0'], /argument '0' is invalid\. --speed must be a number from 0\.5 to 3$/m],
    [['--speed', 'abc'], /--speed must be a number from 0\.5 to 3/],
    [['--speed', '-1'], /--speed must be a number from 0\.5 to 3/],
    [['--speed', '3.5'], /--speed must be a number from 0\.5 to 3/],
    [['--speed', '1.5x'], /--speed must be a number from 0\.5 to 3/],
    [['--volume', '0'], /--volume must be a number above 0 and at most 4/],
    [['--volume', '-1'], /--volume must be a number above 0 and at most 4/],
    [['--volume', '4.01'], /--volume must be a number above 0 and at most 4/],
    [['--volume', 'loud'], /--volume must be a number above 0 and at most 4/],
    [['--pause', '0'], /--pause must be a whole number from 1 to 10000/],
    [['--pause', '-1'], /--pause must be a whole number from 1 to 10000/],
    [['--pause', 'abc'], /--pause must be a whole number from 1 to 10000/],
    [['--pause', '1.5'], /--pause must be a whole number from 1 to 10000/],
    [['--pause', '10001'], /--pause must be a whole number from 1 to 10000/],
    [['--subtitles', 'cues.txt'], /--subtitles cues\.txt: the name must end in \.srt or \.vtt/],
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

  it('a number is quoted as typed, never as JavaScript rounded it (a --chapter-range past 2^53)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tts-options-range-'));
    try {
      const book = join(dir, 'book.md');
      await writeFile(book, '# One\n\nFirst.\n\n# Two\n\nSecond.\n');
      for (const range of ['99999999999999999999', '99999999999999999999-', '3-99999999999999999999']) {
        const r = await run('stream', '--offline', '-f', book, '-o', join(dir, 'out.wav'), '--chapter-range', range);
        assert.equal(r.code, 2, r.stderr);
        assert.ok(r.stderr.includes(`--chapter-range ${range} starts past the last chapter: ${book} has 2`), r.stderr);
        assert.doesNotMatch(r.stderr, /100000000000000000000|e\+20/);
      }
      const r = await run('stream', '--offline', '-f', book, '--chapter-range', '99999999999999999999-3');
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /argument '99999999999999999999-3' is invalid/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

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
