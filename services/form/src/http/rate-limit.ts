// The per client address and form limit of public submissions (FORM_SUBMISSIONS_PER_MINUTE): an
// exact sliding window in this process's memory (the gateway's per-address budget over every public
// page stays the installation-wide guard; this one stops a flood against one form).

export interface SlidingWindowLimiter {
  /** Counts one request for `key`; 0 when admitted, else the milliseconds until one would be. Refused requests are not counted. */
  take(key: string): number;
}

/** Keys idle longer than the window are forgotten at most this often, so memory follows active clients. */
const SWEEP_EVERY = 1_000;

export function slidingWindowLimiter(limit: number, windowMs: number, nowMs: () => number): SlidingWindowLimiter {
  const hits = new Map<string, number[]>();
  let calls = 0;
  return {
    take(key) {
      const now = nowMs();
      if (++calls % SWEEP_EVERY === 0) {
        for (const [k, times] of hits) if (times[times.length - 1] <= now - windowMs) hits.delete(k);
      }
      const times = (hits.get(key) ?? []).filter((t) => t > now - windowMs);
      if (times.length >= limit) {
        hits.set(key, times);
        return Math.max(1, times[0] + windowMs - now);
      }
      times.push(now);
      hits.set(key, times);
      return 0;
    },
  };
}
