// The headers every answer carries (middleware/security-headers.ts), through the real gateway:
// nosniff everywhere; no-store on the API, its errors, health, the document and the admin listener;
// HSTS when the request came over https through a trusted proxy only; reader pages forwarded to the
// real messaging service keep the owner's Content-Security-Policy and Cache-Control.
import { freePort, startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { createAccount, gatewaySecrets, startGateway, type GatewayHandle } from './support/harness';

let nats: NatsServerHandle;
let subscriber: RunningService;
let messaging: RunningService;
let trusting: GatewayHandle; // GATEWAY_TRUST_PROXY=1
let direct: GatewayHandle; // GATEWAY_TRUST_PROXY=0: X-Forwarded-Proto is the client's word
let apiKey: string;

beforeAll(async () => {
  nats = await startNatsServer();
  subscriber = await startService('subscriber', { NATS_URL: nats.url });
  const httpAddr = `127.0.0.1:${await freePort()}`;
  messaging = await startService('messaging', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_HTTP_ADDR: httpAddr });
  const env = { NATS_URL: nats.url, ...gatewaySecrets(), SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_HTTP_ADDR: httpAddr, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' };
  trusting = await startGateway({ ...env, GATEWAY_TRUST_PROXY: '1' });
  direct = await startGateway({ ...env, GATEWAY_TRUST_PROXY: '0' });
  ({ apiKey } = await createAccount(trusting, 'headers'));
}, 120_000);

afterAll(async () => {
  await Promise.all([trusting?.stop(), direct?.stop()]);
  await messaging?.stop();
  await subscriber?.stop();
  await nats?.stop();
});

const get = (base: string, path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers, redirect: 'manual' });
const HTTPS = { 'x-forwarded-proto': 'https' };

it('API answers (success, 401, 404, 400 key in URL), health and the OpenAPI document: nosniff and no-store', async () => {
  const answers = [
    await get(trusting.url, '/subscribers', { 'x-api-key': apiKey }),
    await get(trusting.url, '/subscribers', { 'x-api-key': 'mk_wrong' }),
    await get(trusting.url, '/no-such-route', { 'x-api-key': apiKey }),
    await get(trusting.url, `/subscribers?apiKey=${apiKey}`),
    await get(trusting.url, '/healthz'),
    await get(trusting.url, '/openapi.json'),
  ];
  expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 400, 200, 200]);
  for (const r of answers) {
    expect({ url: r.url, nosniff: r.headers.get('x-content-type-options'), cache: r.headers.get('cache-control') }).toEqual({ url: r.url, nosniff: 'nosniff', cache: 'no-store' });
    expect(r.headers.get('strict-transport-security')).toBeNull(); // plain http
  }
});

it('the admin listener: nosniff and no-store, also on its refusals', async () => {
  const ok = await get(trusting.adminUrl, '/admin/accounts/00000000-0000-4000-8000-000000000000', { authorization: `Bearer ${trusting.adminToken}` });
  const refused = await get(trusting.adminUrl, '/admin/accounts', { authorization: 'Bearer wrong' });
  expect([ok.status, refused.status]).toEqual([404, 401]);
  for (const r of [ok, refused]) {
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('cache-control')).toBe('no-store');
  }
});

it('HSTS when the request arrived over https through a trusted proxy; never on the word of a client the gateway does not trust', async () => {
  const viaProxy = await get(trusting.url, '/subscribers', { 'x-api-key': apiKey, ...HTTPS });
  expect(viaProxy.headers.get('strict-transport-security')).toBe('max-age=31536000');
  expect((await get(trusting.url, '/healthz', HTTPS)).headers.get('strict-transport-security')).toBe('max-age=31536000');
  expect((await get(trusting.url, '/healthz', { 'x-forwarded-proto': 'http' })).headers.get('strict-transport-security')).toBeNull();
  expect((await get(direct.url, '/healthz', HTTPS)).headers.get('strict-transport-security')).toBeNull();
});

it('reader pages forwarded to their owner keep its Content-Security-Policy, and get nosniff and HSTS', async () => {
  const page = await get(trusting.url, '/u/not-a-valid-token', HTTPS);
  expect(page.status).toBe(404);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  expect(page.headers.get('strict-transport-security')).toBe('max-age=31536000');
});
