/**
 * WAV on standard output redirected to a regular file (`tts stream --wav > x.wav`) gets the exact
 * sizes a file gets (docs/cli.md §2): the same bytes as `-o x.wav`, at whatever offset the file
 * was at, with the pad byte an odd µ-law size needs. A file opened for appending (`>>`), where a
 * positioned write would append, keeps the streaming sizes 0xFFFFFFFF, as a pipe does. FLAC
 * likewise gets the STREAMINFO a file gets (total samples, MD5): `> x.flac` is `-o x.flac`; a pipe
 * and `>>` keep libFLAC's streaming one ("unknown").
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { TTS_BIN, cleanEnv } from '../helpers/cli.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tts-stdout-wav-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = cleanEnv({ TTS_NO_CACHE: '1' });

/** Runs tts with its standard output on `fd`. */
function run(args: string[], stdout: number | 'pipe'): { status: number | null; stderr: string; stdout: Buffer } {
  const r = spawnSync(process.execPath, [TTS_BIN, ...args], { env, stdio: ['ignore', stdout, 'pipe'], timeout: 60_000 });
  return { status: r.status, stderr: r.stderr.toString('utf8'), stdout: r.stdout ?? Buffer.alloc(0) };
}

/** The same run with -o FILE: the reference bytes. */
function reference(args: string[], name: string): Buffer {
  const file = path.join(dir, name);
  const r = run([...args, '-o', file], 'pipe');
  assert.equal(r.status, 0, r.stderr);
  return readFileSync(file);
}

/** The run with standard output on FILE opened with `flags`, after `prefix` was written to it. */
function redirected(args: string[], name: string, flags: string, prefix = ''): Buffer {
  const file = path.join(dir, name);
  const fd = openSync(file, flags);
  try {
    if (prefix !== '') writeSync(fd, prefix);
    const r = run([...args, '-o', '-'], fd);
    assert.equal(r.status, 0, r.stderr);
  } finally {
    closeSync(fd);
  }
  return readFileSync(file);
}

describe('tts stream --wav > FILE', () => {
  const pcm = ['stream', '-q', '--wav', '-v', 'en-man-1', 'Hello there.'];
  // 24917 bytes of audio: odd, so the file ends with a pad byte.
  const mulaw = ['stream', '-q', '--wav', '-v', 'en-man-1', '--format', 'mulaw', '-r', '22050', 'Hello there.'];

  it('writes the bytes -o FILE writes, header sizes exact (pcm16; µ-law with its pad byte)', () => {
    const expected = reference(pcm, 'ref.wav');
    assert.notEqual(expected.readUInt32LE(4), 0xffffffff);
    assert.ok(redirected(pcm, 'out.wav', 'w').equals(expected));
    const law = reference(mulaw, 'ref-mulaw.wav');
    assert.equal(law.readUInt32LE(54) % 2, 1, 'an odd size');
    assert.ok(redirected(mulaw, 'out-mulaw.wav', 'w').equals(law));
  });

  it('at the offset the file was at', () => {
    const expected = reference(pcm, 'ref2.wav');
    const got = redirected(pcm, 'prefixed.wav', 'w', 'PREFIX');
    assert.equal(got.subarray(0, 6).toString(), 'PREFIX');
    assert.ok(got.subarray(6).equals(expected));
  });

  it('appending (>>): the streaming sizes, the audio the same', () => {
    const expected = reference(pcm, 'ref3.wav');
    const got = redirected(pcm, 'appended.wav', 'a', 'X');
    assert.equal(got.readUInt32LE(1 + 4), 0xffffffff, 'RIFF size unknown');
    assert.ok(got.subarray(1 + 44).equals(expected.subarray(44)), 'the same audio after the header');
  });
});

describe('tts stream --container flac > FILE', () => {
  const flac = ['stream', '-q', '--container', 'flac', '-v', 'en-man-1', 'Hello there.'];
  /** STREAMINFO's body: after "fLaC" and the block header (RFC 9639 §8.2). */
  const streamInfo = (file: Buffer): { totalSamples: bigint; md5: string } => ({
    totalSamples: file.readBigUInt64BE(8 + 10) & 0xfffffffffn,
    md5: file.subarray(8 + 18, 8 + 34).toString('hex'),
  });
  const unknownMd5 = '0'.repeat(32);

  it('writes the bytes -o FILE writes (STREAMINFO with the total and the MD5), also at the offset the file was at', () => {
    const expected = reference(flac, 'ref.flac');
    assert.ok(streamInfo(expected).totalSamples > 0n && streamInfo(expected).md5 !== unknownMd5, 'the file has the totals');
    assert.ok(redirected(flac, 'out.flac', 'w').equals(expected), '> x.flac differs from -o x.flac');
    const got = redirected(flac, 'prefixed.flac', 'w', 'PREFIX');
    assert.equal(got.subarray(0, 6).toString(), 'PREFIX');
    assert.ok(got.subarray(6).equals(expected));
  });

  it('a pipe, and appending (>>), keep the streaming STREAMINFO ("unknown"); the frames are the same', () => {
    const expected = reference(flac, 'ref-pipe.flac');
    const piped = run([...flac, '-o', '-'], 'pipe');
    assert.equal(piped.status, 0, piped.stderr);
    const appended = redirected(flac, 'appended.flac', 'a', 'X').subarray(1);
    for (const [what, got] of [['pipe', piped.stdout], ['>>', appended]] as const) {
      assert.deepEqual(streamInfo(got), { totalSamples: 0n, md5: unknownMd5 }, what);
      assert.equal(got.length, expected.length, what);
      assert.ok(got.subarray(8 + 34).equals(expected.subarray(8 + 34)), `${what}: the same frames`);
    }
  });
});
