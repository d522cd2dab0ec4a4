/**
 * Which stream the engine's next free worker serves (docs/cli.md §5, "Fairness").
 *
 * The engine synthesizes a stream in small units (a sentence or a few, see units.ts), one unit
 * of a stream at a time, so a worker is free again after every unit and the question "whose unit
 * next?" comes up often. `fair` answers it round-robin between keys (the API keys of the
 * service; each caller's streams form one group), then round-robin between that key's streams:
 * a key with four long texts gets no more of the workers than a key with one short text, and a
 * short request's first audio waits for at most one unit per busy worker. `fifo` answers it in
 * arrival order, as a plain job queue does: the oldest stream that can take a unit gets it (the
 * baseline of `npm run bench`).
 */

/** How {@link Scheduler.pick} chooses. */
export type SchedulingPolicy = 'fair' | 'fifo';

/** One key's streams and where its round-robin stands. */
interface Group<T> {
  streams: T[];
  /** Index in `streams` of the stream to try first next time. */
  cursor: number;
}

/**
 * The set of active streams, grouped by key, and the choice of the next one to serve.
 * Holds only references; O(streams) per pick, and the engine's streams are bounded by the
 * service's admission (keys × --max-concurrent).
 */
export class Scheduler<T> {
  readonly policy: SchedulingPolicy;
  /** Streams by key, in order of each key's first stream (Map keeps insertion order). */
  readonly #groups = new Map<string, Group<T>>();
  /** Every stream in arrival order (for `fifo`). */
  readonly #arrivals: T[] = [];
  /** Index (in the keys' order) of the key to try first next time. */
  #keyCursor = 0;

  constructor(policy: SchedulingPolicy = 'fair') {
    this.policy = policy;
  }

  /** Streams held. */
  get size(): number {
    return this.#arrivals.length;
  }

  /** Every stream held, in arrival order (a copy). */
  streams(): T[] {
    return [...this.#arrivals];
  }

  /** Adds a stream of `key` (any string; streams without a key share one group). */
  add(stream: T, key: string): void {
    this.#arrivals.push(stream);
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = { streams: [], cursor: 0 };
      this.#groups.set(key, group);
    }
    group.streams.push(stream);
  }

  /** Removes a stream (ended, failed or cancelled); harmless when it is not held. */
  remove(stream: T, key: string): void {
    const at = this.#arrivals.indexOf(stream);
    if (at >= 0) this.#arrivals.splice(at, 1);
    const group = this.#groups.get(key);
    if (group === undefined) return;
    const index = group.streams.indexOf(stream);
    if (index < 0) return;
    group.streams.splice(index, 1);
    if (index < group.cursor) group.cursor--;
    if (group.cursor >= group.streams.length) group.cursor = 0;
    if (group.streams.length === 0) {
      const keyIndex = [...this.#groups.keys()].indexOf(key);
      this.#groups.delete(key);
      if (keyIndex < this.#keyCursor) this.#keyCursor--;
      if (this.#keyCursor >= this.#groups.size) this.#keyCursor = 0;
    }
  }

  /**
   * The next stream to serve among those `ready` accepts (ready: not running a unit already,
   * with units left and room in its buffer), advancing the round-robin past it; undefined when
   * none is ready.
   */
  pick(ready: (stream: T) => boolean): T | undefined {
    if (this.policy === 'fifo') return this.#arrivals.find(ready);
    const groups = [...this.#groups.values()];
    for (let k = 0; k < groups.length; k++) {
      const keyIndex = (this.#keyCursor + k) % groups.length;
      const group = groups[keyIndex]!;
      const n = group.streams.length;
      for (let s = 0; s < n; s++) {
        const index = (group.cursor + s) % n;
        const stream = group.streams[index]!;
        if (!ready(stream)) continue;
        group.cursor = (index + 1) % n;
        this.#keyCursor = (keyIndex + 1) % groups.length;
        return stream;
      }
    }
    return undefined;
  }
}
