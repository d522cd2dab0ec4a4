/**
 * The retry wait (src/client/retry.ts sleep, on node:timers/promises): it ends, and an abort
 * ends it at once with the signal's own reason — not Node's generic AbortError — so a caller
 * tells Ctrl-C from a failure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sleep } from '../../src/client/retry.js';
import { TtsError } from '../../src/errors.js';

describe('sleep', () => {
  it('resolves after the wait', async () => {
    assert.equal(await sleep(0.001), undefined);
  });

  it('rejects with the signal\'s reason when aborted while waiting, or before', async () => {
    const reason = new TtsError('interrupted', 'interrupted');
    const controller = new AbortController();
    const waiting = sleep(3600, controller.signal);
    controller.abort(reason);
    await assert.rejects(waiting, (e) => e === reason);
    await assert.rejects(sleep(3600, AbortSignal.abort(reason)), (e) => e === reason);
  });
});
