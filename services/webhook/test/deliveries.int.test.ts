// The webhook service as a real process on a real nats-server, delivering subscriber facts from DOMAIN
// to real HTTP receivers on loopback that verify every request with the `standardwebhooks` package:
// the body and headers of the API contract, text/plain with the same bytes, both signatures during a rotation,
// Retry-After, 410 disabling the subscription, the attempt log (first 2 KiB), redeliver and the test
// event, and a slow (14 s) and a dead target not delaying a healthy one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { createClient } from '@mailer/kit';
import { publish } from '@mailer/nats';
import { webhookDeliveriesV1 as v1 } from '@mailer/proto';
import { freePort, startNatsServer, startService, waitFor, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { newSecret, type Subscription } from '../src/domain/subscription';
import { readSubscription, sealingEnv, seedSubscriptions, subscriberCreated, subscription } from './support/fixtures';
import { startReceiver, type Receiver } from './support/receivers';

jest.setTimeout(120_000);

const ACC = '0b5f3a9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
const OTHER_ACC = '7e6d5c4b-3a29-4180-9f8e-7d6c5b4a3928';
const FACTS = 20;

let dataDir: string;
let nats: NatsServerHandle;
let svc: RunningService;
let nc: NatsConnection;
let client: ReturnType<typeof createClient<v1.WebhookDeliveryServiceClient>>;
const r: Record<string, Receiver> = {};
const s: Record<string, Subscription> = {};
const oldSecret = newSecret();
const facts = Array.from({ length: FACTS }, () => subscriberCreated(ACC));
let published = 0;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-int-'));
  const json = newSecret();
  const rotated = newSecret();
  r.json = await startReceiver([json]);
  s.json = subscription(ACC, r.json.url, { secret: json });
  const plain = newSecret();
  r.plain = await startReceiver([plain]);
  s.plain = subscription(ACC, r.plain.url, { secret: plain, deliveryContentType: 'text/plain', event: 'subscriber.created' });
  r.rotated = await startReceiver([oldSecret, rotated]);
  s.rotated = subscription(ACC, r.rotated.url, { secret: rotated, previousSecret: oldSecret, previousSecretExpiresAt: new Date(Date.now() + 3600_000) });
  // 429 with Retry-After: 1 on each delivery's first attempt (the schedule's first wait is 5 s ±20 %).
  r.retry = await startReceiver([], (_req, nth) => (nth === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
  s.retry = subscription(ACC, r.retry.url);
  r.gone = await startReceiver([], () => ({ status: 410 }));
  s.gone = subscription(ACC, r.gone.url);
  r.big = await startReceiver([], () => ({ status: 500, body: 'x'.repeat(5000) }));
  s.big = subscription(ACC, r.big.url);
  r.slow = await startReceiver([], () => ({ status: 200, delayMs: 14_000 }));
  s.slow = subscription(ACC, r.slow.url);
  s.dead = subscription(ACC, `http://127.0.0.1:${await freePort()}/hook`); // nothing listens there
  r.otherEvent = await startReceiver([]);
  s.otherEvent = subscription(ACC, r.otherEvent.url, { event: 'email.sent' });
  // Every delivery failed for 5 days already: one more failure disables it; a success makes it healthy.
  const fiveDaysAgo = new Date(Date.now() - 5 * 24 * 3600_000 - 60_000);
  r.failing = await startReceiver([], () => ({ status: 500 }));
  s.failing = subscription(ACC, r.failing.url, { failingSince: fiveDaysAgo });
  r.recovering = await startReceiver([]);
  s.recovering = subscription(ACC, r.recovering.url, { failingSince: fiveDaysAgo });
  r.otherAccount = await startReceiver([]);
  s.otherAccount = subscription(OTHER_ACC, r.otherAccount.url);
  await seedSubscriptions(dataDir, Object.values(s));

  nats = await startNatsServer();
  svc = await startService('webhook', {
    NATS_URL: nats.url,
    DATA_DIR: dataDir,
    ...sealingEnv,
    OUTBOUND_ALLOW_HTTP: 'true',
    OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    WEBHOOK_SCAN_INTERVAL_MS: '200',
  });
  nc = await connect({ servers: nats.url, ...nats.auth });
  client = createClient(v1.WebhookDeliveryServiceClient, svc.address, 10_000);
  const js = nc.jetstream();
  for (const f of facts) await publish(js, f.subject, f.payload);
  published = Date.now();
}, 90_000);

afterAll(async () => {
  client?.close();
  await nc?.close();
  await svc?.stop();
  await nats?.stop();
  await Promise.all(Object.values(r).map((x) => x.close()));
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const ids = (x: Receiver) => new Set(x.received.map((q) => q.id));
const list = (sub: Subscription, status = v1.DeliveryStatus.DELIVERY_STATUS_UNSPECIFIED) =>
  client.listDeliveries({ accountId: sub.accountId, subscriptionId: sub.id, status, pageNumber: 1, pageSize: 100 });

it('posts every fact once per matching subscription with the body and headers of the API contract, verified by standardwebhooks', async () => {
  // A request is received before its answer is written: wait for both, then for the service's log.
  await waitFor('the json receiver to get and answer every fact', () => ids(r.json).size === FACTS && r.json.succeeded.size === FACTS);
  // A healthy target got everything while the slow one had not answered once and the dead one refused.
  const lastHealthy = Math.max(...r.json.received.map((q) => q.at));
  expect(r.slow.received.length).toBeGreaterThan(0);
  expect(lastHealthy).toBeLessThan(Math.min(...r.slow.received.map((q) => q.at)) + 14_000);
  for (const q of r.json.received) {
    expect(q.verifiedWith).toHaveLength(1);
    expect(q.headers['content-type']).toBe('application/json');
    const body = JSON.parse(q.body);
    expect(Object.keys(body)).toEqual(['id', 'type', 'createdAt', 'data']);
    expect(body.id).toBe(q.id);
    const fact = facts.find((f) => f.payload.subscriber.email === body.data.email)!;
    expect(body).toEqual({ id: q.id, type: 'subscriber.created', createdAt: fact.payload.occurredAt, data: fact.payload.subscriber });
  }
  expect(r.json.received).toHaveLength(FACTS);
  expect(r.json.succeeded.size).toBe(FACTS);
  await waitFor('every delivery recorded DELIVERED', async () => (await list(s.json, v1.DeliveryStatus.DELIVERY_STATUS_DELIVERED)).totalItems === String(FACTS));
  const log = await list(s.json);
  expect(log.totalItems).toBe(String(FACTS));
  expect(log.items.every((d) => d.status === v1.DeliveryStatus.DELIVERY_STATUS_DELIVERED && d.attempts.length === 1 && d.attempts[0].statusCode === 204)).toBe(true);
  expect(log.items.every((d) => d.nextAttemptAt === undefined && ids(r.json).has(d.eventId))).toBe(true);
});

it('sends text/plain deliveries with the same bytes, and both signatures during a rotation', async () => {
  await waitFor('plain and rotated receivers', () => ids(r.plain).size === FACTS && ids(r.rotated).size === FACTS);
  const jsonBodies = new Map(r.json.received.map((q) => [q.id, q.body]));
  for (const q of r.plain.received) {
    expect(q.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(q.verifiedWith).toHaveLength(1);
    expect(q.body).toBe(jsonBodies.get(q.id));
  }
  for (const q of r.rotated.received) {
    expect(String(q.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(q.verifiedWith).toEqual([oldSecret, s.rotated.secret]); // a receiver holding either secret accepts
  }
  expect(r.otherEvent.received).toHaveLength(0);
  expect(r.otherAccount.received).toHaveLength(0);
});

it("honours a 429's Retry-After instead of the schedule", async () => {
  await waitFor('every retried delivery', () => r.retry.succeeded.size === FACTS);
  for (const id of ids(r.retry)) {
    const [first, second, ...more] = r.retry.received.filter((q) => q.id === id);
    expect(more).toHaveLength(0);
    expect(second.at - first.at).toBeGreaterThanOrEqual(900);
    expect(second.at - first.at).toBeLessThan(3_900); // the schedule alone waits at least 4 s
  }
  const log = await list(s.retry);
  expect(log.items.every((d) => d.status === v1.DeliveryStatus.DELIVERY_STATUS_DELIVERED && d.attempts.map((a) => a.statusCode).join() === '429,200')).toBe(true);
});

it('logs failed attempts with status, error and the first 2 KiB; a dead target is retried', async () => {
  await waitFor('big attempts logged', async () => (await list(s.big)).items.filter((d) => d.attempts.length > 0).length === FACTS);
  const big = (await list(s.big)).items;
  for (const d of big) {
    expect(d.status).toBe(v1.DeliveryStatus.DELIVERY_STATUS_RETRYING);
    expect(d.attempts[0]).toMatchObject({ statusCode: 500, error: 'HTTP 500', responseBody: 'x'.repeat(2048) });
    expect(Date.parse(d.nextAttemptAt!)).toBeGreaterThan(Date.parse(d.attempts[0].at));
  }
  await waitFor('dead attempts logged', async () => (await list(s.dead)).items.filter((d) => d.attempts.length > 0).length === FACTS);
  const dead = (await list(s.dead, v1.DeliveryStatus.DELIVERY_STATUS_RETRYING)).items;
  expect(dead).toHaveLength(FACTS);
  expect(dead[0].attempts[0].statusCode).toBeUndefined();
  expect(dead[0].attempts[0].error).toMatch(/connect|refused/i);
});

it('a 410 disables the subscription at once: its deliveries fail and nothing more is queued', async () => {
  // Facts fanned out after the 410 queue nothing for it; those queued before are given up unsent.
  // A request is received before its answer is written: wait for both, then for the service's log.
  await waitFor('the json receiver to get and answer every fact', () => ids(r.json).size === FACTS && r.json.succeeded.size === FACTS);
  await waitFor('gone deliveries settled', async () => {
    const all = await list(s.gone);
    return all.items.length > 0 && all.items.every((d) => d.status === v1.DeliveryStatus.DELIVERY_STATUS_FAILED);
  });
  const queued = (await list(s.gone)).items;
  expect(queued.filter((d) => d.attempts.length > 0).every((d) => d.attempts[0].statusCode === 410)).toBe(true);
  const seen = r.gone.received.length;
  expect(seen).toBeLessThan(FACTS);
  expect(seen).toBe(queued.filter((d) => d.attempts.length > 0).length);
  const later = subscriberCreated(ACC);
  await publish(nc.jetstream(), later.subject, later.payload);
  await waitFor('the later fact at the json receiver', () => r.json.received.some((q) => JSON.parse(q.body).data.email === later.payload.subscriber.email));
  expect((await list(s.gone)).items).toHaveLength(queued.length);
  expect(r.gone.received).toHaveLength(seen);
});

it('redelivers an existing delivery and sends a test event to one subscription only', async () => {
  const [delivered] = (await list(s.json)).items;
  await client.redeliver({ accountId: ACC, subscriptionId: s.json.id, deliveryId: delivered.deliveryId });
  await waitFor('the redelivery', () => r.json.received.filter((q) => q.id === delivered.eventId).length === 2);
  await waitFor('its attempt logged', async () => (await list(s.json)).items.find((d) => d.deliveryId === delivered.deliveryId)!.attempts.length === 2);

  const { deliveryId } = await client.sendTestEvent({ accountId: ACC, subscriptionId: s.plain.id });
  await waitFor('the test event', () => r.plain.received.some((q) => JSON.parse(q.body).type === 'webhook.test'));
  const test = r.plain.received.find((q) => JSON.parse(q.body).type === 'webhook.test')!;
  expect(test.verifiedWith).toHaveLength(1);
  expect((await list(s.plain)).items.find((d) => d.deliveryId === deliveryId)).toMatchObject({ type: 'webhook.test', status: v1.DeliveryStatus.DELIVERY_STATUS_DELIVERED });
  expect(r.json.received.some((q) => JSON.parse(q.body).type === 'webhook.test')).toBe(false);

  await expect(client.redeliver({ accountId: OTHER_ACC, subscriptionId: s.json.id, deliveryId: delivered.deliveryId })).rejects.toMatchObject({ code: 5 });
  await expect(client.sendTestEvent({ accountId: ACC, subscriptionId: s.otherAccount.id })).rejects.toMatchObject({ code: 5 });
});

it('stores why a subscription was disabled: 410, or 5 days in which every delivery failed', async () => {
  await waitFor('the failing and recovering targets', () => r.failing.received.length > 0 && r.recovering.succeeded.size >= FACTS);
  await waitFor('failing deliveries given up', async () => (await list(s.failing, v1.DeliveryStatus.DELIVERY_STATUS_RETRYING)).items.length === 0);
  // Counted for the alert, once per subscription disabled (its later failed deliveries do not count again).
  const metrics = await (await fetch(`http://127.0.0.1:${(svc.ready as { metricsPort: number }).metricsPort}/metrics`)).text();
  const disabled = (reason: string) => Number(new RegExp(`^webhook_subscriptions_disabled_total\\{reason="${reason}"[^}]*\\} (\\d+)`, 'm').exec(metrics)?.[1]);
  expect({ gone: disabled('TARGET_GONE'), failing: disabled('FAILING_FOR_5_DAYS') }).toEqual({ gone: 1, failing: 1 });
  await svc.stop();
  expect(await readSubscription(dataDir, ACC, s.failing.id)).toMatchObject({ active: false, disabledReason: 'FAILING_FOR_5_DAYS' });
  expect(await readSubscription(dataDir, ACC, s.recovering.id)).toMatchObject({ active: true, failingSince: null });
  expect(await readSubscription(dataDir, ACC, s.gone.id)).toMatchObject({ active: false, disabledReason: 'TARGET_GONE' });
  // Failing for seconds only: still active, failing since its first failure.
  expect(await readSubscription(dataDir, ACC, s.big.id)).toMatchObject({ active: true, disabledReason: null });
  expect((await readSubscription(dataDir, ACC, s.big.id))!.failingSince!.getTime()).toBeGreaterThan(published - 60_000);
});
