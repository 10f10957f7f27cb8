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
  it('default policy headers on every authenticated response, counting down', async () => {
    const { apiKey } = await createAccount(a, 'headers');
    const first = await defaultRequest(a, apiKey);
    expect(first.headers.get('ratelimit-policy')).toBe('300;w=60, 2000;w=3600');
    expect(first.headers.get('ratelimit-limit')).toBe('300');
    expect(first.headers.get('ratelimit-remaining')).toBe('299');
    expect(first.headers.get('ratelimit-reset')).toBe('1');
    const second = await defaultRequest(b, apiKey);
    expect(second.headers.get('ratelimit-remaining')).toBe('298'); // the other replica counted the first
    const events = await call(a, 'POST', '/events', { apiKey, body: event() });
    expect(events.headers.get('ratelimit-policy')).toBe('100;w=1;burst=500');
    expect(events.headers.get('ratelimit-limit')).toBe('500');
    expect(events.headers.get('ratelimit-remaining')).toBe('499');
    // 404 and 405 responses of authenticated requests carry them too
    expect((await call(a, 'GET', '/nope', { apiKey })).headers.get('ratelimit-remaining')).toBe('297');
  });

  it('one budget across replicas: spent on both, the next is 429 on either; rejected requests consume nothing', async () => {
    const { accountId, apiKey } = await createAccount(a, 'shared');
    await setLimits(accountId, { perMinute: 30 }); // one request per 2 s
    const spent = await Promise.all(Array.from({ length: 30 }, (_, i) => defaultRequest(i % 2 ? a : b, apiKey)));
    expect(spent.map((r) => r.status)).toEqual(Array(30).fill(403));
    expect(new Set(spent.map((r) => r.headers.get('ratelimit-remaining'))).size).toBe(30); // 29..0, each once

    for (const gw of [a, b]) {
      const res = await defaultRequest(gw, apiKey);
      expectError(res, 429, 'rate_limited');
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.headers.get('ratelimit-remaining')).toBe('0');
      expect(res.headers.get('ratelimit-policy')).toBe('30;w=60, 2000;w=3600');
    }
    // Hammer while limited: if rejections consumed budget, the wait below would not be enough.
    for (let i = 0; i < 20; i++) expect((await defaultRequest(i % 2 ? a : b, apiKey)).status).toBe(429);
    await sleep(2_100);
    expect((await defaultRequest(b, apiKey)).status).toBe(403);
    expect((await defaultRequest(a, apiKey)).status).toBe(429);
  });

  it('/events has its own budget, separate from the default one (both ways)', async () => {
    const { accountId, apiKey } = await createAccount(a, 'events');
    await setLimits(accountId, { eventsPerSecond: 1, eventsBurst: 3, perMinute: 2 });
    for (let i = 0; i < 3; i++) expect((await call(i % 2 ? a : b, 'POST', '/events', { apiKey, body: event() })).status).toBe(202);
    const limited = await call(a, 'POST', '/events', { apiKey, body: event() });
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers.get('ratelimit-policy')).toBe('1;w=1;burst=3');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
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
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(1000); // 1/1200 s per request
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
