/**
 * The container kit's own parts (src/audio/containers): Ogg page framing and CRC (RFC 3533),
 * the FLAC STREAMINFO patch (RFC 9639 §8.2), whole-frame alignment of PCM chunks, and the
 * names, bit rates and limits the planner checks. The files themselves are judged by ffprobe in
 * test/e2e/containers.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodedSink, type AudioEncoder } from '../../src/audio/containers/encoder.js';
import { streamInfoBytes } from '../../src/audio/containers/flac.js';
import { OggWriter, oggCrc, opusHead } from '../../src/audio/containers/ogg.js';
import { FrameAligner, toFloat32, toInt32 } from '../../src/audio/containers/pcm.js';
import { bitrateFor, containerOfPath } from '../../src/audio/containers/registry.js';
import { mp3OutputRate, opusRateFor } from '../../src/audio/containers/rates.js';
import { TtsError } from '../../src/errors.js';

/** Parses the pages of an Ogg stream: flags, granule, sequence, lacing values, and whether the CRC holds. */
function pages(bytes: Buffer): { flags: number; granule: bigint; sequence: number; lacing: number[]; crcOk: boolean }[] {
  const out = [];
  let o = 0;
  while (o < bytes.length) {
    assert.equal(bytes.toString('latin1', o, o + 4), 'OggS');
    const n = bytes[o + 26]!;
    const lacing = [...bytes.subarray(o + 27, o + 27 + n)];
    const length = 27 + n + lacing.reduce((a, b) => a + b, 0);
    const page = Buffer.from(bytes.subarray(o, o + length));
    const crc = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    out.push({ flags: page[5]!, granule: page.readBigInt64LE(6), sequence: page.readUInt32LE(18), lacing, crcOk: oggCrc(page) === crc });
    o += length;
  }
  return out;
}

describe('Ogg pages (RFC 3533)', () => {
  it('computes the Ogg CRC-32 (generator 0x04C11DB7, no reflection)', () => {
    // CRC-32/MPEG-2 without the initial 0xFFFFFFFF and final XOR: "123456789" → 0x89A1897F.
    assert.equal(oggCrc(Buffer.from('123456789')), 0x89a1897f);
  });

  it('laces packets (255 → 255,0), marks the first and last page, and numbers pages', () => {
    const w = new OggWriter(7);
    w.add(opusHead(1, 312, 24000), 0n);
    const first = pages(w.flush());
    w.add(Buffer.alloc(255, 1), 960n);
    w.add(Buffer.alloc(600, 2), 1920n);
    const last = pages(w.flush(true));
    assert.deepEqual(first.map((p) => [p.flags, p.granule, p.sequence, p.lacing, p.crcOk]), [[0x02, 0n, 0, [19], true]]);
    assert.deepEqual(last.map((p) => [p.flags, p.granule, p.sequence, p.lacing, p.crcOk]), [[0x04, 1920n, 1, [255, 0, 255, 255, 90], true]]);
  });

  it('continues a packet over 255 lacing values on the next page, whose granule is the packet end', () => {
    const w = new OggWriter(1);
    w.add(Buffer.alloc(255 * 255 + 10, 3), 960n);
    const got = pages(w.flush());
    assert.equal(got.length, 2);
    assert.deepEqual([got[0]!.flags & 1, got[0]!.granule, got[0]!.lacing.length], [0, -1n, 255]);
    assert.deepEqual([got[1]!.flags & 1, got[1]!.granule, got[1]!.lacing], [1, 960n, [10]]);
    assert.ok(got.every((p) => p.crcOk));
  });

  it('gives nothing for an empty flush, and sets the end granule on the last packet', () => {
    const w = new OggWriter(1);
    assert.equal(w.flush().length, 0);
    assert.throws(() => w.endGranule(5n));
    w.add(Buffer.alloc(3), 960n);
    w.endGranule(700n);
    assert.equal(pages(w.flush(true))[0]!.granule, 700n);
  });
});

describe('FLAC STREAMINFO', () => {
  it('packs the final totals and the MD5 where RFC 9639 §8.2 puts them', () => {
    const b = streamInfoBytes({ min_blocksize: 4096, max_blocksize: 4096, min_framesize: 14, max_framesize: 5408, sampleRate: 44100, channels: 2, bitsPerSample: 24, total_samples: 123456789, md5sum: '00112233445566778899aabbccddeeff' });
    assert.equal(b.length, 34);
    assert.equal(b.readUInt16BE(0), 4096);
    assert.equal(b.readUIntBE(4, 3), 14);
    assert.equal(b.readUIntBE(7, 3), 5408);
    const packed = b.readBigUInt64BE(10);
    assert.equal(packed >> 44n, 44100n);
    assert.equal(((packed >> 41n) & 7n) + 1n, 2n);
    assert.equal(((packed >> 36n) & 31n) + 1n, 24n);
    assert.equal(packed & 0xfffffffffn, 123456789n);
    assert.equal(b.subarray(18).toString('hex'), '00112233445566778899aabbccddeeff');
  });
});

describe('PCM input of the encoders', () => {
  it('keeps a frame split across chunks for the next one', () => {
    const a = new FrameAligner({ format: 'pcm16', sampleRate: 24000, channels: 2 });
    const src = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const got = [a.take(src.subarray(0, 5)), a.take(src.subarray(5, 6)), a.take(src.subarray(6))];
    assert.deepEqual(got.map((b) => b.length), [4, 0, 8]);
    assert.deepEqual(Buffer.concat(got), src);
    assert.equal(a.pending, 0);
  });

  it('reads pcm16, µ-law and float32 as floats and as 16/24-bit integers', () => {
    const pcm = Buffer.alloc(4);
    pcm.writeInt16LE(-32768, 0);
    pcm.writeInt16LE(16384, 2);
    assert.deepEqual([...toFloat32(pcm, 'pcm16')], [-1, 0.5]);
    assert.deepEqual([...toInt32(pcm, 'pcm16')], [-32768, 16384]);
    const f = Buffer.alloc(8);
    f.writeFloatLE(2, 0); // clipped
    f.writeFloatLE(-0.5, 4);
    assert.deepEqual([...toFloat32(f, 'float32')], [1, -0.5]);
    assert.deepEqual([...toInt32(f, 'float32')], [8388607, -4194303]);
    assert.equal(toInt32(Buffer.from([0xff, 0x7f]), 'mulaw').length, 2);
  });
});

describe('container names and bit rates', () => {
  it('maps extensions case-insensitively, and nothing else', () => {
    const cases: [string, string | undefined][] = [['a.WAV', 'wav'], ['a.pcm', 'raw'], ['a.raw', 'raw'], ['b/c.flac', 'flac'], ['x.Mp3', 'mp3'], ['y.ogg', 'opus'], ['y.opus', 'opus'], ['z.txt', undefined], ['noext', undefined], ['dir.mp3/file', undefined]];
    for (const [name, want] of cases) assert.equal(containerOfPath(name), want, name);
  });

  it('defaults to speech bit rates and refuses what the container cannot take', () => {
    const mono24 = { format: 'pcm16', sampleRate: 24000, channels: 1 } as const;
    assert.equal(bitrateFor('mp3', mono24, undefined), 48);
    assert.equal(bitrateFor('mp3', { ...mono24, channels: 2 }, undefined), 96);
    assert.equal(bitrateFor('mp3', { ...mono24, sampleRate: 8000, channels: 2 }, undefined), 64);
    assert.equal(bitrateFor('opus', mono24, undefined), 24);
    assert.equal(bitrateFor('opus', { ...mono24, channels: 2 }, undefined), 32);
    assert.equal(bitrateFor('flac', mono24, undefined), undefined);
    const usage = (e: unknown): boolean => e instanceof TtsError && e.exitCode === 2;
    assert.throws(() => bitrateFor('mp3', mono24, 320), usage); // MPEG-2 stops at 160
    assert.throws(() => bitrateFor('opus', mono24, 5), usage);
    assert.throws(() => bitrateFor('wav', mono24, 64), usage);
  });

  it('encodes MP3 and Opus at their own rates, the next one above otherwise', () => {
    assert.deepEqual([8000, 30000, 44100, 96000].map(mp3OutputRate), [8000, 32000, 44100, 48000]);
    assert.deepEqual([8000, 11025, 22050, 44100, 96000].map(opusRateFor), [8000, 12000, 24000, 48000, 48000]);
  });
});

describe('encodedSink', () => {
  /** An encoder that "encodes" by tagging whole frames, and records its calls. */
  function fakeEncoder(calls: string[]): AudioEncoder {
    return {
      encode: (pcm) => (calls.push(`encode ${pcm.length}`), pcm.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from('E'), pcm])),
      finish: () => (calls.push('finish'), Buffer.from('END')),
      headerPatch: () => ({ offset: 0, bytes: Buffer.from('H') }),
      free: () => void calls.push('free'),
    };
  }
  const spec = { format: 'pcm16', sampleRate: 24000, channels: 1 } as const;

  it('encodes whole frames as they come, writes the tail, patches a file, then finishes it', async () => {
    const calls: string[] = [];
    const written: string[] = [];
    const inner = {
      write: async (b: Buffer) => void written.push(b.toString('latin1')),
      patch: async (o: number, b: Buffer) => void calls.push(`patch ${o} ${b.toString()}`),
      finish: async () => void calls.push('inner finish'),
      abort: async () => void calls.push('inner abort'),
    };
    const sink = encodedSink(spec, fakeEncoder(calls), inner);
    await sink.write(Buffer.from('abc')); // one whole frame (2 bytes) + 1 byte kept
    await sink.write(Buffer.from('d'));
    await sink.finish();
    assert.deepEqual(written, ['Eab', 'Ecd', 'END']);
    assert.deepEqual(calls, ['encode 2', 'encode 2', 'finish', 'patch 0 H', 'free', 'inner finish']);
  });

  it('aborts the output and frees the encoder; a pipe is never patched', async () => {
    const calls: string[] = [];
    const inner = { write: async () => {}, finish: async () => void calls.push('inner finish'), abort: async () => void calls.push('inner abort') };
    const sink = encodedSink(spec, fakeEncoder(calls), inner);
    await sink.write(Buffer.from('ab'));
    await sink.abort();
    await assert.rejects(sink.write(Buffer.from('ab')), (e: unknown) => e instanceof TtsError && e.code === 'io_error');
    await new Promise((r) => setImmediate(r)); // the encoder is freed once loaded, without holding up the abort
    assert.deepEqual([...calls].sort(), ['encode 2', 'free', 'inner abort']);
    const piped: string[] = [];
    const sink2 = encodedSink(spec, fakeEncoder(piped), { write: async () => {}, finish: async () => void piped.push('inner finish'), abort: async () => {} });
    await sink2.finish();
    assert.deepEqual(piped, ['finish', 'free', 'inner finish']);
  });
});
