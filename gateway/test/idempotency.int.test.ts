import { idempotencyRecordKey, requestFingerprint } from '../src/idempotency/store';
import { call, createAccount, expectError, event, readEvents, startStack, type Stack } from './support/harness';

let stack: Stack;
let a: Stack['gateways'][number];
let b: Stack['gateways'][number];

beforeAll(async () => {
  stack = await startStack(2);
  [a, b] = stack.gateways;
});
afterAll(() => stack.stop());

const post = (gw: typeof a, apiKey: string, key: string | undefined, body: unknown, path = '/events') =>
  call(gw, 'POST', path, { apiKey, body, headers: key === undefined ? {} : { 'idempotency-key': key } });

/** Writes an idempotency record straight into the shared KV bucket, as a gateway would. */
async function putRecord(accountId: string, key: string, record: unknown) {
  const kv = await stack.nc.jetstream().views.kv('gateway-idempotency');
  await kv.put(idempotencyRecordKey(accountId, key), JSON.stringify(record));
}

describe('Idempotency-Key on POST', () => {
  it('same key + same body replays the first response (on any replica) with Idempotency-Replay: true', async () => {
    const { accountId, apiKey } = await createAccount(a, 'replay');
    const first = await post(a, apiKey, 'k-1', event());
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotency-replay')).toBeNull();
    for (const gw of [b, a]) {
      // member order does not matter
      const again = await post(gw, apiKey, 'k-1', { email: 'ann@example.org', eventKey: 'order.paid' });
      expect(again.status).toBe(202);
      expect(again.json).toEqual(first.json); // the same random eventId: a replay, not a second event
      expect(again.headers.get('idempotency-replay')).toBe('true');
      expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    }
    expect(await readEvents(stack.nc, accountId)).toHaveLength(1);
  });

  it('same key + different body -> 422 idempotency_key_reused; other paths and accounts are separate', async () => {
    const { apiKey } = await createAccount(a, 'reuse');
    expect((await post(a, apiKey, 'k-2', event())).status).toBe(202);
    expectError(await post(b, apiKey, 'k-2', event({ eventKey: 'other' })), 422, 'idempotency_key_reused');
    expectError(await post(b, apiKey, 'k-2', {}, '/subscribers'), 422, 'idempotency_key_reused');
    const other = await createAccount(a, 'reuse-other');
    expect((await post(a, other.apiKey, 'k-2', event({ eventKey: 'other' }))).status).toBe(202);
  });

  it('4xx answers are stored and replayed too', async () => {
    const { apiKey } = await createAccount(a, 'fourxx');
    const first = await post(a, apiKey, 'k-3', event({ eventKey: 'BAD' }));
    expectError(first, 400, 'validation_failed');
    const again = await post(b, apiKey, 'k-3', event({ eventKey: 'BAD' }));
    expectError(again, 400, 'validation_failed');
    expect(again.headers.get('idempotency-replay')).toBe('true');
  });

  it('5xx answers are not stored: the retry runs again', async () => {
    const { apiKey } = await createAccount(a, 'fivexx');
    const body = { email: 'x@example.org' };
    const first = await post(a, apiKey, 'k-4', body, '/subscribers'); // subscriber service is down
    expectError(first, 503, 'service_unavailable');
    const again = await post(b, apiKey, 'k-4', body, '/subscribers');
    expectError(again, 503, 'service_unavailable');
    expect(again.headers.get('idempotency-replay')).toBeNull();
  });

  it('still in flight -> 409 idempotency_in_progress with Retry-After: 1; an expired lease is taken over', async () => {
    const { accountId, apiKey } = await createAccount(a, 'inflight');
    const body = event();
    const fingerprint = requestFingerprint('POST', '/events', body);
    await putRecord(accountId, 'k-5', { state: 'in_flight', fingerprint, leaseUntil: Date.now() + 60_000 });
    const busy = await post(a, apiKey, 'k-5', body);
    expectError(busy, 409, 'idempotency_in_progress');
    expect(busy.headers.get('retry-after')).toBe('1');
    // A different body with the same key is still a misuse, in flight or not.
    expectError(await post(a, apiKey, 'k-5', event({ eventKey: 'x' })), 422, 'idempotency_key_reused');

    // The owner died: after its lease the next attempt runs, and is then replayed.
    await putRecord(accountId, 'k-6', { state: 'in_flight', fingerprint, leaseUntil: Date.now() - 1 });
    const takeover = await post(b, apiKey, 'k-6', body);
    expect(takeover.status).toBe(202);
    const replay = await post(a, apiKey, 'k-6', body);
    expect(replay.json).toEqual(takeover.json);
    expect(replay.headers.get('idempotency-replay')).toBe('true');
  });

  it('invalid Idempotency-Key -> 400 invalid_idempotency_key', async () => {
    const { apiKey } = await createAccount(a, 'invalid-key');
    for (const key of ['x'.repeat(256), 'caf\u00e9', 'tab\tinside']) {
      expectError(await post(a, apiKey, key, event()), 400, 'invalid_idempotency_key');
    }
    expect((await post(a, apiKey, 'x'.repeat(255), event())).status).toBe(202);
  });

  it('GET ignores Idempotency-Key', async () => {
    const { apiKey } = await createAccount(a, 'get');
    const res = await call(a, 'GET', '/account/api-key', { apiKey, headers: { 'idempotency-key': 'x'.repeat(300) } });
    expectError(res, 403, 'operation_not_allowed_for_api_key');
  });
});
