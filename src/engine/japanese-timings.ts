/**
 * The words of a Japanese job timed from what its segments left (worker.ts), issue 23 point 1:
 * the segments are the job's text cut into Japanese stretches and Latin runs (japanese.ts
 * speechSegments), so segment i is stretch i of the text as written. A Latin run's words are
 * Flite's (exact, word-timings.ts). A Japanese stretch's words (japanese-words.ts
 * {@link japaneseTokens}: kuromoji tokens, or ICU word segments for kana-only text) are timed
 * from eSpeak NG's own phoneme events: each word's reading is put through eSpeak's translator
 * (espeak_TextToPhonemes, after the job's synthesis, so the audio is untouched), those labelled
 * phonemes are aligned with the phonemes eSpeak reported while speaking (edit distance,
 * {@link labelPhones}), and a word runs from the event of its first phoneme to the event that
 * follows its last one (the next word's first phoneme, or the pause closing the clause). Only when
 * eSpeak reported no phonemes is a stretch's sound shared by estimated morae (spreadWords).
 */
import type { WordTiming } from '../protocol/words.js';
import { LATIN_RUN, type SpeechSegment } from './japanese.js';
import type { JapaneseTokenizer } from './kuromoji-dictionary.js';
import { readAllNumbers } from './japanese-numbers.js';
import { japaneseTokens, moraWeight, spreadWords, stretches, type JapaneseToken } from './japanese-words.js';
import { labelPhones, nfkcRanges, speakableTokens, type EnergyEnvelope, type EspeakPhonemeEvent, type PieceWord, type TextToken } from './word-timings.js';

/** One eSpeak NG call's sound within a segment. */
export interface SegmentSound {
  /** Maps a sample of this call (22050 Hz, from its first) to the job's output frame (AudioOutput.clock). */
  clock: (n: number) => number;
  /** Peak envelope of its samples. */
  envelope: EnergyEnvelope;
  /** Samples it made. */
  total: number;
  /** Its phoneme events (espeakEVENT_PHONEME), in order, samples on the same clock. */
  phonemes: EspeakPhonemeEvent[];
  /** The eSpeak voice that spoke (`ja+f2`). */
  voice: string;
}

/** What one spoken segment left to time its words by. */
export interface SegmentTiming {
  /** Words a synthesizer timed (Flite): output frames, UTF-16 range in the segment's text. */
  words: { start: number; end: number; segStart: number; segEnd: number }[];
  /** Each eSpeak NG call's sound. */
  sounds: SegmentSound[];
}

/** Turns each of some kana texts into eSpeak NG's IPA phoneme names for `voice` (EspeakSynth.phonemes). */
export type Phonemizer = (voice: string, texts: readonly string[]) => string[][];

/**
 * The job's words: `text` as written, `segments` as spoken (speechSegments' order) and what each
 * left; `tokenizer` is kuromoji when the job loaded it (text with kanji), else undefined (kana-only
 * text: ICU word segments); `phonemize` gives eSpeak's phonemes of a word's reading. Empty when the
 * segments do not pair with the text's stretches (then nothing is guessed). Frames are the job's
 * output frames; char offsets UTF-16 of `text`.
 */
export function japaneseTimings(
  text: string,
  segments: readonly SpeechSegment[],
  timings: readonly SegmentTiming[],
  tokenizer: JapaneseTokenizer | undefined,
  phonemize: Phonemizer,
): WordTiming[] {
  const normalized = text.normalize('NFKC');
  const range = nfkcRanges(text);
  // Where the numbers are read, as the spoken text reads them (ranges, codes, dates, counters).
  const numbers = readAllNumbers(normalized, tokenizer).rewritten();
  const parts = stretches(normalized, numbers);
  if (range === undefined || parts.length !== segments.length || timings.length !== segments.length) return [];
  const out: WordTiming[] = [];
  const add = (token: TextToken, start: number, end: number): void => {
    const [charStart, charEnd] = range(token.start, token.end);
    const last = out[out.length - 1];
    const from = Math.max(start, last?.end ?? 0);
    if (end <= from || charEnd <= charStart || (last !== undefined && charStart < last.charEnd)) return;
    out.push({ text: text.slice(charStart, charEnd), start: from, end, charStart, charEnd });
  };
  parts.forEach((part, i) => {
    const timing = timings[i]!;
    const segment = segments[i]!;
    if (part.language !== segment.language) return;
    const slice = normalized.slice(part.start, part.end);
    if (part.language === 'en' && timing.words.length > 0) {
      // The run as spoken and as written have the same words, in order.
      const spokenTokens = speakableTokens(segment.text);
      const writtenTokens = latinWords(slice, part.start);
      if (spokenTokens.length !== writtenTokens.length) return;
      for (const w of timing.words) {
        const k = spokenTokens.findIndex((t) => t.start === w.segStart);
        if (k >= 0) add(writtenTokens[k]!, w.start, w.end);
      }
      return;
    }
    const sound = timing.sounds.length === 1 ? timing.sounds[0]! : undefined;
    if (sound === undefined) return;
    const tokens: JapaneseToken[] =
      part.language === 'ja'
        ? japaneseTokens(normalized, part.start, part.end, tokenizer, numbers)
        : latinWords(slice, part.start).map((t) => ({ ...t, reading: normalized.slice(t.start, t.end) }));
    const exact = part.language === 'ja' ? phonemeWords(sound.phonemes, phonemize(sound.voice, tokens.map((t) => t.reading)), sound.total) : [];
    const words =
      exact.length > 0
        ? exact
        : spreadWords(
            tokens.map((t) => moraWeight(normalized.slice(t.start, t.end))),
            sound.envelope,
            sound.total,
          );
    for (const w of words) add(tokens[w.token]!, sound.clock(w.start), sound.clock(w.end));
  });
  return out;
}

/**
 * The words of a Latin stretch as written (`slice`, at `offset` in the text): each Latin run's
 * whitespace-separated tokens — the runs as spoken are joined by a space where what parted them
 * was dropped (japanese.ts splitLatinRuns: `22nd・OK` is said `22nd OK`), so the words pair one
 * for one with the spoken text's {@link speakableTokens}.
 */
function latinWords(slice: string, offset: number): TextToken[] {
  return [...slice.matchAll(LATIN_RUN)].flatMap((m) => speakableTokens(m[0]).map((t) => ({ start: offset + m.index + t.start, end: offset + m.index + t.end })));
}

/**
 * A phoneme name reduced to what the translator and the phoneme events agree on: stress marks and
 * length dropped, its first letter (the translator writes `kʲ`, `o̞o̞`, `iː` where the events name
 * `k` `ʲ`, `o̞`, `i`).
 */
export function phonemeKey(name: string): string {
  const bare = name.replace(/[ˈˌ'ː,]/gu, '');
  return bare === '' ? name : String.fromCodePoint(bare.codePointAt(0)!);
}

/**
 * Words from eSpeak NG's phoneme events (`events`, in order; `''` names are the pauses closing
 * clauses) and each word's phonemes from the translator (`groups[i]` for token i): the event
 * phonemes are labelled by aligning them with the groups ({@link labelPhones}, keys by
 * {@link phonemeKey}); word i spans from the sample of its first phoneme event to the sample of the
 * event after its last (or `total`). A word that has phonemes but was given none of the events
 * (said as one with a neighbour's: を|大阪 with one o) shares that neighbour's time
 * ({@link shareTime}). Samples on the events' clock.
 * @returns one entry per word that has phonemes, in order; [] when nothing can be aligned.
 */
export function phonemeWords(events: readonly EspeakPhonemeEvent[], groups: readonly (readonly string[])[], total: number): PieceWord[] {
  const spokenAt: number[] = [];
  events.forEach((e, k) => {
    if (e.phoneme !== '') spokenAt.push(k);
  });
  if (spokenAt.length === 0) return [];
  const labels = labelPhones(
    spokenAt.map((k) => phonemeKey(events[k]!.phoneme)),
    groups.map((g) => g.map(phonemeKey)),
  );
  if (labels === undefined) return [];
  const words: PieceWord[] = [];
  spokenAt.forEach((k, j) => {
    const token = labels[j]!;
    const start = events[k]!.sample;
    const end = Math.min(total, events[k + 1]?.sample ?? total);
    const last = words[words.length - 1];
    if (last !== undefined && last.token === token) last.end = Math.max(last.end, end);
    else words.push({ token, start, end });
  });
  return shareTime(
    words.filter((w) => w.end > w.start),
    groups.map((g) => g.length),
    spokenAt.map((k) => events[k]!.sample),
  );
}

/**
 * `words` (one per token timed, in token order) with each run of tokens that have phonemes
 * (`phonemes[i]` of token i) but no time put into the time of the word after them — or, at the
 * end, before them: the alignment gives a phoneme said for two words (を|大阪 ヲオーサカ said with
 * one o) to the later one ({@link labelPhones}' traceback). That word's span is cut into one part
 * per word, in proportion to their phoneme counts, each cut at the phoneme event (`starts`,
 * samples) nearest to it inside the span, else at the proportional sample: the eSpeak NG events
 * still bound the words around, only the cut inside is estimated. A span of fewer samples than
 * words is left as it is.
 */
function shareTime(words: readonly PieceWord[], phonemes: readonly number[], starts: readonly number[]): PieceWord[] {
  const out = words.map((w) => ({ ...w }));
  for (let at = 0; at <= out.length; at++) {
    const before = out[at - 1];
    const after = out[at];
    const untimed: number[] = [];
    for (let t = (before?.token ?? -1) + 1; t < (after?.token ?? phonemes.length); t++) if (phonemes[t]! > 0) untimed.push(t);
    const host = after ?? before;
    if (untimed.length === 0 || host === undefined) continue;
    const tokens = host === before ? [host.token, ...untimed] : [...untimed, host.token];
    if (host.end - host.start < tokens.length) continue;
    const total = tokens.reduce((sum, t) => sum + Math.max(1, phonemes[t]!), 0);
    const parts: PieceWord[] = [];
    let start = host.start;
    let sum = 0;
    tokens.forEach((token, k) => {
      sum += Math.max(1, phonemes[token]!);
      const left = tokens.length - 1 - k;
      let end = host.end;
      if (left > 0) {
        const ideal = host.start + ((host.end - host.start) * sum) / total;
        const inside = starts.filter((s) => s > start && s <= host.end - left);
        const nearest = inside.reduce<number | undefined>((best, s) => (best === undefined || Math.abs(s - ideal) < Math.abs(best - ideal) ? s : best), undefined);
        end = nearest ?? Math.min(host.end - left, Math.max(start + 1, Math.round(ideal)));
      }
      parts.push({ token, start, end });
      start = end;
    });
    out.splice(host === before ? at - 1 : at, 1, ...parts);
    at += parts.length - 1;
  }
  return out;
}
