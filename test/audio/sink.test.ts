import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { openFileSink } from '../../src/audio/file-sink.js';
import { teeSink, type AudioSink } from '../../src/audio/sink.js';
import { createStdoutSink } from '../../src/audio/stdout-sink.js';
import { TtsError } from '../../src/errors.js';

/** A sink that records calls; `fail` names the operation that rejects, after `delay` ms. */
function recorder(fail?: 'write' | 'finish', delay = 0): AudioSink & { calls: string[] } {
  const calls: string[] = [];
  const op = async (name: string): Promise<void> => {
    await new Promise((r) => setTimeout(r, delay));
    calls.push(name);
    if (name.startsWith(fail ?? '-')) throw new TtsError('io_error', `${name} failed`);
  };
  return {
    calls,
    write: (chunk) => op(`write ${chunk.length}`),
    finish: () => op('finish'),
    abort: async () => {
      calls.push('abort');
      throw new Error('abort must not make the tee reject');
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'tts-tee-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('teeSink', () => {
  it('writes every chunk to every sink and finishes all', async () => {
    const a = recorder();
    const b = recorder(undefined, 5);
    const tee = teeSink([a, b]);
    await tee.write(Buffer.alloc(3));
    await tee.write(Buffer.alloc(5));
    await tee.finish();
    assert.deepEqual(a.calls, ['write 3', 'write 5', 'finish']);
    assert.deepEqual(b.calls, ['write 3', 'write 5', 'finish']);
  });

  it('a failing write rejects only after every sink settled, with the first error', async () => {
    const a = recorder('write');
    const slow = recorder(undefined, 30);
    await assert.rejects(teeSink([a, slow]).write(Buffer.alloc(1)), /write 1 failed/);
    assert.deepEqual(slow.calls, ['write 1'], 'the slow sink had finished its write');
  });

  it('finish failing in one sink still finishes the others; abort aborts all and never rejects', async () => {
    const a = recorder();
    const b = recorder('finish');
    const tee = teeSink([a, b]);
    await assert.rejects(tee.finish(), /finish failed/);
    assert.deepEqual(a.calls, ['finish']);
    await tee.abort();
    assert.deepEqual(a.calls, ['finish', 'abort']);
    assert.deepEqual(b.calls, ['finish', 'abort']);
  });

  it('real sinks: file and stream get the same bytes; abort leaves no file', async () => {
    const out = new PassThrough();
    const parts: Buffer[] = [];
    out.on('data', (c: Buffer) => parts.push(c));
    const spec = { format: 'pcm16', sampleRate: 24000, channels: 1 } as const;
    const file = await openFileSink(join(dir, 'a.raw'), spec, 'raw');
    const tee = teeSink([file, createStdoutSink(spec, 'raw', out)]);
    await tee.write(Buffer.from([1, 2, 3, 4]));
    await tee.finish();
    assert.deepEqual([...readFileSync(join(dir, 'a.raw'))], [1, 2, 3, 4]);
    assert.deepEqual([...Buffer.concat(parts)], [1, 2, 3, 4]);

    const file2 = await openFileSink(join(dir, 'b.raw'), spec, 'raw');
    const tee2 = teeSink([file2, createStdoutSink(spec, 'raw', new PassThrough())]);
    await tee2.write(Buffer.from([5, 6]));
    await tee2.abort();
    assert.deepEqual(readdirSync(dir), ['a.raw']);
  });
});
