import { bucketOutcome, type BucketLimit } from './gcra';
import { windowOutcome, type SlotCounts, type WindowLimit } from './window';

/**
 * One rate-limit decision over several limits, each a token bucket (gcra.ts) or a sliding window
 * (window.ts). Pure: state in, decision and next state out. A request is allowed only when every
 * limit allows it; a rejected request returns the state unchanged, so rejections consume nothing.
 */
export type Limit = BucketLimit | WindowLimit;
export type { BucketLimit, WindowLimit, SlotCounts };

/** Stored state of one budget, per limit name: a bucket's TAT (epoch ms) or a window's slot counters. */
export type LimitState = Record<string, number | SlotCounts>;

/** What one limit says about one request. */
export interface Outcome {
  allowed: boolean;
  /** The limit's state to store when allowed. */
  next?: number | SlotCounts;
  /** Requests left after this one (0 when rejected). */
  remaining: number;
  /** Ms until the limit frees capacity again (when rejected: until a request will be admitted). */
  resetMs: number;
}

export interface Decision {
  allowed: boolean;
  /** State to store when allowed; the input state when rejected. */
  state: LimitState;
  /** The tightest limit (fewest remaining; on a tie the one that frees capacity last) for the RateLimit-* headers. */
  limit: Limit;
  remaining: number;
  /** Whole seconds until the tightest limit frees capacity; when rejected, equals retryAfterSeconds. */
  resetSeconds: number;
  /** Whole seconds (>= 1) after which a retry is admitted (unless other requests spend the budget first); only when rejected. */
  retryAfterSeconds?: number;
}

const wholeSeconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000 - 1e-9));

export function decide(limits: Limit[], state: LimitState, now: number): Decision {
  if (limits.length === 0) throw new Error('at least one limit is required');
  const outcomes = limits.map((limit) => ({
    limit,
    ...(limit.kind === 'window' ? windowOutcome(limit, state[limit.name], now) : bucketOutcome(limit, state[limit.name], now)),
  }));
  const rejected = outcomes.filter((o) => !o.allowed);
  if (rejected.length) {
    // Every rejecting limit must have freed capacity: the longest wait is the truthful one.
    const binding = rejected.reduce((a, b) => (b.resetMs > a.resetMs ? b : a));
    const retryAfterSeconds = Math.max(1, wholeSeconds(binding.resetMs));
    return { allowed: false, state, limit: binding.limit, remaining: 0, resetSeconds: retryAfterSeconds, retryAfterSeconds };
  }
  const next: LimitState = { ...state };
  for (const o of outcomes) next[o.limit.name] = o.next!;
  const tightest = outcomes.reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetMs > a.resetMs) ? b : a));
  return { allowed: true, state: next, limit: tightest.limit, remaining: tightest.remaining, resetSeconds: wholeSeconds(tightest.resetMs) };
}

/** True while a stored state can still refuse a request (a bucket not yet full again; windows: always, the KV TTL drops them). */
export function stateMatters(state: LimitState, now: number): boolean {
  return Object.values(state).some((v) => typeof v !== 'number' || v > now);
}

// A budget's limits are built once per account record (middleware/rate-limit.ts), so their header
// value is computed once per such array, not on every request.
const policies = new WeakMap<Limit[], string>();

/** `RateLimit-Policy` value, e.g. "300;w=60, 2000;w=3600" or "100;w=1;burst=500". */
export function policyHeader(limits: Limit[]): string {
  let policy = policies.get(limits);
  if (policy === undefined) {
    policy = policyOf(limits);
    policies.set(limits, policy);
  }
  return policy;
}

function policyOf(limits: Limit[]): string {
  return limits
    .map((l) => `${l.count};w=${Math.round(l.windowMs / 1000)}${l.kind === 'bucket' && l.burst !== l.count ? `;burst=${l.burst}` : ''}`)
    .join(', ');
}

/** Capacity of a limit: requests admitted at once from an unused budget. */
export const capacity = (l: Limit) => (l.kind === 'bucket' ? l.burst : l.count);

/** The RateLimit-* (and Retry-After) response headers of a decision. */
export function rateLimitHeaders(limits: Limit[], d: Decision): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(capacity(d.limit)),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSeconds),
    'RateLimit-Policy': policyHeader(limits),
  };
  if (!d.allowed) headers['Retry-After'] = String(d.retryAfterSeconds);
  return headers;
}
