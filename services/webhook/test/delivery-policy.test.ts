// The retry schedule with jitter, Retry-After and 410 (domain/delivery-policy.ts).
import { judgeAttempt, parseRetryAfter, RETRY_SCHEDULE_MS } from '../src/domain/delivery-policy';

it('retries on the schedule with ±20 % jitter and fails after its last step', () => {
  expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000, 50400, 72000, 86400]);
  RETRY_SCHEDULE_MS.forEach((step, failures) => {
    expect(judgeAttempt({ statusCode: 500, failures, random: () => 0 })).toEqual({ status: 'RETRYING', retryInMs: step * 0.8 });
    expect(judgeAttempt({ statusCode: null, failures, random: () => 1 })).toEqual({ status: 'RETRYING', retryInMs: step * 1.2 });
  });
  expect(judgeAttempt({ statusCode: 500, failures: RETRY_SCHEDULE_MS.length })).toEqual({ status: 'FAILED' });
});

it('counts 2xx only as delivered: a redirect is a failure', () => {
  expect(judgeAttempt({ statusCode: 204, failures: 3 })).toEqual({ status: 'DELIVERED' });
  expect(judgeAttempt({ statusCode: 301, failures: 0, random: () => 0.5 })).toEqual({ status: 'RETRYING', retryInMs: 5000 });
});

it('410 fails the delivery and disables the subscription at once', () => {
  expect(judgeAttempt({ statusCode: 410, failures: 0 })).toEqual({ status: 'FAILED', disableSubscription: 'TARGET_GONE' });
});

it("honours Retry-After (seconds or date) on 429 and 503 only, capped at 24 h", () => {
  const now = new Date('2026-01-01T00:00:00Z');
  expect(parseRetryAfter('120', now)).toBe(120_000);
  expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
  expect(parseRetryAfter('999999', now)).toBe(24 * 3600_000);
  expect(parseRetryAfter('soon', now)).toBeUndefined();
  expect(judgeAttempt({ statusCode: 429, retryAfterMs: 120_000, failures: 0 })).toEqual({ status: 'RETRYING', retryInMs: 120_000 });
  expect(judgeAttempt({ statusCode: 503, retryAfterMs: 2_000, failures: 4 })).toEqual({ status: 'RETRYING', retryInMs: 2_000 });
  expect(judgeAttempt({ statusCode: 500, retryAfterMs: 2_000, failures: 0, random: () => 0.5 })).toEqual({ status: 'RETRYING', retryInMs: 5_000 });
});
