// Webhook deliveries through the real gateway and the real webhook service, to a real HTTP receiver on
// loopback that verifies every request with the `standardwebhooks` package and the secret the API
// showed: POST .../test, GET .../deliveries (the attempt log), POST .../redeliver, both signatures
// after rotate-secret, and the 404s of another account's subscription or an unknown delivery.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expectError } from './support/harness';
import { expectStatus, UNKNOWN_ID, type Api } from './support/subscriber-stack';
import { startWebhookStack, type WebhookStack } from './support/webhook-stack';

jest.setTimeout(120_000);

interface Got {
  headers: http.IncomingHttpHeaders;
  body: string;
}
let env: WebhookStack;
let a: Api;
let b: Api;
let server: http.Server;
let url: string;
const got: Got[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  // The local runner's exceptions to the outbound guard: http and loopback allowed.
  env = await startWebhookStack({ webhookEnv: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,::1/128', WEBHOOK_SCAN_INTERVAL_MS: '200' } });
  a = await env.account('deliveries-a');
  b = await env.account('deliveries-b');
});
afterAll(async () => {
  await env?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const verifies = (secret: string, g: Got) => {
  try {
    new Webhook(secret).verify(g.body, g.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

it('sends a signed test event, logs its attempt, redelivers it, and signs with both secrets after a rotation', async () => {
  const sub = expectStatus(await a.post('/webhook-subscriptions', { targetUrl: url, event: 'subscriber.created' }), 201);
  const sent = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/test`), 202);
  await waitFor('the test event', () => got.length === 1);
  const [first] = got;
  expect(verifies(sub.secret, first)).toBe(true);
  const body = JSON.parse(first.body);
  expect(Object.keys(body)).toEqual(['id', 'type', 'createdAt', 'data']);
  expect(body).toMatchObject({ id: first.headers['webhook-id'], type: 'webhook.test' });

  const path = `/webhook-subscriptions/${sub.id}/deliveries`;
  await waitFor('the attempt logged', async () => expectStatus(await a.get(path), 200).items[0]?.status === 'DELIVERED');
  const page = expectStatus(await a.get(path), 200);
  expect(page).toMatchObject({ pageNumber: 1, totalItems: 1, totalPages: 1 });
  expect(page.items[0]).toMatchObject({ deliveryId: sent.deliveryId, eventId: body.id, type: 'webhook.test', status: 'DELIVERED', nextAttemptAt: null });
  expect(page.items[0].attempts).toEqual([{ at: expect.any(String), statusCode: 204, durationMs: expect.any(Number), error: null, responseBody: '' }]);
  expect(expectStatus(await a.get(`${path}?status=FAILED`), 200).items).toEqual([]);

  expectStatus(await a.post(`${path}/${sent.deliveryId}/redeliver`), 202);
  await waitFor('the redelivery', () => got.length === 2);
  expect(got[1].headers['webhook-id']).toBe(body.id);
  expect(got[1].body).toBe(first.body); // the same bytes, signed anew
  expect(verifies(sub.secret, got[1])).toBe(true);
  await waitFor('its attempt logged', async () => expectStatus(await a.get(path), 200).items[0].attempts.length === 2);

  const { secret } = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/rotate-secret`), 200);
  expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/test`), 202);
  await waitFor('the test event after the rotation', () => got.length === 3);
  expect(verifies(secret, got[2]) && verifies(sub.secret, got[2])).toBe(true);

  expectError(await b.get(path), 404, 'webhook_subscription_not_found');
  expectError(await b.post(`/webhook-subscriptions/${sub.id}/test`), 404, 'webhook_subscription_not_found');
  expectError(await a.post(`${path}/${UNKNOWN_ID}/redeliver`), 404, 'webhook_delivery_not_found');
  expect(got).toHaveLength(3);
});
