/**
 * The interactive player (docs/cli.md §12.2): sits between the audio the run delivers and the
 * playback sink. What is delivered goes into a {@link SentenceWindow}; a loop of its own plays
 * from the window to the sink, so it can pause (nothing is written to the device), go back to a
 * sentence already heard (the same bytes again, no new request), skip to the next sentence's
 * first byte (waiting for it when it has not arrived), and change the tempo with the pitch kept
 * (Sonic, dsp/tempo.ts) on top of --speed.
 */
import type { AudioSink } from '../audio/sink.js';
import { FrameAligner } from '../audio/containers/pcm.js';
import { decodeToFloat, encodeFloat } from '../dsp/encoding.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import { SPEED_MAX, SPEED_MIN, Tempo } from '../dsp/tempo.js';
import { TtsError } from '../errors.js';
import type { Cue } from '../speak/audio-stage.js';
import type { PlayerAction } from './keys.js';
import { PlayerStopped } from './stopped.js';
import { DEFAULT_WINDOW_BYTES, SentenceWindow } from './window.js';

/** What the display shows: the sentence playing and the controls' state. */
export interface PlayerState {
  /** Index of the sentence playing (from 0); -1 before the first. */
  sentence: number;
  /** Its text as requested (unescaped: escape before drawing). */
  text: string;
  paused: boolean;
  /** The player's tempo factor, on top of --speed: 0.5 … 3 in steps of 0.1. */
  speed: number;
  /** The word being spoken: its range in `text` (UTF-16 code units); absent without word timings. */
  word?: { charStart: number; charEnd: number };
}

/** Options of {@link Player}. */
export interface PlayerOptions {
  /** Most audio bytes remembered for going back (default {@link DEFAULT_WINDOW_BYTES}, 64 MiB). */
  windowBytes?: number | undefined;
  /** Called whenever {@link PlayerState} changes (a new sentence, pause, speed). */
  onState?: ((state: PlayerState) => void) | undefined;
  /** Longest slice written to the sink at once, in seconds (how soon pause and seeks act); default 0.05. */
  sliceSeconds?: number | undefined;
}

/** Step of ↑ / ↓. */
export const SPEED_STEP = 0.1;

/**
 * Most audio written ahead of the play clock into a sink that would hold more than the card's
 * buffer (a system player's pipe: AudioSink.limitLead), in seconds: what still plays after a
 * pause, and how late a seek is heard (docs/cli.md §12.2 promises ≤ 0.5 s).
 */
export const LEAD_SECONDS = 0.25;


/**
 * The player. The producer side is an {@link AudioSink} plus {@link pieceStart}; the keys go to
 * {@link act}. Call `write` one at a time as for any sink, then `finish` (resolves once
 * everything to the end was played, or `q` was pressed) or `abort`.
 */
export class Player implements AudioSink {
  readonly window: SentenceWindow;
  readonly #out: AudioSink;
  readonly #spec: AudioSpec;
  readonly #frames: FrameAligner;
  readonly #sliceBytes: number;
  readonly #onState: (state: PlayerState) => void;
  /** Where the loop plays: sentence, chunk, byte offset within the chunk. */
  #at = { sentence: 0, chunk: 0, offset: 0 };
  /** A seek asked by a key, done by the loop at its next step. */
  #seek: number | undefined;
  #paused = false;
  /** Set by {@link hold} (the process is being suspended, Ctrl-Z): like a pause the user never sees. */
  #held = false;
  /** Waiters of {@link hold}: resolved when the loop rests (or has ended). */
  #resting: (() => void)[] = [];
  #ended = false;
  #speed = 1;
  #tempo: Tempo | undefined;
  #stopped: PlayerStopped | undefined;
  /** Set by {@link abort} (Ctrl-C, a failure elsewhere): finish() must not pass for a success then. */
  #aborted = false;
  #failed: unknown;
  #shown = -1;
  /** The word shown (index in the sentence's words), -1 for none. */
  #shownWord = -1;
  /** Bytes of the sentence being played that were written so far. */
  #played = 0;
  /** Bytes of delivered audio per second. */
  readonly #bytesPerSecond: number;
  readonly #loop: Promise<void>;

  /** @param out the playback sink; @param spec the audio's encoding, rate (Hz) and channels. */
  constructor(out: AudioSink, spec: AudioSpec, options: PlayerOptions = {}) {
    this.#out = out;
    // A system player's pipe would hold seconds ahead of what is heard: pause would not stop the sound.
    out.limitLead?.(LEAD_SECONDS);
    this.#spec = spec;
    this.#frames = new FrameAligner(spec);
    const frame = bytesPerFrame(spec);
    this.#sliceBytes = Math.max(1, Math.round(spec.sampleRate * (options.sliceSeconds ?? 0.05))) * frame;
    this.#bytesPerSecond = spec.sampleRate * frame;
    this.#onState = options.onState ?? ((): void => {});
    this.window = new SentenceWindow(options.windowBytes ?? DEFAULT_WINDOW_BYTES);
    this.#loop = this.#play()
      .catch((error: unknown) => {
        // Once stopped (`q`, or abort), the sink's failure is the stop's own doing: its abort cut
        // short the write in flight (a full pipe to a system player, a piece the card had not
        // taken), which both sinks reject with `playback was aborted`. Kept, it would end a `q`
        // with exit 7 instead of 0 (docs/cli.md §12.2).
        if (this.#stopped !== undefined) return;
        this.#failed = error;
        this.window.close(error instanceof Error ? error : new Error(String(error)));
      })
      .finally(() => {
        this.#ended = true;
        this.#rest();
      });
  }

  /** The state shown now. */
  get state(): PlayerState {
    const s = this.window.sentence(this.#at.sentence);
    const state: PlayerState = { sentence: s === undefined ? -1 : this.#at.sentence, text: s?.text ?? '', paused: this.#paused, speed: this.#speed };
    const word = s?.words[this.#wordAt()];
    if (word !== undefined) state.word = { charStart: word.charStart, charEnd: word.charEnd };
    return state;
  }

  /** Index of the word being spoken in the current sentence (the last one begun), -1 for none. */
  #wordAt(): number {
    const words = this.window.sentence(this.#at.sentence)?.words ?? [];
    let i = -1;
    while (i + 1 < words.length && words[i + 1]!.startByte <= this.#played) i++;
    return i;
  }

  /** A piece begins (pipeline.ts PieceStart): a new sentence, or more of the current one. */
  pieceStart(text: string, newSentence: boolean): void {
    const last = this.window.sentence(this.window.count - 1);
    // A piece requested again after its stream broke starts again with no audio yet: same sentence.
    if (newSentence && !(last !== undefined && !last.complete && last.bytes === 0)) this.window.startSentence(text);
    else if (newSentence) last!.text = text;
    else this.window.appendText(text);
    const held = this.window.sentence(this.window.count - 1)!;
    // Where this piece's text begins in the sentence's (its words' char offsets are the piece's).
    this.#pieceChars = held.text.length - text.length;
    this.#show();
  }

  /** Chars of the current sentence's text before the current piece's. */
  #pieceChars = 0;

  /**
   * A piece ended (audio-stage.ts Cue; undefined for a piece without audio): its timed words, if
   * any, are placed in the sentence — their times (seconds of the delivered audio) become bytes
   * from the sentence's first byte, counted back from the piece's end (the sentence's last byte
   * so far: all of the piece's audio was written before its end is told).
   */
  pieceEnd(cue: Cue | undefined): void {
    if (cue === undefined) return;
    const held = this.window.sentence(this.window.count - 1);
    if (held === undefined) return;
    const frame = bytesPerFrame(this.#spec);
    const bytes = (seconds: number): number => Math.max(0, held.bytes - Math.round(((cue.end - seconds) * this.#bytesPerSecond) / frame) * frame);
    for (const w of cue.words ?? []) {
      held.words.push({ startByte: bytes(w.start), endByte: bytes(w.end), charStart: this.#pieceChars + w.charStart, charEnd: this.#pieceChars + w.charEnd });
    }
    // Words that came after their sentence began playing show at once (also while paused).
    if (held.index === this.#at.sentence) this.#show();
  }

  /**
   * Takes delivered audio into the window; waits only when the window is full.
   * @throws {@link PlayerStopped} once `q` was pressed; the sink's failure once playing failed.
   */
  async write(chunk: Buffer): Promise<void> {
    this.#check();
    const whole = this.#frames.take(chunk);
    if (whole.length > 0) await this.window.add(Buffer.from(whole));
  }

  /** No more audio: plays to the end (or until `q`), then finishes the sink. */
  async finish(): Promise<void> {
    this.window.finish();
    await this.#loop;
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#aborted) throw new TtsError('io_error', 'playback was aborted');
    if (this.#stopped !== undefined) return this.#out.abort();
    await this.#out.finish();
  }

  /** Stops at once: the loop ends and the sink is aborted. Never rejects. */
  async abort(): Promise<void> {
    // After `q` the run ends as it asked (exit 0); any other abort is not a success.
    if (this.#stopped === undefined) this.#aborted = true;
    this.#stopped ??= new PlayerStopped();
    this.window.close(this.#stopped);
    await this.#out.abort();
    await this.#loop;
    this.#tempo?.destroy();
  }

  /**
   * Stops writing to the sink until {@link release}, whatever the user's pause says (which it
   * leaves as it is): for suspending the process (Ctrl-Z, interactive.ts).
   * @returns resolves once nothing is being written — the slice in flight (≤ 50 ms of audio,
   *   `sliceSeconds`) was handed to the sink — or at once when the loop has ended. Never rejects.
   */
  hold(): Promise<void> {
    this.#held = true;
    if (this.#ended) return Promise.resolve();
    const rested = new Promise<void>((resolve) => this.#resting.push(resolve));
    this.window.changes.notify();
    return rested;
  }

  /** Ends a {@link hold}: playing goes on where it stopped (unless the user paused). */
  release(): void {
    this.#held = false;
    this.window.changes.notify();
  }

  /** Resolves the {@link hold} waiters. */
  #rest(): void {
    const resting = this.#resting;
    this.#resting = [];
    for (const r of resting) r();
  }

  /** Does what a key asks (keys.ts); `interrupt` and `suspend` are the caller's (they raise SIGINT, SIGTSTP). */
  act(action: PlayerAction): void {
    const at = this.#seek ?? this.#at.sentence;
    switch (action) {
      case 'pause':
        this.#paused = !this.#paused;
        break;
      case 'previous':
        this.#seek = Math.max(this.window.first, Math.min(at - 1, this.window.count - 1));
        break;
      case 'next':
        this.#seek = at + 1;
        break;
      case 'repeat':
        this.#seek = Math.max(this.window.first, at);
        break;
      case 'faster':
      case 'slower': {
        const step = action === 'faster' ? SPEED_STEP : -SPEED_STEP;
        this.#speed = Math.min(SPEED_MAX, Math.max(SPEED_MIN, Math.round((this.#speed + step) * 10) / 10));
        break;
      }
      case 'quit':
        this.#stopped ??= new PlayerStopped();
        this.window.close(this.#stopped);
        break;
      case 'interrupt':
      case 'suspend':
        return;
    }
    this.window.changes.notify();
    this.#show(true);
  }

  /** The loop: plays from the window to the sink until the end, `q` or abort. */
  async #play(): Promise<void> {
    const changes = this.window.changes;
    for (;;) {
      const seen = changes.version;
      if (this.#stopped !== undefined) return;
      if (this.#seek !== undefined) {
        this.#tempo?.reset();
        this.#at = { sentence: this.#seek, chunk: 0, offset: 0 };
        this.#played = 0;
        this.#seek = undefined;
        this.window.setCursor(this.#at.sentence);
        this.#show();
        continue;
      }
      if (this.#paused || this.#held) {
        if (this.#held) this.#rest();
        await changes.wait(seen);
        continue;
      }
      const read = this.window.chunkAt(this.#at.sentence, this.#at.chunk);
      if (read.kind === 'wait') {
        await changes.wait(seen);
        continue;
      }
      if (read.kind === 'gone') {
        if (this.window.finished || this.#at.sentence >= this.window.count) return;
        // Dropped from the window: go on from the oldest sentence still held.
        this.#seek = this.window.first;
        continue;
      }
      if (read.kind === 'sentence-end') {
        await this.#flushTempo();
        if (this.window.finished && this.#at.sentence + 1 >= this.window.count) return;
        this.#at = { sentence: this.#at.sentence + 1, chunk: 0, offset: 0 };
        this.#played = 0;
        this.window.setCursor(this.#at.sentence);
        this.#show();
        continue;
      }
      const { chunk } = read;
      const slice = chunk.subarray(this.#at.offset, this.#at.offset + this.#sliceBytes);
      if (this.#at.offset + slice.length >= chunk.length) this.#at = { ...this.#at, chunk: this.#at.chunk + 1, offset: 0 };
      else this.#at = { ...this.#at, offset: this.#at.offset + slice.length };
      // The word shown is the one whose first byte goes out now.
      this.#played += slice.length;
      this.#show();
      await this.#write(slice);
    }
  }

  /** Writes a slice at the current tempo. */
  async #write(slice: Buffer): Promise<void> {
    if (this.#tempo !== undefined && this.#tempo.speed !== this.#speed) await this.#flushTempo();
    if (this.#speed === 1) return this.#out.write(slice);
    this.#tempo ??= await Tempo.create(this.#spec.sampleRate, this.#spec.channels, this.#speed);
    const out = this.#tempo.push(decodeToFloat(slice, this.#spec.format));
    if (out.length > 0) await this.#out.write(encodeFloat(out, this.#spec.format));
  }

  /** Plays what the tempo changer holds and drops it (a sentence ended, or the speed changed). */
  async #flushTempo(): Promise<void> {
    const tempo = this.#tempo;
    if (tempo === undefined) return;
    this.#tempo = undefined;
    const tail = tempo.end();
    tempo.destroy();
    if (tail.length > 0) await this.#out.write(encodeFloat(tail, this.#spec.format));
  }

  /** Tells the display, when the sentence changed (or always, after a key). */
  #show(always = false): void {
    const word = this.#wordAt();
    if (!always && this.#shown === this.#at.sentence && this.#shownWord === word) return;
    const state = this.state;
    if (state.sentence < 0) return;
    this.#shown = this.#at.sentence;
    this.#shownWord = word;
    this.#onState(state);
  }

  #check(): void {
    if (this.#failed !== undefined) throw this.#failed;
    if (this.#stopped !== undefined) throw this.#stopped;
  }
}
