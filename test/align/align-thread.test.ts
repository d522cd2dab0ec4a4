/**
 * The aligner end to end on audio (src/align/align.ts) and in its thread (align-thread.ts):
 * tone bursts with known boundaries, spoken with other pauses and at another sample rate, land
 * where they are; the queue bound turns jobs away instead of falling behind; close() rejects.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { alignSpans, type MonoAudio, type TimeSpan } from '../../src/align/align.js';
import { AlignThread } from '../../src/align/align-thread.js';

/** Tone bursts ("words") of 0.2 s at these frequencies, each followed by `gap` seconds of silence, and their spans. */
function bursts(freqs: readonly number[], gaps: readonly number[], rate: number): { audio: MonoAudio; spans: TimeSpan[] } {
  const burst = 0.2;
  const total = freqs.reduce((t, _, i) => t + burst + gaps[i]!, 0.1);
  const samples = new Float32Array(Math.round(total * rate));
  const spans: TimeSpan[] = [];
  let t = 0.1;
  freqs.forEach((f, i) => {
    const from = Math.round(t * rate);
    const to = Math.round((t + burst) * rate);
    for (let s = from; s < to; s++) samples[s] = 0.4 * Math.sin((2 * Math.PI * f * (s - from)) / rate) + 0.2 * Math.sin((2 * Math.PI * 2.5 * f * (s - from)) / rate);
    spans.push({ start: from / rate, end: to / rate });
    t += burst + gaps[i]!;
  });
  return { audio: { samples, sampleRate: rate }, spans };
}

const FREQS = [300, 700, 450, 1200, 250, 900];
const reference = bursts(FREQS, [0.05, 0.05, 0.3, 0.05, 0.05, 0.1], 16000);
const target = bursts(FREQS, [0.25, 0.05, 0.05, 0.4, 0.1, 0.1], 24000);

/** Largest distance between aligned and true boundaries, seconds. */
function worstError(got: readonly TimeSpan[], want: readonly TimeSpan[]): number {
  return Math.max(...got.flatMap((g, i) => [Math.abs(g.start - want[i]!.start), Math.abs(g.end - want[i]!.end)]));
}

describe('alignSpans', () => {
  it('puts each burst where the target has it, within 20 ms, though the pauses differ and the rate is 24 kHz', async () => {
    const result = await alignSpans(reference.audio, target.audio, reference.spans);
    const worst = worstError(result.spans, target.spans);
    assert.ok(worst <= 0.02, `worst boundary error ${(worst * 1000).toFixed(1)} ms`);
    assert.ok(result.cpuSeconds > 0);
    assert.deepEqual((await alignSpans(reference.audio, target.audio, reference.spans)).spans, result.spans, 'deterministic');
  });
});

describe('AlignThread', () => {
  const thread = new AlignThread({ maxPendingSeconds: 3 });
  after(() => thread.close());

  it('gives in its thread what alignSpans gives here, keeping the spans\' other fields', async () => {
    const labelled = reference.spans.map((s, i) => ({ ...s, word: `w${i}` }));
    const result = await thread.align(reference.audio, target.audio, labelled);
    assert.ok(result !== undefined);
    const here = await alignSpans(reference.audio, target.audio, labelled);
    assert.deepEqual(result.spans, here.spans);
    assert.equal(result.spans[3]!.word, 'w3');
    assert.equal(thread.pendingSeconds, 0);
  });

  it('turns a job away (undefined) when the audio waiting would pass the bound, and takes jobs again after', async () => {
    const seconds = target.audio.samples.length / target.audio.sampleRate; // ~2.4 s: two pass 3 s
    assert.ok(seconds > 1.5 && seconds < 3);
    const first = thread.align(reference.audio, target.audio, reference.spans);
    const second = thread.align(reference.audio, target.audio, reference.spans);
    assert.equal(await second, undefined);
    assert.ok((await first) !== undefined);
    assert.ok((await thread.align(reference.audio, target.audio, reference.spans)) !== undefined);
  });

  it('rejects jobs under way when closed, and later ones', async () => {
    const other = new AlignThread();
    const outcome = assert.rejects(other.align(reference.audio, target.audio, reference.spans), /closed/);
    await other.close();
    await outcome;
    await assert.rejects(other.align(reference.audio, target.audio, reference.spans), /closed/);
  });
});
