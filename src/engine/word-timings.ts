/**
 * Word timings from the built-in synthesizers (issue 23 point 1), in the synthesizer's own samples.
 *
 * - **Flite** knows each segment (phone) it made and where it ends: `flite -psdur` prints them
 *   (`hh:0.212 ax:0.261 …`, end times in seconds, millisecond precision; flite_main.c print_info).
 *   It does not print which word a phone belongs to, so the piece's words are also run through
 *   Flite's cheap diphone voice `kal16` with `-ps`, joined by commas: each comma makes a pause
 *   (`pau`), so the phones between two pauses are one word's (~9 ms a sentence, against ~110 ms for
 *   the synthesis itself; where a comma makes no pause, each word alone: flite.ts
 *   fliteSynthesizeTimed). That labelled phone string is aligned with the real one by edit
 *   distance (the two can differ where a word reads differently in context, `Dr.` → doctor/drive),
 *   and each word spans from the start of its first phone to the end of its last.
 * - **eSpeak NG** reports a word event (text position, audio position in ms) as each word starts
 *   (espeak_EVENT, espeakEVENT_WORD); a word ends where the next starts or the clause ends, less the
 *   silence at either edge (frames whose peak is below {@link SILENCE_PEAK}).
 */

/** A word found in a piece: its token index there and where its audio is, in input samples. */
export interface PieceWord {
  /** Index into the piece's {@link speakableTokens}. */
  token: number;
  /** First sample of the word, at the synthesizer's rate, from the start of the piece's audio. */
  start: number;
  /** Sample after the word's last one (exclusive), same clock; > start. */
  end: number;
}

/** A token of text: its UTF-16 range. */
export interface TextToken {
  start: number;
  end: number;
}

/** Something a synthesizer says: a letter or a digit of any script. */
const SPEAKABLE = /[\p{L}\p{N}]/u;

/** Whitespace-separated tokens of `text` that have a letter or digit, in order (UTF-16 ranges). */
export function speakableTokens(text: string): TextToken[] {
  const tokens: TextToken[] = [];
  for (const m of text.matchAll(/\S+/gu)) {
    if (SPEAKABLE.test(m[0])) tokens.push({ start: m.index, end: m.index + m[0].length });
  }
  return tokens;
}

/** One Flite segment: phone name and end time in seconds from the start of the piece. */
export interface FliteSegment {
  name: string;
  end: number;
}

/**
 * Parses `flite -psdur` output: `name:end` items separated by spaces (end in seconds).
 * @throws Error on an item that is not `name:number`.
 */
export function parseSegmentTimes(out: string): FliteSegment[] {
  const segments: FliteSegment[] = [];
  for (const item of out.split(/\s+/)) {
    if (item === '') continue;
    const colon = item.lastIndexOf(':');
    const end = Number(item.slice(colon + 1));
    if (colon <= 0 || !Number.isFinite(end)) throw new Error(`Flite printed an unreadable segment ${JSON.stringify(item)}`);
    segments.push({ name: item.slice(0, colon), end });
  }
  return segments;
}

/**
 * Phone groups of `flite -ps` output for words joined by commas: the phones between pauses,
 * in order (empty groups dropped).
 */
export function phoneGroups(out: string): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  for (const name of out.split(/\s+/)) {
    if (name === '') continue;
    if (name === 'pau') {
      if (current.length > 0) groups.push(current);
      current = [];
    } else current.push(name);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** Longest phone strings aligned by edit distance (cells = product of lengths, ≤ 4 M). */
const MAX_ALIGN_CELLS = 4_000_000;

/**
 * Labels each of `phones` with the index of the word it belongs to, from `groups` (word i's phones
 * as the word is said alone): the two phone strings are aligned by edit distance (Levenshtein,
 * substitution cost 1); a phone matched or substituted takes its partner's word, an inserted one
 * the word of the phone before it (the first phones: the first word).
 * @returns one label per phone, or undefined when the strings are too long to align.
 */
export function labelPhones(phones: readonly string[], groups: readonly (readonly string[])[]): number[] | undefined {
  const ref: string[] = [];
  const refWord: number[] = [];
  groups.forEach((g, i) => {
    for (const p of g) {
      ref.push(p);
      refWord.push(i);
    }
  });
  const n = phones.length;
  const m = ref.length;
  if (m === 0 || (n + 1) * (m + 1) > MAX_ALIGN_CELLS) return undefined;
  if (n === m && phones.every((p, i) => p === ref[i])) return refWord.slice();
  // Full DP table of costs, then a traceback.
  const w = m + 1;
  const cost = new Uint32Array((n + 1) * w);
  for (let j = 0; j <= m; j++) cost[j] = j;
  for (let i = 1; i <= n; i++) {
    cost[i * w] = i;
    for (let j = 1; j <= m; j++) {
      const sub = cost[(i - 1) * w + j - 1]! + (phones[i - 1] === ref[j - 1] ? 0 : 1);
      cost[i * w + j] = Math.min(sub, cost[(i - 1) * w + j]! + 1, cost[i * w + j - 1]! + 1);
    }
  }
  const labels = new Array<number>(n).fill(-1);
  let i = n;
  let j = m;
  while (i > 0 && j > 0) {
    const here = cost[i * w + j]!;
    if (here === cost[(i - 1) * w + j - 1]! + (phones[i - 1] === ref[j - 1] ? 0 : 1)) {
      labels[i - 1] = refWord[j - 1]!;
      i--;
      j--;
    } else if (here === cost[(i - 1) * w + j]! + 1) i--;
    else j--;
  }
  for (let k = 0; k < n; k++) if (labels[k] === -1) labels[k] = k === 0 ? 0 : labels[k - 1]!;
  // Labels must not go back (a swap in the alignment): keep them monotonic.
  for (let k = 1; k < n; k++) if (labels[k]! < labels[k - 1]!) labels[k] = labels[k - 1]!;
  return labels;
}

/**
 * Words of one Flite piece from its segments (`-psdur` of the real voice) and its words' phone
 * groups (`-ps` of the words joined by commas): word i spans from the end of the segment before its
 * first phone to the end of its last phone, in samples at `rate` Hz. Words without phones, and
 * every word when the group count differs from `wordCount`, are left out.
 */
export function fliteWords(segments: readonly FliteSegment[], groups: readonly (readonly string[])[], wordCount: number, rate: number): PieceWord[] {
  if (groups.length !== wordCount) return [];
  const spoken: { name: string; start: number; end: number }[] = [];
  let previous = 0;
  for (const s of segments) {
    if (s.name !== 'pau') spoken.push({ name: s.name, start: previous, end: s.end });
    previous = s.end;
  }
  const labels = labelPhones(
    spoken.map((s) => s.name),
    groups,
  );
  if (labels === undefined) return [];
  const words: PieceWord[] = [];
  spoken.forEach((phone, k) => {
    const token = labels[k]!;
    const start = Math.round(phone.start * rate);
    const end = Math.round(phone.end * rate);
    const last = words[words.length - 1];
    if (last !== undefined && last.token === token) last.end = end;
    else words.push({ token, start, end });
  });
  return words.filter((word) => word.end > word.start);
}

/** A word event of eSpeak NG: where the word is in the text it was given and when it starts. */
export interface EspeakWordEvent {
  /** UTF-16 offset of the word in the text passed to eSpeak. */
  charStart: number;
  /** Sample (22050 Hz) where it starts, from the start of that text's audio. */
  sample: number;
}

/** A phoneme event of eSpeak NG (espeakEVENT_PHONEME): which phoneme starts where. */
export interface EspeakPhonemeEvent {
  /** IPA name as eSpeak prints it (`k`, `ʲ`, `ˈo̞`); `''` for the pause that closes a clause. */
  phoneme: string;
  /** Sample (22050 Hz) where it starts, from the start of the synthesized text's audio. */
  sample: number;
}

/** Samples per frame of an {@link EnergyEnvelope}: 5 ms at 22050 Hz. */
export const ENVELOPE_FRAME = 110;
/** Peak below which a frame is silence: about −36 dBFS (eSpeak NG's breathy variants keep a low noise in pauses). */
export const SILENCE_PEAK = 500;

/** The peak magnitude of every {@link ENVELOPE_FRAME} samples of a signal, built as it streams. */
export class EnergyEnvelope {
  readonly peaks: number[] = [];
  private inFrame = 0;
  private peak = 0;

  /** Adds samples (signed 16-bit). */
  push(samples: Int16Array): void {
    for (let i = 0; i < samples.length; i++) {
      const v = Math.abs(samples[i]!);
      if (v > this.peak) this.peak = v;
      if (++this.inFrame === ENVELOPE_FRAME) {
        this.peaks.push(this.peak);
        this.inFrame = 0;
        this.peak = 0;
      }
    }
  }

  /** Finishes the last partial frame. */
  finish(): void {
    if (this.inFrame > 0) this.peaks.push(this.peak);
    this.inFrame = 0;
    this.peak = 0;
  }

  /**
   * [start, end) narrowed to leave out silent frames at both edges; unchanged when all is silent.
   */
  trim(start: number, end: number): [number, number] {
    let first = Math.floor(start / ENVELOPE_FRAME);
    let last = Math.ceil(end / ENVELOPE_FRAME) - 1;
    while (first <= last && (this.peaks[first] ?? 0) < SILENCE_PEAK) first++;
    while (last >= first && (this.peaks[last] ?? 0) < SILENCE_PEAK) last--;
    if (first > last) return [start, end];
    return [Math.max(start, first * ENVELOPE_FRAME), Math.min(end, (last + 1) * ENVELOPE_FRAME)];
  }
}

/**
 * Words of an eSpeak NG text from its word events: token i of `tokens` (speakable tokens of that
 * text) takes the event that starts inside it (several events in one token, `1995`: the first);
 * it ends where the next event starts, or at `total` samples, narrowed by `envelope` to its sound.
 */
export function espeakWords(events: readonly EspeakWordEvent[], tokens: readonly TextToken[], total: number, envelope: EnergyEnvelope): PieceWord[] {
  const words: PieceWord[] = [];
  const starts: { token: number; sample: number }[] = [];
  let t = 0;
  for (const ev of events) {
    while (t < tokens.length && tokens[t]!.end <= ev.charStart) t++;
    if (t >= tokens.length) break;
    if (ev.charStart < tokens[t]!.start) continue;
    const last = starts[starts.length - 1];
    if (last !== undefined && last.token === t) continue;
    starts.push({ token: t, sample: ev.sample });
  }
  starts.forEach((s, k) => {
    const next = k + 1 < starts.length ? starts[k + 1]!.sample : total;
    const [start, end] = envelope.trim(s.sample, Math.min(next, total));
    if (end > start) words.push({ token: s.token, start, end });
  });
  return words;
}

/**
 * Grapheme clusters (UAX #29), the units {@link nfkcRanges} normalizes one at a time. Made on
 * first use: a thread's first Intl.Segmenter costs ~12 ms, which a worker that times no words
 * must not pay at start (issue 20).
 */
let graphemes: Intl.Segmenter | undefined;

/**
 * For `text` and its NFKC form (what the English synthesizers read, japanese.ts speechSegments):
 * a function from a UTF-16 range of the NFKC form to the range of `text` it came from (whole
 * grapheme clusters). Built cluster by cluster; undefined when that differs from normalizing the
 * whole text (composition across clusters), where ranges cannot be told.
 */

export function nfkcRanges(text: string): ((start: number, end: number) => [number, number]) | undefined {
  const origin: number[] = [];
  const originEnd: number[] = [];
  let normalized = '';
  // By grapheme cluster, not code point: a combining mark composes with the letter before it
  // (NFD "e\u0301" → "é"), so code point by code point the result differed from the whole
  // text's NFKC and text written decomposed (macOS) had no word timings at all.
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment, index } of graphemes.segment(text)) {
    const n = segment.normalize('NFKC');
    for (let k = 0; k < n.length; k++) {
      origin.push(index);
      originEnd.push(index + segment.length);
    }
    normalized += n;
  }
  if (normalized !== text.normalize('NFKC')) return undefined;
  return (start, end) => [origin[start] ?? text.length, originEnd[end - 1] ?? text.length];
}
