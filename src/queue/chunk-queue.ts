/**
 * The one hand-off between a producer and a consumer of audio (or of anything with a size in
 * bytes): a first-in-first-out queue bounded in bytes, so a producer never runs ahead of a
 * consumer that is not reading (docs/style.md §6). Every producer/consumer pair of tts uses it: the
 * SSE and WebSocket clients (socket → consumer), the pipeline (a piece's request → the output),
 * and the engine (worker thread → a stream of the built-in service).
 *
 * The producer calls {@link ChunkQueue.push}; when it returns false the queue holds
 * `highWaterBytes` or more and the producer waits for {@link ChunkQueue.room} (which resolves at
 * `lowWaterBytes`) before producing more — for a socket, it stops reading so TCP pushes back.
 * The consumer awaits {@link ChunkQueue.take} or iterates the queue. One side ends it:
 * {@link ChunkQueue.end} (no more items), {@link ChunkQueue.fail} (an error, thrown after the
 * items queued before it, or at once when urgent), or {@link ChunkQueue.close} (the consumer is
 * gone: queued items are dropped and every wait ends).
 */

/** Sizes and the measure of an item. */
export interface ChunkQueueOptions<T> {
  /** Bytes queued at which {@link ChunkQueue.push} starts returning false (> 0). */
  highWaterBytes: number;
  /** {@link ChunkQueue.room} resolves once the queue holds this many bytes or fewer; default highWaterBytes / 4. */
  lowWaterBytes?: number | undefined;
  /** Size of an item in bytes (items of size 0 — markers — never fill the queue). */
  sizeOf: (item: T) => number;
}

/** A byte-bounded FIFO between one producer and one consumer; see the module comment. */
export class ChunkQueue<T> {
  readonly highWaterBytes: number;
  readonly lowWaterBytes: number;
  readonly #sizeOf: (item: T) => number;
  readonly #items: T[] = [];
  #bytes = 0;
  #ended = false;
  #closed = false;
  #failure: { error: unknown; urgent: boolean } | undefined;
  #wakeConsumer: (() => void) | undefined;
  #wakeProducers: (() => void)[] = [];

  /** @throws RangeError when the water marks are not 0 ≤ low < high. */
  constructor(options: ChunkQueueOptions<T>) {
    this.highWaterBytes = options.highWaterBytes;
    this.lowWaterBytes = options.lowWaterBytes ?? Math.floor(options.highWaterBytes / 4);
    if (!(this.highWaterBytes > 0) || !(this.lowWaterBytes >= 0) || this.lowWaterBytes >= this.highWaterBytes) {
      throw new RangeError(`ChunkQueue needs 0 ≤ lowWaterBytes < highWaterBytes, got ${this.lowWaterBytes} and ${this.highWaterBytes}`);
    }
    this.#sizeOf = options.sizeOf;
  }

  /** Bytes queued now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Items queued now. */
  get length(): number {
    return this.#items.length;
  }

  /** True until the queue was ended, failed or closed. */
  get isOpen(): boolean {
    return !this.#ended && !this.#closed && this.#failure === undefined;
  }

  /**
   * Adds an item for the consumer. An item pushed after end, fail or close is dropped.
   * @returns false when the producer should wait for {@link room} before the next push (the
   *   queue reached its high-water mark, or is no longer open).
   */
  push(item: T): boolean {
    if (!this.isOpen) return false;
    this.#items.push(item);
    this.#bytes += this.#sizeOf(item);
    this.#wake();
    return this.#bytes < this.highWaterBytes;
  }

  /** No more items: the consumer takes what is queued, then sees the end. */
  end(): void {
    if (!this.isOpen) return;
    this.#ended = true;
    this.#wake();
    this.#release();
  }

  /**
   * The producer failed: the consumer gets `error` after the items queued before it, or — with
   * `urgent` (an abort, a timeout) — at its next take. The first failure wins.
   */
  fail(error: unknown, options: { urgent?: boolean } = {}): void {
    if (this.#closed || this.#failure !== undefined) return;
    // An urgent failure still replaces a normal end the consumer has not reached.
    if (this.#ended && options.urgent !== true) return;
    this.#failure = { error, urgent: options.urgent === true };
    this.#wake();
    this.#release();
  }

  /** The consumer is gone: queued items are dropped, the producer's waits end, pushes are ignored. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#items.length = 0;
    this.#bytes = 0;
    this.#wake();
    this.#release();
  }

  /**
   * Resolves once the queue holds `lowWaterBytes` or fewer, or is no longer open (so a producer
   * waiting here always wakes up). Resolves at once when that is already so.
   */
  room(): Promise<void> {
    if (this.#bytes <= this.lowWaterBytes || !this.isOpen) return Promise.resolve();
    return new Promise((resolve) => this.#wakeProducers.push(resolve));
  }

  /** The next item without waiting, or undefined when none is queued (a failure is not thrown here). */
  poll(): T | undefined {
    if (this.#failure?.urgent === true) return undefined;
    const item = this.#items.shift();
    if (item === undefined) return undefined;
    this.#bytes -= this.#sizeOf(item);
    if (this.#bytes <= this.lowWaterBytes) this.#release();
    return item;
  }

  /**
   * The next item, waiting for one.
   * @returns undefined at the end (after end(), or once closed).
   * @throws the error given to fail(): after the items queued before it, or at once if urgent.
   */
  async take(): Promise<T | undefined> {
    for (;;) {
      const failure = this.#failure;
      if (failure !== undefined && (failure.urgent || this.#items.length === 0)) throw failure.error;
      const item = this.poll();
      if (item !== undefined) return item;
      if (this.#ended || this.#closed) return undefined;
      await new Promise<void>((resolve) => (this.#wakeConsumer = resolve));
    }
  }

  /** Iterates until the end; leaving the loop early closes the queue. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    try {
      for (let item = await this.take(); item !== undefined; item = await this.take()) yield item;
    } finally {
      this.close();
    }
  }

  #wake(): void {
    const wake = this.#wakeConsumer;
    this.#wakeConsumer = undefined;
    wake?.();
  }

  #release(): void {
    const waiters = this.#wakeProducers;
    if (waiters.length === 0) return;
    this.#wakeProducers = [];
    for (const w of waiters) w();
  }
}
