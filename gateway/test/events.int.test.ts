import { parseCustomEvent } from '@mailer/nats/facts';
import { eventIdFor } from '../src/events/event-id';
import { AcceptedEventKeys } from '../src/events/publisher';
import { call, createAccount, expectError, event, readEvents, startStack, type Stack } from './support/harness';

let stack: Stack;
let a: Stack['gateways'][number];
let b: Stack['gateways'][number];

beforeAll(async () => {
  stack = await startStack(2);
  [a, b] = stack.gateways;
});
afterAll(() => stack.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /events', () => {
  it('202 {eventId, duplicate:false} after the event is stored on EVENTS, exactly as sent', async () => {
    const { accountId, apiKey } = await createAccount(a, 'events');
    const before = Date.now();
    const res = await call(a, 'POST', '/events', {
      apiKey,
      body: event({ email: 'Ann@Example.ORG', properties: { orderId: 42, items: [{ sku: 'a' }] } }),
    });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ eventId: expect.stringMatching(UUID), duplicate: false });
    expect(res.headers.get('ratelimit-policy')).toBe('100;w=1;burst=500');

    // The PubAck came before the 202, so the message is already there.
    const stored = await readEvents(stack.nc, accountId);
    expect(stored).toHaveLength(1);
    const [msg] = stored;
    expect(msg.subject).toBe(`events.${accountId}`);
    expect(msg.msgId).toBe(res.json.eventId);
    expect(msg.data).toEqual({
      eventId: res.json.eventId,
      accountId,
      eventKey: 'order.paid',
      email: 'ann@example.org',
      occurredAt: msg.data.receivedAt, // default: time of receipt
      receivedAt: expect.any(String),
      triggerAutomations: true,
      properties: { orderId: 42, items: [{ sku: 'a' }] },
      consent: null,
    });
    expect(Date.parse(msg.data.receivedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(msg.data.receivedAt).toMatch(/Z$/);
    // what the messaging service will read: the shared definition parses it without losing a member
    expect(parseCustomEvent(msg.data)).toEqual(msg.data);
  });

  it('stores occurredAt (normalised to UTC), consent, triggerAutomations:false; ignores _serviceExampleRequest', async () => {
    const { accountId, apiKey } = await createAccount(a, 'events-2');
    const res = await call(b, 'POST', '/events', {
      apiKey,
      body: event({
        occurredAt: '2024-03-01T12:00:00+02:00',
        triggerAutomations: false,
        consent: { source: 'checkout', givenAt: '2024-03-01T10:00:00.000Z' },
        _serviceExampleRequest: { anything: true },
      }),
    });
    expect(res.status).toBe(202);
    const [msg] = await readEvents(stack.nc, accountId);
    expect(msg.data).toMatchObject({
      occurredAt: '2024-03-01T10:00:00.000Z',
      triggerAutomations: false,
      consent: { source: 'checkout', givenAt: '2024-03-01T10:00:00.000Z' },
      properties: {},
    });
    expect(msg.data).not.toHaveProperty('_serviceExampleRequest');
    expect(parseCustomEvent(msg.data)).toEqual(msg.data);
  });

  it('idempotencyKey: retries (on either replica) get the same eventId with duplicate:true, and one message only', async () => {
    const { accountId, apiKey } = await createAccount(a, 'dedupe');
    const body = event({ idempotencyKey: 'order-42' });
    const first = await call(a, 'POST', '/events', { apiKey, body });
    expect(first.json).toEqual({ eventId: eventIdFor(accountId, 'order-42'), duplicate: false });
    for (const gw of [a, b, a]) {
      const again = await call(gw, 'POST', '/events', { apiKey, body });
      expect([again.status, again.json]).toEqual([202, { eventId: first.json.eventId, duplicate: true }]);
    }
    // A retry with other content is still the same event (the first one wins).
    const changed = await call(b, 'POST', '/events', { apiKey, body: event({ idempotencyKey: 'order-42', eventKey: 'other' }) });
    expect(changed.json).toEqual({ eventId: first.json.eventId, duplicate: true });
    const stored = await readEvents(stack.nc, accountId);
    expect(stored).toHaveLength(1);
    expect(stored[0].data.eventKey).toBe('order.paid');
    // Retries are answered from the 7-day record of accepted keys, not by publishing again.
    const kv = await stack.nc.jetstream().views.kv('gateway-event-keys');
    const entry = await kv.get(AcceptedEventKeys.key(accountId, 'order-42'));
    expect(entry?.json()).toMatchObject({ eventId: first.json.eventId });
    const status = await kv.status();
    expect(status.ttl).toBe(7 * 24 * 3600 * 1000);
    // Proof that the answer comes from that record: change it and the retry reports the change.
    const marker = '00000000-0000-4000-8000-00000000abcd';
    await kv.put(AcceptedEventKeys.key(accountId, 'order-42'), JSON.stringify({ eventId: marker, acceptedAt: 'x' }));
    expect((await call(b, 'POST', '/events', { apiKey, body })).json).toEqual({ eventId: marker, duplicate: true });
    expect(await readEvents(stack.nc, accountId)).toHaveLength(1);
  });

  it('concurrent retries of one idempotencyKey: one message, one duplicate:false, all the same eventId', async () => {
    const { accountId, apiKey } = await createAccount(a, 'concurrent');
    const body = event({ idempotencyKey: 'burst-1' });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => call(i % 2 ? a : b, 'POST', '/events', { apiKey, body })));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(202));
    expect(new Set(results.map((r) => r.json.eventId))).toEqual(new Set([eventIdFor(accountId, 'burst-1')]));
    expect(results.filter((r) => r.json.duplicate === false)).toHaveLength(1);
    expect(await readEvents(stack.nc, accountId)).toHaveLength(1);
  });

  it('idempotencyKeys are per account; without one every request is a new event', async () => {
    const one = await createAccount(a, 'one');
    const two = await createAccount(a, 'two');
    const r1 = await call(a, 'POST', '/events', { apiKey: one.apiKey, body: event({ idempotencyKey: 'same' }) });
    const r2 = await call(a, 'POST', '/events', { apiKey: two.apiKey, body: event({ idempotencyKey: 'same' }) });
    expect(r2.json.duplicate).toBe(false);
    expect(r2.json.eventId).not.toBe(r1.json.eventId);
    const x = await call(a, 'POST', '/events', { apiKey: one.apiKey, body: event() });
    const y = await call(a, 'POST', '/events', { apiKey: one.apiKey, body: event() });
    expect(x.json.eventId).not.toBe(y.json.eventId);
    expect(y.json.duplicate).toBe(false);
    expect(await readEvents(stack.nc, one.accountId)).toHaveLength(3);
    expect(await readEvents(stack.nc, two.accountId)).toHaveLength(1);
  });

  it('occurredAt: up to 5 minutes in the future is fine, more is 400', async () => {
    const { accountId, apiKey } = await createAccount(a, 'future');
    const ok = await call(a, 'POST', '/events', { apiKey, body: event({ occurredAt: new Date(Date.now() + 4 * 60_000).toISOString() }) });
    expect(ok.status).toBe(202);
    const res = await call(a, 'POST', '/events', { apiKey, body: event({ occurredAt: new Date(Date.now() + 6 * 60_000).toISOString() }) });
    expectError(res, 400, 'validation_failed');
    expect(res.json.details).toEqual([{ path: 'body.occurredAt', problem: 'is more than 5 minutes in the future' }]);
    expect(await readEvents(stack.nc, accountId)).toHaveLength(1);
  });

  it.each([
    ['bad eventKey', { eventKey: 'Order Paid' }, 'validation_failed', 'body.eventKey'],
    ['eventKey too long', { eventKey: 'a'.repeat(101) }, 'validation_failed', 'body.eventKey'],
    ['invalid email', { email: 'ann@' }, 'invalid_email', 'body.email'],
    ['missing email', { email: undefined }, 'validation_failed', 'body.email'],
    ['occurredAt not an instant', { occurredAt: '2024-13-01T00:00:00Z' }, 'validation_failed', 'body.occurredAt'],
    ['empty idempotencyKey', { idempotencyKey: '' }, 'validation_failed', 'body.idempotencyKey'],
    ['triggerAutomations not boolean', { triggerAutomations: 'false' }, 'validation_failed', 'body.triggerAutomations'],
    ['consent incomplete', { consent: { source: 'x' } }, 'validation_failed', 'body.consent.givenAt'],
    ['unknown member in consent', { consent: { source: 'x', givenAt: '2024-01-01T00:00:00Z', ip: '1.1.1.1' } }, 'unknown_property', 'body.consent.ip'],
    ['consent without source', { consent: { givenAt: '2024-01-01T00:00:00Z' } }, 'validation_failed', 'body.consent.source'],
    ['consent source empty', { consent: { source: '', givenAt: '2024-01-01T00:00:00Z' } }, 'validation_failed', 'body.consent.source'],
    ['consent source too long', { consent: { source: 'x'.repeat(501), givenAt: '2024-01-01T00:00:00Z' } }, 'validation_failed', 'body.consent.source'],
    ['consent givenAt not an instant', { consent: { source: 'x', givenAt: 'yesterday' } }, 'validation_failed', 'body.consent.givenAt'],
    ['consent not an object', { consent: 'yes' }, 'validation_failed', 'body.consent'],
    ['consent null', { consent: null }, 'validation_failed', 'body.consent'],
    ['consent givenAt more than 5 minutes ahead', { consent: { source: 'x', givenAt: new Date(Date.now() + 3_600_000).toISOString() } }, 'validation_failed', 'body.consent.givenAt'],
    ['unknown member', { eventName: 'x' }, 'unknown_property', 'body.eventName'],
  ])('%s -> 400 %s, nothing stored', async (_name, extra, errorId, path) => {
    const { accountId, apiKey } = await createAccount(a, 'invalid');
    const res = await call(b, 'POST', '/events', { apiKey, body: event(extra) });
    expectError(res, 400, errorId);
    expect(res.json.details.map((d: { path: string }) => d.path)).toContain(path);
    expect(await readEvents(stack.nc, accountId)).toHaveLength(0);
  });
});
