/** Error payloads of every shape docs/cli.md §4 tolerates, and their exit codes (docs/cli.md §3). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseErrorPayload } from '../../src/client/error-body.js';
import { errorFromResponse, parseRetryAfter } from '../../src/client/service-error.js';

describe('parseErrorPayload', () => {
  const cases: [string, string | undefined, string | undefined][] = [
    ['{"error":{"code":"voice_not_found","message":"no voice x"}}', 'voice_not_found', 'no voice x'],
    ['{"type":"error","error":{"code":"bad_request","message":"m"}}', 'bad_request', 'm'],
    ['{"code":"language_not_found","message":"m2"}', 'language_not_found', 'm2'],
    ['{"error":"invalid_api_key"}', 'invalid_api_key', undefined],
    ['{"error":"Something went wrong"}', undefined, 'Something went wrong'],
    ['{"message":"just a message"}', undefined, 'just a message'],
    ['{"unrelated":true}', undefined, '{"unrelated":true}'],
    ['Service Unavailable', undefined, 'Service Unavailable'],
    ['', undefined, undefined],
    ['[1,2]', undefined, '[1,2]'],
  ];
  for (const [body, code, message] of cases) {
    it(`reads ${JSON.stringify(body)}`, () => {
      assert.deepEqual(parseErrorPayload(body), { code, message });
    });
  }
});

describe('errorFromResponse', () => {
  it('keys the exit code on the service code, not the status', () => {
    assert.equal(errorFromResponse(400, {}, '{"error":{"code":"quota_exceeded","message":"x"}}').exitCode, 5);
    assert.equal(errorFromResponse(418, {}, '{"error":{"code":"invalid_api_key","message":"x"}}').exitCode, 3);
    assert.equal(errorFromResponse(500, {}, '{"error":{"code":"voice_not_found","message":"x"}}').exitCode, 4);
  });
  it('falls back on the status when no code is given', () => {
    assert.equal(errorFromResponse(401, {}, 'nope').code, 'invalid_api_key');
    assert.equal(errorFromResponse(429, {}, '').code, 'rate_limit_exceeded');
    assert.equal(errorFromResponse(503, {}, '<html>').exitCode, 6);
    assert.equal(errorFromResponse(503, {}, '').retriable, true);
    assert.equal(errorFromResponse(400, {}, '').retriable, false);
  });
  it('marks an unknown service code as a transport failure (exit 6)', () => {
    assert.equal(errorFromResponse(400, {}, '{"error":{"code":"brand_new_code","message":"x"}}').exitCode, 6);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('prefers retry-after-ms, then seconds, then an HTTP date, capped at 60 s', () => {
    assert.equal(parseRetryAfter({ 'retry-after-ms': '1500', 'retry-after': '9' }, now), 1.5);
    assert.equal(parseRetryAfter({ 'retry-after': '7' }, now), 7);
    assert.equal(parseRetryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, now), 3);
    assert.equal(parseRetryAfter({ 'retry-after': '3600' }, now), 60);
    assert.equal(parseRetryAfter({ 'retry-after': 'soon' }, now), undefined);
    assert.equal(parseRetryAfter({}, now), undefined);
  });
});
