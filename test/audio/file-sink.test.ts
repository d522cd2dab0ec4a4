import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { commitAtomicFile, discardAtomicFile, openAtomicFile, openFileSink } from '../../src/audio/file-sink.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { parseWavHeader, wavFileInfo } from '../helpers/wav-reader.js';
import { TtsError } from '../../src/errors.js';
import { haveSox, soxInfo, soxRawData } from '../helpers/audio-sox.js';
import { splitBySizes } from '../helpers/split.js';

const root = mkdtempSync(join(tmpdir(), 'tts-file-sink-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
/** A fresh empty folder per test, so "no temp file left" is checked on the whole folder. */
const freshDir = (): string => {
  const d = join(root, String(n++));
  mkdirSync(d);
  return d;
};

const PCM: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };
const MULAW: AudioSpec = { format: 'mulaw', sampleRate: 8000, channels: 1 };
const FLOAT: AudioSpec = { format: 'float32', sampleRate: 16000, channels: 2 };

function bytes(len: number, seed: number): Buffer {
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

/** Audio sox reads back unchanged: finite floats in [-1, 1), no µ-law "negative zero" 0x7F. */
function audio(spec: AudioSpec, len: number): Buffer {
  const data = bytes(len, 3);
  if (spec.format === 'float32') for (let i = 0; i + 4 <= len; i += 4) data.writeFloatLE(((i % 256) - 128) / 128, i);
  if (spec.format === 'mulaw') for (let i = 0; i < len; i++) if (data[i] === 0x7f) data[i] = 0x7e;
  return data;
}

/** Splits `data` at uneven offsets (odd sizes included), as deltas arrive. */
function chunks(data: Buffer): Buffer[] {
  return splitBySizes(data, [1, 7, 300, 2, 1023, 5, 4096]);
}

function assertIoError(err: unknown, path: string, cause?: RegExp): true {
  assert.ok(err instanceof TtsError, `TtsError, got ${String(err)}`);
  assert.equal(err.code, 'io_error');
  assert.equal(err.exitCode, 7);
  assert.ok(err.message.includes(path), `message names the path: ${err.message}`);
  assert.ok(err.hint, 'has a hint');
  if (cause) assert.match(err.message, cause);
  return true;
}

/**
 * The one length per encoding whose finished file sox also reads back (µ-law: odd, with its pad
 * byte; float32: stereo with a fact chunk). pcm16 is judged by sox in test/audio/wav.test.ts and,
 * streamed through a pipe, in test/audio/stdout-sink.test.ts.
 */
const SOX_JUDGED_LENGTH: Partial<Record<AudioSpec['format'], number>> = { mulaw: 4801, float32: 4808 };

describe('openFileSink', () => {
  for (const spec of [PCM, MULAW, FLOAT]) {
    for (const len of [0, 4800, spec.format === 'mulaw' ? 4801 : 4808]) {
      it(`wav ${spec.format}: ${len} bytes in uneven chunks give exact sizes`, async (t) => {
        const dir = freshDir();
        const path = join(dir, 'out.wav');
        const data = audio(spec, len);
        const sink = await openFileSink(path, spec, 'wav');
        for (const c of chunks(data)) await sink.write(c);
        assert.equal(sink.audioBytes, len);
        await sink.finish();
        assert.deepEqual(readdirSync(dir), ['out.wav'], 'no temp file left');
        const file = readFileSync(path);
        const head = parseWavHeader(file);
        const pad = len % 2;
        assert.equal(file.length, head.dataOffset + len + pad);
        assert.equal(head.dataBytes, len);
        assert.equal(head.riffSize, file.length - 8);
        if (spec.format !== 'pcm16') assert.equal(head.factSamples, Math.floor(len / head.blockAlign));
        assert.ok(file.subarray(head.dataOffset, head.dataOffset + len).equals(data), 'audio bytes');
        if (pad) assert.equal(file[file.length - 1], 0, 'pad byte is zero');
        const read = wavFileInfo(path);
        assert.equal(read.rate, spec.sampleRate);
        assert.equal(read.channels, spec.channels);
        assert.equal(read.samples, len / read.header.blockAlign);
        // sox as the independent judge of a finished file: see SOX_JUDGED_LENGTH.
        if (len !== SOX_JUDGED_LENGTH[spec.format]) return;
        if (!haveSox) return t.skip('sox is not installed');
        const info = soxInfo(path);
        assert.equal(info.rate, spec.sampleRate);
        assert.equal(info.channels, spec.channels);
        assert.equal(info.warnings, '');
        assert.ok(soxRawData(path).data.equals(data), 'sox reads exactly the audio');
      });
    }
  }

  it('raw: exactly the bytes written, no header', async () => {
    const dir = freshDir();
    const path = join(dir, 'out.raw');
    const data = bytes(10001, 9);
    const sink = await openFileSink(path, MULAW, 'raw');
    for (const c of chunks(data)) await sink.write(c);
    await sink.finish();
    assert.ok(readFileSync(path).equals(data));
    assert.deepEqual(readdirSync(dir), ['out.raw']);
  });

  it('writes to a hidden temp file next to the target, with a normal new file mode', async () => {
    const dir = freshDir();
    const path = join(dir, 'speech.wav');
    const sink = await openFileSink(path, PCM, 'wav');
    await sink.write(bytes(100, 1));
    const names = readdirSync(dir);
    assert.equal(names.length, 1);
    assert.match(names[0]!, /^\.speech\.wav\.tts-\d+-[0-9a-f]{12}\.tmp$/);
    assert.equal(join(dir, names[0]!), sink.tempPath);
    assert.equal(statSync(path, { throwIfNoEntry: false }), undefined, 'target not there before finish');
    await sink.finish();
    const umask = process.umask();
    assert.equal(statSync(path).mode & 0o777, 0o666 & ~umask);
  });

  it('replaces an existing file only on finish', async () => {
    const dir = freshDir();
    const path = join(dir, 'out.wav');
    writeFileSync(path, 'old content');
    const sink = await openFileSink(path, PCM, 'wav');
    await sink.write(bytes(64, 2));
    assert.equal(readFileSync(path, 'utf8'), 'old content');
    await sink.finish();
    assert.equal(parseWavHeader(readFileSync(path)).dataBytes, 64);
    await sink.abort(); // after a successful finish: nothing happens
    assert.equal(parseWavHeader(readFileSync(path)).dataBytes, 64);
    assert.deepEqual(readdirSync(dir), ['out.wav']);
  });

  it('abort leaves an existing target byte-identical and no temp file; abort is idempotent', async () => {
    const dir = freshDir();
    const path = join(dir, 'keep.wav');
    const original = bytes(5000, 77);
    writeFileSync(path, original);
    const sink = await openFileSink(path, PCM, 'wav');
    await sink.write(bytes(3000, 1));
    await sink.abort();
    await sink.abort();
    assert.ok(readFileSync(path).equals(original));
    assert.deepEqual(readdirSync(dir), ['keep.wav']);
    await assert.rejects(sink.write(bytes(2, 0)), (e) => e instanceof TtsError && e.code === 'io_error');
    await assert.rejects(sink.finish(), TtsError);
    assert.ok(readFileSync(path).equals(original));
  });

  it('abort right after open, and abort while a write is in flight, leave nothing', async () => {
    const dir = freshDir();
    const a = await openFileSink(join(dir, 'a.wav'), PCM, 'wav');
    await a.abort();
    const b = await openFileSink(join(dir, 'b.wav'), PCM, 'wav');
    const w = b.write(bytes(1 << 20, 5));
    const aborted = b.abort();
    await w.catch(() => undefined);
    await aborted;
    assert.deepEqual(readdirSync(dir), []);
  });

  it('folder does not exist → io_error exit 7 naming the path, nothing created', async () => {
    const dir = freshDir();
    const path = join(dir, 'missing', 'out.wav');
    await assert.rejects(openFileSink(path, PCM, 'wav'), (e) => assertIoError(e, path, /does not exist/));
    assert.deepEqual(readdirSync(dir), []);
  });

  it('path under a file → io_error exit 7, the file untouched', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'file'), 'x');
    const path = join(dir, 'file', 'out.wav');
    await assert.rejects(openFileSink(path, PCM, 'raw'), (e) => assertIoError(e, path, /not a folder/));
    assert.deepEqual(readdirSync(dir), ['file']);
    assert.equal(readFileSync(join(dir, 'file'), 'utf8'), 'x');
  });

  it('target is a folder → io_error exit 7 before anything is written', async () => {
    const dir = freshDir();
    const path = join(dir, 'sub');
    mkdirSync(path);
    await assert.rejects(openFileSink(path, PCM, 'wav'), (e) => assertIoError(e, path, /is a folder/));
    assert.deepEqual(readdirSync(dir), ['sub']);
    assert.deepEqual(readdirSync(path), []);
  });

  it('rename fails at finish (target became a folder) → io_error, temp removed, abort afterwards is safe', async () => {
    const dir = freshDir();
    const path = join(dir, 'late.wav');
    const sink = await openFileSink(path, PCM, 'wav');
    await sink.write(bytes(100, 4));
    mkdirSync(path);
    writeFileSync(join(path, 'inside'), 'y');
    await assert.rejects(sink.finish(), (e) => assertIoError(e, path));
    await sink.abort();
    assert.deepEqual(readdirSync(dir), ['late.wav']);
    assert.deepEqual(readdirSync(path), ['inside']);
  });

  it('read-only folder → io_error exit 7 (skipped as root, who may write anyway)', async (t) => {
    if (process.getuid?.() === 0) return t.skip('root ignores folder permissions');
    const dir = freshDir();
    chmodSync(dir, 0o555);
    const path = join(dir, 'out.wav');
    try {
      await assert.rejects(openFileSink(path, PCM, 'wav'), (e) => assertIoError(e, path, /permission denied/));
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  it('read-only file system → io_error exit 7 (works as root too)', async (t) => {
    const dir = freshDir();
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', dir]).status !== 0) {
      return t.skip('cannot mount a read-only tmpfs here');
    }
    try {
      const path = join(dir, 'out.wav');
      await assert.rejects(openFileSink(path, PCM, 'wav'), (e) => assertIoError(e, path, /read-only/));
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      spawnSync('umount', [dir]);
    }
  });

  it('disk full during writes → io_error exit 7, temp removed, existing target untouched', async (t) => {
    const dir = freshDir();
    // A 64 KiB tmpfs is a real ENOSPC; mounting needs root with CAP_SYS_ADMIN.
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]).status !== 0) {
      return t.skip('cannot mount a small tmpfs here');
    }
    try {
      const path = join(dir, 'big.wav');
      const original = bytes(1000, 8);
      writeFileSync(path, original);
      const sink = await openFileSink(path, PCM, 'wav');
      await assert.rejects(
        (async () => {
          for (let i = 0; i < 100; i++) await sink.write(bytes(4096, i));
        })(),
        (e) => assertIoError(e, path, /no space left/),
      );
      await assert.rejects(sink.write(bytes(10, 0)), /no space left/, 'later writes fail the same way');
      await sink.abort();
      assert.deepEqual(readdirSync(dir), ['big.wav']);
      assert.ok(readFileSync(path).equals(original));
    } finally {
      spawnSync('umount', [dir]);
    }
  });

  it('truncateAudio then more writes gives the right bytes and sizes', async () => {
    const dir = freshDir();
    const path = join(dir, 't.wav');
    const a = bytes(1000, 1);
    const b = bytes(500, 2);
    const c = bytes(701, 3);
    const sink = await openFileSink(path, MULAW, 'wav');
    await sink.write(a);
    await sink.write(b);
    assert.equal(sink.audioBytes, 1500);
    await sink.truncateAudio(1000);
    assert.equal(sink.audioBytes, 1000);
    await sink.write(c);
    await sink.truncateAudio(1701); // no-op at the end
    await assert.rejects(sink.truncateAudio(1702), RangeError);
    await assert.rejects(sink.truncateAudio(-1), RangeError);
    await sink.finish();
    const file = readFileSync(path);
    const head = parseWavHeader(file);
    assert.equal(head.dataBytes, 1701);
    assert.equal(head.factSamples, 1701);
    assert.equal(file.length, 58 + 1701 + 1, 'odd size: pad byte');
    assert.ok(file.subarray(58, 58 + 1701).equals(Buffer.concat([a, c])));
  });

  it('truncateAudio(0) on raw output starts over', async () => {
    const dir = freshDir();
    const path = join(dir, 't.raw');
    const sink = await openFileSink(path, PCM, 'raw');
    await sink.write(bytes(300, 1));
    await sink.truncateAudio(0);
    await sink.write(bytes(20, 9));
    await sink.finish();
    assert.ok(readFileSync(path).equals(bytes(20, 9)));
  });

  it('a symbolic link target: the file it points to is replaced, the link stays', async () => {
    const dir = freshDir();
    const real = join(dir, 'real.raw');
    const link = join(dir, 'link.raw');
    writeFileSync(real, 'old');
    symlinkSync('real.raw', link);
    const sink = await openFileSink(link, PCM, 'raw');
    await sink.write(Buffer.from('new!'));
    await sink.finish();
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readFileSync(real, 'utf8'), 'new!');
    assert.deepEqual(readdirSync(dir).sort(), ['link.raw', 'real.raw']);
  });

  it('a dangling symbolic link: its target is created (through a chain of relative links, in another folder), the links stay links', async () => {
    // As a shell's `>` does: the link was the user's; replacing it by a file would destroy it.
    const dir = freshDir();
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync('middle.raw', join(dir, 'link.raw'));
    symlinkSync('elsewhere/new.raw', join(dir, 'middle.raw'));
    const sink = await openFileSink(join(dir, 'link.raw'), PCM, 'raw');
    assert.equal(sink.tempPath.startsWith(`${elsewhere}/.new.raw.tts-`), true, `the temporary file is beside the target: ${sink.tempPath}`);
    await sink.write(Buffer.from('new!'));
    await sink.finish();
    assert.ok(lstatSync(join(dir, 'link.raw')).isSymbolicLink(), 'the link was replaced');
    assert.ok(lstatSync(join(dir, 'middle.raw')).isSymbolicLink(), 'the second link was replaced');
    assert.equal(readFileSync(join(elsewhere, 'new.raw'), 'utf8'), 'new!');
    assert.deepEqual(readdirSync(dir).sort(), ['elsewhere', 'link.raw', 'middle.raw']);
    assert.deepEqual(readdirSync(elsewhere), ['new.raw']);
  });

  it('a dangling link into a folder that does not exist: io_error exit 7 naming the link and its target\'s folder, the link untouched', async () => {
    const dir = freshDir();
    const link = join(dir, 'link.wav');
    symlinkSync(join(dir, 'gone', 'out.wav'), link);
    await assert.rejects(openFileSink(link, PCM, 'wav'), (e) => assertIoError(e, link, new RegExp(`a link to ${join(dir, 'gone', 'out.wav')}\\): the folder ${join(dir, 'gone')} does not exist`)));
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.deepEqual(readdirSync(dir), ['link.wav']);
  });

  /**
   * A sticky, world-writable folder `shared` (as /tmp) and a `home` holding existing.raw ("mine"),
   * in a fresh folder; `plant(target, name)` makes the link `shared/name` → `target`, owned by
   * another user (nobody: needs root).
   */
  const stickyFolders = (): { shared: string; home: string; plant: (target: string, name: string) => void } => {
    const dir = freshDir();
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const home = join(dir, 'home');
    mkdirSync(home);
    writeFileSync(join(home, 'existing.raw'), 'mine');
    const nobody = 65534;
    const plant = (target: string, name: string): void => {
      symlinkSync(target, join(shared, name));
      lchownSync(join(shared, name), nobody, nobody);
    };
    return { shared, home, plant };
  };

  it('another user\'s link in a sticky, world-writable folder (/tmp) is not followed, as Linux\'s protected_symlinks does not follow it', { skip: process.getuid?.() !== 0 && 'making a link owned by another user needs root (CI runs as root)' }, async () => {
    // An attacker's links in a shared folder: one dangling into the victim's home, one to a file
    // that exists. Neither target is created or written.
    const { shared, home, plant } = stickyFolders();
    plant(join(home, 'planted.raw'), 'dangling.raw');
    plant(join(home, 'existing.raw'), 'existing.raw');
    for (const name of ['dangling.raw', 'existing.raw']) {
      const sink = await openFileSink(join(shared, name), PCM, 'raw');
      assert.equal(sink.tempPath.startsWith(`${shared}/.${name}.tts-`), true, `written in the shared folder: ${sink.tempPath}`);
      await sink.write(Buffer.from('new!'));
      await sink.finish();
    }
    assert.deepEqual(readdirSync(home).sort(), ['existing.raw']);
    assert.equal(readFileSync(join(home, 'existing.raw'), 'utf8'), 'mine');
    // Root may replace another user's name in a sticky folder: the links became files.
    assert.equal(readFileSync(join(shared, 'dangling.raw'), 'utf8'), 'new!');
    // The same links owned by the one following them are followed.
    const own = join(shared, 'own.raw');
    symlinkSync(join(home, 'created.raw'), own);
    const sink = await openFileSink(own, PCM, 'raw');
    await sink.write(Buffer.from('ok'));
    await sink.finish();
    assert.equal(readFileSync(join(home, 'created.raw'), 'utf8'), 'ok');
    assert.ok(lstatSync(own).isSymbolicLink());
  });

  it('a link of the user\'s that leads to another user\'s link in a sticky folder stops there, as Linux stops a chain of links, whether the file at the end exists or not', { skip: process.getuid?.() !== 0 && 'making a link owned by another user needs root (CI runs as root)' }, async () => {
    // ~/out.raw → /tmp/out.raw, which an attacker made a link to a file of the victim's choosing.
    const { shared, home, plant } = stickyFolders();
    for (const [planted, target] of [['to-existing.raw', 'existing.raw'], ['to-new.raw', 'planted.raw']] as const) {
      plant(join(home, target), planted);
      const mine = join(home, `via-${planted}`);
      symlinkSync(join(shared, planted), mine);
      const sink = await openFileSink(mine, PCM, 'raw');
      assert.equal(sink.tempPath.startsWith(`${shared}/.${planted}.tts-`), true, `written at the other user's link: ${sink.tempPath}`);
      await sink.write(Buffer.from('new!'));
      await sink.finish();
      assert.ok(lstatSync(mine).isSymbolicLink(), 'the user\'s own link stays a link');
    }
    assert.deepEqual(readdirSync(home).sort(), ['existing.raw', 'via-to-existing.raw', 'via-to-new.raw']);
    assert.equal(readFileSync(join(home, 'existing.raw'), 'utf8'), 'mine');
  });

  it('a loop of links: io_error exit 7 saying so, nothing created', async () => {
    const dir = freshDir();
    symlinkSync('b.wav', join(dir, 'a.wav'));
    symlinkSync('a.wav', join(dir, 'b.wav'));
    await assert.rejects(openFileSink(join(dir, 'a.wav'), PCM, 'wav'), (e) => assertIoError(e, join(dir, 'a.wav'), /too many symbolic links/));
    assert.deepEqual(readdirSync(dir).sort(), ['a.wav', 'b.wav']);
  });

  it('sweeps what killed runs left for the name beside the writing, not before it: the file opens first, and putting it in place or dropping it waits for the sweep (issue 20, sixteenth round)', async () => {
    // A killed run: its process id no longer runs.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    for (const end of ['commit', 'discard'] as const) {
      const dir = freshDir();
      const stale = join(dir, `.out.wav.tts-${dead}-0123456789ab.tmp`);
      const otherName = join(dir, `.other.wav.tts-${dead}-0123456789ab.tmp`);
      writeFileSync(stale, 'left by a killed run');
      writeFileSync(otherName, 'left by a killed run writing another name');
      const file = await openAtomicFile(join(dir, 'out.wav'));
      // Nothing has read the folder yet: the open did not wait for it (before: swept already).
      assert.equal(readFileSync(stale, 'utf8'), 'left by a killed run');
      if (end === 'commit') {
        await file.fh.write('new');
        await commitAtomicFile(file);
        assert.equal(readFileSync(join(dir, 'out.wav'), 'utf8'), 'new');
      } else {
        await discardAtomicFile(file);
      }
      assert.deepEqual(readdirSync(dir).sort(), end === 'commit' ? ['.other.wav.tts-' + dead + '-0123456789ab.tmp', 'out.wav'] : ['.other.wav.tts-' + dead + '-0123456789ab.tmp'], `${end}: the stale file of this name swept, another name's left`);
      assert.equal(readFileSync(otherName, 'utf8'), 'left by a killed run writing another name');
    }
  });
});
