/**
 * The audio stage between the pipeline and the outputs (docs/cli.md §1 `--speed`, `--volume`,
 * `--pause`, `--subtitles`; §11 speech spans): applies the speech controls as chunks arrive —
 * per piece, a span's rate and gain on top of the run's — puts silence between pieces (a span's
 * break, else `--pause`), and times one cue per piece and each span's marks from the audio
 * actually delivered — frames counted after conversion, tempo and pauses, so the times match the
 * file and what is heard.
 */
import { encodeFloat } from '../dsp/encoding.js';
import { EffectChain, isNeutral, type EffectSettings } from '../dsp/effects.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import type { SpanSettings } from '../text/spans.js';
import type { PieceWords } from './word-source.js';

/** One word of a cue, timed in the delivered audio. */
export interface CueWord {
  /** The word as written in the piece's text. */
  text: string;
  /** Seconds from the start of the audio to the word's first sample, and to just after its last. */
  start: number;
  end: number;
  /** UTF-16 range of the word in the piece's text ({@link Cue.text}), end exclusive. */
  charStart: number;
  charEnd: number;
}

/** One subtitle cue: a piece of the text and when it is heard, in seconds from the start. */
export interface Cue {
  /** Seconds from the start of the audio to the piece's first sample (after any pause before it). */
  start: number;
  /** Seconds from the start to just after the piece's last sample. */
  end: number;
  /**
   * The piece's text as requested (as split; surrounding whitespace included). The subtitles and
   * word timings get it as the user wrote it, before the lexicon (word-outputs.ts `writtenCue`).
   */
  text: string;
  /** Its words, when the piece came with word timings (word-source.ts). */
  words?: CueWord[];
  /** The speech span the piece belongs to (docs/cli.md §11): its `speaker` goes into subtitles (§11.2). */
  span?: SpanSettings | undefined;
}

/** A span's mark (SSML `mark`, W3C SSML 1.1 §3.3.2) and when it is reached. */
export interface TimedMark {
  name: string;
  /** Seconds from the start of the delivered audio to the span's first sample, after its break. */
  time: number;
}

/** What the stage does. */
export interface StageSettings extends EffectSettings {
  /** Silence between pieces, in milliseconds (0 = none); none after the last piece. */
  pauseMs: number;
  /** Whether cues are wanted. */
  cues: boolean;
  /** True when the input is speech spans (docs/cli.md §11): the stage is needed even with neutral settings. */
  spans?: boolean | undefined;
}

/**
 * Slowest and fastest tempo of a span: `--speed` × the span's rate (SSML `prosody rate`), clamped
 * to this (docs/cli.md §11.1), wider than `--speed`'s own 0.5 … 3 so x-slow at --speed 0.5 still slows.
 */
export const SPAN_SPEED_RANGE: readonly [number, number] = [0.25, 4];

/** Effect chains kept for the speed/gain pairs a run's spans use (each holds a Sonic stream). */
const MAX_CHAINS = 8;

/** Linear gain of `db` decibels; 0 for -Infinity (SSML `silent`). */
export function gainOfDb(db: number): number {
  return db === -Infinity ? 0 : 10 ** (db / 20);
}

/** Longest buffer of silence handed out at once, in seconds (bounds one allocation). */
const SILENCE_CHUNK_SECONDS = 0.1;

/**
 * Per-run state of the stage. Feed it the pipeline's items in order: {@link audio} for each
 * chunk, {@link pieceEnd} for each marker; everything returned goes to the outputs, in order.
 */
export class AudioStage {
  /** Audio bytes handed out so far. */
  #bytes = 0;
  /** {@link #bytes} when the current piece began (before its pause): where a rewind goes. */
  #pieceMark = 0;
  /** Frame at which the current piece's own audio began; undefined before its first chunk. */
  #pieceStart: number | undefined;
  /** Frames of the current piece as the stage received them (before tempo): the words' clock. */
  #pieceInFrames = 0;
  /** Whether any piece has delivered audio yet (a pause goes only between pieces). */
  #spoken = false;
  /** Whether the current piece begins a new sentence (a pause goes only between sentences). */
  #newSentence = true;
  /** The current piece's span break, in ms (replaces the pause); undefined = none. */
  #breakMs: number | undefined;
  /** The current piece's span marks, timed at its first sample. */
  #marks: string[] = [];
  /** The current piece's span, for its cue. */
  #span: SpanSettings | undefined;
  /** True right after a piece that was only a break: the next piece gets no pause on top of it. */
  #afterBreak = false;
  /** The effects of the current piece (the run's, or its span's rate and gain on top). */
  private chain: EffectChain | undefined;
  /** Chains by `speed|volume` (at most {@link MAX_CHAINS}, oldest dropped first). */
  readonly #chains = new Map<string, EffectChain | undefined>();
  readonly #frameBytes: number;

  private constructor(
    readonly spec: AudioSpec,
    readonly settings: StageSettings,
    chain: EffectChain | undefined,
  ) {
    this.chain = chain;
    this.#chains.set(`${settings.speed}|${settings.volume}`, chain);
    this.#frameBytes = bytesPerFrame(spec);
  }

  /**
   * The stage for a run, or undefined when it has nothing to do (the audio then passes
   * untouched, and the pipeline need not mark pieces).
   * @throws RangeError for settings the effects cannot take (validated as usage errors before).
   */
  static async create(spec: AudioSpec, settings: StageSettings): Promise<AudioStage | undefined> {
    if (isNeutral(settings) && settings.pauseMs === 0 && !settings.cues && settings.spans !== true) return undefined;
    const chain = isNeutral(settings) ? undefined : await EffectChain.create(spec, settings);
    return new AudioStage(spec, settings, chain);
  }

  /**
   * Starts a piece (the pipeline's PieceStart): `newSentence` false for a later part of the
   * sentence before it, which gets no pause before it. Without a call, a piece is a new sentence.
   * @param span the piece's speech span: its rate multiplies `--speed` (clamped to
   *   {@link SPAN_SPEED_RANGE}), its gain (dB) adds to `--volume`; when `opensSpan`, its break
   *   replaces the pause before the piece and its marks are timed at the piece's first sample.
   */
  async pieceStart(newSentence: boolean, span?: SpanSettings, opensSpan = false): Promise<void> {
    this.#newSentence = newSentence;
    this.#span = span;
    this.#breakMs = opensSpan ? span?.breakBeforeMs : undefined;
    this.#marks = opensSpan ? (span?.marks ?? []) : [];
    const speed = span?.rate === undefined ? this.settings.speed : Math.min(SPAN_SPEED_RANGE[1], Math.max(SPAN_SPEED_RANGE[0], this.settings.speed * span.rate));
    const volume = span?.gainDb === undefined ? this.settings.volume : this.settings.volume * gainOfDb(span.gainDb);
    this.chain = await this.#chainFor(speed, volume);
  }

  /** Takes one chunk of the current piece; returns what goes to the outputs now. */
  audio(data: Buffer): Buffer[] {
    const out: Buffer[] = [];
    if (this.#pieceStart === undefined) {
      out.push(...this.#gap());
      this.#pieceStart = this.#frames(out);
    }
    this.#pieceInFrames += data.length / this.#frameBytes;
    const processed = this.chain === undefined ? data : this.chain.push(data);
    if (processed.length > 0) out.push(processed);
    this.#count(out);
    return out;
  }

  /**
   * Ends the current piece (the pipeline's marker). With `words` (frames of the audio as the
   * service sent it), the cue has them in seconds of the delivered audio: a word at `t` seconds of
   * the piece as sent is heard at the piece's start + t × (the piece's delivered length ÷ its
   * length as received), so -r, --speed and pauses move words like the piece itself.
   * @returns what goes to the outputs now, and the piece's cue — none for a piece without audio.
   */
  pieceEnd(text: string, words?: PieceWords): { out: Buffer[]; cue: Cue | undefined; marks: TimedMark[] } {
    const tail = this.chain?.endPiece();
    const out = tail === undefined || tail.length === 0 ? [] : [tail];
    // A piece with no audio (a span with a break or marks alone): its break is still heard, and
    // the next piece gets no pause on top of it.
    const silent = this.#pieceStart === undefined;
    if (silent) {
      out.unshift(...this.#gap());
      this.#pieceStart = this.#frames(out);
    }
    this.#count(out);
    const start = this.#pieceStart!;
    let cue: Cue | undefined;
    if (!silent) {
      const end = this.#bytes / this.#frameBytes;
      if (end > start) {
        this.#spoken = true;
        cue = { start: start / this.spec.sampleRate, end: end / this.spec.sampleRate, text, ...(this.#span === undefined ? {} : { span: this.#span }) };
        if (words !== undefined) cue.words = timeWords(words, cue, this.#pieceInFrames / this.spec.sampleRate);
      }
    }
    const marks = this.#marks.map((name) => ({ name, time: start / this.spec.sampleRate }));
    this.#afterBreak = silent && (this.#breakMs !== undefined || this.#afterBreak);
    this.#pieceStart = undefined;
    this.#pieceInFrames = 0;
    this.#pieceMark = this.#bytes;
    this.#newSentence = true;
    this.#breakMs = undefined;
    this.#marks = [];
    return { out, cue, marks };
  }

  /**
   * Forgets the current piece (it is requested again after its stream broke).
   * @returns the audio bytes to cut the output back to: where the piece (and its pause) began.
   */
  rewind(): number {
    this.chain?.reset();
    this.#bytes = this.#pieceMark;
    this.#pieceStart = undefined;
    this.#pieceInFrames = 0;
    return this.#bytes;
  }

  /** Frees the effects. */
  destroy(): void {
    for (const chain of this.#chains.values()) chain?.destroy();
    this.#chains.clear();
  }

  /**
   * The silence before the current piece's audio: its span's break (which replaces the pause,
   * docs/cli.md §11.1), else `--pause` before a new sentence after speech — unless a piece that
   * was a break alone just came.
   */
  #gap(): Buffer[] {
    const ms = this.#breakMs ?? (this.#spoken && this.#newSentence && !this.#afterBreak ? this.settings.pauseMs : 0);
    return ms > 0 ? this.#silence(Math.round((ms * this.spec.sampleRate) / 1000)) : [];
  }

  /** The effect chain for a speed and linear volume (undefined when neutral), made once and kept. */
  async #chainFor(speed: number, volume: number): Promise<EffectChain | undefined> {
    const key = `${speed}|${volume}`;
    if (this.#chains.has(key)) return this.#chains.get(key);
    const settings = { speed, volume };
    const chain = isNeutral(settings) ? undefined : await EffectChain.create(this.spec, settings, SPAN_SPEED_RANGE);
    if (this.#chains.size >= MAX_CHAINS) {
      // Every chain is flushed at its piece's end, so one not in use holds nothing: the oldest goes.
      for (const [oldKey, old] of this.#chains) {
        if (old === this.chain) continue;
        old?.destroy();
        this.#chains.delete(oldKey);
        break;
      }
    }
    this.#chains.set(key, chain);
    return chain;
  }

  /** Frame position once `pending` (not yet counted) is handed out. */
  #frames(pending: Buffer[]): number {
    return (this.#bytes + pending.reduce((n, b) => n + b.length, 0)) / this.#frameBytes;
  }

  #count(out: Buffer[]): void {
    for (const b of out) this.#bytes += b.length;
  }

  /** `frames` frames of silence in the output encoding, in buffers of at most 100 ms. */
  #silence(frames: number): Buffer[] {
    const out: Buffer[] = [];
    const most = Math.max(1, Math.floor(this.spec.sampleRate * SILENCE_CHUNK_SECONDS));
    for (let left = frames; left > 0; left -= most) {
      out.push(encodeFloat(new Float32Array(Math.min(left, most) * this.spec.channels), this.spec.format));
    }
    return out;
  }
}

/**
 * `words` (frames at `words.sampleRate` of the piece as sent) in seconds of the delivered audio:
 * scaled by the piece's delivered length over `receivedSeconds` (its length as received), from the
 * cue's start, kept inside the cue; words with nothing left are dropped.
 */
function timeWords(words: PieceWords, cue: Cue, receivedSeconds: number): CueWord[] {
  const scale = receivedSeconds > 0 ? (cue.end - cue.start) / receivedSeconds : 1;
  const at = (frames: number): number => Math.min(cue.end, cue.start + (frames / words.sampleRate) * scale);
  const out: CueWord[] = [];
  for (const w of words.words) {
    const start = at(w.start);
    const end = at(w.end);
    if (end > start) out.push({ text: w.text, start, end, charStart: w.charStart, charEnd: w.charEnd });
  }
  return out;
}
