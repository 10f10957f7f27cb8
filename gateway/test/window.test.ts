import { decide, rateLimitHeaders, type Decision, type Limit, type LimitState } from '../src/ratelimit/decide';
import { DEFAULT_RATE_LIMITS, defaultApiLimits } from '../src/ratelimit/policies';

const t0 = 1_700_000_040_000; // a whole minute
const limitsOf = (perMinute: number, perHour: number) => defaultApiLimits({ ...DEFAULT_RATE_LIMITS, perMinute, perHour });

/** A limiter on an injected clock: carries the stored state along like the KV entry. */
function budget(limits: Limit[]) {
  let state: LimitState = {};
  return {
    at(now: number): Decision {
      const d = decide(limits, state, now);
      if (d.allowed) state = d.state;
      return d;
    },
    get state() {
      return state;
    },
  };
}

/** Deterministic PRNG (mulberry32) so a failing pattern can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('sliding-window limits (default API budget)', () => {
  it('310 requests within one second: exactly 300 admitted, Remaining counts down by one, then a truthful Retry-After', () => {
    const b = budget(defaultApiLimits(DEFAULT_RATE_LIMITS));
    const decisions = Array.from({ length: 310 }, (_, i) => b.at(t0 + 100 + i * 3));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(300);
    expect(decisions.slice(0, 300).every((d) => d.allowed)).toBe(true);
    expect(decisions.slice(0, 300).map((d) => d.remaining)).toEqual(Array.from({ length: 300 }, (_, i) => 299 - i));
    const last = decisions[309];
    expect(last.allowed).toBe(false);
    expect(last.limit.name).toBe('minute');
    const rejectedAt = t0 + 100 + 309 * 3;
    // The requests of slot [t0, t0 + 1 s) count until t0 + 61 s: one slot early at most, never later.
    expect(last.retryAfterSeconds).toBe(Math.ceil((t0 + 61_000 - rejectedAt) / 1000));
    expect(last.resetSeconds).toBe(last.retryAfterSeconds);
    const h = rateLimitHeaders(defaultApiLimits(DEFAULT_RATE_LIMITS), last);
    expect(h).toMatchObject({ 'RateLimit-Limit': '300', 'RateLimit-Remaining': '0', 'Retry-After': String(last.retryAfterSeconds) });
    // Waiting Retry-After is enough, a second less is not.
    expect(b.at(rejectedAt + (last.retryAfterSeconds! - 1) * 1000).allowed).toBe(false);
    expect(b.at(rejectedAt + last.retryAfterSeconds! * 1000).allowed).toBe(true);
  });

  it('admits again exactly when the oldest slot leaves the window, and only as many as it held', () => {
    const b = budget(limitsOf(10, 1000));
    for (let i = 0; i < 4; i++) expect(b.at(t0 + 200).allowed).toBe(true); // slot 0: 4 requests
    for (let i = 0; i < 6; i++) expect(b.at(t0 + 5_500).allowed).toBe(true); // slot 5: 6 requests
    expect(b.at(t0 + 30_000)).toMatchObject({ allowed: false, retryAfterSeconds: 31 });
    expect(b.at(t0 + 60_999).allowed).toBe(false); // slot 0 still intersects [now - 60 s, now]
    const freed = Array.from({ length: 5 }, () => b.at(t0 + 61_000));
    expect(freed.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
    expect(freed[4].retryAfterSeconds).toBe(5); // slot 5 leaves at t0 + 66 s
    expect(b.at(t0 + 66_000).allowed).toBe(true);
  });

  it('rejected requests consume nothing: the state is returned unchanged', () => {
    const b = budget(limitsOf(3, 1000));
    for (let i = 0; i < 3; i++) b.at(t0);
    const before = JSON.stringify(b.state);
    for (let i = 0; i < 50; i++) expect(b.at(t0 + i * 1000).allowed).toBe(false);
    expect(JSON.stringify(b.state)).toBe(before);
    expect(b.at(t0 + 61_000).allowed).toBe(true);
  });

  it('both windows must admit; the hour binds after the minute freed capacity', () => {
    const b = budget(limitsOf(10, 15));
    expect(Array.from({ length: 11 }, () => b.at(t0).allowed).filter(Boolean)).toHaveLength(10);
    const later = Array.from({ length: 10 }, () => b.at(t0 + 61_000));
    expect(later.filter((d) => d.allowed)).toHaveLength(5);
    const rejected = later[9];
    expect(rejected.limit.name).toBe('hour');
    // The hour's first slot [t0, t0 + 60 s) leaves at t0 + 3,660 s.
    expect(rejected.retryAfterSeconds).toBe(3_660 - 61);
    expect(b.at(t0 + 3_659_999).allowed).toBe(false);
    expect(b.at(t0 + 3_660_000).allowed).toBe(true);
  });

  it('reports the tightest window: fewest remaining; on a tie the one that frees capacity last', () => {
    const d = decide(defaultApiLimits(DEFAULT_RATE_LIMITS), {}, t0);
    expect(d).toMatchObject({ allowed: true, remaining: 299, resetSeconds: 61 });
    expect(d.limit.name).toBe('minute');
    const tie = decide(limitsOf(5, 5), {}, t0);
    expect(tie.limit.name).toBe('hour');
    expect(tie.resetSeconds).toBe(3_660);
  });

  it('Reset is when the oldest counted requests leave the window', () => {
    const b = budget(limitsOf(100, 1000));
    b.at(t0 + 500);
    expect(b.at(t0 + 20_000).resetSeconds).toBe(41); // slot [t0, t0 + 1 s) leaves at t0 + 61 s
    expect(b.at(t0 + 61_000).resetSeconds).toBe(0 + 20); // now the oldest is the slot of t0 + 20 s
  });

  it('property: under random arrivals no span of 60 s / 3,600 s ever holds more than the limit, and refusals come at most one slot early', () => {
    const refusedBy = { minute: 0, hour: 0 };
    for (let seed = 1; seed <= 20; seed++) {
      const random = prng(seed);
      const perMinute = 5 + Math.floor(random() * 40);
      const perHour = perMinute * (2 + Math.floor(random() * 20));
      const limits = limitsOf(perMinute, perHour);
      const b = budget(limits);
      const admitted: number[] = [];
      let now = t0 + Math.floor(random() * 100_000);
      const end = now + 3 * 3_600_000;
      while (now < end) {
        // Bursts, steady trickles and long pauses.
        const r = random();
        now += r < 0.6 ? Math.floor(random() * 50) : r < 0.95 ? Math.floor(random() * 5_000) : Math.floor(random() * 600_000);
        const d = b.at(now);
        const inSpan = (w: number, from: number) => admitted.filter((t) => t >= from - w && t <= from).length;
        if (d.allowed) {
          admitted.push(now);
          expect(inSpan(60_000, now)).toBeLessThanOrEqual(perMinute);
          expect(inSpan(3_600_000, now)).toBeLessThanOrEqual(perHour);
        } else {
          refusedBy[d.limit.name as 'minute' | 'hour']++;
          // Early refusal only: the span widened by one slot is full.
          expect(inSpan(61_000, now) >= perMinute || inSpan(3_660_000, now) >= perHour).toBe(true);
        }
      }
      expect(admitted.length).toBeGreaterThan(perMinute);
    }
    // The patterns exercised both windows.
    expect(refusedBy.minute).toBeGreaterThan(100);
    expect(refusedBy.hour).toBeGreaterThan(100);
  });

  it('the stored state stays small (at most 61 counters per window)', () => {
    const b = budget(limitsOf(100_000, 1_000_000));
    for (let t = t0; t < t0 + 2 * 3_600_000; t += 250) b.at(t);
    const state = b.state as Record<string, { c: number[] }>;
    expect(state.minute.c.length).toBeLessThanOrEqual(61);
    expect(state.hour.c.length).toBeLessThanOrEqual(61);
    expect(JSON.stringify(state).length).toBeLessThan(800);
  });

  it('state of another shape (an older version) counts as unused; a clock behind the stored slots still counts', () => {
    expect(decide(limitsOf(2, 10), { minute: t0 + 60_000, hour: t0 }, t0)).toMatchObject({ allowed: true, remaining: 1 });
    const b = budget(limitsOf(2, 10));
    b.at(t0 + 10_000);
    b.at(t0 + 5_000); // another replica's clock, 5 s behind
    expect(b.at(t0 + 10_000).allowed).toBe(false);
    expect(b.at(t0 + 70_999).allowed).toBe(false);
    expect(b.at(t0 + 71_000).allowed).toBe(true);
  });
});
