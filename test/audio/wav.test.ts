import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { AudioSpec } from '../../src/dsp/spec.js';
import { wavHeader, wavHeaderLength, wavPadLength } from '../../src/audio/wav.js';
import { parseWavHeader, wavFileInfo } from '../helpers/wav-reader.js';
import { haveSox, soxInfo, soxRawData } from '../helpers/audio-sox.js';

// Expected headers are spelled out field by field from the RIFF/WAVE spec with hand-computed
// numbers, not derived from the code under test.
const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));
const le16 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff];
const le32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

interface Case {
  name: string;
  spec: AudioSpec;
  dataBytes: number;
  expected: number[];
  soxEncoding: string;
}

const cases: Case[] = [
  {
    name: 'pcm16 mono 24000 Hz, 480 bytes',
    spec: { format: 'pcm16', sampleRate: 24000, channels: 1 },
    dataBytes: 480,
    // prettier-ignore
    expected: [
      ...ascii('RIFF'), ...le32(516), ...ascii('WAVE'),
      ...ascii('fmt '), ...le32(16), ...le16(1), ...le16(1), ...le32(24000), ...le32(48000), ...le16(2), ...le16(16),
      ...ascii('data'), ...le32(480),
    ],
    soxEncoding: 'Signed Integer PCM',
  },
  {
    name: 'pcm16 stereo 44100 Hz, 1000 bytes',
    spec: { format: 'pcm16', sampleRate: 44100, channels: 2 },
    dataBytes: 1000,
    // prettier-ignore
    expected: [
      ...ascii('RIFF'), ...le32(1036), ...ascii('WAVE'),
      ...ascii('fmt '), ...le32(16), ...le16(1), ...le16(2), ...le32(44100), ...le32(176400), ...le16(4), ...le16(16),
      ...ascii('data'), ...le32(1000),
    ],
    soxEncoding: 'Signed Integer PCM',
  },
  {
    name: 'float32 mono 16000 Hz, 400 bytes',
    spec: { format: 'float32', sampleRate: 16000, channels: 1 },
    dataBytes: 400,
    // prettier-ignore
    expected: [
      ...ascii('RIFF'), ...le32(450), ...ascii('WAVE'),
      ...ascii('fmt '), ...le32(18), ...le16(3), ...le16(1), ...le32(16000), ...le32(64000), ...le16(4), ...le16(32), ...le16(0),
      ...ascii('fact'), ...le32(4), ...le32(100),
      ...ascii('data'), ...le32(400),
    ],
    soxEncoding: 'Floating Point PCM',
  },
  {
    name: 'float32 stereo 48000 Hz, 800 bytes',
    spec: { format: 'float32', sampleRate: 48000, channels: 2 },
    dataBytes: 800,
    // prettier-ignore
    expected: [
      ...ascii('RIFF'), ...le32(850), ...ascii('WAVE'),
      ...ascii('fmt '), ...le32(18), ...le16(3), ...le16(2), ...le32(48000), ...le32(384000), ...le16(8), ...le16(32), ...le16(0),
      ...ascii('fact'), ...le32(4), ...le32(100),
      ...ascii('data'), ...le32(800),
    ],
    soxEncoding: 'Floating Point PCM',
  },
  {
    name: 'mulaw mono 8000 Hz, 801 bytes (odd: pad byte counted in RIFF size only)',
    spec: { format: 'mulaw', sampleRate: 8000, channels: 1 },
    dataBytes: 801,
    // prettier-ignore
    expected: [
      ...ascii('RIFF'), ...le32(852), ...ascii('WAVE'),
      ...ascii('fmt '), ...le32(18), ...le16(7), ...le16(1), ...le32(8000), ...le32(8000), ...le16(1), ...le16(8), ...le16(0),
      ...ascii('fact'), ...le32(4), ...le32(801),
      ...ascii('data'), ...le32(801),
    ],
    soxEncoding: 'u-law',
  },
  {
    name: 'mulaw stereo 8000 Hz, 800 bytes',
    spec: { format: 'mulaw', sampleRate: 8000, channels: 2 },
    dataBytes: 800,
    // prettier-ignore
    expected: [
      ...ascii('RIFF'), ...le32(850), ...ascii('WAVE'),
      ...ascii('fmt '), ...le32(18), ...le16(7), ...le16(2), ...le32(8000), ...le32(16000), ...le16(2), ...le16(8), ...le16(0),
      ...ascii('fact'), ...le32(4), ...le32(400),
      ...ascii('data'), ...le32(800),
    ],
    soxEncoding: 'u-law',
  },
];

/** Compares byte by byte, naming the first offset that differs. */
function assertBytes(actual: Uint8Array, expected: number[], what: string): void {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    assert.equal(actual[i], expected[i], `${what}: byte ${i} is ${actual[i]}, expected ${expected[i]}`);
  }
}

function pattern(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

const dir = mkdtempSync(join(tmpdir(), 'tts-wav-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('wavHeader', () => {
  for (const c of cases) {
    it(`${c.name}: every field at its offset`, () => {
      const h = wavHeader(c.spec, c.dataBytes);
      assert.equal(h.length, wavHeaderLength(c.spec.format));
      assertBytes(h, c.expected, c.name);
    });

    // sox is the independent judge for the first case of each encoding; the other cases are read
    // back in-process by test/helpers/wav-reader.ts (the same fields, no process spawned).
    const soxJudges = cases.find((o) => o.spec.format === c.spec.format) === c;
    it(`${c.name}: ${soxJudges ? 'sox' : 'the WAV reader'} reads rate, channels, encoding, length and the exact audio bytes`, (t) => {
      if (soxJudges && !haveSox) return t.skip('sox is not installed');
      const data = pattern(c.dataBytes, c.dataBytes);
      // Keep float samples finite so sox does not choke on NaN patterns.
      if (c.spec.format === 'float32') for (let i = 0; i < data.length; i += 4) data.writeFloatLE(((i % 200) - 100) / 128, i);
      // µ-law 0x7F is "negative zero": sox decodes it to 0 and re-encodes 0xFF, so avoid it.
      if (c.spec.format === 'mulaw') for (let i = 0; i < data.length; i++) if (data[i] === 0x7f) data[i] = 0x7e;
      const file = join(dir, `${c.spec.format}-${c.spec.channels}.wav`);
      const pad = Buffer.alloc(wavPadLength(c.dataBytes));
      writeFileSync(file, Buffer.concat([wavHeader(c.spec, c.dataBytes), data, pad]));
      if (!soxJudges) {
        const read = wavFileInfo(file);
        const bytesPerFrame = (c.spec.format === 'pcm16' ? 2 : c.spec.format === 'float32' ? 4 : 1) * c.spec.channels;
        assert.equal(read.rate, c.spec.sampleRate);
        assert.equal(read.channels, c.spec.channels);
        assert.equal(read.encoding, c.soxEncoding);
        assert.equal(read.samples, c.dataBytes / bytesPerFrame);
        const audio = readFileSync(file).subarray(read.header.dataOffset, read.header.dataOffset + read.header.dataBytes);
        assert.ok(audio.equals(data), 'reads back exactly the audio bytes (no pad byte, nothing else)');
        return;
      }
      const info = soxInfo(file);
      const bytesPerFrame = (c.spec.format === 'pcm16' ? 2 : c.spec.format === 'float32' ? 4 : 1) * c.spec.channels;
      assert.equal(info.rate, c.spec.sampleRate);
      assert.equal(info.channels, c.spec.channels);
      assert.equal(info.encoding, c.soxEncoding);
      assert.equal(info.samples, c.dataBytes / bytesPerFrame);
      assert.ok(Math.abs(info.duration - c.dataBytes / bytesPerFrame / c.spec.sampleRate) < 1e-4, `duration ${info.duration}`);
      assert.equal(info.warnings, '');
      const read = soxRawData(file);
      assert.equal(read.warnings, '');
      assert.ok(read.data.equals(data), 'sox reads back exactly the audio bytes (no pad byte, nothing else)');
    });
  }

  it('odd-length mulaw: the file has the pad byte after the data', () => {
    const spec: AudioSpec = { format: 'mulaw', sampleRate: 8000, channels: 1 };
    const h = wavHeader(spec, 3);
    assert.equal(h.readUInt32LE(4), 58 - 8 + 3 + 1, 'RIFF size counts the pad byte');
    assert.equal(h.readUInt32LE(54), 3, 'data size does not');
    assert.equal(wavPadLength(3), 1);
    assert.equal(wavPadLength(4), 0);
    // In-process: the µ-law case above has sox read an odd-length file with its pad byte.
    const file = join(dir, 'odd.wav');
    writeFileSync(file, Buffer.concat([h, Buffer.from([1, 2, 3]), Buffer.alloc(1)]));
    const read = wavFileInfo(file);
    assert.equal(read.samples, 3);
    assert.deepEqual([...readFileSync(file).subarray(read.header.dataOffset, read.header.dataOffset + read.header.dataBytes)], [1, 2, 3]);
  });

  for (const c of cases) {
    it(`${c.name}: streaming header has 0xFFFFFFFF sizes`, () => {
      const h = wavHeader(c.spec);
      const expected = [...c.expected];
      const ff = [0xff, 0xff, 0xff, 0xff];
      expected.splice(4, 4, ...ff); // RIFF size
      expected.splice(expected.length - 4, 4, ...ff); // data size
      if (c.spec.format !== 'pcm16') expected.splice(46, 4, ...ff); // fact sample frames
      assertBytes(h, expected, `${c.name} streaming`);
    });
  }

  it('a streamed (0xFFFFFFFF) WAV reads to the end of the file', () => {
    // In-process; sox judges a streamed WAV through a real pipe in test/audio/stdout-sink.test.ts.
    const data = pattern(4800, 7);
    const file = join(dir, 'streamed.wav');
    writeFileSync(file, Buffer.concat([wavHeader({ format: 'pcm16', sampleRate: 24000, channels: 1 }), data]));
    const read = wavFileInfo(file);
    assert.equal(read.header.dataBytes, 0xffffffff);
    assert.equal(read.samples, 2400);
    assert.ok(readFileSync(file).subarray(read.header.dataOffset).equals(data));
  });

  it('rejects impossible specs and sizes', () => {
    const spec: AudioSpec = { format: 'pcm16', sampleRate: 24000, channels: 1 };
    assert.throws(() => wavHeader({ ...spec, sampleRate: 0 }), RangeError);
    assert.throws(() => wavHeader({ ...spec, sampleRate: 22050.5 }), RangeError);
    assert.throws(() => wavHeader({ ...spec, channels: 0 }), RangeError);
    assert.throws(() => wavHeader({ ...spec, channels: 65536 }), RangeError);
    assert.throws(() => wavHeader(spec, -1), RangeError);
    assert.throws(() => wavHeader(spec, 1.5), RangeError);
    assert.throws(() => wavHeader(spec, 0xffffffff - 36), RangeError, 'RIFF size would be 0xFFFFFFFF (reserved)');
    assert.equal(wavHeader(spec, 0xffffffff - 37).readUInt32LE(4), 0xfffffffe, 'the largest exact size');
  });
});

describe('parseWavHeader', () => {
  for (const c of cases) {
    it(`${c.name}: reads back what wavHeader wrote`, () => {
      const info = parseWavHeader(wavHeader(c.spec, c.dataBytes));
      const bytes = c.spec.format === 'pcm16' ? 2 : c.spec.format === 'float32' ? 4 : 1;
      assert.equal(info.formatTag, { pcm16: 1, float32: 3, mulaw: 7 }[c.spec.format]);
      assert.equal(info.channels, c.spec.channels);
      assert.equal(info.sampleRate, c.spec.sampleRate);
      assert.equal(info.bitsPerSample, bytes * 8);
      assert.equal(info.blockAlign, bytes * c.spec.channels);
      assert.equal(info.byteRate, bytes * c.spec.channels * c.spec.sampleRate);
      assert.equal(info.dataOffset, c.spec.format === 'pcm16' ? 44 : 58);
      assert.equal(info.dataBytes, c.dataBytes);
      assert.equal(info.factSamples, c.spec.format === 'pcm16' ? undefined : c.dataBytes / (bytes * c.spec.channels));
    });
  }

  it('skips other chunks, including an odd-sized one with its pad byte', () => {
    const h = wavHeader({ format: 'pcm16', sampleRate: 22050, channels: 1 }, 10);
    const list = Buffer.from([...ascii('LIST'), ...le32(5), 1, 2, 3, 4, 5, 0]);
    const file = Buffer.concat([h.subarray(0, 36), list, h.subarray(36)]);
    const info = parseWavHeader(file);
    assert.equal(info.dataOffset, 44 + list.length);
    assert.equal(info.dataBytes, 10);
    assert.equal(info.sampleRate, 22050);
  });

  it('reads the SubFormat tag of WAVE_FORMAT_EXTENSIBLE', () => {
    // prettier-ignore
    const fmt = [...le16(0xfffe), ...le16(2), ...le32(48000), ...le32(384000), ...le16(8), ...le16(32), ...le16(22),
      ...le16(32), ...le32(3), ...le16(3), ...le16(0), ...le32(0x00100000), ...le32(0xaa000080), ...le32(0x719b3800)];
    const file = Buffer.from([...ascii('RIFF'), ...le32(0xffffffff), ...ascii('WAVE'), ...ascii('fmt '), ...le32(40), ...fmt,
      ...ascii('data'), ...le32(0xffffffff)]);
    const info = parseWavHeader(file);
    assert.equal(info.formatTag, 0xfffe);
    assert.equal(info.subFormatTag, 3);
    assert.equal(info.dataBytes, 0xffffffff);
  });

  it('throws on malformed input, saying what is wrong', () => {
    const good = wavHeader({ format: 'mulaw', sampleRate: 8000, channels: 1 }, 10);
    const bad = (mutate: (b: Buffer) => Buffer): Buffer => mutate(Buffer.from(good));
    assert.throws(() => parseWavHeader(Buffer.alloc(0)), /12/);
    assert.throws(() => parseWavHeader(bad((b) => (b.write('RIFX', 0, 'latin1'), b))), /RIFF/);
    assert.throws(() => parseWavHeader(bad((b) => (b.write('AVI ', 8, 'latin1'), b))), /WAVE/);
    assert.throws(() => parseWavHeader(good.subarray(0, 30)), /cut short/);
    assert.throws(() => parseWavHeader(good.subarray(0, 50)), /no "data" chunk/);
    assert.throws(() => parseWavHeader(good.subarray(0, 12)), /no "fmt " chunk/);
    assert.throws(() => parseWavHeader(bad((b) => (b.writeUInt32LE(14, 16), b))), /at least 16/);
    assert.throws(() => parseWavHeader(bad((b) => (b.writeUInt16LE(0, 22), b))), /0 channels/);
    assert.throws(() => parseWavHeader(bad((b) => (b.writeUInt32LE(0, 24), b))), /sample rate 0/);
    assert.throws(() => parseWavHeader(bad((b) => (b.writeUInt16LE(0, 32), b))), /block align 0/);
    const dataFirst = Buffer.concat([good.subarray(0, 12), Buffer.from([...ascii('data'), ...le32(0)])]);
    assert.throws(() => parseWavHeader(dataFirst), /before "fmt "/);
  });
});
