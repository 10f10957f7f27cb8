// The events consumer's write amplification, on real processes (nats-server, the subscriber service,
// the messaging service with its default settings): a backlog of custom events is recorded in large
// batches, one store transaction for each (events, facts) and one outbox relay delete per published
// batch, counted by the service's own `store_commits_total`; every event is still recorded once.
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { createClient } from '@mailer/kit';
import { ensureStreams } from '@mailer/nats';
import { eventsV1, subscriberV1 } from '@mailer/proto';
import { metricSum, startMesh, startNatsServer, waitFor, waitForSettled, type NatsServerHandle, type ServiceMesh } from '@mailer/testing';
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
  mesh = await startMesh({ NATS_URL: nats.url }, ['subscriber', 'messaging']);
  subscribers = createClient(subscriberV1.SubscriberServiceClient, mesh.env.SUBSCRIBER_GRPC_ADDR, 20_000);
});
afterAll(async () => {
  subscribers?.close();
  await nc?.close();
  await mesh?.stop();
  await nats?.stop();
});

const commits = () => metricSum(mesh.get('messaging'), 'store_commits_total');

it('a backlog of 1,000 events is recorded in batches: at most one store commit per 25 events, each event once', async () => {
  const account = newAccount();
  const addresses = Array.from({ length: 20 }, (_, i) => `reader${i}@example.org`);
  for (const email of addresses) await add(subscribers, account, email);
  const total = 1_000;
  const messaging = mesh.get('messaging');
  // idle: its pollers and the startup writes are behind it
  await waitForSettled(nc, { consumers: ['messaging-events'], timeoutMs: 30_000 });
  const before = await commits();

  // the backlog is published while the service is stopped: it finds it all when it continues
  process.kill(messaging.pid, 'SIGSTOP');
  try {
    const codec = JSONCodec();
    const now = new Date().toISOString();
    const js = nc.jetstream();
    await Promise.all(
      Array.from({ length: total }, (_, i) => {
        const eventId = randomUUID();
        const email = addresses[i % addresses.length];
        return js.publish(`events.${account}`, codec.encode({ eventId, accountId: account, eventKey: 'order.paid', email, occurredAt: now, receivedAt: now, triggerAutomations: true, properties: { i }, consent: null }), { msgID: eventId });
      }),
    );
  } finally {
    process.kill(messaging.pid, 'SIGCONT');
  }
  const events = createClient(eventsV1.EventServiceClient, mesh.env.MESSAGING_GRPC_ADDR, 20_000);
  try {
    await waitFor('every event recorded', async () => Number((await events.listEvents({ accountId: account, pageNumber: 1, pageSize: 1 })).totalItems) === total, 60_000);
    await waitForSettled(nc, { consumers: ['messaging-events'], outboxes: mesh.outboxes(), timeoutMs: 60_000 });
    // each event once (its record), with its subscriber
    const { items } = await events.listEvents({ accountId: account, pageNumber: 1, pageSize: 100 });
    expect(new Set(items.map((e) => e.outcome))).toEqual(new Set([eventsV1.EventOutcome.EVENT_OUTCOME_NO_MATCHING_AUTOMATION]));
  } finally {
    events.close();
  }
  // recording (one transaction per batch of up to 128) and the relay (one delete per published round),
  // about 20 here; batches of 16 events, as before, took about 170
  const used = (await commits()) - before;
  expect(used).toBeGreaterThan(0);
  expect(used).toBeLessThanOrEqual(total / 25);
});
