import type { Limit } from './gcra';

/** Per-account rate limits as stored in the account record and set through the admin listener. */
export interface RateLimits {
  perMinute: number;
  perHour: number;
  eventsPerSecond: number;
  eventsBurst: number;
}

/** The specification's limits: 300/min and 2,000/h; /events 100/s with a burst of 500. */
export const DEFAULT_RATE_LIMITS: RateLimits = { perMinute: 300, perHour: 2000, eventsPerSecond: 100, eventsBurst: 500 };

export type BucketName = 'default' | 'events' | 'unauthenticated';

export function resolveLimits(overrides: Partial<RateLimits> | undefined): RateLimits {
  return { ...DEFAULT_RATE_LIMITS, ...overrides };
}

export function defaultApiLimits(l: RateLimits): Limit[] {
  return [
    { name: 'minute', count: l.perMinute, windowMs: 60_000, burst: l.perMinute },
    { name: 'hour', count: l.perHour, windowMs: 3_600_000, burst: l.perHour },
  ];
}

export function eventsLimits(l: RateLimits): Limit[] {
  return [{ name: 'second', count: l.eventsPerSecond, windowMs: 1_000, burst: l.eventsBurst }];
}

/** Requests that fail authentication, per client address: throttles key guessing. */
export function unauthenticatedLimits(perMinute: number): Limit[] {
  return [{ name: 'minute', count: perMinute, windowMs: 60_000, burst: perMinute }];
}

/**
 * Longest time a bucket's state can matter: the KV bucket's TTL must exceed it, so an expired
 * entry is always equivalent to a full bucket. Event bursts are capped so they fit.
 */
export const MAX_STATE_AGE_MS = 3_600_000;
