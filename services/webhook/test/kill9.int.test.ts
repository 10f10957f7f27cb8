// kill -9 of the webhook service while deliveries are mid-retry (an attempt in flight at a receiver that
// holds the request): after a restart on the same data, every delivery succeeds exactly once, the facts
// published while it was down are delivered too, and no delivery ever had two attempts at once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { createClient } from '@mailer/kit';
import { publish } from '@mailer/nats';
import { webhookDeliveriesV1 as v1 } from '@mailer/proto';
import { outboxOf, startNatsServer, startService, waitFor, waitForSettled, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { newSecret } from '../src/domain/subscription';
import { sealingEnv, seedSubscriptions, subscriberCreated, subscription } from './support/fixtures';
import { startReceiver, type Receiver } from './support/receivers';

jest.setTimeout(150_000);

const ACC = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';
let dataDir: string;
let nats: NatsServerHandle;
let svc: RunningService | undefined;
let nc: NatsConnection;
let receiver: Receiver;

afterAll(async () => {
  await nc?.close();
  await svc?.stop();
  await nats?.stop();
  await receiver?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

it('loses nothing and never attempts one delivery twice at once across a kill -9 mid-retry', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-kill9-'));
  const secret = newSecret();
  let restarted = false;
  // Before the kill: each delivery's first attempt fails (500), its retry hangs (held until the kill).
  receiver = await startReceiver([secret], (_req, nth) => (restarted ? { status: 200 } : nth === 1 ? { status: 500 } : 'hang'));
  const sub = subscription(ACC, receiver.url, { secret });
  await seedSubscriptions(dataDir, [sub]);
  nats = await startNatsServer();
  const env = {
    NATS_URL: nats.url,
    DATA_DIR: dataDir,
    ...sealingEnv,
    OUTBOUND_ALLOW_HTTP: 'true',
    OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1',
    WEBHOOK_ATTEMPT_CLAIM_SECONDS: '16',
    WEBHOOK_SCAN_INTERVAL_MS: '200',
  };
  svc = await startService('webhook', env);
  nc = await connect({ servers: nats.url, ...nats.auth });
  const js = nc.jetstream();
  const before = Array.from({ length: 6 }, () => subscriberCreated(ACC));
  for (const f of before) await publish(js, f.subject, f.payload);
  const attemptsOf = (id: string) => receiver.received.filter((q) => q.id === id).length;
  await waitFor('every delivery in its retry', () => new Set(receiver.received.map((q) => q.id)).size === before.length && receiver.received.every((q) => attemptsOf(q.id) >= 2));

  await svc.kill9();
  svc = undefined;
  const during = Array.from({ length: 4 }, () => subscriberCreated(ACC));
  for (const f of during) await publish(js, f.subject, f.payload);
  restarted = true;
  svc = await startService('webhook', env);

  await waitFor('every delivery to succeed', () => receiver.succeeded.size === before.length + during.length, 90_000);
  // Every job and fact handled (the barrier), then counted: no second success, no late duplicate.
  await waitForSettled(nc, { outboxes: [outboxOf(svc)] });
  expect([...receiver.succeeded.values()].every((n) => n === 1)).toBe(true);
  expect(receiver.received.every((q) => q.concurrent === 1 && q.verifiedWith.length === 1)).toBe(true);
  const bodies = receiver.received.map((q) => JSON.parse(q.body).data.email);
  for (const f of [...before, ...during]) expect(bodies).toContain(f.payload.subscriber.email);

  const client = createClient(v1.WebhookDeliveryServiceClient, svc.address, 10_000);
  try {
    const log = await client.listDeliveries({ accountId: ACC, subscriptionId: sub.id, status: 0, pageNumber: 1, pageSize: 100 });
    expect(log.items).toHaveLength(before.length + during.length);
    expect(log.items.every((d) => d.status === v1.DeliveryStatus.DELIVERY_STATUS_DELIVERED)).toBe(true);
    const codes = (d: v1.Delivery) => d.attempts.map((a) => a.statusCode).join();
    // The attempt the kill cut short is not logged; the one before it and the one after are.
    expect(log.items.filter((d) => before.some((f) => receiver.received.find((q) => q.id === d.eventId && JSON.parse(q.body).data.email === f.payload.subscriber.email))).map(codes)).toEqual(before.map(() => '500,200'));
  } finally {
    client.close();
  }
});
