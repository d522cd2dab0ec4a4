/**
 * The player's memory of what it was given (docs/cli.md §12.2): the audio of each sentence as
 * delivered, kept so that ← and `r` replay the very same bytes without asking the service again,
 * within a window bounded in bytes. The producer (the pipeline) waits when the window is full of
 * audio it may not drop yet, so it never runs further ahead than the window (backpressure).
 */

/** Default bound of the window: 64 MiB (about 23 minutes of 24 kHz 16-bit mono). */
export const DEFAULT_WINDOW_BYTES = 64 * 1024 * 1024;

/** One sentence held by the window. */
export interface HeldSentence {
  /** Its number in the run, from 0. */
  readonly index: number;
  /** Its text as requested (pieces that continue it appended). */
  text: string;
  /** Its audio in the order delivered, whole frames per chunk. */
  readonly chunks: Buffer[];
  /** Total bytes of `chunks`. */
  bytes: number;
  /** True once the next sentence began or the producer finished: no more audio comes for it. */
  complete: boolean;
  /** Its timed words, in order (none when the service sent no word timings). */
  words: HeldWord[];
}

/** A word of a held sentence: where its audio is, in bytes of the sentence, and where its text is. */
export interface HeldWord {
  /** Bytes from the sentence's first byte to the word's first, and to just after its last. */
  startByte: number;
  endByte: number;
  /** The word's range in the sentence's `text`, in UTF-16 code units. */
  charStart: number;
  charEnd: number;
}

/**
 * Wakes whoever waits for a change (new audio, a key, the end). `version` goes up on every
 * notify, so a waiter that read it before checking its condition never misses a change.
 */
export class Notifier {
  #version = 0;
  #wake: (() => void)[] = [];

  get version(): number {
    return this.#version;
  }

  /** Wakes every waiter. */
  notify(): void {
    this.#version++;
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }

  /** Resolves at the next notify, or at once when one happened since `seen` was read. */
  wait(seen: number): Promise<void> {
    if (seen !== this.#version) return Promise.resolve();
    return new Promise((resolve) => this.#wake.push(resolve));
  }
}

/** Where the reader stands: `chunkAt` answers one of these. */
export type WindowRead =
  | { kind: 'audio'; chunk: Buffer }
  /** Not received yet: wait for the notifier. */
  | { kind: 'wait' }
  /** The sentence has no more audio. */
  | { kind: 'sentence-end' }
  /** The sentence was dropped from the window (or never existed, past the end of a finished run). */
  | { kind: 'gone' };

/**
 * Sentences in order, their audio, and the bound. The producer calls {@link startSentence},
 * {@link add} and {@link finish}; the reader calls {@link chunkAt} and {@link setCursor}.
 * Sentences before the cursor are dropped oldest first when the bound is passed; the sentence
 * at the cursor and those after it are never dropped, so the producer waits instead — except
 * for the sentence at the cursor itself, which is always taken whole (a single sentence larger
 * than the window would otherwise wait for ever). A sentence takes no further piece once it
 * holds {@link partLimitBytes}: the piece starts a sentence of its own ({@link appendText}), so
 * a text without sentence ends, or a long `--lines` line, is held in parts and the one taken
 * whole stays small (it held all its audio, growing while paused, until memory ran out).
 */
export class SentenceWindow {
  readonly #sentences: HeldSentence[] = [];
  /** Index of `#sentences[0]` (earlier ones were dropped). */
  #first = 0;
  #bytes = 0;
  #cursor = 0;
  #finished = false;
  #closed: Error | undefined;

  /**
   * Bytes of audio after which a sentence takes no further piece (an eighth of the window: 8 MiB,
   * about 3 minutes of 24 kHz 16-bit mono, for the default).
   */
  readonly partLimitBytes: number;

  /**
   * @param limitBytes most audio bytes held (≥ 1).
   * @param changes notified on every change, for the reader and the producer alike.
   */
  constructor(
    readonly limitBytes: number,
    readonly changes: Notifier = new Notifier(),
  ) {
    if (!(limitBytes >= 1)) throw new RangeError(`the window must hold at least one byte, got ${limitBytes}`);
    this.partLimitBytes = Math.max(1, Math.floor(limitBytes / 8));
  }

  /** Audio bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Index of the oldest sentence still held (equal to {@link count} when none is). */
  get first(): number {
    return this.#first;
  }

  /** Sentences begun so far. */
  get count(): number {
    return this.#first + this.#sentences.length;
  }

  /** True once the producer said there is no more. */
  get finished(): boolean {
    return this.#finished;
  }

  /** The sentence `index`, if held. */
  sentence(index: number): HeldSentence | undefined {
    return index >= this.#first ? this.#sentences[index - this.#first] : undefined;
  }

  /** Begins the next sentence (the previous one is complete). */
  startSentence(text: string): void {
    const last = this.#sentences.at(-1);
    if (last !== undefined) last.complete = true;
    this.#sentences.push({ index: this.count, text, chunks: [], bytes: 0, complete: false, words: [] });
    this.changes.notify();
  }

  /**
   * Appends text to the current sentence (a piece continuing it); begins one if there is none, or
   * when the current one already holds {@link partLimitBytes} of audio.
   */
  appendText(text: string): void {
    const last = this.#sentences.at(-1);
    if (last === undefined || last.complete || last.bytes >= this.partLimitBytes) return this.startSentence(text);
    last.text += text;
    this.changes.notify();
  }

  /**
   * Adds audio to the current sentence; waits while the window is full and nothing may be
   * dropped (the reader has not moved past it).
   * @param chunk whole frames; kept as given (the caller must not reuse it).
   * @throws the reason given to {@link close}, once closed.
   */
  async add(chunk: Buffer): Promise<void> {
    if (this.#sentences.length === 0) this.startSentence('');
    for (;;) {
      if (this.#closed !== undefined) throw this.#closed;
      const seen = this.changes.version;
      this.#evict(chunk.length);
      const current = this.#sentences.at(-1)!;
      if (this.#bytes + chunk.length <= this.limitBytes || current.index <= this.#cursor) break;
      await this.changes.wait(seen);
    }
    const current = this.#sentences.at(-1)!;
    current.chunks.push(chunk);
    current.bytes += chunk.length;
    this.#bytes += chunk.length;
    this.changes.notify();
  }

  /** No more sentences or audio come. */
  finish(): void {
    const last = this.#sentences.at(-1);
    if (last !== undefined) last.complete = true;
    this.#finished = true;
    this.changes.notify();
  }

  /** Stops the producer: pending and later {@link add}s throw `reason`. */
  close(reason: Error): void {
    this.#closed ??= reason;
    this.changes.notify();
  }

  /** The reader now plays sentence `index`: the ones before it may be dropped. */
  setCursor(index: number): void {
    this.#cursor = index;
    this.changes.notify();
  }

  /** What sentence `index` holds at chunk `chunk` (see {@link WindowRead}). */
  chunkAt(index: number, chunk: number): WindowRead {
    const s = this.sentence(index);
    if (s === undefined) return index < this.#first || this.#finished ? { kind: 'gone' } : { kind: 'wait' };
    const c = s.chunks[chunk];
    if (c !== undefined) return { kind: 'audio', chunk: c };
    return s.complete ? { kind: 'sentence-end' } : { kind: 'wait' };
  }

  /** Drops the oldest sentences before the cursor until `more` bytes fit (or none may go). */
  #evict(more: number): void {
    while (this.#bytes + more > this.limitBytes && this.#first < this.#cursor && this.#sentences.length > 1) {
      const dropped = this.#sentences.shift()!;
      this.#bytes -= dropped.bytes;
      this.#first++;
    }
  }
}
