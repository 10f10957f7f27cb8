import { adminRequest, call, createAccount, expectError, event, sleep, startStack, type Stack } from './support/harness';

// Budgets live in JetStream KV: two gateway processes must spend one budget per account.
let stack: Stack;
let a: Stack['gateways'][number];
let b: Stack['gateways'][number];

beforeAll(async () => {
  stack = await startStack(2);
  [a, b] = stack.gateways;
});
afterAll(() => stack.stop());

/** An authenticated request on the default budget that needs no backing service. */
const defaultRequest = (gw: typeof a, apiKey: string) => call(gw, 'GET', '/account/api-key', { apiKey });
const setLimits = (accountId: string, limits: Record<string, number>) => adminRequest(a, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, limits);

describe('rate limits', () => {
  it('default policy headers on every authenticated response, counting down exactly one per request across replicas', async () => {
    const { apiKey } = await createAccount(a, 'headers');
    const first = await defaultRequest(a, apiKey);
    expect(first.headers.get('ratelimit-policy')).toBe('300;w=60, 2000;w=3600');
    expect(first.headers.get('ratelimit-limit')).toBe('300');
    expect(first.headers.get('ratelimit-remaining')).toBe('299');
    // Until the first request's one-second slot leaves the minute window: 60 s plus the rest of that slot.
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(55);
    expect(Number(first.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(61);
    // Windows do not refill gradually: nothing leaves them within a minute, so the count is exact
    // however slow the machine (the token bucket refilled one request per 200 ms here).
    const second = await defaultRequest(b, apiKey);
    expect(second.headers.get('ratelimit-remaining')).toBe('298'); // the other replica counted the first
    const events = await call(a, 'POST', '/events', { apiKey, body: event() });
    expect(events.headers.get('ratelimit-policy')).toBe('100;w=1;burst=500');
    expect(events.headers.get('ratelimit-limit')).toBe('500');
    expect(events.headers.get('ratelimit-remaining')).toBe('499');
    // 404 and 405 responses of authenticated requests carry them too
    expect((await call(a, 'GET', '/nope', { apiKey })).headers.get('ratelimit-remaining')).toBe('297');
  });

  it('a flood of 310 on both replicas: exactly 300 accepted, the rest 429 with a Retry-After that is enough; rejections consume nothing', async () => {
    const { apiKey } = await createAccount(a, 'flood');
    const flood = await Promise.all(Array.from({ length: 310 }, (_, i) => defaultRequest(i % 2 ? a : b, apiKey)));
    const accepted = flood.filter((r) => r.status === 403);
    expect(accepted).toHaveLength(300);
    // Every remaining value from 299 down to 0 exactly once: one budget, counted once per request.
    expect(accepted.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((x, y) => x - y)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    const refused = flood.filter((r) => r.status !== 403);
    expect(refused).toHaveLength(10);
    for (const res of refused) {
      expectError(res, 429, 'rate_limited');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(61);
      expect(res.headers.get('ratelimit-reset')).toBe(String(retryAfter));
      expect(res.headers.get('ratelimit-remaining')).toBe('0');
    }
    // Hammer while limited: had these 290 (and the 10 above) been counted, the window would still
    // be full after the wait below.
    let last = refused[0];
    for (let i = 0; i < 290; i += 29) {
      const batch = await Promise.all(Array.from({ length: 29 }, (_, j) => defaultRequest(j % 2 ? a : b, apiKey)));
      expect(batch.map((r) => r.status)).toEqual(Array(29).fill(429));
      last = batch[28];
    }
    // A client that waits Retry-After seconds is admitted.
    await sleep(Number(last.headers.get('retry-after')) * 1000);
    expect((await defaultRequest(a, apiKey)).status).toBe(403);
  }, 120_000);

  it('limits set per account: spent on both replicas, the next is 429 on either', async () => {
    const { accountId, apiKey } = await createAccount(a, 'shared');
    await setLimits(accountId, { perMinute: 30 });
    const spent = await Promise.all(Array.from({ length: 30 }, (_, i) => defaultRequest(i % 2 ? a : b, apiKey)));
    expect(spent.map((r) => r.status)).toEqual(Array(30).fill(403));
    expect(new Set(spent.map((r) => r.headers.get('ratelimit-remaining'))).size).toBe(30); // 29..0, each once
    for (const gw of [a, b]) {
      const res = await defaultRequest(gw, apiKey);
      expectError(res, 429, 'rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(61);
      expect(res.headers.get('ratelimit-remaining')).toBe('0');
      expect(res.headers.get('ratelimit-limit')).toBe('30');
      expect(res.headers.get('ratelimit-policy')).toBe('30;w=60, 2000;w=3600');
    }
  });

  it('/events has its own budget, separate from the default one (both ways)', async () => {
    const { accountId, apiKey } = await createAccount(a, 'events');
    await setLimits(accountId, { eventsPerSecond: 1, eventsBurst: 3, perMinute: 2 });
    // The bucket refills one event per second while we send, so on a slow machine more than the
    // burst may pass: bound the accepted count by burst + refill over the time taken.
    const started = Date.now();
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    while (!limited && statuses.length < 20) {
      const res = await call(statuses.length % 2 ? a : b, 'POST', '/events', { apiKey, body: event() });
      statuses.push(res.status);
      if (res.status !== 202) limited = res;
    }
    const acceptedEvents = statuses.length - 1;
    expect(acceptedEvents).toBeGreaterThanOrEqual(3);
    expect(acceptedEvents).toBeLessThanOrEqual(3 + Math.ceil((Date.now() - started) / 1000));
    expectError(limited!, 429, 'rate_limited');
    expect(limited!.headers.get('ratelimit-policy')).toBe('1;w=1;burst=3');
    expect(limited!.headers.get('retry-after')).toBe('1');
    // The default budget is untouched by the events spent ...
    const d1 = await defaultRequest(b, apiKey);
    expect(d1.status).toBe(403);
    expect(d1.headers.get('ratelimit-remaining')).toBe('1');
    expect((await defaultRequest(a, apiKey)).status).toBe(403);
    expectError(await defaultRequest(a, apiKey), 429, 'rate_limited');
    // ... and an exhausted default budget does not block /events.
    await sleep(1_100);
    expect((await call(b, 'POST', '/events', { apiKey, body: event() })).status).toBe(202);
  });

  it('the hour limit applies too', async () => {
    const { accountId, apiKey } = await createAccount(a, 'hourly');
    await setLimits(accountId, { perHour: 3 });
    for (let i = 0; i < 3; i++) expect((await defaultRequest(a, apiKey)).status).toBe(403);
    const res = await defaultRequest(b, apiKey);
    expectError(res, 429, 'rate_limited');
    // Until the hour's first one-minute slot leaves the window.
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(3_500);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(3_660);
    expect(res.headers.get('ratelimit-limit')).toBe('3');
  });

  it('limits are per account', async () => {
    const one = await createAccount(a, 'one');
    const two = await createAccount(a, 'two');
    await setLimits(one.accountId, { perMinute: 1 });
    expect((await defaultRequest(a, one.apiKey)).status).toBe(403);
    expect((await defaultRequest(a, one.apiKey)).status).toBe(429);
    expect((await defaultRequest(a, two.apiKey)).status).toBe(403);
  });

  it('admin: get and set limits, validated', async () => {
    const { accountId } = await createAccount(a, 'admin');
    expect(await adminRequest(b, 'GET', `/admin/accounts/${accountId}/rate-limits`)).toMatchObject({
      perMinute: 300,
      perHour: 2000,
      eventsPerSecond: 100,
      eventsBurst: 500,
    });
    expect(await setLimits(accountId, { perMinute: 10 })).toMatchObject({ perMinute: 10, perHour: 2000 });
    expect(await adminRequest(b, 'GET', `/admin/accounts/${accountId}/rate-limits`)).toMatchObject({ perMinute: 10, perHour: 2000 });
    await expect(setLimits(accountId, { perMinute: 0 })).rejects.toThrow(/400.*validation_failed/);
    await expect(setLimits(accountId, { perSecond: 5 })).rejects.toThrow(/400.*unknown_property/);
    await expect(setLimits(accountId, { eventsPerSecond: 1, eventsBurst: 5000 })).rejects.toThrow(/400/);
  });

  it('rejections are counted in rate_limit_rejections_total{bucket}', async () => {
    const text = await (await fetch(a.metricsUrl)).text();
    expect(text).toMatch(/rate_limit_rejections_total\{bucket="default"[^}]*\} [1-9]/);
    expect(text).toMatch(/rate_limit_rejections_total\{bucket="events"[^}]*\} [1-9]/);
  });
});
