import { RateLimiter, addressBudgetKey, accountBudgetKey } from '../src/ratelimit/limiter';
import type { Limit } from '../src/ratelimit/decide';
import { DEFAULT_RATE_LIMITS, defaultApiLimits } from '../src/ratelimit/policies';
import { KvConflict, type JsonKv } from '../src/kv/json-kv';
import { memoryKv } from './support/memory-kv';

const perMinute = (count: number): Limit[] => [{ kind: 'window', name: 'minute', count, windowMs: 60_000, slotMs: 1_000 }];

describe('RateLimiter (shared KV state, compare-and-set)', () => {
  it('two replicas on one store spend one budget exactly, even fully concurrent', async () => {
    const kv = memoryKv();
    const now = () => 1_000_000;
    const a = new RateLimiter(kv, now);
    const b = new RateLimiter(kv, now);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).consume('acc', perMinute(25))));
    expect(results.filter((d) => d.allowed)).toHaveLength(25);
    // Rejected requests wrote nothing: the next one is still rejected with the same wait.
    const next = await a.consume('acc', perMinute(25));
    expect(next.allowed).toBe(false);
    expect(next.retryAfterSeconds).toBe(61); // the slot [1,000 s, 1,001 s) leaves the window at 1,061 s
  });

  it('the default budget on two replicas with a moving clock: exactly 300 of a 310-request flood, in any span of 60 s', async () => {
    const kv = memoryKv();
    let clock = 7_000_000;
    const now = () => clock;
    const replicas = [new RateLimiter(kv, now), new RateLimiter(kv, now)];
    const limits = defaultApiLimits(DEFAULT_RATE_LIMITS);
    const flood = Array.from({ length: 310 }, (_, i) => {
      clock += 3; // spread over about a second
      return replicas[i % 2].consume('acc', limits);
    });
    const decisions = await Promise.all(flood);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(300);
    expect(decisions.filter((d) => d.allowed).map((d) => d.remaining).sort((a, b) => b - a)).toEqual(Array.from({ length: 300 }, (_, i) => 299 - i));
    clock += 58_000;
    expect((await replicas[0].consume('acc', limits)).allowed).toBe(false);
    clock = 7_000_000 + 62_000; // every slot of the flood has left the minute
    expect((await replicas[1].consume('acc', limits)).allowed).toBe(true);
  });

  it('decides concurrent requests of one replica in batches: few KV round trips, exact budget', async () => {
    const kv = memoryKv();
    let reads = 0;
    let writes = 0;
    const counted: JsonKv = {
      ...kv,
      get: async (key) => (reads++, kv.get(key)),
      create: async (key, value) => (writes++, kv.create(key, value)),
      update: async (key, value, revision) => (writes++, kv.update(key, value, revision)),
    };
    const limiter = new RateLimiter(counted, () => 5_000_000);
    const results = await Promise.all(Array.from({ length: 200 }, () => limiter.consume('acc', perMinute(150))));
    expect(results.filter((d) => d.allowed)).toHaveLength(150);
    // Remaining counts down without gaps or repeats across the batches.
    expect(results.filter((d) => d.allowed).map((d) => d.remaining).sort((a, b) => b - a)).toEqual(Array.from({ length: 150 }, (_, i) => 149 - i));
    expect(writes).toBeLessThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(1);
  });

  it('a rejection does not write', async () => {
    const kv = memoryKv();
    const limiter = new RateLimiter(kv, () => 0);
    await limiter.consume('k', perMinute(1));
    const revision = kv.dump().get('k')!.revision;
    for (let i = 0; i < 5; i++) expect((await limiter.consume('k', perMinute(1))).allowed).toBe(false);
    expect(kv.dump().get('k')!.revision).toBe(revision);
  });

  it('peek decides without recording', async () => {
    const kv = memoryKv();
    const limiter = new RateLimiter(kv, () => 0);
    for (let i = 0; i < 3; i++) expect((await limiter.peek('k', perMinute(1))).allowed).toBe(true);
    expect(kv.dump().size).toBe(0);
    await limiter.consume('k', perMinute(1));
    expect((await limiter.peek('k', perMinute(1))).allowed).toBe(false);
  });

  it('retries on conflicts and gives up after too many', async () => {
    const kv = memoryKv();
    let conflicts = 3;
    const flaky: JsonKv = {
      ...kv,
      async create(key, value) {
        if (conflicts-- > 0) throw new KvConflict(key);
        return kv.create(key, value);
      },
    };
    expect((await new RateLimiter(flaky, () => 0).consume('k', perMinute(5))).allowed).toBe(true);
    const always: JsonKv = { ...kv, create: async (key) => { throw new KvConflict(key); }, get: async () => null };
    await expect(new RateLimiter(always, () => 0, 3).consume('x', perMinute(5))).rejects.toThrow(/contended/);
  });

  it('store failures propagate (the request fails instead of passing unlimited)', async () => {
    const down = async () => {
      throw new Error('nats down');
    };
    const broken: JsonKv = { ...memoryKv(), get: down, create: down, update: down };
    await expect(new RateLimiter(broken).consume('k', perMinute(5))).rejects.toThrow('nats down');
  });

  it('a budget it has not written is guessed, not read: one write for a new one, a read only after a wrong guess', async () => {
    const kv = memoryKv();
    const ops: string[] = [];
    const counted: JsonKv = {
      ...kv,
      get: async (key) => (ops.push('get'), kv.get(key)),
      create: async (key, value) => (ops.push('create'), kv.create(key, value)),
      update: async (key, value, revision) => (ops.push('update'), kv.update(key, value, revision)),
    };
    const limits = perMinute(3);
    // A new budget (a reader's first page): one write, no read.
    expect((await new RateLimiter(counted, () => 0).consume('new', limits)).allowed).toBe(true);
    expect(ops).toEqual(['create']);
    // A budget another replica spent: the guess (none) is refused, the budget read and spent exactly.
    ops.length = 0;
    const other = new RateLimiter(kv, () => 0);
    for (let i = 0; i < 2; i++) await other.consume('shared', limits);
    const late = new RateLimiter(counted, () => 0);
    const decisions = [await late.consume('shared', limits), await late.consume('shared', limits)];
    expect(decisions.map((d) => d.allowed)).toEqual([true, false]);
    expect(ops).toEqual(['create', 'get', 'update']);
  });

  it('budget keys are valid KV keys', () => {
    expect(addressBudgetKey('::ffff:127.0.0.1')).toBe('address.__ffff_127_0_0_1');
    expect(addressBudgetKey('2001:db8::1')).toBe('address.2001_db8__1');
    expect(addressBudgetKey('')).toBe('address.unknown');
    expect(accountBudgetKey('events', 'abc')).toBe('account.abc.events');
    // Not `.default`, where gateways before the sliding windows kept GCRA state (rolling deploys).
    expect(accountBudgetKey('default', 'abc')).toBe('account.abc.api');
    for (const k of [addressBudgetKey('a b*>c'), addressBudgetKey('1.2.3.4'), addressBudgetKey('.')]) expect(k).toMatch(/^address\.[A-Za-z0-9_-]+$/);
  });
});
