import type { Outcome } from './decide';

/**
 * GCRA (generic cell rate algorithm): a token bucket stored as one number, the "theoretical
 * arrival time" (TAT). Each allowed request moves the TAT forward by one emission interval
 * (window / count); a request is allowed while the TAT stays within `burst` intervals of now.
 * Used where a burst above the average rate is the contract (/events: 100/s, burst 500).
 */
export interface BucketLimit {
  kind: 'bucket';
  /** Stable name, the member of the stored state (e.g. "second"). */
  name: string;
  /** Requests allowed per window on average. */
  count: number;
  windowMs: number;
  /** Bucket capacity: requests that may arrive at once. */
  burst: number;
}

export function emissionIntervalMs(limit: BucketLimit): number {
  return limit.windowMs / limit.count;
}

export function bucketOutcome(limit: BucketLimit, stored: unknown, now: number): Outcome {
  const t = emissionIntervalMs(limit);
  const capacityMs = limit.burst * t;
  const tat = Math.max(typeof stored === 'number' ? stored : now, now);
  const newTat = tat + t;
  if (newTat - now > capacityMs) return { allowed: false, remaining: 0, resetMs: newTat - capacityMs - now };
  const remaining = Math.floor((capacityMs - (newTat - now)) / t + 1e-9);
  // Reset: until the bucket is full again.
  return { allowed: true, next: newTat, remaining, resetMs: newTat - now };
}
