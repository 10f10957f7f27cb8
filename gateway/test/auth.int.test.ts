import { adminRequest, call, createAccount, expectError, event, startGateway, startStack, type Stack } from './support/harness';

// Two gateway replicas on one NATS: every key change made through one must hold on the other at once.
let stack: Stack;
let a: Stack['gateways'][number];
let b: Stack['gateways'][number];
const seenKeys: string[] = [];

beforeAll(async () => {
  stack = await startStack(2);
  [a, b] = stack.gateways;
});
afterAll(async () => {
  // No key, in any form, reached a log line of either replica.
  for (const gw of stack.gateways) for (const key of seenKeys) expect(gw.output()).not.toContain(key.slice(3));
  await stack.stop();
});

async function account(name = 'Acme') {
  const created = await createAccount(a, name);
  seenKeys.push(created.apiKey);
  return created;
}
/** An authenticated request that reaches a route without needing any service. */
const probe = (gw: typeof a, apiKey?: string) => call(gw, 'POST', '/events', { apiKey, body: event() });

describe('X-API-Key authentication', () => {
  it('a valid key is accepted on both replicas', async () => {
    const { apiKey } = await account();
    expect((await probe(a, apiKey)).status).toBe(202);
    expect((await probe(b, apiKey)).status).toBe(202);
  });

  it('missing key -> 401 api_key_missing with WWW-Authenticate and rate-limit headers', async () => {
    const res = await probe(a);
    expectError(res, 401, 'api_key_missing');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="X-API-Key"');
    expect(res.headers.get('ratelimit-policy')).toBeTruthy();
  });

  it('Authorization: Bearer instead of X-API-Key -> 401 api_key_missing telling to use X-API-Key', async () => {
    const { apiKey } = await account();
    const res = await call(a, 'POST', '/events', { body: event(), headers: { authorization: `Bearer ${apiKey}` } });
    expectError(res, 401, 'api_key_missing');
    expect(res.json.message).toMatch(/X-API-Key/);
    // With both, the X-API-Key decides.
    expect((await call(a, 'POST', '/events', { apiKey, body: event(), headers: { authorization: 'Bearer nonsense' } })).status).toBe(202);
  });

  it('blank, unknown, malformed and masked keys -> 401 api_key_invalid, one text for all', async () => {
    const { apiKey } = await account();
    const bad = ['', '   ', 'mk_' + 'A'.repeat(40), 'nonsense', `${apiKey.slice(0, 5)}*****`, `${apiKey}x`, apiKey.slice(0, -1), `${apiKey}, ${apiKey}`];
    const messages = new Set<string>();
    for (const key of bad) {
      const res = await probe(a, key);
      expectError(res, 401, 'api_key_invalid');
      messages.add(res.json.message);
    }
    expect(messages.size).toBe(1);
  });

  it.each(['apiKey', 'api_key', 'key', 'x-api-key', 'APIKEY', 'Api_Key', 'KEY', 'X-Api-Key'])(
    'key in the URL (?%s=) -> 400 api_key_in_url before anything else, and the URL is never logged',
    async (name) => {
      const { apiKey } = await account();
      const marker = `leak${Math.random().toString(36).slice(2)}`;
      for (const [method, path] of [['POST', '/events'], ['GET', '/healthz'], ['GET', '/no/such/route'], ['GET', '/subscribers']]) {
        // even with a valid key in the header, even on public and unknown paths
        const res = await call(a, method, `${path}?${name}=${marker}`, { apiKey, body: method === 'POST' ? event() : undefined });
        expectError(res, 400, 'api_key_in_url');
        expect(res.headers.get('ratelimit-limit')).toBeNull(); // refused before authentication
      }
      expect(a.output()).not.toContain(marker);
    },
  );

  it('key management is app-only: 403 with a key, 401 without', async () => {
    const { apiKey } = await account();
    for (const [method, path] of [['GET', '/account/api-key'], ['POST', '/account/api-key'], ['DELETE', '/account/api-key'], ['POST', '/account/api-key/rotate']]) {
      expectError(await call(b, method, path, { apiKey }), 403, 'operation_not_allowed_for_api_key');
      expectError(await call(b, method, path), 401, 'api_key_missing');
      expectError(await call(b, method, path, { apiKey: 'mk_wrong' }), 401, 'api_key_invalid');
    }
  });
});

describe('key lifecycle across replicas (spec state table)', () => {
  it('create key when one exists returns it unchanged; show-key returns the full value', async () => {
    const { accountId, apiKey } = await account();
    expect(await adminRequest(b, 'POST', `/admin/accounts/${accountId}/api-key`)).toEqual({ accountId, apiKey });
    expect(await adminRequest(a, 'GET', `/admin/accounts/${accountId}/api-key`)).toEqual({ accountId, apiKey });
    expect((await probe(a, apiKey)).status).toBe(202);
  });

  it('rotate on one replica: the old value is refused by the other at once; the new one works on both', async () => {
    for (let round = 0; round < 5; round++) {
      const { accountId, apiKey: old } = await account();
      expect((await probe(b, old)).status).toBe(202);
      const { apiKey: fresh } = await adminRequest<{ apiKey: string }>(a, 'POST', `/admin/accounts/${accountId}/api-key/rotate`);
      seenKeys.push(fresh);
      expect(fresh).not.toBe(old);
      // Immediately after rotate returned, no delay, on the *other* replica:
      expectError(await probe(b, old), 401, 'api_key_invalid');
      expectError(await probe(a, old), 401, 'api_key_invalid');
      expect((await probe(b, fresh)).status).toBe(202);
      expect((await probe(a, fresh)).status).toBe(202);
    }
  });

  it('delete on one replica: refused by the other at once; the account is kept; a new key can be created', async () => {
    const { accountId, apiKey } = await account('Keeps data');
    expect((await probe(a, apiKey)).status).toBe(202);
    expect(await adminRequest(b, 'DELETE', `/admin/accounts/${accountId}/api-key`)).toEqual({ accountId, deleted: true });
    expectError(await probe(a, apiKey), 401, 'api_key_invalid');
    expectError(await probe(b, apiKey), 401, 'api_key_invalid');
    expect(await adminRequest(a, 'GET', `/admin/accounts/${accountId}`)).toMatchObject({ accountId, name: 'Keeps data', hasApiKey: false });
    // Deleting again is harmless; show and rotate have nothing to work on.
    expect(await adminRequest(a, 'DELETE', `/admin/accounts/${accountId}/api-key`)).toEqual({ accountId, deleted: true });
    await expect(adminRequest(a, 'GET', `/admin/accounts/${accountId}/api-key`)).rejects.toThrow(/404.*api_key_not_found/);
    await expect(adminRequest(a, 'POST', `/admin/accounts/${accountId}/api-key/rotate`)).rejects.toThrow(/404.*api_key_not_found/);
    // "not restorable": a new key is a new value
    const res = await fetch(`${a.adminUrl}/admin/accounts/${accountId}/api-key`, { method: 'POST', headers: { authorization: `Bearer ${a.adminToken}` } });
    expect(res.status).toBe(201);
    const { apiKey: next } = (await res.json()) as { apiKey: string };
    seenKeys.push(next);
    expect(next).not.toBe(apiKey);
    expect((await probe(b, next)).status).toBe(202);
    expectError(await probe(b, apiKey), 401, 'api_key_invalid');
  });

  it('requests in flight while rotating never accept the old key after rotate returned', async () => {
    const { accountId, apiKey: old } = await account();
    let rotated = false;
    const failures: string[] = [];
    let checkedAfterRotate = 0;
    const hammer = async (gw: typeof a) => {
      for (let i = 0; i < 60; i++) {
        const startedAfterRotate = rotated;
        const res = await probe(gw, old);
        if (startedAfterRotate) checkedAfterRotate++;
        if (startedAfterRotate && res.status !== 401) failures.push(`${res.status}`);
      }
    };
    const load = Promise.all([hammer(a), hammer(b), hammer(a), hammer(b)]);
    await new Promise((r) => setTimeout(r, 30));
    const { apiKey } = await adminRequest<{ apiKey: string }>(b, 'POST', `/admin/accounts/${accountId}/api-key/rotate`);
    seenKeys.push(apiKey);
    rotated = true;
    await load;
    expect(failures).toEqual([]);
    expect(checkedAfterRotate).toBeGreaterThan(20);
  });
});

describe('admin listener', () => {
  it('requires the admin token (Bearer, exact)', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${a.adminToken}x`, a.adminToken, `Basic ${a.adminToken}`]) {
      const res = await fetch(`${a.adminUrl}/admin/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ name: 'x' }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { errorId: string }).errorId).toBe('admin_token_invalid');
    }
  });

  it('validates input and reports unknown accounts', async () => {
    await expect(adminRequest(a, 'POST', '/admin/accounts', {})).rejects.toThrow(/400.*validation_failed/);
    await expect(adminRequest(a, 'POST', '/admin/accounts', { name: '  ' })).rejects.toThrow(/400/);
    await expect(adminRequest(a, 'GET', '/admin/accounts/not-a-uuid')).rejects.toThrow(/400.*invalid_uuid/);
    await expect(adminRequest(a, 'GET', '/admin/accounts/00000000-0000-4000-8000-000000000000/api-key')).rejects.toThrow(/404.*account_not_found/);
    await expect(adminRequest(a, 'GET', '/admin/nope')).rejects.toThrow(/404.*route_not_found/);
  });

  it('the public port does not serve the admin API', async () => {
    const res = await call(a, 'POST', '/admin/accounts', { body: { name: 'x' }, headers: { authorization: `Bearer ${a.adminToken}` } });
    expectError(res, 401, 'api_key_missing');
  });
});

describe('unauthenticated requests are limited per client address', () => {
  it('61+ failures from one address: its bad keys get 429, yet a valid key from it is accepted; other addresses are unaffected', async () => {
    const gw = await startGateway({
      NATS_URL: stack.nats.url,
      ADMIN_TOKEN: a.adminToken,
      API_KEY_MASTER_KEY: a.masterKey,
      GATEWAY_TRUST_PROXY: '1', // the address comes from X-Forwarded-For: one proxy, many customers
      SUBSCRIBER_GRPC_ADDR: '127.0.0.1:1',
    });
    try {
      const { apiKey } = await account();
      const from = (ip: string, key?: string) => call(gw, 'POST', '/events', { apiKey: key, body: event(), headers: { 'x-forwarded-for': ip } });
      const wrongKey = (i: number) => `mk_${String(i).padStart(40, 'x')}`; // well-formed, so it is looked up
      // Failures until the address's budget (60 per minute, refilling one per second) is spent.
      const started = Date.now();
      let limited: Awaited<ReturnType<typeof from>> | undefined;
      let failures = 0;
      while (!limited && failures < 200) {
        const res = await from('10.9.9.1', failures % 7 === 3 ? undefined : failures % 7 === 5 ? 'mk_bad' : wrongKey(failures));
        if (res.status === 429) limited = res;
        else {
          expect(res.status).toBe(401);
          failures++;
        }
      }
      expect(failures).toBeGreaterThanOrEqual(60);
      expect(failures).toBeLessThanOrEqual(61 + Math.ceil((Date.now() - started) / 1000));
      expectError(limited!, 429, 'rate_limited');
      expect(limited!.headers.get('ratelimit-policy')).toBe('60;w=60');
      expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const exhaustedAt = Date.now();

      // A valid key from the same address is authenticated and spends its account's budget only.
      const valid = await from('10.9.9.1', apiKey);
      expect(valid.status).toBe(202);
      expect(valid.headers.get('ratelimit-policy')).toBe('100;w=1;burst=500');

      // Bad keys from that address are still refused with 429 (one per second may refill: bounded).
      const again = await Promise.all([wrongKey(1000), 'mk_bad', undefined, wrongKey(1001), wrongKey(1002), wrongKey(1003)].map((k) => from('10.9.9.1', k)));
      for (const res of again) expect([401, 429]).toContain(res.status);
      const refilled = again.filter((r) => r.status === 401).length;
      expect(refilled).toBeLessThanOrEqual(1 + Math.ceil((Date.now() - exhaustedAt) / 1000));
      expect(again.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(1);
      expect((await from('10.9.9.1', apiKey)).status).toBe(202);

      // Another address, and its failures, are not affected.
      expectError(await from('10.9.9.2', 'mk_bad'), 401, 'api_key_invalid');
      expect((await from('10.9.9.2', apiKey)).status).toBe(202);
    } finally {
      await gw.stop();
    }
  });
});
