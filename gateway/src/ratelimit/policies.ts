import type { Limit } from './decide';

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

/**
 * The default API budget: exact sliding windows (window.ts). Slots of 1 s for the minute and 60 s
 * for the hour: at most 61 counters each in the stored state, and a refusal at a window's edge
 * comes at most one slot (1.7 %) early.
 */
export const MINUTE_SLOT_MS = 1_000;
export const HOUR_SLOT_MS = 60_000;

export function defaultApiLimits(l: RateLimits): Limit[] {
  return [
    { kind: 'window', name: 'minute', count: l.perMinute, windowMs: 60_000, slotMs: MINUTE_SLOT_MS },
    { kind: 'window', name: 'hour', count: l.perHour, windowMs: 3_600_000, slotMs: HOUR_SLOT_MS },
  ];
}

/** /events: a token bucket, as the contract grants a burst above the rate. */
export function eventsLimits(l: RateLimits): Limit[] {
  return [{ kind: 'bucket', name: 'second', count: l.eventsPerSecond, windowMs: 1_000, burst: l.eventsBurst }];
}

/** Requests that fail authentication, per client address: keeps failed attempts cheap and visible. */
export function unauthenticatedLimits(perMinute: number): Limit[] {
  return [{ kind: 'bucket', name: 'minute', count: perMinute, windowMs: 60_000, burst: perMinute }];
}

/**
 * Longest time a budget's state can matter: the hour window plus its oldest slot (a request stays
 * counted until its whole slot has left the window). The KV bucket's TTL must exceed it, so an
 * expired entry always equals an unused budget. Event bursts are capped so they fit.
 */
export const MAX_STATE_AGE_MS = 3_600_000 + HOUR_SLOT_MS;
