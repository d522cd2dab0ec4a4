/**
 * The reference side of alignment (issue 23 point 2): the piece's text rendered by a built-in
 * voice of the same language, whose word boundaries the engine knows exactly (word-timings.ts),
 * and the carrying of those boundaries onto the service's audio as {@link WordTiming}s.
 */
import type { SpeechEngine } from '../engine/index.js';
import type { Language } from '../protocol/types.js';
import type { WordTiming } from '../protocol/words.js';
import { decodeToFloat } from '../dsp/encoding.js';
import { alignSpans, type Alignment, type MonoAudio, type TimeSpan } from './align.js';
import { ALIGN_RATE } from './features.js';

/**
 * The built-in voice each language's reference is rendered with. The women's voices: Flite's
 * `slt` for English and eSpeak NG's Japanese female variant; which one matters little (the MFCCs
 * are mean-normalised), so it is fixed, for timings that never depend on a setting.
 */
export const REFERENCE_VOICES: Readonly<Record<Language, string>> = { en: 'en-woman-1', ja: 'ja-woman-1' };

/** A rendered reference: mono audio at {@link ALIGN_RATE} and its words (frames at that rate). */
export interface Reference {
  audio: MonoAudio;
  words: WordTiming[];
}

/**
 * Renders `text` with {@link REFERENCE_VOICES}[language] (or `voice`) at 16 kHz mono.
 * @returns the audio and its words; `words` is empty when the engine gives none for that voice.
 * @throws EngineError when the engine fails; the signal's reason when aborted.
 */
export async function renderReference(engine: SpeechEngine, text: string, language: Language, signal?: AbortSignal, voice = REFERENCE_VOICES[language]): Promise<Reference> {
  const chunks: Buffer[] = [];
  let words: WordTiming[] = [];
  const job = { text, voice, language, format: 'pcm16' as const, sampleRate: ALIGN_RATE, channels: 1 };
  for await (const chunk of engine.synthesize(job, signal, { wordTimings: true, onReport: (r) => (words = r.words ?? []) })) chunks.push(chunk);
  return { audio: { samples: decodeToFloat(Buffer.concat(chunks), 'pcm16'), sampleRate: ALIGN_RATE }, words };
}

/** Aligns spans of a reference with a target: {@link alignSpans} here, or AlignThread.align beside the stream. */
export type SpanAligner = <T extends TimeSpan>(reference: MonoAudio, target: MonoAudio, spans: readonly T[]) => Promise<Alignment<T> | undefined>;

/**
 * The reference's words carried over to `target`: the same words (text, char offsets), with
 * `start`/`end` in sample frames of the target at its rate. They keep WordTiming's rules (protocol/words.ts):
 * start < end ≤ the target's frames, in order, no overlap — a word the warp squeezed to nothing
 * gets one frame (and words warped past the target's end, if any, are left out). `undefined` when the aligner turned the job away (see AlignThread).
 * Deterministic for the same inputs.
 */
export async function alignWords(reference: Reference, target: MonoAudio, align: SpanAligner = alignSpans): Promise<WordTiming[] | undefined> {
  const total = target.samples.length;
  if (reference.words.length === 0 || total < 2) return [];
  const rate = reference.audio.sampleRate;
  const spans = reference.words.map((w) => ({ ...w, start: w.start / rate, end: w.end / rate }));
  const result = await align(reference.audio, target, spans);
  if (result === undefined) return undefined;
  const out: WordTiming[] = [];
  let floor = 0;
  for (const w of result.spans) {
    // Only when the warp put words past the target's last frame: those cannot be placed.
    if (floor >= total) break;
    const start = Math.min(total - 1, Math.max(floor, Math.round(w.start * target.sampleRate)));
    const end = Math.min(total, Math.max(start + 1, Math.round(w.end * target.sampleRate)));
    out.push({ text: w.text, charStart: w.charStart, charEnd: w.charEnd, start, end });
    floor = end;
  }
  return out;
}
