import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PassThrough, Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { ClosedPipeError, createStdoutSink, isClosedPipe } from '../../src/audio/stdout-sink.js';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { parseWavHeader } from '../helpers/wav-reader.js';
import { TtsError } from '../../src/errors.js';
import { haveSox } from '../helpers/audio-sox.js';

const PCM: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };
const writer = fileURLToPath(new URL('../helpers/audio-stdout-writer.js', import.meta.url));

/** Collects everything written to a PassThrough. */
function collect(stream: PassThrough): Promise<Buffer> {
  const parts: Buffer[] = [];
  stream.on('data', (b: Buffer) => parts.push(b));
  return new Promise((resolve) => stream.on('end', () => resolve(Buffer.concat(parts))));
}

describe('createStdoutSink', () => {
  it('raw: each chunk goes out as it comes, unchanged, and finish ends the stream', async () => {
    const out = new PassThrough();
    const seen: Buffer[] = [];
    out.on('data', (b: Buffer) => seen.push(b));
    const sink = createStdoutSink(PCM, 'raw', out);
    await sink.write(Buffer.from([1, 2, 3]));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(Buffer.concat(seen), Buffer.from([1, 2, 3]), 'first bytes out before the next delta');
    await sink.write(Buffer.from([4]));
    const ended = new Promise((r) => out.on('end', r));
    await sink.finish();
    await ended;
    assert.deepEqual(Buffer.concat(seen), Buffer.from([1, 2, 3, 4]));
  });

  it('wav: header with 0xFFFFFFFF sizes comes first, then the audio; no pad byte', async () => {
    const out = new PassThrough();
    const all = collect(out);
    const sink = createStdoutSink({ format: 'mulaw', sampleRate: 8000, channels: 1 }, 'wav', out);
    await sink.write(Buffer.from([9, 8, 7]));
    await sink.finish();
    const b = await all;
    const h = parseWavHeader(b);
    assert.equal(h.formatTag, 7);
    assert.equal(h.riffSize, 0xffffffff);
    assert.equal(h.dataBytes, 0xffffffff);
    assert.equal(h.factSamples, 0xffffffff);
    assert.deepEqual([...b.subarray(h.dataOffset)], [9, 8, 7]);
  });

  it('wav with no audio still writes the header at finish', async () => {
    const out = new PassThrough();
    const all = collect(out);
    await createStdoutSink(PCM, 'wav', out).finish();
    assert.equal((await all).length, 44);
  });

  it('waits for drain when the stream is full', async () => {
    let release!: () => void;
    const writes: number[] = [];
    const slow = new Writable({
      highWaterMark: 8,
      write(chunk: Buffer, _enc, cb) {
        writes.push(chunk.length);
        release = () => cb();
      },
    });
    const sink = createStdoutSink(PCM, 'raw', slow);
    let resolved = false;
    const w = sink.write(Buffer.alloc(16)).then(() => (resolved = true));
    // A full turn of the event loop: only the drain (release below) can accept it.
    await new Promise((r) => setImmediate(r));
    assert.equal(resolved, false, 'over the high-water mark: not accepted until drain');
    release();
    await w;
    assert.equal(resolved, true);
    assert.deepEqual(writes, [16]);
  });

  it('a destroyed stream → ClosedPipeError (io_error, closedPipe), every later call too', async () => {
    const out = new PassThrough();
    out.destroy();
    const sink = createStdoutSink(PCM, 'raw', out);
    const check = (e: unknown): boolean => {
      assert.ok(e instanceof ClosedPipeError && e instanceof TtsError);
      assert.equal(e.code, 'io_error');
      assert.equal(e.closedPipe, true);
      assert.equal(isClosedPipe(e), true);
      return true;
    };
    await assert.rejects(sink.write(Buffer.alloc(10)), check);
    await assert.rejects(sink.write(Buffer.alloc(10)), check);
    await assert.rejects(sink.finish(), check);
    await sink.abort();
  });

  it('an EPIPE error event → ClosedPipeError', async () => {
    const out = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE', errno: -32, syscall: 'write' }));
      },
    });
    const sink = createStdoutSink(PCM, 'raw', out);
    await assert.rejects(sink.write(Buffer.alloc(10)), (e) => isClosedPipe(e) && e instanceof ClosedPipeError);
  });

  it('another write error → plain io_error (exit 7), not a closed pipe', async () => {
    const out = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
      },
    });
    const sink = createStdoutSink(PCM, 'raw', out);
    await assert.rejects(sink.write(Buffer.alloc(10)), (e) => {
      assert.ok(e instanceof TtsError);
      assert.equal(e.exitCode, 7);
      assert.equal(isClosedPipe(e), false);
      assert.match(e.message, /no space/);
      return true;
    });
  });

  it('isClosedPipe: raw EPIPE / ERR_STREAM_DESTROYED and causes, not others', () => {
    assert.equal(isClosedPipe(Object.assign(new Error('x'), { code: 'EPIPE' })), true);
    assert.equal(isClosedPipe(Object.assign(new Error('x'), { code: 'ERR_STREAM_DESTROYED' })), true);
    assert.equal(isClosedPipe(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'EPIPE' }) })), true);
    assert.equal(isClosedPipe(new TtsError('io_error', 'x')), false);
    assert.equal(isClosedPipe(undefined), false);
    assert.equal(isClosedPipe('EPIPE'), false);
  });

  it('abort stops writing: later writes reject', async () => {
    const out = new PassThrough();
    const sink = createStdoutSink(PCM, 'raw', out);
    await sink.write(Buffer.alloc(4));
    await sink.abort();
    await sink.abort();
    await assert.rejects(sink.write(Buffer.alloc(4)), TtsError);
    assert.equal(out.destroyed, true, 'a stream that is not process.stdout is destroyed');
  });

  for (const container of ['raw', 'wav'] as const) {
    it(`real stdout into \`head -c 100\` (${container}): ends quietly on EPIPE, exit 0, no stack`, () => {
      // bash so the writer's stdout is a real pipe that head closes after 100 bytes.
      const r = spawnSync(
        'bash',
        ['-c', `"${process.execPath}" "${writer}" ${container} 50000000 | head -c 100 | wc -c; echo "\${PIPESTATUS[0]}"`],
        { encoding: 'utf8', timeout: 30_000 },
      );
      const [count, status] = r.stdout.trim().split('\n');
      assert.equal(Number(count), 100);
      assert.equal(status, '0', `writer exit status; stderr: ${r.stderr}`);
      assert.equal(r.stderr, 'closed-pipe\n', 'no stack trace, only the test marker');
    });
  }

  it('sox reads the streamed WAV from a real pipe to its end', (t) => {
    if (!haveSox) return t.skip('sox is not installed');
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${writer}" wav 100000 | sox -t wav - -t raw - | cksum`], {
      encoding: 'utf8',
    });
    const expected = Buffer.alloc(100000);
    for (let i = 0; i < expected.length; i++) expected[i] = i & 0xff;
    const want = spawnSync('cksum', { input: expected, encoding: 'utf8' }).stdout;
    assert.equal(r.stdout, want);
    // sox takes the 0xFFFFFFFF data size literally and notes the stream ended before it; the
    // audio is all there (checked above). That warning and nothing else.
    assert.match(r.stderr, /^(sox WARN wav: Premature EOF on \.wav input file\n)?$/);
  });
});
