// A target that the outbound guard refuses when the delivery is attempted (here: loopback, with the
// production setting of no allowed ranges) is a failed attempt with the guard's reason in the log and
// no request ever reaching it (the API contract: "a failed attempt when it changes later").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { createClient } from '@mailer/kit';
import { publish } from '@mailer/nats';
import { webhookDeliveriesV1 as v1 } from '@mailer/proto';
import { startNatsServer, startService, waitFor, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { sealingEnv, seedSubscriptions, subscriberCreated, subscription } from './support/fixtures';
import { startReceiver, type Receiver } from './support/receivers';

jest.setTimeout(90_000);

const ACC = '5d4c3b2a-1908-4f7e-8d6c-5b4a39281706';
let dataDir: string;
let nats: NatsServerHandle;
let svc: RunningService;
let nc: NatsConnection;
let receiver: Receiver;

afterAll(async () => {
  await nc?.close();
  await svc?.stop();
  await nats?.stop();
  await receiver?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

it('records a refused target as a failed attempt and never connects to it', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-guard-'));
  receiver = await startReceiver([]);
  const sub = subscription(ACC, receiver.url); // saved while the operator allowed loopback
  await seedSubscriptions(dataDir, [sub]);
  nats = await startNatsServer();
  svc = await startService('webhook', { NATS_URL: nats.url, DATA_DIR: dataDir, ...sealingEnv, OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '', WEBHOOK_SCAN_INTERVAL_MS: '200' });
  nc = await connect({ servers: nats.url, ...nats.auth });
  const fact = subscriberCreated(ACC);
  await publish(nc.jetstream(), fact.subject, fact.payload);

  const client = createClient(v1.WebhookDeliveryServiceClient, svc.address, 10_000);
  try {
    const list = () => client.listDeliveries({ accountId: ACC, subscriptionId: sub.id, status: 0, pageNumber: 1, pageSize: 10 });
    await waitFor('the attempt', async () => (await list()).items[0]?.attempts.length === 1);
    const [d] = (await list()).items;
    expect(d.status).toBe(v1.DeliveryStatus.DELIVERY_STATUS_RETRYING);
    expect(d.attempts[0].statusCode).toBeUndefined();
    expect(d.attempts[0].error).toMatch(/not allowed|non-public|loopback/i);
    expect(receiver.received).toHaveLength(0);
  } finally {
    client.close();
  }
});
