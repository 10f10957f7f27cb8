// What a delivery attempt's outcome means (the API contract "Webhooks"): success on 2xx, the retry schedule with
// jitter, Retry-After on 429/503, 410 disabling the subscription, 5 days of failures disabling it.
// Pure functions: the worker (app/attempt-delivery.ts) applies them to the stored delivery.

/** Delays before the 1st, 2nd, ... retry (about 3 days in all); a delivery failing once more is FAILED. */
export const RETRY_SCHEDULE_MS = [5e3, 5 * 60e3, 30 * 60e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 10 * 3600e3, 14 * 3600e3, 20 * 3600e3, 24 * 3600e3];
/** A receiver's Retry-After is honoured up to the longest step of the schedule. */
const MAX_RETRY_AFTER_MS = 24 * 3600e3;
/** ±20 %: deliveries failing together (a target down) do not all come back at the same instant. */
const JITTER = 0.2;

export const isSuccess = (statusCode: number | null): boolean => statusCode !== null && statusCode >= 200 && statusCode < 300;

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now.getTime()), MAX_RETRY_AFTER_MS);
}

export type Verdict =
  | { status: 'DELIVERED' }
  | { status: 'RETRYING'; retryInMs: number }
  | { status: 'FAILED'; disableSubscription?: 'TARGET_GONE' };

/**
 * The verdict on an attempt: `failures` counts the failed attempts before this one. A 429/503's
 * Retry-After replaces the scheduled delay (without jitter: the receiver named its time).
 */
export function judgeAttempt(a: { statusCode: number | null; retryAfterMs?: number; failures: number; schedule?: readonly number[]; random?: () => number }): Verdict {
  if (isSuccess(a.statusCode)) return { status: 'DELIVERED' };
  if (a.statusCode === 410) return { status: 'FAILED', disableSubscription: 'TARGET_GONE' };
  const step = (a.schedule ?? RETRY_SCHEDULE_MS)[a.failures];
  if (step === undefined) return { status: 'FAILED' };
  if ((a.statusCode === 429 || a.statusCode === 503) && a.retryAfterMs !== undefined) return { status: 'RETRYING', retryInMs: a.retryAfterMs };
  const random = a.random ?? Math.random;
  return { status: 'RETRYING', retryInMs: Math.round(step * (1 - JITTER + 2 * JITTER * random())) };
}
