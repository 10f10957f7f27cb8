// The subscriber service as a real process behind real gRPC, on a real nats-server: the
// plumbing of the first vertical slice (store, outbox → DOMAIN stream, health, restart).
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { connect, type NatsConnection, AckPolicy, DeliverPolicy } from 'nats';
import { createClient, fromServiceError } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import { startNatsServer, startService, type RunningService } from '@mailer/testing';

const { SubscriberStatus: S } = subscriberV1;
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

let nats: Awaited<ReturnType<typeof startNatsServer>>;
let svc: RunningService;
let client: ReturnType<typeof createClient<subscriberV1.SubscriberServiceClient>>;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  svc = await startService('subscriber', { NATS_URL: nats.url });
  client = createClient(subscriberV1.SubscriberServiceClient, svc.address);
  nc = await connect({ servers: nats.url, ...nats.auth });
});

afterAll(async () => {
  client?.close();
  await nc?.close();
  await svc?.stop();
  await nats?.stop();
});

async function errorOf(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    const e = err as ServiceError;
    return { code: e.code, errorId: fromServiceError(e)?.errorId, message: e.details };
  }
  throw new Error('expected the call to fail');
}

const add = (accountId: string, email: string, extra: Partial<subscriberV1.AddSubscriberRequest> = {}) =>
  client.addSubscriber({ accountId, email, subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED, tags: [], topicIds: [], topicIdsGiven: false, fields: [], ...extra });

it('answers grpc.health.v1 SERVING', async () => {
  const { HealthClient } = await healthClient();
  const res = await new Promise<{ status: string }>((resolve, reject) =>
    new HealthClient(svc.address, credentials.createInsecure()).check({ service: '' }, new Metadata(), (err: unknown, r: { status: string }) => (err ? reject(err) : resolve(r))),
  );
  expect(res.status).toBe('SERVING');
});

it('adds a subscriber with its canonical email and reads it back', async () => {
  const { subscriber } = await add(A, '  Ann@Example.ORG ', { firstName: 'Ann' });
  expect(subscriber).toMatchObject({ email: 'ann@example.org', firstName: 'Ann', subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE });
  expect(subscriber!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const got = await client.getSubscriber({ accountId: A, subscriberId: subscriber!.id });
  expect(got.subscriber).toEqual(subscriber);
});

it('refuses a second subscriber with the same canonical email in the account (409), not in another account', async () => {
  await add(A, 'bob@example.org');
  expect(await errorOf(add(A, 'BOB@example.org'))).toMatchObject({ code: status.ALREADY_EXISTS, errorId: 'subscriber_email_exists' });
  await expect(add(B, 'bob@example.org')).resolves.toBeDefined();
});

it('refuses invalid emails and statuses that are not set by hand', async () => {
  expect(await errorOf(add(A, 'not-an-email'))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'invalid_email' });
  expect(await errorOf(add(A, 'c@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_BOUNCED }))).toMatchObject({
    code: status.INVALID_ARGUMENT,
    errorId: 'subscriber_status_not_manual',
  });
  const list = await client.listSubscribers({ accountId: A, pageNumber: 1, pageSize: 50, status: S.SUBSCRIBER_STATUS_UNSPECIFIED });
  expect(list.items.map((i) => i.email)).not.toContain('c@example.org');
});

it("never shows one account's subscriber to another (tenant isolation)", async () => {
  const { subscriber } = await add(A, 'secret@example.org');
  expect(await errorOf(client.getSubscriber({ accountId: B, subscriberId: subscriber!.id }))).toMatchObject({ code: status.NOT_FOUND, errorId: 'subscriber_not_found' });
  const listB = await client.listSubscribers({ accountId: B, pageNumber: 1, pageSize: 50, status: S.SUBSCRIBER_STATUS_UNSPECIFIED });
  expect(listB.items.map((i) => i.email)).toEqual(['bob@example.org']);
});

it('lists pages in registration order with counts of every status over the other filters', async () => {
  const C = '33333333-3333-4333-8333-333333333333';
  for (let i = 0; i < 7; i++) await add(C, `p${i}@example.org`, { subscriberStatus: i < 2 ? S.SUBSCRIBER_STATUS_BLOCKED : S.SUBSCRIBER_STATUS_UNSPECIFIED });
  const page2 = await client.listSubscribers({ accountId: C, pageNumber: 2, pageSize: 3, status: S.SUBSCRIBER_STATUS_UNSPECIFIED });
  expect(page2.items.map((i) => i.email)).toEqual(['p3@example.org', 'p4@example.org', 'p5@example.org']);
  expect(page2).toMatchObject({ pageNumber: 2, pageSize: 3, totalItems: '7', totalPages: 3 });
  const blocked = await client.listSubscribers({ accountId: C, pageNumber: 1, pageSize: 50, status: S.SUBSCRIBER_STATUS_BLOCKED });
  expect(blocked.totalItems).toBe('2');
  // statusCounts ignore the status filter itself.
  expect(blocked.statusCounts).toEqual({ unconfirmed: '0', active: '5', unsubscribed: '0', bounced: '0', complained: '0', blocked: '2' });
  const search = await client.listSubscribers({ accountId: C, pageNumber: 1, pageSize: 50, status: S.SUBSCRIBER_STATUS_UNSPECIFIED, search: 'P6' });
  expect(search.items.map((i) => i.email)).toEqual(['p6@example.org']);
  expect(await errorOf(client.listSubscribers({ accountId: C, pageNumber: 1, pageSize: 1001, status: 0 }))).toMatchObject({ errorId: 'validation_failed' });
});

it('emits subscriber.created on the DOMAIN stream through the outbox, once per subscriber', async () => {
  const D = '44444444-4444-4444-8444-444444444444';
  const { subscriber } = await add(D, 'event@example.org', { firstName: 'Eve' });
  const jsm = await nc.jetstreamManager();
  const name = `t${Date.now()}`;
  await jsm.consumers.add('DOMAIN', { durable_name: name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, filter_subject: 'domain.subscriber.created' });
  const consumer = await nc.jetstream().consumers.get('DOMAIN', name);
  const seen: unknown[] = [];
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !seen.some((e: any) => e.subscriber.id === subscriber!.id)) {
    const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
    for await (const m of batch) seen.push(m.json());
  }
  const mine = seen.filter((e: any) => e.subscriber.id === subscriber!.id);
  // added without topicIds: it joined the account's default topic
  const defaultTopic = (await client.listTopics({ accountId: D })).items.find((t) => t.isDefault)!;
  expect(mine).toEqual([
    expect.objectContaining({
      type: 'subscriber.created',
      accountId: D,
      version: 1,
      subscriber: expect.objectContaining({ email: 'event@example.org', firstName: 'Eve', subscriberStatus: 'ACTIVE', tags: [], topicIds: [defaultTopic.id], optOuts: [], fields: [] }),
    }),
  ]);
});

it('times store operations per collection in /metrics', async () => {
  await add(A, 'metrics@example.org');
  const metrics = await (await fetch(`http://127.0.0.1:${svc.ready.metricsPort}/metrics`)).text();
  // Which operations a write uses is the repository's business; that it is measured is the point.
  const counted = metrics
    .split('\n')
    .filter((l) => l.startsWith('store_operation_duration_seconds_count{') && l.includes('collection="subscribers"') && l.includes('outcome="ok"'))
    .map((l) => ({ operation: /operation="(\w+)"/.exec(l)![1], count: Number(l.split(' ').pop()) }))
    .filter((c) => c.count > 0);
  expect(counted.length).toBeGreaterThanOrEqual(2);
});

it('keeps every acknowledged subscriber across a kill -9 and restart', async () => {
  const E = '55555555-5555-4555-8555-555555555555';
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push((await add(E, `k${i}@example.org`)).subscriber!.id);
  await svc.kill9();
  svc = await startService('subscriber', { NATS_URL: nats.url, DATA_DIR: svc.dataDir });
  client.close();
  client = createClient(subscriberV1.SubscriberServiceClient, svc.address);
  const list = await client.listSubscribers({ accountId: E, pageNumber: 1, pageSize: 100, status: 0 });
  expect(list.items.map((i) => i.id).sort()).toEqual([...ids].sort());
});

async function healthClient() {
  const protoLoader = await import('@grpc/proto-loader');
  const grpc = await import('@grpc/grpc-js');
  const { protoPath } = await import('grpc-health-check');
  const def = protoLoader.loadSync(protoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as any;
  return { HealthClient: pkg.grpc.health.v1.Health };
}
