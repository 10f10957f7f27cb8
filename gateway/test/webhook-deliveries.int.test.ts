// The delivery paths of the webhook API through the real gateway and the real webhook service, with a
// real HTTP receiver on loopback (allowed as the local settings allow it): a test event is delivered
// and verifies with the `standardwebhooks` package under the secret the API showed, both signatures
// verify after a rotation, the delivery log shows the attempts, redelivery sends the same webhook-id
// again, and other accounts' subscriptions and unknown deliveries are 404.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expectError, sleep } from './support/harness';
import { expectStatus, UNKNOWN_ID, type Api } from './support/subscriber-stack';
import { startWebhookStack, type WebhookStack } from './support/webhook-stack';

jest.setTimeout(120_000);

interface Hit {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let env: WebhookStack;
let a: Api;
let b: Api;
let server: http.Server;
let target: string;
const hits: Hit[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(req.url === '/gone' ? 410 : 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  env = await startWebhookStack({ webhookEnv: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_SCAN_INTERVAL_MS: '200' } });
  a = await env.account('deliveries-a');
  b = await env.account('deliveries-b');
});
afterAll(async () => {
  await env?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

/** The receiver's requests with this webhook-id, once at least `count` arrived (20 s at most, for a loaded machine). */
async function hitsOf(eventId: string, count = 1): Promise<Hit[]> {
  for (let i = 0; i < 200; i++) {
    const found = hits.filter((h) => h.headers['webhook-id'] === eventId);
    if (found.length >= count) return found;
    await sleep(100);
  }
  throw new Error(`fewer than ${count} deliveries of ${eventId} arrived`);
}

async function deliveryOf(api: Api, subscriptionId: string, deliveryId: string, status: string) {
  for (let i = 0; i < 200; i++) {
    const page = expectStatus(await api.get(`/webhook-subscriptions/${subscriptionId}/deliveries`), 200);
    const d = page.items.find((x: { deliveryId: string }) => x.deliveryId === deliveryId);
    if (d?.status === status) return d;
    await sleep(100);
  }
  throw new Error(`delivery ${deliveryId} never became ${status}`);
}

const verifies = (secret: string, hit: Hit) => {
  try {
    new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

it('delivers a test event signed with the secret the API showed, logs the attempt, and redelivers it', async () => {
  const sub = expectStatus(await a.post('/webhook-subscriptions', { targetUrl: target, event: '*' }), 201);
  const { deliveryId } = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/test`), 202);
  const delivered = await deliveryOf(a, sub.id, deliveryId, 'DELIVERED');
  expect(delivered).toMatchObject({ deliveryId, type: 'webhook.test', nextAttemptAt: null, attempts: [{ statusCode: 204, error: null }] });
  const [hit] = await hitsOf(delivered.eventId);
  expect(verifies(sub.secret, hit)).toBe(true);
  expect(JSON.parse(hit.body)).toMatchObject({ id: delivered.eventId, type: 'webhook.test' });

  expect(expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/deliveries/${deliveryId}/redeliver`), 202)).toEqual({ deliveryId });
  const again = await hitsOf(delivered.eventId, 2);
  expect(again.every((h) => verifies(sub.secret, h))).toBe(true);

  const failed = expectStatus(await a.get(`/webhook-subscriptions/${sub.id}/deliveries?status=FAILED`), 200);
  expect(failed).toMatchObject({ items: [], totalItems: 0 });
  expectError(await a.get(`/webhook-subscriptions/${sub.id}/deliveries?status=LOST`), 400, 'validation_failed');
});

it('signs with the old and the new secret after a rotation, so receivers with either accept', async () => {
  const sub = expectStatus(await a.post('/webhook-subscriptions', { targetUrl: target, event: 'subscriber.created' }), 201);
  const { secret } = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/rotate-secret`), 200);
  const { deliveryId } = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/test`), 202);
  const delivered = await deliveryOf(a, sub.id, deliveryId, 'DELIVERED');
  const [hit] = await hitsOf(delivered.eventId);
  expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(2);
  expect([verifies(secret, hit), verifies(sub.secret, hit)]).toEqual([true, true]);
});

it('a 410 disables the subscription (TARGET_GONE); PUT active: true re-enables it fresh', async () => {
  const gone = target.replace('/hook', '/gone');
  const sub = expectStatus(await a.post('/webhook-subscriptions', { targetUrl: gone, event: '*' }), 201);
  const { deliveryId } = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/test`), 202);
  await deliveryOf(a, sub.id, deliveryId, 'FAILED');
  let current = expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200);
  for (let i = 0; i < 100 && current.active; i++) {
    await sleep(100);
    current = expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200);
  }
  expect(current).toMatchObject({ active: false, disabledReason: 'TARGET_GONE' });
  // A PUT that leaves `active` out keeps it disabled with its reason.
  expect(expectStatus(await a.put(`/webhook-subscriptions/${sub.id}`, { targetUrl: gone, event: '*' }), 200)).toMatchObject({ active: false, disabledReason: 'TARGET_GONE' });
  expect(expectStatus(await a.put(`/webhook-subscriptions/${sub.id}`, { targetUrl: target, event: '*', active: true }), 200)).toMatchObject({ active: true, disabledReason: null });
  const next = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/test`), 202);
  await deliveryOf(a, sub.id, next.deliveryId, 'DELIVERED');
});

it('answers 404 for other accounts\' subscriptions and unknown deliveries', async () => {
  const sub = expectStatus(await a.post('/webhook-subscriptions', { targetUrl: target, event: '*' }), 201);
  expectError(await b.get(`/webhook-subscriptions/${sub.id}/deliveries`), 404, 'webhook_subscription_not_found');
  expectError(await b.post(`/webhook-subscriptions/${sub.id}/test`), 404, 'webhook_subscription_not_found');
  expectError(await b.post(`/webhook-subscriptions/${sub.id}/deliveries/${UNKNOWN_ID}/redeliver`), 404, 'webhook_subscription_not_found');
  expectError(await a.post(`/webhook-subscriptions/${sub.id}/deliveries/${UNKNOWN_ID}/redeliver`), 404, 'webhook_delivery_not_found');
  expectError(await a.get(`/webhook-subscriptions/${UNKNOWN_ID}/deliveries`), 404, 'webhook_subscription_not_found');
});
