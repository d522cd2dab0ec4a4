/**
 * Admission of a request to the built-in service, the same for both channels (docs/protocol.md
 * §5, §8; docs/cli.md §4): the Bearer key (exactly one `Authorization` header), the server not
 * stopping, then the key's limits — rate first, then concurrency. The SSE route answers a refusal
 * with an HTTP error body; the WebSocket route answers the handshake with the same status and
 * body. An admitted request holds a concurrency slot until it calls `release` (idempotent), and
 * spends the key's character quota through `charge` once its text is known.
 */
import type { IncomingMessage } from 'node:http';
import type { ServiceErrorCode } from '../errors.js';
import { bearerKey, type KeyRing } from './keys.js';
import { CharacterQuota, ConcurrencyLimiter, RateLimiter, type Clock } from './limits.js';
import { HTTP_STATUS } from './statuses.js';
import type { Refusal } from './validate.js';

/** An admitted request. */
export interface Admitted {
  ok: true;
  /** The key's index in the KeyRing. */
  keyIndex: number;
  /** Headers for every answer to it (`RateLimit`, `RateLimit-Policy`). */
  headers: Record<string, string>;
  /** Frees the concurrency slot; call once the request is over (later calls do nothing). */
  release: () => void;
  /** Spends `characters` (code points) of the key's quota; a refusal (`quota_exceeded`) when spent. */
  charge: (characters: number) => Refusal | undefined;
}

/** A refused request: answer with `status` and `{"error":{"code","message"}}`. */
export interface Refused {
  ok: false;
  /** The key's index when the key was accepted before the refusal, else -1 (for the access log). */
  keyIndex: number;
  status: number;
  code: ServiceErrorCode | 'server_error';
  message: string;
  /** e.g. `WWW-Authenticate`, `Retry-After`, `RateLimit`. */
  headers: Record<string, string>;
}

/** The per-key limits an {@link Admission} applies (tests may give their own). */
export interface AdmissionLimits {
  /**
   * Takes one request of key `keyIndex`: its release and headers, or the refusal (a code of
   * docs/protocol.md §7 answered with HTTP_STATUS) with its headers.
   */
  admit(keyIndex: number): { release: () => void; headers?: Record<string, string> } | { code: ServiceErrorCode; message: string; headers?: Record<string, string> };
  /** Spends `characters` of the key's quota; a refusal when it does not cover them. */
  charge?(keyIndex: number, characters: number): Refusal | undefined;
}

/** Settings of {@link ServiceLimits}; each limit is off when absent. */
export interface LimitSettings {
  /** Requests per window per key. */
  rateLimit?: { limit: number; windowSeconds: number } | undefined;
  /** Requests in progress per key, SSE and WebSocket together. */
  maxConcurrent?: number | undefined;
  /** Characters each key may synthesize. */
  quotaChars?: number | undefined;
  /** Milliseconds clock of the rate limiter (tests inject a fake one). */
  clock?: Clock | undefined;
}

/** The service's per-key limits (limits.ts), for both channels. */
export class ServiceLimits implements AdmissionLimits {
  readonly rate: RateLimiter | undefined;
  readonly concurrency: ConcurrencyLimiter | undefined;
  readonly quota: CharacterQuota | undefined;

  constructor(settings: LimitSettings) {
    this.rate = settings.rateLimit === undefined ? undefined : new RateLimiter(settings.rateLimit.limit, settings.rateLimit.windowSeconds, settings.clock);
    this.concurrency = settings.maxConcurrent === undefined ? undefined : new ConcurrencyLimiter(settings.maxConcurrent);
    this.quota = settings.quotaChars === undefined ? undefined : new CharacterQuota(settings.quotaChars);
  }

  /** Rate first (429 `rate_limit_exceeded` with Retry-After), then concurrency (429 `too_many_concurrent_requests`). */
  admit(keyIndex: number): ReturnType<AdmissionLimits['admit']> {
    const key = String(keyIndex);
    const headers: Record<string, string> = {};
    if (this.rate !== undefined) {
      const d = this.rate.take(key);
      headers['ratelimit-policy'] = this.rate.policyHeader();
      headers['ratelimit'] = RateLimiter.header(d);
      if (!d.ok) {
        headers['retry-after'] = String(d.retryAfterSeconds);
        return { code: 'rate_limit_exceeded', message: `more than ${this.rate.limit} requests per ${this.rate.windowSeconds} s; retry in ${d.retryAfterSeconds} s`, headers };
      }
    }
    const release = this.concurrency === undefined ? () => {} : this.concurrency.acquire(key);
    if (release === undefined) {
      headers['retry-after'] = '1';
      return { code: 'too_many_concurrent_requests', message: `at most ${this.concurrency!.max} requests at once per key`, headers };
    }
    return { headers, release };
  }

  /** Spends `characters` of the key's quota (402 `quota_exceeded` when it does not cover them). */
  charge(keyIndex: number, characters: number): Refusal | undefined {
    if (this.quota === undefined || this.quota.spend(String(keyIndex), characters)) return undefined;
    return { code: 'quota_exceeded', message: `this key has ${this.quota.left(String(keyIndex))} characters of quota left; the request needs ${characters}` };
  }
}

/**
 * Decides whether a request (an SSE POST or a WebSocket handshake) may go on, and counts the
 * admitted requests not yet released, so a stopping server can wait for them ({@link idle}).
 */
export class Admission {
  #active = 0;
  #idleWaiters: (() => void)[] = [];

  /**
   * @param keys the accepted keys.
   * @param limits the per-key limits; none when absent.
   * @param stopping true once the server stops taking new requests (503 `server_error`).
   */
  constructor(
    private readonly keys: KeyRing,
    private readonly limits: AdmissionLimits | undefined,
    private readonly stopping: () => boolean,
  ) {}

  /** Admitted requests not yet released (streams in flight, open WebSocket sessions). */
  get active(): number {
    return this.#active;
  }

  /** Resolves once no admitted request is left (at once when none is). */
  idle(): Promise<void> {
    if (this.#active === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Admits `req` or says why not: 400 `bad_request` for more than one `Authorization` header
   * (which one would be meant?), 401 `invalid_api_key` for a missing, malformed or unknown key,
   * 503 while the server stops, 429 from the limits.
   */
  admit(req: IncomingMessage): Admitted | Refused {
    const authorization = req.headersDistinct['authorization'] ?? [];
    if (authorization.length > 1) {
      return refused(-1, 'bad_request', 'more than one Authorization header; send exactly one `Authorization: Bearer <key>`');
    }
    const key = bearerKey(authorization[0]);
    const keyIndex = key === undefined ? -1 : this.keys.indexOf(key);
    if (keyIndex === -1) {
      const message = key === undefined ? 'missing or malformed Authorization: Bearer header' : 'the API key is not valid';
      return refused(-1, 'invalid_api_key', message, { 'www-authenticate': 'Bearer' });
    }
    if (this.stopping()) {
      return { ok: false, keyIndex, status: 503, code: 'server_error', message: 'the server is shutting down', headers: { connection: 'close' } };
    }
    const taken = this.limits?.admit(keyIndex) ?? { release: () => {} };
    if ('code' in taken) return refused(keyIndex, taken.code, taken.message, taken.headers);
    let released = false;
    this.#active++;
    return {
      ok: true,
      keyIndex,
      headers: taken.headers ?? {},
      release: () => {
        if (released) return;
        released = true;
        taken.release();
        if (--this.#active === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
      },
      charge: (characters) => this.limits?.charge?.(keyIndex, characters),
    };
  }
}

function refused(keyIndex: number, code: ServiceErrorCode, message: string, headers: Record<string, string> = {}): Refused {
  return { ok: false, keyIndex, status: HTTP_STATUS[code], code, message, headers };
}
