/**
 * Standard output that cannot be written (a full disk, here `/dev/full`, which fails every write
 * with ENOSPC) is local I/O: exit 7 with a message saying why (docs/cli.md §3), never an
 * "internal error" with a stack — for text bin/tts.js writes itself (the help), text of a command
 * (`tts voices`), and audio (`tts stream`, whose sink reports it). A closed pipe stays quiet.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { describe, it } from 'node:test';
import { TTS_BIN, cleanEnv } from '../helpers/cli.js';

function runIntoFull(args: string[]): { status: number | null; stderr: string } {
  const full = openSync('/dev/full', 'w');
  try {
    const r = spawnSync(process.execPath, [TTS_BIN, ...args], { env: cleanEnv(), stdio: ['ignore', full, 'pipe'], timeout: 60_000 });
    return { status: r.status, stderr: r.stderr.toString('utf8') };
  } finally {
    closeSync(full);
  }
}

describe('standard output on a full disk (/dev/full)', { skip: !existsSync('/dev/full') && 'no /dev/full' }, () => {
  for (const args of [['--help'], ['voices'], ['stream', '-q', '--raw', 'Hello.']]) {
    it(`tts ${args.join(' ')}: exit 7, "no space left", no internal error`, () => {
      const r = runIntoFull(args);
      assert.equal(r.status, 7, r.stderr);
      assert.match(r.stderr, /no space left/i);
      assert.match(r.stderr, /\[io_error\]/);
      assert.doesNotMatch(r.stderr, /internal error|this is a bug|    at /);
    });
  }
});

describe('who reports a write error of standard output: an audio sink while one is open, else bin/tts.js', { skip: !existsSync('/dev/full') && 'no /dev/full' }, () => {
  const SINK = new URL('../../src/audio/stdout-sink.js', import.meta.url).href;
  /**
   * Runs, with stdout on /dev/full, a script that first requires bin/tts.js (which, required rather
   * than run, only sets its stdout 'error' handler), then does `body` with `createStdoutSink`.
   */
  const withBin = (body: string): { status: number | null; stderr: string } => {
    const script = `require(${JSON.stringify(TTS_BIN)});
      import(${JSON.stringify(SINK)}).then(async ({ createStdoutSink }) => {
        const spec = { format: 'pcm16', sampleRate: 24000, channels: 1 };
        ${body}
      });`;
    const full = openSync('/dev/full', 'w');
    try {
      const r = spawnSync(process.execPath, ['-e', script], { env: cleanEnv(), stdio: ['ignore', full, 'pipe'], timeout: 60_000 });
      return { status: r.status, stderr: r.stderr.toString('utf8') };
    } finally {
      closeSync(full);
    }
  };

  it('after a sink ended (its guard listener still on stdout), a failing write of text is exit 7 with the message', () => {
    const r = withBin(`
      const sink = createStdoutSink(spec, 'raw');
      await sink.finish();
      const other = createStdoutSink(spec, 'raw');
      await other.abort();
      process.stdout.write('text after the audio\\n');`);
    assert.equal(r.status, 7, r.stderr);
    assert.match(r.stderr, /^tts: error: cannot write to standard output: .*no space left.* \[io_error\]$/im);
  });

  it('while a sink is open, its own handling applies: its write rejects with io_error, bin/tts.js does not exit', () => {
    const r = withBin(`
      const sink = createStdoutSink(spec, 'raw');
      await sink.write(Buffer.alloc(480)).catch((e) => process.stderr.write('SINK ' + e.code + ': ' + e.message + '\\n'));
      await sink.abort();
      process.stderr.write('STILL RUNNING\\n');
      process.exitCode = 3;`);
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /^SINK io_error: cannot write the output: .*no space left/im);
    assert.match(r.stderr, /^STILL RUNNING$/m);
    assert.doesNotMatch(r.stderr, /cannot write to standard output/);
  });
});
