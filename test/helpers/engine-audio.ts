/**
 * Helpers for the engine tests: collect an engine's chunks, decode PCM, estimate pitch (F0),
 * write WAV files and run the pocketsphinx speech recognizer on them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import createESpeak from '@echogarden/espeak-ng-emscripten';
import type { SpeechEngine, SynthesisJob } from '../../src/engine/types.js';

const run = promisify(execFile);

/** A job with the usual defaults (pcm16, 24000 Hz, mono) and `overrides` applied. */
export function job(overrides: Partial<SynthesisJob> & Pick<SynthesisJob, 'text'>): SynthesisJob {
  return { voice: 'en-man-1', language: 'en', format: 'pcm16', sampleRate: 24000, channels: 1, ...overrides };
}

/** What one synthesis produced and when (times in ms since the call). */
export interface Collected {
  chunks: Buffer[];
  audio: Buffer;
  firstChunkMs: number;
  totalMs: number;
}

/** Runs `j` on `engine` to the end, keeping every chunk and the arrival time of the first. */
export async function collect(engine: SpeechEngine, j: SynthesisJob, signal?: AbortSignal): Promise<Collected> {
  const started = performance.now();
  let firstChunkMs = Number.NaN;
  const chunks: Buffer[] = [];
  for await (const chunk of engine.synthesize(j, signal)) {
    if (chunks.length === 0) firstChunkMs = performance.now() - started;
    chunks.push(chunk);
  }
  return { chunks, audio: Buffer.concat(chunks), firstChunkMs, totalMs: performance.now() - started };
}

/** Signed 16-bit little-endian mono PCM bytes → floats in [-1, 1). */
export function pcm16ToFloat(bytes: Buffer): Float32Array {
  const out = new Float32Array(bytes.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2) / 32768;
  return out;
}

/** Seconds of pcm16 mono audio at `sampleRate` Hz. */
export function pcm16Seconds(bytes: Buffer, sampleRate: number): number {
  return bytes.length / 2 / sampleRate;
}

/**
 * Median fundamental frequency (F0) in Hz of the voiced parts of `x` (sampled at `sampleRate` Hz),
 * by normalized autocorrelation: 40 ms frames every 10 ms; frames quieter than 5 % of the loudest
 * frame's energy are skipped; a frame counts as voiced when its best normalized correlation at a
 * lag for 60–400 Hz exceeds 0.6. Returns NaN when no frame is voiced.
 */
export function medianF0(x: Float32Array, sampleRate: number): number {
  const frame = Math.round(sampleRate * 0.04);
  const hop = Math.round(sampleRate * 0.01);
  const minLag = Math.floor(sampleRate / 400);
  const maxLag = Math.ceil(sampleRate / 60);
  const energy = (at: number): number => {
    let e = 0;
    for (let k = 0; k < frame; k++) e += x[at + k]! ** 2;
    return e;
  };
  let loudest = 0;
  for (let i = 0; i + frame <= x.length; i += hop) loudest = Math.max(loudest, energy(i));
  const f0s: number[] = [];
  for (let i = 0; i + frame + maxLag <= x.length; i += hop) {
    const e0 = energy(i);
    if (e0 < loudest * 0.05) continue;
    let best = -1;
    let bestLag = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let c = 0;
      let e1 = 0;
      for (let k = 0; k < frame; k++) {
        c += x[i + k]! * x[i + k + lag]!;
        e1 += x[i + k + lag]! ** 2;
      }
      const r = c / Math.sqrt(e0 * e1 + 1e-12);
      if (r > best) {
        best = r;
        bestLag = lag;
      }
    }
    if (best > 0.6) f0s.push(sampleRate / bestLag);
  }
  if (f0s.length === 0) return Number.NaN;
  f0s.sort((a, b) => a - b);
  return f0s[f0s.length >> 1]!;
}

/** A 44-byte-header WAV file of pcm16 mono `pcm` at `sampleRate` Hz. */
export function wavFile(pcm: Buffer, sampleRate: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + pcm.length, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([h, pcm]);
}

const DIGIT_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'] as const;

/**
 * JSGF grammar: any sequence of spoken digits ("oh" for 0 too), so the recognizer can make
 * substitution, deletion and insertion mistakes, not just fill nine slots.
 */
const DIGIT_GRAMMAR = `#JSGF V1.0;
grammar digits;
public <digits> = ( ${[...DIGIT_WORDS, 'oh'].join(' | ')} )+ ;
`;

/** Path of a program on PATH, or undefined. */
export async function which(program: string): Promise<string | undefined> {
  try {
    const { stdout } = await run('/bin/sh', ['-c', `command -v ${program}`]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Recognizes spoken digits in pcm16 mono 16000 Hz audio with pocketsphinx (CMU Sphinx, Debian
 * packages `pocketsphinx` + `pocketsphinx-en-us`) restricted to a digit grammar. The word
 * insertion penalty is raised (`-wip 1e-3`; the grammar default inserts extra short digits like
 * "two" into eSpeak's fast speech); with it a good voice scores 0 errors while eSpeak's plain en-us
 * voice still makes 1–4 per 9 digits, and mislabelled or Japanese audio is gibberish.
 * @returns the recognized digits, in order (0–9).
 * @throws Error naming the packages to install when pocketsphinx is not on PATH.
 */
export async function recognizeDigits(pcm16k: Buffer): Promise<number[]> {
  const continuous = await which('pocketsphinx_continuous');
  const modern = continuous === undefined ? await which('pocketsphinx') : undefined;
  if (continuous === undefined && modern === undefined) {
    throw new Error(
      'pocketsphinx is not installed: the digit-recognition test needs `pocketsphinx_continuous` (or the 5.x `pocketsphinx` CLI) ' +
        'with the US English model — on Debian/Ubuntu: apt-get install pocketsphinx pocketsphinx-en-us',
    );
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'tts-engine-asr-'));
  try {
    const wav = path.join(dir, 'digits.wav');
    const grammar = path.join(dir, 'digits.gram');
    await writeFile(wav, wavFile(pcm16k, 16000));
    await writeFile(grammar, DIGIT_GRAMMAR);
    let text: string;
    if (continuous !== undefined) {
      // 0.8 / 5prealpha: prints the hypothesis of each utterance on stdout, one per line.
      const { stdout } = await run(continuous, ['-infile', wav, '-jsgf', grammar, '-wip', '1e-3', '-logfn', '/dev/null'], { timeout: 30_000 });
      text = stdout;
    } else {
      // 5.x: `pocketsphinx [options] single FILE` prints one JSON object with the text in "t".
      const { stdout } = await run(modern!, ['-jsgf', grammar, '-wip', '1e-3', 'single', wav], { timeout: 30_000 });
      text = stdout
        .split('\n')
        .filter((l) => l.trim().startsWith('{'))
        .map((l) => String((JSON.parse(l) as { t?: unknown }).t ?? ''))
        .join(' ');
    }
    return text
      .split(/\s+/)
      .map((w) => (w === 'oh' ? 0 : (DIGIT_WORDS as readonly string[]).indexOf(w)))
      .filter((d) => d >= 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Word errors of a recognition: the edit (Levenshtein) distance between what was said and what
 * was heard, so substitutions, deletions and insertions all count.
 */
export function wordErrors<T>(said: readonly T[], heard: readonly T[]): number {
  let row = Array.from({ length: heard.length + 1 }, (_, j) => j);
  for (let i = 1; i <= said.length; i++) {
    const next = [i];
    for (let j = 1; j <= heard.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (said[i - 1] === heard[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[heard.length]!;
}

/**
 * Seconds of audio eSpeak NG alone (no engine, no text preparation) makes for `text` with eSpeak
 * voice `voice` (`ja+f2`): the baseline the engine's fixes are measured against.
 */
export async function espeakAloneSeconds(voice: string, text: string): Promise<number> {
  const module = await createESpeak();
  const espeak = new module.eSpeakNGWorker();
  assert.equal(espeak.set_voice(voice), 0, `eSpeak voice ${voice}`);
  let samples = 0;
  espeak.synthesize(text, (block) => {
    samples += block.length;
    return 0;
  });
  return samples / 22050;
}
