import { startService, type RunningService } from '@mailer/testing';
import { schemaErrors } from '../src/openapi/validator';
import { call, createAccount, expectError, sleep, startGateway, startStack, type GatewayHandle, type Stack } from './support/harness';

// The subscriber slice end to end: real gateway -> real subscriber service (gRPC) on one NATS.
let stack: Stack;
let subscriber: RunningService;
let gw: GatewayHandle;
let apiKey: string;
let otherKey: string;

beforeAll(async () => {
  stack = await startStack(0);
  subscriber = await startService('subscriber', { NATS_URL: stack.nats.url });
  gw = await startGateway({ NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
  ({ apiKey } = await createAccount(gw, 'subscribers'));
  ({ apiKey: otherKey } = await createAccount(gw, 'another tenant'));
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await subscriber?.stop();
  await stack?.stop();
});

const add = (body: unknown, key = apiKey, headers: Record<string, string> = {}) => call(gw, 'POST', '/subscribers', { apiKey: key, body, headers });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('subscriber slice', () => {
  it('/readyz is 200 once NATS and the subscriber service are SERVING', async () => {
    let res = await call(gw, 'GET', '/readyz');
    for (let i = 0; i < 50 && res.status !== 200; i++) {
      await sleep(100);
      res = await call(gw, 'GET', '/readyz');
    }
    expect([res.status, res.json]).toEqual([200, { status: 'ok' }]);
  });

  it('POST /subscribers -> 201 Subscriber + Location; GET returns the same record', async () => {
    const res = await add({ email: '  Ann@Example.ORG ', firstName: 'Ann' });
    expect(res.status).toBe(201);
    expect(schemaErrors('Subscriber', res.json)).toEqual([]);
    expect(res.json).toEqual({
      id: expect.stringMatching(UUID),
      email: 'ann@example.org',
      firstName: 'Ann',
      subscriberStatus: 'ACTIVE',
      values: expect.arrayContaining([{ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, personalizationTagName: expect.any(String), label: expect.any(String), displayValue: 'ann@example.org' }]),
      tags: [],
      registeredAt: expect.stringMatching(/Z$/),
    });
    expect(res.headers.get('location')).toBe(`/subscribers/${res.json.id}`);

    const got = await call(gw, 'GET', res.headers.get('location')!, { apiKey });
    expect([got.status, got.json]).toEqual([200, res.json]);
    // UUIDs in paths are accepted in any case
    expect((await call(gw, 'GET', `/subscribers/${res.json.id.toUpperCase()}`, { apiKey })).json).toEqual(res.json);
  });

  it('defaults and allowed create statuses; null firstName', async () => {
    const unconfirmed = await add({ email: 'u@example.org', subscriberStatus: 'UNCONFIRMED', firstName: null });
    expect(unconfirmed.status).toBe(201);
    expect(unconfirmed.json).toMatchObject({ subscriberStatus: 'UNCONFIRMED', firstName: null });
    expect((await add({ email: 'b@example.org', subscriberStatus: 'BLOCKED' })).json.subscriberStatus).toBe('BLOCKED');
    expectError(await add({ email: 'x@example.org', subscriberStatus: 'BOUNCED' }), 400, 'validation_failed');
  });

  it('errors from the service keep their errorId: 409 subscriber_email_exists, 400 invalid_email, 404 subscriber_not_found', async () => {
    expect((await add({ email: 'dup@example.org' })).status).toBe(201);
    expectError(await add({ email: 'DUP@example.org' }), 409, 'subscriber_email_exists');
    expectError(await add({ email: 'not-an-email' }), 400, 'invalid_email');
    expectError(await call(gw, 'GET', '/subscribers/3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21', { apiKey }), 404, 'subscriber_not_found');
  });

  it('gateway-side validation: invalid_uuid, unknown_property (fields/tags/topicIds not yet, accountId never)', async () => {
    expectError(await call(gw, 'GET', '/subscribers/1234', { apiKey }), 400, 'invalid_uuid');
    for (const member of ['fields', 'tags', 'topicIds', 'accountId']) {
      const res = await add({ email: `${member}@example.org`, [member]: member === 'accountId' ? 'x' : [] });
      expectError(res, 400, 'unknown_property');
      expect(res.json.details).toContainEqual({ path: `body.${member}`, problem: 'is not a known property' });
    }
    expectError(await add({}), 400, 'validation_failed');
    expectError(await call(gw, 'GET', '/subscribers?accountId=x', { apiKey }), 400, 'unknown_property');
  });

  it('tenant isolation: the account comes from the key', async () => {
    const mine = await add({ email: 'shared@example.org' });
    expect(mine.status).toBe(201);
    expectError(await call(gw, 'GET', `/subscribers/${mine.json.id}`, { apiKey: otherKey }), 404, 'subscriber_not_found');
    const theirs = await add({ email: 'shared@example.org' }, otherKey); // same address in another account is fine
    expect(theirs.status).toBe(201);
    expect(theirs.json.id).not.toBe(mine.json.id);
    const list = await call(gw, 'GET', '/subscribers', { apiKey: otherKey });
    expect(list.json.items.map((s: { email: string }) => s.email)).toEqual(['shared@example.org']);
  });

  it('GET /subscribers: PaginatedSubscribersDto with pagination, filters and statusCounts', async () => {
    const { apiKey: key } = await createAccount(gw, 'list');
    for (const [email, status] of [['a1@example.org', 'ACTIVE'], ['a2@example.org', 'ACTIVE'], ['bob@example.org', 'UNSUBSCRIBED'], ['carl@example.org', 'BLOCKED'], ['anna@example.org', 'UNCONFIRMED']]) {
      expect((await add({ email, subscriberStatus: status, firstName: email.split('@')[0] }, key)).status).toBe(201);
    }
    const all = await call(gw, 'GET', '/subscribers', { apiKey: key });
    expect(all.status).toBe(200);
    expect(schemaErrors('PaginatedSubscribersDto', all.json)).toEqual([]);
    expect(all.json).toMatchObject({ pageNumber: 1, pageSize: 50, totalItems: 5, totalPages: 1 });
    expect(all.json.statusCounts).toEqual({ UNCONFIRMED: 1, ACTIVE: 2, UNSUBSCRIBED: 1, BOUNCED: 0, COMPLAINED: 0, BLOCKED: 1 });
    expect(all.json.items[0]).toEqual({ id: expect.stringMatching(UUID), email: expect.any(String), firstName: expect.any(String), subscriberStatus: expect.any(String), tags: [], registeredAt: expect.any(String) });

    const page2 = await call(gw, 'GET', '/subscribers?pageSize=2&pageNumber=2', { apiKey: key });
    expect(page2.json).toMatchObject({ pageNumber: 2, pageSize: 2, totalItems: 5, totalPages: 3 });
    expect(page2.json.items).toHaveLength(2);
    const beyond = await call(gw, 'GET', '/subscribers?pageSize=2&pageNumber=9', { apiKey: key });
    expect(beyond.json.items).toEqual([]);

    const active = await call(gw, 'GET', '/subscribers?status=ACTIVE', { apiKey: key });
    expect(active.json.totalItems).toBe(2);
    expect(active.json.statusCounts.BLOCKED).toBe(1); // counted over the filters except status

    const search = await call(gw, 'GET', '/subscribers?search=a', { apiKey: key });
    expect(search.json.items.map((s: { email: string }) => s.email).sort()).toEqual(['a1@example.org', 'a2@example.org', 'anna@example.org']);

    expectError(await call(gw, 'GET', '/subscribers?pageSize=1001', { apiKey: key }), 400, 'validation_failed');
  });

  it('Idempotency-Key on POST /subscribers replays the 201 with its Location', async () => {
    const first = await add({ email: 'idem@example.org' }, apiKey, { 'idempotency-key': 'create-idem' });
    expect(first.status).toBe(201);
    const again = await add({ email: 'idem@example.org' }, apiKey, { 'idempotency-key': 'create-idem' });
    expect([again.status, again.json, again.headers.get('location'), again.headers.get('idempotency-replay')]).toEqual([201, first.json, first.headers.get('location'), 'true']);
    expectError(await add({ email: 'other@example.org' }, apiKey, { 'idempotency-key': 'create-idem' }), 422, 'idempotency_key_reused');
    // Without the header the same body is a conflict, proving the replay did not call the service.
    expectError(await add({ email: 'idem@example.org' }), 409, 'subscriber_email_exists');
  });

  it('a subscriber service that goes away -> 503, and /readyz says so', async () => {
    await subscriber.stop();
    expectError(await call(gw, 'GET', '/subscribers', { apiKey }), 503, 'service_unavailable');
    expectError(await call(gw, 'GET', '/readyz'), 503, 'service_unavailable');
  });
});
