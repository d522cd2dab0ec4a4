/**
 * Retry timing and eligibility (src/client/retry.ts; docs/cli.md §1 `--retries`): exponential
 * backoff 0.5 s × 2ⁿ capped at 8 s, shortened by up to 25 % jitter, the service's Retry-After
 * taken as given; only retriable TtsErrors; the sleep ends early on abort. The clock is mocked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtsError } from '../../src/errors.js';
import { BASE_DELAY_SECONDS, MAX_DELAY_SECONDS, backoffSeconds, shouldRetry, sleep } from '../../src/client/retry.js';

const retriable = new TtsError('server_error', 'boom', { retriable: true });

describe('backoffSeconds', () => {
  it('doubles from 0.5 s up to the 8 s cap, without jitter at random 0', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 9].map((n) => backoffSeconds(retriable, n, 0)),
      [0.5, 1, 2, 4, 8, 8, 8],
    );
    assert.equal(BASE_DELAY_SECONDS, 0.5);
    assert.equal(MAX_DELAY_SECONDS, 8);
  });

  it('jitter only shortens, by at most 25 %', () => {
    for (const n of [0, 2, 7]) {
      const full = backoffSeconds(retriable, n, 0);
      assert.equal(backoffSeconds(retriable, n, 0.5), full * 0.875);
      const shortest = backoffSeconds(retriable, n, 0.999999);
      assert.ok(shortest > full * 0.75 && shortest <= full);
    }
  });

  it("the service's Retry-After wins, even above the cap", () => {
    const limited = new TtsError('rate_limit_exceeded', 'slow down', { retriable: true, retryAfterSeconds: 30 });
    assert.equal(backoffSeconds(limited, 0, 0.9), 30);
  });
});

describe('shouldRetry', () => {
  it('only TtsErrors marked retriable, never final ones', () => {
    assert.equal(shouldRetry(retriable), true);
    assert.equal(shouldRetry(new TtsError('invalid_api_key', 'no')), false);
    assert.equal(shouldRetry(new TtsError('server_error', 'gone', { retriable: true, final: true })), false);
    assert.equal(shouldRetry(new Error('plain')), false);
    assert.equal(shouldRetry(undefined), false);
  });
});

describe('sleep', () => {
  it('resolves after the given seconds, not before', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let done = false;
    const sleeping = sleep(1.5).then(() => {
      done = true;
    });
    t.mock.timers.tick(1499);
    await Promise.resolve();
    assert.equal(done, false);
    t.mock.timers.tick(1);
    await sleeping;
    assert.equal(done, true);
  });

  it('rejects with the reason at once on abort, and at once when already aborted', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const controller = new AbortController();
    const reason = new TtsError('interrupted', 'interrupted');
    const sleeping = sleep(8, controller.signal);
    controller.abort(reason);
    await assert.rejects(sleeping, (e) => e === reason);
    await assert.rejects(sleep(8, controller.signal), (e) => e === reason);
  });
});
