import { decide, policyHeader, rateLimitHeaders, type Limit, type LimitState } from '../src/ratelimit/decide';
import { DEFAULT_RATE_LIMITS, defaultApiLimits, eventsLimits } from '../src/ratelimit/policies';

const perMinute = (count: number): Limit => ({ kind: 'bucket', name: 'minute', count, windowMs: 60_000, burst: count });

/** Sends `n` requests at time `now`, carrying state along; returns the decisions. */
function spend(limits: Limit[], n: number, now: number, state: LimitState = {}) {
  const decisions = [];
  for (let i = 0; i < n; i++) {
    const d = decide(limits, state, now);
    if (d.allowed) state = d.state;
    decisions.push(d);
  }
  return { decisions, state };
}

describe('GCRA token bucket (decide with bucket limits)', () => {
  const t0 = 1_700_000_000_000;

  it('allows exactly the capacity at once, then rejects', () => {
    const { decisions } = spend([perMinute(5)], 6, t0);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
  });

  it('a rejection returns the state unchanged (rejected requests consume nothing)', () => {
    const { state } = spend([perMinute(2)], 2, t0);
    const rejected = decide([perMinute(2)], state, t0);
    expect(rejected.allowed).toBe(false);
    expect(rejected.state).toEqual(state);
    // Many more rejections later, one emission interval (30 s) still frees exactly one slot.
    let s = state;
    for (let i = 0; i < 50; i++) s = decide([perMinute(2)], s, t0 + i).state;
    expect(decide([perMinute(2)], s, t0 + 30_000).allowed).toBe(true);
  });

  it('Retry-After is the whole seconds until one request fits again, at least 1', () => {
    const { state } = spend([perMinute(6)], 6, t0); // interval 10 s
    expect(decide([perMinute(6)], state, t0).retryAfterSeconds).toBe(10);
    expect(decide([perMinute(6)], state, t0 + 9_500).retryAfterSeconds).toBe(1);
    expect(decide([perMinute(6)], state, t0 + 10_000).allowed).toBe(true);
    const fast: Limit = { kind: 'bucket', name: 'second', count: 100, windowMs: 1_000, burst: 1 };
    const s = spend([fast], 1, t0).state;
    expect(decide([fast], s, t0).retryAfterSeconds).toBe(1); // 10 ms rounds up to 1 s, never 0
  });

  it('refills continuously', () => {
    const { state } = spend([perMinute(60)], 60, t0);
    expect(decide([perMinute(60)], state, t0).allowed).toBe(false);
    const later = decide([perMinute(60)], state, t0 + 5_000);
    expect(later.allowed).toBe(true);
    expect(later.remaining).toBe(4);
  });

  it('Reset is the seconds until the tightest bucket is full again', () => {
    const first = decide([perMinute(60)], {}, t0);
    expect(first.resetSeconds).toBe(1);
    const { decisions } = spend([perMinute(60)], 30, t0);
    expect(decisions[29].resetSeconds).toBe(30);
  });

  it('events: 100/s with a burst of 500', () => {
    const limits = eventsLimits(DEFAULT_RATE_LIMITS);
    const { decisions, state } = spend(limits, 501, t0);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(500);
    expect(decisions[500].retryAfterSeconds).toBe(1);
    // 100 more per second.
    expect(spend(limits, 101, t0 + 1_000, state).decisions.filter((d) => d.allowed)).toHaveLength(100);
  });

  it('policy header and RateLimit-* headers', () => {
    expect(policyHeader(defaultApiLimits(DEFAULT_RATE_LIMITS))).toBe('300;w=60, 2000;w=3600');
    expect(policyHeader(eventsLimits(DEFAULT_RATE_LIMITS))).toBe('100;w=1;burst=500');
    const limits = [perMinute(2)];
    const { state } = spend(limits, 2, t0);
    const h = rateLimitHeaders(limits, decide(limits, state, t0));
    expect(h).toEqual({ 'RateLimit-Limit': '2', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '30', 'RateLimit-Policy': '2;w=60', 'Retry-After': '30' });
    expect(rateLimitHeaders(limits, decide(limits, {}, t0))['Retry-After']).toBeUndefined();
  });

  it('refuses an empty limit list', () => {
    expect(() => decide([], {}, t0)).toThrow();
  });
});
