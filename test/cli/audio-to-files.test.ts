/**
 * audioOnlyToFiles (src/cli/audio-to-files.ts): which runs send their audio only to files, where
 * the embedded engine may warm Flite up before the job (issue 20, fourteenth round).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { audioOnlyToFiles } from '../../src/cli/audio-to-files.js';

test('-o FILE without --play is files only; playback, --play and another stream than fd 1 are not', () => {
  const io = { stdout: process.stdout };
  assert.equal(audioOnlyToFiles('stream', { output: 'out.wav' }, io), true);
  assert.equal(audioOnlyToFiles('say', { output: 'out.mp3' }, io), true);
  assert.equal(audioOnlyToFiles('realtime', { output: 'out.wav' }, io), true);
  assert.equal(audioOnlyToFiles('say', { output: 'out.wav', play: true }, io), false);
  assert.equal(audioOnlyToFiles('say', {}, io), false, 'say plays');
  assert.equal(audioOnlyToFiles('realtime', {}, io), false, 'realtime plays');
  // The test runner's stdout is a pipe; an injected stream (in-process runs) is never fd 1.
  assert.equal(audioOnlyToFiles('stream', {}, io), false);
  assert.equal(audioOnlyToFiles('stream', { output: '-' }, { stdout: new PassThrough() }), false);
});

test('standard output that is a regular file counts as a file (tts stream > out.wav; -o - too), a pipe does not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-audio-to-files-'));
  try {
    const module = fileURLToPath(new URL('../../src/cli/audio-to-files.js', import.meta.url));
    const probe = `import(${JSON.stringify(module)}).then((m) => process.stderr.write(JSON.stringify([m.audioOnlyToFiles('stream', {}, process), m.audioOnlyToFiles('say', { output: '-' }, process), m.audioOnlyToFiles('say', {}, process)])))`;
    const out = join(dir, 'out.wav');
    const fd = openSync(out, 'w');
    let toFile;
    try {
      toFile = spawnSync(process.execPath, ['-e', probe], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
    } finally {
      closeSync(fd);
    }
    assert.equal(toFile.status, 0, toFile.stderr);
    assert.deepEqual(JSON.parse(toFile.stderr), [true, true, false]);
    assert.equal(readFileSync(out, 'utf8'), '');
    const toPipe = spawnSync(process.execPath, ['-e', probe], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    assert.deepEqual(JSON.parse(toPipe.stderr), [false, false, false]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
