/** Per-key limits with a fake clock: exact Retry-After and RateLimit values (docs/cli.md §4). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CharacterQuota, ConcurrencyLimiter, parseRate, RateLimiter } from '../../src/server/limits.js';

describe('RateLimiter (GCRA)', () => {
  it('admits the first request of a 1-per-window limit at any clock value (no rounding refusal)', () => {
    // 1234.567 + 60000 − 60000 > 1234.567 in floating point: comparing `now < tat + interval −
    // period` refused the very first request at such instants (about 3 in 10 of them).
    for (const now of [1234.567, 0.3, 98765.4321]) {
      const rl = new RateLimiter(1, 60, () => now);
      assert.equal(rl.take('k').ok, true, `first request at ${now} ms`);
      assert.equal(rl.take('k').ok, false, `second request at ${now} ms`);
    }
  });

  it('allows a burst of `limit`, then refuses with the exact wait, and refills one per interval', () => {
    let now = 1_000_000;
    const rl = new RateLimiter(60, 60, () => now);
    for (let i = 0; i < 60; i++) {
      const d = rl.take('k');
      assert.equal(d.ok, true, `request ${i}`);
      assert.equal(d.remaining, 59 - i);
      assert.equal(d.resetSeconds, i + 1);
      assert.equal(RateLimiter.header(d), `"per-key";r=${59 - i};t=${i + 1}`);
    }
    const refused = rl.take('k');
    assert.deepEqual(refused, { ok: false, remaining: 0, resetSeconds: 60, retryAfterSeconds: 1 });
    now += 999;
    assert.equal(rl.take('k').ok, false);
    now += 1;
    const again = rl.take('k');
    assert.equal(again.ok, true);
    assert.equal(again.remaining, 0);
    assert.equal(rl.policyHeader(), '"per-key";q=60;w=60');
  });

  it('keeps keys apart', () => {
    const now = 0;
    const rl = new RateLimiter(1, 10, () => now);
    assert.equal(rl.take('a').ok, true);
    assert.equal(rl.take('a').ok, false);
    assert.equal(rl.take('a').retryAfterSeconds, 10);
    assert.equal(rl.take('b').ok, true);
  });

  it('parses rates', () => {
    assert.deepEqual(parseRate('60/min'), { limit: 60, windowSeconds: 60 });
    assert.deepEqual(parseRate('10/s'), { limit: 10, windowSeconds: 1 });
    assert.deepEqual(parseRate('5/30s'), { limit: 5, windowSeconds: 30 });
    assert.deepEqual(parseRate('1000/hour'), { limit: 1000, windowSeconds: 3600 });
    assert.throws(() => parseRate('fast'), RangeError);
    assert.throws(() => parseRate('0/min'), RangeError);
  });
});

describe('ConcurrencyLimiter', () => {
  it('counts per key and frees a slot once per release', () => {
    const c = new ConcurrencyLimiter(2);
    const r1 = c.acquire('k');
    const r2 = c.acquire('k');
    assert.ok(r1 && r2);
    assert.equal(c.acquire('k'), undefined);
    assert.ok(c.acquire('other'));
    r1();
    r1();
    assert.equal(c.active('k'), 1);
    assert.ok(c.acquire('k'));
  });
});

describe('CharacterQuota', () => {
  it('spends only what the allowance covers', () => {
    const q = new CharacterQuota(10);
    assert.equal(q.spend('k', 6), true);
    assert.equal(q.spend('k', 5), false);
    assert.equal(q.left('k'), 4);
    assert.equal(q.spend('k', 4), true);
  });
});
