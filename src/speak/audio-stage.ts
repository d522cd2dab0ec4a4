/**
 * The audio stage between the pipeline and the outputs (docs/cli.md §1 `--speed`, `--volume`,
 * `--pause`, `--subtitles`): applies the speech controls as chunks arrive, puts silence between
 * pieces, and times one cue per piece from the audio actually delivered — frames counted after
 * conversion, tempo and pauses, so the cues match the file and what is heard.
 */
import { encodeFloat } from '../dsp/encoding.js';
import { EffectChain, isNeutral, type EffectSettings } from '../dsp/effects.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import type { PieceWords } from './word-source.js';

/** One word of a cue, timed in the delivered audio. */
export interface CueWord {
  /** The word as written in the piece's text. */
  text: string;
  /** Seconds from the start of the audio to the word's first sample, and to just after its last. */
  start: number;
  end: number;
  /** UTF-16 range of the word in the piece's text ({@link Cue.text}). */
  charStart: number;
  charEnd: number;
}

/** One subtitle cue: a piece of the text and when it is heard, in seconds from the start. */
export interface Cue {
  /** Seconds from the start of the audio to the piece's first sample (after any pause before it). */
  start: number;
  /** Seconds from the start to just after the piece's last sample. */
  end: number;
  /** The piece's text as the user wrote it (as split; surrounding whitespace included). */
  text: string;
  /** Its words, when the piece came with word timings (word-source.ts). */
  words?: CueWord[];
}

/** What the stage does. */
export interface StageSettings extends EffectSettings {
  /** Silence between pieces, in milliseconds (0 = none); none after the last piece. */
  pauseMs: number;
  /** Whether cues are wanted. */
  cues: boolean;
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
  readonly #frameBytes: number;

  private constructor(
    readonly spec: AudioSpec,
    readonly settings: StageSettings,
    private readonly chain: EffectChain | undefined,
  ) {
    this.#frameBytes = bytesPerFrame(spec);
  }

  /**
   * The stage for a run, or undefined when it has nothing to do (the audio then passes
   * untouched, and the pipeline need not mark pieces).
   * @throws RangeError for settings the effects cannot take (validated as usage errors before).
   */
  static async create(spec: AudioSpec, settings: StageSettings): Promise<AudioStage | undefined> {
    if (isNeutral(settings) && settings.pauseMs === 0 && !settings.cues) return undefined;
    const chain = isNeutral(settings) ? undefined : await EffectChain.create(spec, settings);
    return new AudioStage(spec, settings, chain);
  }

  /**
   * Starts a piece (the pipeline's PieceStart): `newSentence` false for a later part of the
   * sentence before it, which gets no pause before it. Without a call, a piece is a new sentence.
   */
  pieceStart(newSentence: boolean): void {
    this.#newSentence = newSentence;
  }

  /** Takes one chunk of the current piece; returns what goes to the outputs now. */
  audio(data: Buffer): Buffer[] {
    const out: Buffer[] = [];
    if (this.#pieceStart === undefined) {
      if (this.#spoken && this.#newSentence && this.settings.pauseMs > 0) out.push(...this.#silence(Math.round((this.settings.pauseMs * this.spec.sampleRate) / 1000)));
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
  pieceEnd(text: string, words?: PieceWords): { out: Buffer[]; cue: Cue | undefined } {
    const tail = this.chain?.endPiece();
    const out = tail === undefined || tail.length === 0 ? [] : [tail];
    this.#count(out);
    let cue: Cue | undefined;
    if (this.#pieceStart !== undefined) {
      const end = this.#bytes / this.#frameBytes;
      if (end > this.#pieceStart) {
        this.#spoken = true;
        cue = { start: this.#pieceStart / this.spec.sampleRate, end: end / this.spec.sampleRate, text };
        if (words !== undefined) cue.words = timeWords(words, cue, this.#pieceInFrames / this.spec.sampleRate);
      }
    }
    this.#pieceStart = undefined;
    this.#pieceInFrames = 0;
    this.#pieceMark = this.#bytes;
    this.#newSentence = true;
    return { out, cue };
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
    this.chain?.destroy();
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
