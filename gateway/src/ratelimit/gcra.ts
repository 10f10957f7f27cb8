/**
 * GCRA (generic cell rate algorithm): a token bucket stored as one number per limit, the
 * "theoretical arrival time" (TAT). Each allowed request moves the TAT forward by one emission
 * interval (window / count); a request is allowed while the TAT stays within `burst` intervals of
 * now. One number per limit is what makes a compare-and-set in a shared KV store cheap.
 *
 * Pure: state in, decision and next state out. A rejected request returns the state unchanged, so
 * rejections consume nothing.
 */

export interface Limit {
  /** Stable name, the member of the stored state (e.g. "minute"). */
  name: string;
  /** Requests allowed per window on average. */
  count: number;
  windowMs: number;
  /** Bucket capacity: requests that may arrive at once. Equals `count` for plain window limits. */
  burst: number;
}

/** Theoretical arrival time (epoch ms) per limit name. */
export type GcraState = Record<string, number>;

export interface Decision {
  allowed: boolean;
  /** State to store when allowed; the input state when rejected. */
  state: GcraState;
  /** The tightest limit (fewest remaining; on a tie the shortest window) for the RateLimit-* headers. */
  limit: Limit;
  remaining: number;
  /** Seconds until that limit's bucket is full again. */
  resetSeconds: number;
  /** Whole seconds (>= 1) to wait before a retry can succeed; only when rejected. */
  retryAfterSeconds?: number;
}

export function emissionIntervalMs(limit: Limit): number {
  return limit.windowMs / limit.count;
}

export function decide(limits: Limit[], state: GcraState, now: number): Decision {
  if (limits.length === 0) throw new Error('at least one limit is required');
  const next: GcraState = { ...state };
  const outcomes = limits.map((limit) => {
    const t = emissionIntervalMs(limit);
    const capacityMs = limit.burst * t;
    const tat = Math.max(state[limit.name] ?? now, now);
    const newTat = tat + t;
    if (newTat - now > capacityMs) {
      return { limit, allowed: false, remaining: 0, resetMs: tat - now, waitMs: newTat - capacityMs - now };
    }
    next[limit.name] = newTat;
    const remaining = Math.floor((capacityMs - (newTat - now)) / t + 1e-9);
    return { limit, allowed: true, remaining, resetMs: newTat - now, waitMs: 0 };
  });

  const rejected = outcomes.filter((o) => !o.allowed);
  const pool = rejected.length ? rejected : outcomes;
  const tightest = pool.reduce((a, b) =>
    b.remaining < a.remaining || (b.remaining === a.remaining && b.limit.windowMs < a.limit.windowMs) ? b : a,
  );
  const base = {
    limit: tightest.limit,
    remaining: tightest.remaining,
    resetSeconds: Math.max(0, Math.ceil(tightest.resetMs / 1000 - 1e-9)),
  };
  if (rejected.length) {
    const waitMs = Math.max(...rejected.map((o) => o.waitMs));
    return { ...base, allowed: false, state, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000 - 1e-9)) };
  }
  return { ...base, allowed: true, state: next };
}

/** `RateLimit-Policy` value, e.g. "300;w=60, 2000;w=3600" or "100;w=1;burst=500". */
export function policyHeader(limits: Limit[]): string {
  return limits
    .map((l) => `${l.count};w=${Math.round(l.windowMs / 1000)}${l.burst !== l.count ? `;burst=${l.burst}` : ''}`)
    .join(', ');
}

/** The RateLimit-* (and Retry-After) response headers of a decision. */
export function rateLimitHeaders(limits: Limit[], d: Decision): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(d.limit.burst),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSeconds),
    'RateLimit-Policy': policyHeader(limits),
  };
  if (!d.allowed) headers['Retry-After'] = String(d.retryAfterSeconds);
  return headers;
}
