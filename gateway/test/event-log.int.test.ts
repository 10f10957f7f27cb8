// The events consumer and GET /events, end to end: a real nats-server, the real subscriber and
// messaging services and a real gateway. What an integrator notices: an event accepted by POST
// /events shows up in GET /events with the right outcome and subscriber; filters, order and paging;
// tenant isolation; and, whatever NATS redelivers (the same event published twice, a consumer that
// starts over, the service killed with -9 in the middle of a backlog), every event is listed once
// and one `event.received` fact per event reaches DOMAIN.
import crypto from 'node:crypto';
import { startMesh, waitFor, waitForSettled, type ServiceMesh } from '@mailer/testing';
import { eventsOf, type DomainEventJson } from '@mailer/testing/subscriber';
import { schemaErrors } from '../src/openapi/validator';
import { expectError, startGateway, startStack, type GatewayHandle, type Stack } from './support/harness';
import { expectStatus, INSTANT_PATTERN, newAccount, UUID_PATTERN, type Api } from './support/subscriber-stack';

let stack: Stack;
let mesh: ServiceMesh;
let gw: GatewayHandle;
let acme: Api;
let other: Api;

const account = (name: string) => newAccount(gw, name);
/** The barrier before counting: every event consumed and acknowledged, every fact published. */
const settled = (timeoutMs?: number) => waitForSettled(stack.nc, { outboxes: mesh.outboxes(), timeoutMs });

beforeAll(async () => {
  stack = await startStack(0);
  // The form service is not started until a test needs it: consent signups wait for it meanwhile.
  mesh = await startMesh({ NATS_URL: stack.nats.url }, ['subscriber', 'messaging'], { messaging: { MAIL_SEND_PAUSED: 'true' } });
  gw = await startGateway({ NATS_URL: stack.nats.url, ...mesh.env, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
  acme = await account('acme');
  other = await account('other');
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await mesh?.stop();
  await stack?.stop();
});

type EventItem = { eventId: string; eventKey: string; email: string; outcome: string; subscriberId: string | null; [k: string]: unknown };

/** Every event GET /events lists for the account (all pages), newest first. */
async function allEvents(a: Api, query = ''): Promise<EventItem[]> {
  const out: EventItem[] = [];
  for (let page = 1; ; page++) {
    const body = expectStatus(await a.get(`/events?pageSize=1000&pageNumber=${page}${query}`), 200);
    out.push(...body.items);
    if (page >= body.totalPages) return out;
  }
}

/** Polls GET /events until `until` holds (the consumer records asynchronously). */
async function eventsUntil(a: Api, until: (items: EventItem[]) => boolean, timeoutMs = 30_000, query = ''): Promise<EventItem[]> {
  return waitFor('GET /events to list the events', async () => {
    const items = await allEvents(a, query);
    return until(items) && items;
  }, timeoutMs);
}

async function post(a: Api, body: Record<string, unknown>): Promise<string> {
  return expectStatus(await a.post('/events', { eventKey: 'order.paid', email: 'ann@example.org', ...body }), 202).eventId;
}

async function recorded(a: Api, eventId: string): Promise<EventItem> {
  const items = await eventsUntil(a, (xs) => xs.some((e) => e.eventId === eventId));
  return items.find((e) => e.eventId === eventId)!;
}

const receivedFacts = (facts: DomainEventJson[]) => facts.filter((f) => f.type === 'event.received');

/** Asserts that every id is listed exactly once and has exactly one event.received fact. */
async function expectOncePerEvent(a: Api, eventIds: string[]): Promise<void> {
  const items = await eventsUntil(a, (xs) => eventIds.every((id) => xs.some((e) => e.eventId === id)), 90_000);
  const listed = items.map((e) => e.eventId).filter((id) => eventIds.includes(id));
  expect(listed.sort()).toEqual([...eventIds].sort());
  // every delivery of every event handled and every fact published (the barrier): a fact published
  // twice would be on the stream now (different msgIDs are not de-duplicated by the stream)
  await settled(90_000);
  const again = receivedFacts(await eventsOf(stack.nc, a.accountId, () => true));
  const perEvent = new Map<string, number>();
  for (const f of again) perEvent.set(f.eventId, (perEvent.get(f.eventId) ?? 0) + 1);
  for (const id of eventIds) expect([id, perEvent.get(id)]).toEqual([id, 1]);
}

describe('GET /events: what the events consumer recorded', () => {
  it("an event for a subscriber's address is listed with its subscriber, properties as sent and NO_MATCHING_AUTOMATION", async () => {
    const ann = expectStatus(await acme.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann' }), 201);
    const before = Date.now();
    const eventId = await post(acme, { email: 'Ann@Example.org', occurredAt: '2024-03-01T12:00:00+02:00', properties: { orderId: 'o-1', total: 12.5, 'a.b': { $x: [1, null] } } });
    const item = await recorded(acme, eventId);
    expect(item).toEqual({
      eventId,
      eventKey: 'order.paid',
      email: 'ann@example.org',
      occurredAt: '2024-03-01T10:00:00.000Z',
      receivedAt: expect.stringMatching(INSTANT_PATTERN),
      properties: { orderId: 'o-1', total: 12.5, 'a.b': { $x: [1, null] } },
      triggerAutomations: true,
      subscriberId: ann.id,
      outcome: 'NO_MATCHING_AUTOMATION',
      runIds: [],
      consentDecision: null,
    });
    expect(Date.parse(item.receivedAt as string)).toBeGreaterThanOrEqual(before - 1_000);
    const page = expectStatus(await acme.get('/events'), 200);
    expect(schemaErrors('PaginatedEvents', page)).toEqual([]);

    // ... and its event.received fact is on DOMAIN with the same content
    const facts = receivedFacts(await eventsOf(stack.nc, acme.accountId, (fs) => receivedFacts(fs).some((f) => f.eventId === eventId)));
    expect(facts.find((f) => f.eventId === eventId)).toEqual({
      type: 'event.received',
      accountId: acme.accountId,
      occurredAt: '2024-03-01T10:00:00.000Z',
      eventId,
      eventKey: 'order.paid',
      email: 'ann@example.org',
      receivedAt: item.receivedAt,
      properties: { orderId: 'o-1', total: 12.5, 'a.b': { $x: [1, null] } },
      triggerAutomations: true,
      subscriberId: ann.id,
      outcome: 'NO_MATCHING_AUTOMATION',
      runIds: [],
      consentDecision: null,
      subject: 'domain.event.received',
    });
  });

  it('an unknown address is NO_SUBSCRIBER and creates no subscriber; with consent while the form service does not answer, the event waits (retried) until it does', async () => {
    // (consent signups through a running form service: consent-signup.int.test.ts)
    const consented = await post(acme, { email: 'new@example.org', consent: { source: 'checkout', givenAt: '2024-03-01T10:00:00Z' } });
    const plain = await post(acme, { email: 'nobody@example.org' });
    expect(await recorded(acme, plain)).toMatchObject({ outcome: 'NO_SUBSCRIBER', subscriberId: null, properties: {}, consentDecision: null });
    // past the first retry (JetStream counts the event redelivered), still not recorded
    const jsm = await stack.nc.jetstreamManager();
    await waitFor('the consented event retried', async () => (await jsm.consumers.info('EVENTS', 'messaging-events')).num_redelivered > 0, 20_000);
    const listed = expectStatus(await acme.get('/events?email=new@example.org'), 200);
    expect(listed.items.map((e: { eventId: string }) => e.eventId)).not.toContain(consented);
    expectError(await acme.get('/subscribers/by-email/nobody@example.org'), 404, 'subscriber_not_found');
    expectError(await acme.get('/subscribers/by-email/new@example.org'), 404, 'subscriber_not_found');
    // The form service up (and a sender for its confirmation mail): the next retry signs the address up.
    await mesh.start(['form']);
    expectStatus(await acme.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' }), 201);
    expect(await recorded(acme, consented)).toMatchObject({ outcome: 'SUBSCRIBER_CREATED', consentDecision: 'QUEUED', subscriberId: expect.stringMatching(UUID_PATTERN) });
    expectStatus(await acme.get('/subscribers/by-email/new@example.org'), 200);
  }, 90_000);

  it('triggerAutomations:false is NOT_TRIGGERED, for a subscriber or not', async () => {
    const known = await post(acme, { triggerAutomations: false });
    const unknown = await post(acme, { email: 'nobody@example.org', triggerAutomations: false });
    expect(await recorded(acme, known)).toMatchObject({ outcome: 'NOT_TRIGGERED', triggerAutomations: false, subscriberId: expect.stringMatching(UUID_PATTERN) });
    expect(await recorded(acme, unknown)).toMatchObject({ outcome: 'NOT_TRIGGERED', triggerAutomations: false, subscriberId: null });
  });

  it('filters by eventKey and email (canonical form), newest first, pages', async () => {
    const a = await account('filters');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await post(a, { eventKey: i % 2 ? 'cart.left' : 'order.paid', email: i < 3 ? 'ann@example.org' : 'bob@example.org' }));
      await new Promise((r) => setTimeout(r, 5)); // distinct receipt times
    }
    const all = await eventsUntil(a, (xs) => xs.length === 5);
    expect(all.map((e) => e.eventId)).toEqual([...ids].reverse());
    expect((await allEvents(a, '&eventKey=cart.left')).map((e) => e.eventId)).toEqual([ids[3], ids[1]]);
    expect((await allEvents(a, '&email=%20Bob@Example.ORG%20')).map((e) => e.eventId)).toEqual([ids[4], ids[3]]);
    expect((await allEvents(a, '&eventKey=order.paid&email=ann@example.org')).map((e) => e.eventId)).toEqual([ids[2], ids[0]]);
    const page2 = expectStatus(await a.get('/events?pageSize=2&pageNumber=2'), 200);
    expect(page2).toMatchObject({ pageNumber: 2, pageSize: 2, totalItems: 5, totalPages: 3 });
    expect(page2.items.map((e: EventItem) => e.eventId)).toEqual([ids[2], ids[1]]);
    expect(expectStatus(await a.get('/events?pageNumber=9'), 200)).toMatchObject({ items: [], totalItems: 5 });
  });

  it('bad queries are 400 with the parameter named, never a 5xx', async () => {
    expectError(await acme.get('/events?eventKey=Order%20Paid'), 400, 'validation_failed');
    expectError(await acme.get('/events?pageSize=1001'), 400, 'validation_failed');
    expectError(await acme.get('/events?pageNumber=0'), 400, 'validation_failed');
    expectError(await acme.get('/events?pageSize=1e2'), 400, 'validation_failed');
    expectError(await acme.get('/events?what=1'), 400, 'unknown_property');
    expectError(await acme.put('/events', {}), 405, 'method_not_allowed');
  });

  it('tenant isolation: an account lists only its own events, and an address is looked up in its own account', async () => {
    const mine = await post(other, { email: 'ann@example.org' }); // ann is a subscriber of acme only
    expect(await recorded(other, mine)).toMatchObject({ outcome: 'NO_SUBSCRIBER', subscriberId: null });
    const otherIds = (await allEvents(other)).map((e) => e.eventId);
    expect(otherIds).toEqual([mine]);
    expect((await allEvents(acme)).map((e) => e.eventId)).not.toContain(mine);
    expect(await allEvents(other, '&email=ann@example.org')).toHaveLength(1);
  });
});

describe('large events', () => {
  it('an event as large as the stream takes is recorded with its fact; a page of large events is 400 events_page_too_large with a pageSize that fits', async () => {
    const a = await account('large');
    // the gateway refuses events over max_payload less 2 KiB; the stored event has ~300 bytes besides the properties
    const blob = 'x'.repeat((stack.nc.info?.max_payload ?? 1024 * 1024) - 2048 - 600);
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await post(a, { properties: { i, blob } }));
    const facts = receivedFacts(await eventsOf(stack.nc, a.accountId, (fs) => ids.every((id) => receivedFacts(fs).some((f) => f.eventId === id)), 60_000));
    expect(facts.find((f) => f.eventId === ids[0])?.properties).toEqual({ i: 0, blob });

    const res = await a.get('/events?pageSize=50');
    expectError(res, 400, 'events_page_too_large');
    expect(res.json.details).toEqual([{ path: 'query.pageSize', problem: expect.stringMatching(/try \d+ or less/) }]);
    const fits = Number(/try (\d+) or less/.exec(res.json.details[0].problem)![1]);
    expect(fits).toBeGreaterThanOrEqual(5);
    expect(fits).toBeLessThan(9);
    const page = expectStatus(await a.get(`/events?pageSize=${fits}`), 200);
    expect(page.items.map((e: EventItem) => e.eventId)).toEqual([...ids].reverse().slice(0, fits));
    expect(page.items[0].properties).toEqual({ i: 8, blob });
  }, 120_000);
});

describe('exactly once per eventId, whatever NATS redelivers', () => {
  it('the same event published twice with different message ids (past the stream de-duplication) is recorded once, one fact', async () => {
    const a = await account('twice');
    const eventId = crypto.randomUUID();
    const now = new Date().toISOString();
    const message = { eventId, accountId: a.accountId, eventKey: 'order.paid', email: 'ann@example.org', occurredAt: now, receivedAt: now, triggerAutomations: true, properties: { n: 1 }, consent: null };
    const js = stack.nc.jetstream();
    await js.publish(`events.${a.accountId}`, JSON.stringify(message), { msgID: `${eventId}-1` });
    await js.publish(`events.${a.accountId}`, JSON.stringify({ ...message, properties: { n: 2 } }), { msgID: `${eventId}-2` });
    const marker = await post(a, { eventKey: 'marker' }); // published after both: once it is listed, both were consumed
    await expectOncePerEvent(a, [eventId, marker]);
    expect((await allEvents(a)).find((e) => e.eventId === eventId)).toMatchObject({ properties: { n: 1 } });
  });

  it('malformed messages on EVENTS (not an event, another account in the body than in the subject) are dropped; later events are still recorded', async () => {
    const a = await account('malformed');
    const js = stack.nc.jetstream();
    await js.publish(`events.${a.accountId}`, 'not json');
    await js.publish(`events.${a.accountId}`, JSON.stringify({ eventId: 'x' }));
    const now = new Date().toISOString();
    await js.publish(`events.${a.accountId}`, JSON.stringify({ eventId: crypto.randomUUID(), accountId: other.accountId, eventKey: 'order.paid', email: 'x@example.org', occurredAt: now, receivedAt: now, triggerAutomations: true, properties: {}, consent: null }));
    const ok = await post(a, {});
    const items = await eventsUntil(a, (xs) => xs.some((e) => e.eventId === ok));
    expect(items.map((e) => e.eventId)).toEqual([ok]);
    await settled();
    expect((await allEvents(other)).every((e) => e.email !== 'x@example.org')).toBe(true);
  });

  it('a consumer that starts over (every event redelivered) records nothing twice', async () => {
    const a = await account('replay');
    const ids = [await post(a, {}), await post(a, { email: 'x@example.org' }), await post(a, { triggerAutomations: false })];
    await expectOncePerEvent(a, ids);
    await mesh.get('messaging').stop();
    const jsm = await stack.nc.jetstreamManager();
    await jsm.consumers.delete('EVENTS', 'messaging-events');
    await mesh.restart('messaging');
    const marker = await post(a, { eventKey: 'marker' });
    await expectOncePerEvent(a, [...ids, marker]);
    expect(await allEvents(a)).toHaveLength(4);
  }, 120_000);

  it('kill -9 in the middle of a backlog: after the restart every event is recorded once, one fact each', async () => {
    const a = await account('crash');
    await mesh.get('messaging').stop();
    const ids = await Promise.all(Array.from({ length: 400 }, (_, i) => post(a, { properties: { i } })));
    await mesh.restart('messaging');
    // kill it as soon as it is recording the backlog (some recorded, more in work, acknowledgements in flight)
    const seen = await eventsUntil(a, (xs) => xs.length > 0, 30_000);
    await mesh.get('messaging').kill9();
    expect(seen.length).toBeLessThan(ids.length);
    await mesh.restart('messaging');
    // events delivered to the killed process come back after the consumer's ack wait (30 s)
    await expectOncePerEvent(a, ids);
  }, 180_000);
});

describe('POST /reports/events', () => {
  /** Stores an event as the gateway would, with a chosen receipt time (the report counts by it). */
  async function received(a: Api, eventKey: string, receivedAt: string): Promise<string> {
    const eventId = crypto.randomUUID();
    const message = { eventId, accountId: a.accountId, eventKey, email: 'ann@example.org', occurredAt: receivedAt, receivedAt, triggerAutomations: false, properties: {}, consent: null };
    await stack.nc.jetstream().publish(`events.${a.accountId}`, JSON.stringify(message), { msgID: eventId });
    return eventId;
  }

  // Days that ended more than a day ago are read from the daily aggregates, rolled up when they ended
  // (services/messaging/test/report-retention.test.ts; zones and DST: packages/reports, and the email
  // report over 2024 in services/messaging/test/email-reports.int.test.ts). Events are received "now",
  // so this test counts what an account sends today and yesterday, from the records themselves.
  it('counts events by receipt time in calendar days of the zone, in all and per key; empty buckets are points', async () => {
    const a = await account('report');
    const DAY = 86_400_000;
    const today = Math.floor(Date.now() / DAY) * DAY;
    const iso = (ms: number) => new Date(ms).toISOString();
    const date = (ms: number) => iso(ms).slice(0, 10);
    const ids = [
      await received(a, 'order.paid', iso(today - DAY - 1)), // the day before yesterday, 23:59:59.999 UTC: before the period
      await received(a, 'order.paid', iso(today - DAY)), // yesterday 00:00 UTC (the day before in New York)
      await received(a, 'cart.left', iso(today - DAY / 2)), // yesterday 12:00 UTC
      await received(a, 'order.paid', iso(today)), // today 00:00 UTC (yesterday evening in New York)
    ];
    // another account's event in the same period is not counted
    await received(other, 'order.paid', iso(today - DAY / 2));
    await eventsUntil(a, (xs) => ids.every((id) => xs.some((e) => e.eventId === id)));

    const n = (value: number) => ({ value, formattedValue: String(value) });
    const utc = expectStatus(await a.post('/reports/events', { fromDate: date(today - DAY), toDate: date(today), interval: 'DAY' }), 200);
    expect(schemaErrors('EventReport', utc)).toEqual([]);
    expect(utc.points).toEqual([
      { periodStart: date(today - DAY), received: n(2), byEventKey: { 'order.paid': n(1), 'cart.left': n(1) } },
      { periodStart: date(today), received: n(1), byEventKey: { 'order.paid': n(1) } },
    ]);
    // New York is 4 or 5 hours behind: yesterday 00:00 UTC falls on the day before, today 00:00 UTC on yesterday
    const newYork = expectStatus(await a.post('/reports/events', { fromDate: date(today - DAY), toDate: date(today), interval: 'DAY', timeZone: 'America/New_York' }), 200);
    expect(newYork.points).toEqual([
      { periodStart: date(today - DAY), received: n(2), byEventKey: { 'cart.left': n(1), 'order.paid': n(1) } },
      { periodStart: date(today), received: n(0), byEventKey: {} },
    ]);
  });

  it('an account without events gets zero points; a bad period is 400 with its errorId, never a 5xx', async () => {
    const a = await account('report-empty');
    const empty = expectStatus(await a.post('/reports/events', { fromDate: '2024-01-01', toDate: '2024-12-31', interval: 'QUARTER' }, { 'Accept-Language': 'de-DE' }), 200);
    expect(empty.points.map((p: { periodStart: string }) => p.periodStart)).toEqual(['2024-01-01', '2024-04-01', '2024-07-01', '2024-10-01']);
    expect(empty.points.every((p: { received: { value: number }; byEventKey: object }) => p.received.value === 0 && Object.keys(p.byEventKey).length === 0)).toBe(true);
    expectError(await a.post('/reports/events', { fromDate: '2024-02-01', toDate: '2024-01-01', interval: 'DAY' }), 400, 'report_period_invalid');
    expectError(await a.post('/reports/events', { fromDate: '2024-02-30', toDate: '2024-03-01', interval: 'DAY' }), 400, 'report_period_invalid');
    expectError(await a.post('/reports/events', { fromDate: '2024-01-01', toDate: '2024-01-02', interval: 'HOUR' }), 400, 'report_period_invalid');
    expectError(await a.post('/reports/events', { fromDate: '2024-01-01', toDate: '2024-01-02', interval: 'DAY', timeZone: 'Mars/Olympus' }), 400, 'report_invalid_time_zone');
    expectError(await a.post('/reports/events', { fromDate: '2000-01-01', toDate: '2024-01-02', interval: 'DAY' }), 400, 'report_too_many_points');
    expectError(await a.post('/reports/events', { fromDate: '2024-01-01', toDate: '2024-01-02', interval: 'DAY', extra: 1 }), 400, 'unknown_property');
  });
});
