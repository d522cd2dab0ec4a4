/**
 * Per-key limits of the built-in service (docs/protocol.md §8; docs/cli.md §4): a request rate (GCRA,
 * the "generic cell rate algorithm" of ITU-T I.371, equivalent to a token bucket holding
 * `limit` tokens refilled over `window`), concurrent requests across both channels, and an
 * optional character quota. Time comes from an injectable clock so tests can be exact.
 */

/** Milliseconds since an arbitrary origin. */
export type Clock = () => number;

/** Outcome of asking the rate limiter for one request. */
export interface RateDecision {
  ok: boolean;
  /** Requests still allowed right now after this one. */
  remaining: number;
  /** Seconds until the allowance is full again (RateLimit `t`). */
  resetSeconds: number;
  /** When refused: whole seconds to wait before a request would pass (Retry-After). */
  retryAfterSeconds: number;
}

/**
 * GCRA rate limiter, one state per key: `limit` requests per `windowSeconds`, bursts up to
 * `limit`. Memory is one number per key seen; keys whose state has expired are dropped lazily.
 */
export class RateLimiter {
  readonly limit: number;
  readonly windowSeconds: number;
  readonly #clock: Clock;
  /** Theoretical arrival time per key, in clock ms. */
  readonly #tat = new Map<string, number>();

  /**
   * @param limit requests allowed per window (≥ 1).
   * @param windowSeconds the window, in seconds (> 0).
   */
  constructor(limit: number, windowSeconds: number, clock: Clock = () => performance.now()) {
    if (!(limit >= 1) || !(windowSeconds > 0)) throw new RangeError('rate limit needs limit ≥ 1 and a window > 0');
    this.limit = limit;
    this.windowSeconds = windowSeconds;
    this.#clock = clock;
  }

  /** Takes one request for `key` if allowed. */
  take(key: string): RateDecision {
    const now = this.#clock();
    const period = this.windowSeconds * 1000;
    const interval = period / this.limit;
    const tat = Math.max(this.#tat.get(key) ?? now, now);
    const next = tat + interval;
    const allowAt = next - period;
    // Compared as `tat − now > period − interval`, not `now < allowAt`: `now + interval − period`
    // can round above `now` (1234.567 + 60000 − 60000), refusing the first request of a
    // 1-per-window limit.
    if (tat - now > period - interval) {
      return { ok: false, remaining: 0, resetSeconds: Math.ceil((tat - now) / 1000), retryAfterSeconds: Math.max(1, Math.ceil((allowAt - now) / 1000)) };
    }
    this.#tat.set(key, next);
    if (this.#tat.size > 10_000) this.#sweep(now);
    return {
      ok: true,
      remaining: Math.floor((period - (next - now)) / interval + 1e-9),
      resetSeconds: Math.ceil((next - now) / 1000),
      retryAfterSeconds: 0,
    };
  }

  /** The IETF draft `RateLimit-Policy` value (draft-ietf-httpapi-ratelimit-headers). */
  policyHeader(): string {
    return `"per-key";q=${this.limit};w=${this.windowSeconds}`;
  }

  /** The IETF draft `RateLimit` value for a decision. */
  static header(decision: RateDecision): string {
    return `"per-key";r=${decision.remaining};t=${decision.resetSeconds}`;
  }

  #sweep(now: number): void {
    for (const [k, t] of this.#tat) if (t <= now) this.#tat.delete(k);
  }
}

/** Counts requests in progress per key, across the SSE and WebSocket channels. */
export class ConcurrencyLimiter {
  readonly max: number;
  readonly #active = new Map<string, number>();

  /** @param max requests in progress allowed per key (≥ 1). */
  constructor(max: number) {
    this.max = max;
  }

  /**
   * Takes a slot for `key`.
   * @returns a release function (idempotent), or undefined when the key is at its limit.
   */
  acquire(key: string): (() => void) | undefined {
    const n = this.#active.get(key) ?? 0;
    if (n >= this.max) return undefined;
    this.#active.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#active.get(key) ?? 1) - 1;
      if (left <= 0) this.#active.delete(key);
      else this.#active.set(key, left);
    };
  }

  /** Requests in progress for `key`. */
  active(key: string): number {
    return this.#active.get(key) ?? 0;
  }
}

/** A character allowance per key (credits), spent when a synthesis is accepted. */
export class CharacterQuota {
  readonly perKey: number;
  readonly #used = new Map<string, number>();

  /** @param perKey characters each key may synthesize in this server's lifetime. */
  constructor(perKey: number) {
    this.perKey = perKey;
  }

  /** Spends `chars` for `key` if the allowance covers them; false (nothing spent) otherwise. */
  spend(key: string, chars: number): boolean {
    const used = this.#used.get(key) ?? 0;
    if (used + chars > this.perKey) return false;
    this.#used.set(key, used + chars);
    return true;
  }

  /** Characters left for `key`. */
  left(key: string): number {
    return this.perKey - (this.#used.get(key) ?? 0);
  }
}

/**
 * Parses a rate like `60/min`, `10/s`, `1000/hour`, `5/30s`.
 * @returns requests and window in seconds.
 * @throws RangeError on anything else.
 */
export function parseRate(text: string): { limit: number; windowSeconds: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d+)?\s*(s|sec|second|m|min|minute|h|hour)s?\s*$/i.exec(text);
  if (m === null) throw new RangeError(`a rate looks like 60/min, 10/s or 1000/hour, not "${text}"`);
  const unit = m[3]!.toLowerCase();
  const seconds = unit.startsWith('h') ? 3600 : unit === 'm' || unit.startsWith('min') ? 60 : 1;
  const limit = Number(m[1]);
  const windowSeconds = Number(m[2] ?? 1) * seconds;
  if (limit < 1 || windowSeconds <= 0) throw new RangeError(`a rate needs at least 1 request per window, not "${text}"`);
  return { limit, windowSeconds };
}
