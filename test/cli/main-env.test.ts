/**
 * main(argv, io) takes its environment from `io.env`, options read from a variable included
 * (commander's `Option.env` reads process.env: TTS_API for --api). Precedence flag > environment
 * > default (docs/cli.md §7). Runs main in-process with an environment of its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runTtsInProcess } from '../helpers/in-process.js';

describe('main reads option variables from its injected environment', () => {
  it('TTS_API with a value that is not a dialect is a usage error (exit 2) naming it', async () => {
    assert.equal(process.env['TTS_API'], undefined, 'the test process itself has no TTS_API');
    const r = await runTtsInProcess(['voices'], { env: { TTS_API: 'klingon' } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--api <dialect>.*klingon/);
  });

  it('a flag on the command line beats the variable', async () => {
    const r = await runTtsInProcess(['voices', '--api', 'native'], { env: { TTS_API: 'klingon' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.toString(), /en-man-1/);
  });
});
