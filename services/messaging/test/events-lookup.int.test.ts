// The events consumer's subscriber lookups, on real processes (nats-server, the subscriber service,
// the messaging service): a backlog of custom events for many addresses is recorded with one
// FindSubscribersByEmail call per account and batch, never one lookup per address, counted by the
// subscriber service's own RPC metrics; each event still gets its own account's subscriber (another
// account's subscriber with the address is never it).
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { createClient } from '@mailer/kit';
import { ensureStreams } from '@mailer/nats';
import { eventsV1, subscriberV1 } from '@mailer/proto';
import { metricSum, startMesh, startNatsServer, waitForSettled, type NatsServerHandle, type ServiceMesh } from '@mailer/testing';
import { add, newAccount, type Client } from '@mailer/testing/subscriber';

jest.setTimeout(120_000);

let nats: NatsServerHandle;
let nc: NatsConnection;
let mesh: ServiceMesh;
let subscribers: Client;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  await ensureStreams(nc);
  mesh = await startMesh({ NATS_URL: nats.url }, ['subscriber']);
  subscribers = createClient(subscriberV1.SubscriberServiceClient, mesh.env.SUBSCRIBER_GRPC_ADDR, 20_000);
});
afterAll(async () => {
  subscribers?.close();
  await nc?.close();
  await mesh?.stop();
  await nats?.stop();
});

/** The subscriber service's completed calls of one SubscriberService RPC. */
const calls = (rpc: string) => metricSum(mesh.get('subscriber'), 'grpc_server_handled_total', { method: `/mailer.subscriber.v1.SubscriberService/${rpc}` });

it('a backlog of events for 40 addresses asks the subscriber service once per account and batch, and records each with its own subscriber', async () => {
  const [a, b] = [newAccount(), newAccount()];
  const known = Array.from({ length: 30 }, (_, i) => `reader${i}@example.org`);
  const ids = new Map<string, string>();
  for (const email of known) ids.set(email, (await add(subscribers, a, email)).id);
  await add(subscribers, b, 'only-in-b@example.org');
  const addresses = [...known, ...Array.from({ length: 9 }, (_, i) => `unknown${i}@example.org`), 'only-in-b@example.org'];

  // the backlog is there before the messaging service starts: its first pulls take it in batches
  const codec = JSONCodec();
  const now = new Date().toISOString();
  const js = nc.jetstream();
  for (const email of addresses) {
    const eventId = randomUUID();
    await js.publish(`events.${a}`, codec.encode({ eventId, accountId: a, eventKey: 'order.paid', email, occurredAt: now, receivedAt: now, triggerAutomations: true, properties: {}, consent: null }), { msgID: eventId });
  }
  const before = { batch: await calls('FindSubscribersByEmail'), single: await calls('GetSubscriberByEmail') };
  // batches of up to 100 events, two at a time
  await mesh.start(['messaging'], { messaging: { EVENTS_CONSUMER_CONCURRENCY: '200' } });
  await waitForSettled(nc, { consumers: ['messaging-events'], timeoutMs: 60_000 });

  const events = createClient(eventsV1.EventServiceClient, mesh.env.MESSAGING_GRPC_ADDR, 20_000);
  const { items } = await events.listEvents({ accountId: a, pageNumber: 1, pageSize: 100 });
  events.close();
  expect(items).toHaveLength(addresses.length);
  for (const e of items) {
    expect({ email: e.email, subscriberId: e.subscriberId, outcome: e.outcome }).toEqual(
      ids.has(e.email)
        ? { email: e.email, subscriberId: ids.get(e.email), outcome: eventsV1.EventOutcome.EVENT_OUTCOME_NO_MATCHING_AUTOMATION }
        : { email: e.email, subscriberId: undefined, outcome: eventsV1.EventOutcome.EVENT_OUTCOME_NO_SUBSCRIBER },
    );
  }
  const after = { batch: await calls('FindSubscribersByEmail'), single: await calls('GetSubscriberByEmail') };
  expect(after.single - before.single).toBe(0);
  // one account: one call per batch, and at most two batches were in flight for 40 events
  expect(after.batch - before.batch).toBeGreaterThanOrEqual(1);
  expect(after.batch - before.batch).toBeLessThanOrEqual(2);
});
