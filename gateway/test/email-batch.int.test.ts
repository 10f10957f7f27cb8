// POST /email-messages/batch end to end: a real nats-server, the real subscriber and messaging
// services and a real gateway. Each message is answered on its own, in request order, as POST
// /email-messages would answer it alone (schema refusals, unknown templates, render failures,
// invalid addresses, suppressed and BLOCKED recipients, reserved names), the accepted ones are
// stored and queued, per-message idempotency keys replay or refuse a reused key, the whole request
// is one unit of the rate limit, and a list out of bounds refuses the request.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, spawnReady, startService, type RunningProcess, type RunningService } from '@mailer/testing';
import { schemaErrors } from '../src/openapi/validator';
import { adminRequest, createAccount, expectError, startGateway, startStack, type GatewayHandle, type Stack } from './support/harness';
import { api, expectStatus, UUID_PATTERN, type Api } from './support/subscriber-stack';

let stack: Stack;
let subscriber: RunningService;
let messaging: RunningProcess;
let gw: GatewayHandle;
let dataDir: string;
let acme: Api;

async function account(name: string, limits = { perMinute: 1_000_000, perHour: 1_000_000 }): Promise<Api> {
  const { accountId, apiKey } = await createAccount(gw, name);
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, limits);
  return api(gw, apiKey, accountId);
}

async function setUp(a: Api): Promise<void> {
  expectStatus(await a.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' }), 201);
  expectStatus(await a.post('/email-templates', { name: 'receipt', subject: 'Receipt {{ orderId }} for {{ subscriber.firstName | default: "you" }}', html: '<p>Order {{ orderId }}</p>' }), 201);
  // Saved (a template that passes a limit with no data at all is refused at save); it passes the
  // limit through the caller's values.
  expectStatus(await a.post('/email-templates', { name: 'hostile', subject: 's', html: '{% if big %}{% for i in (1..100000000) %}xxxxxxxxxxxxxxxx{% endfor %}{% endif %}' }), 201);
}

beforeAll(async () => {
  stack = await startStack(0);
  subscriber = await startService('subscriber', { NATS_URL: stack.nats.url, MESSAGING_GRPC_ADDR: '127.0.0.1:1', SEGMENT_GRPC_ADDR: '127.0.0.1:1', FORM_GRPC_ADDR: '127.0.0.1:1', RSS_GRPC_ADDR: '127.0.0.1:1' });
  const messagingAddress = `127.0.0.1:${await freePort()}`;
  gw = await startGateway({ NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messagingAddress, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-messaging-'));
  messaging = await spawnReady('services/messaging/dist/main.js', {
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    NATS_URL: stack.nats.url,
    DATA_DIR: dataDir,
    MESSAGING_GRPC_ADDR: messagingAddress,
    SUBSCRIBER_GRPC_ADDR: subscriber.address,
    MESSAGING_HTTP_ADDR: `127.0.0.1:${await freePort()}`,
    BOUNCE_SMTP_PORT: String(await freePort()),
    TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
    PUBLIC_BASE_URL: 'https://mail.example.test',
    MAIL_SEND_PAUSED: 'true',
  });
  acme = await account('acme');
  await setUp(acme);
  expectStatus(await acme.post('/suppressions', { email: 'suppressed@example.org' }), 201);
  expectStatus(await acme.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann' }), 201);
  expectStatus(await acme.post('/subscribers', { email: 'blocked@example.org', subscriberStatus: 'BLOCKED' }), 201);
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await messaging?.stop();
  await subscriber?.stop();
  await stack?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const batch = (a: Api, messages: unknown[], headers?: Record<string, string>) => a.post('/email-messages/batch', { messages }, headers);

it('answers every message on its own, in request order, as POST /email-messages would; one refusal never spoils the others', async () => {
  const res = expectStatus(
    await batch(acme, [
      { name: 'receipt', email: 'Ann@Example.org', substitutionData: { orderId: 'o-1' }, eventProperties: { orderId: 'o-1' } },
      { name: 'no-such-template', email: 'bob@example.org' },
      { name: 'receipt', email: 'not an address' },
      { name: 'receipt', email: 'suppressed@example.org' },
      { name: 'receipt', email: 'blocked@example.org' },
      { name: 'receipt' },
      { name: 'hostile', email: 'cid@example.org', substitutionData: { big: true } },
      { name: 'receipt', email: 'dan@example.org', substitutionData: { links: 'x' } },
      { name: 'receipt', email: 'eve@example.org', unknownMember: true },
      { name: 'receipt', email: 'fay@example.org', substitutionData: { orderId: 'o-9' } },
    ]),
    200,
  );
  expect(schemaErrors('SendEmailMessagesResult', res)).toEqual([]);
  expect(res.results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const [ann, unknownTemplate, badAddress, suppressed, blocked, noEmail, hostile, reserved, unknownMember, fay] = res.results;
  expect(ann).toEqual({ index: 0, messageId: expect.stringMatching(UUID_PATTERN), status: 'QUEUED' });
  expect(unknownTemplate).toMatchObject({ index: 1, errorId: 'template_not_found' });
  expect(badAddress).toMatchObject({ index: 2, errorId: 'invalid_email' });
  expect(suppressed).toEqual({ index: 3, messageId: expect.stringMatching(UUID_PATTERN), status: 'SUPPRESSED' });
  expect(blocked).toEqual({ index: 4, messageId: expect.stringMatching(UUID_PATTERN), status: 'SUPPRESSED' });
  expect(noEmail).toMatchObject({ index: 5, errorId: 'validation_failed' });
  expect(hostile).toMatchObject({ index: 6, errorId: 'template_render_failed' });
  expect(reserved).toMatchObject({ index: 7, errorId: 'reserved_substitution_key' });
  expect(unknownMember).toMatchObject({ index: 8, errorId: 'unknown_property' });
  expect(fay).toMatchObject({ index: 9, status: 'QUEUED' });
  // The same answers a single send gives.
  expectError(await acme.post('/email-messages', { name: 'no-such-template', email: 'bob@example.org' }), 404, 'template_not_found');
  expectError(await acme.post('/email-messages', { name: 'hostile', email: 'cid@example.org', substitutionData: { big: true } }), 422, 'template_render_failed');
  // What was accepted is stored as a single send stores it; nothing of the refused ones.
  const stored = expectStatus(await acme.get(`/email-messages/${ann.messageId}`), 200);
  expect(stored).toMatchObject({ kind: 'TRANSACTIONAL', email: 'ann@example.org', subject: 'Receipt o-1 for Ann', status: 'QUEUED', eventProperties: { orderId: 'o-1' }, broadcastId: null });
  expect(expectStatus(await acme.get(`/email-messages/${blocked.messageId}`), 200)).toMatchObject({ status: 'SUPPRESSED', suppressionReason: 'BLOCKED' });
  expect(expectStatus(await acme.get('/email-messages?email=cid@example.org'), 200).totalItems).toBe(0);
});

it('idempotencyKey per message: the same message again answers the first; another message with that key is refused; duplicates in one request are one message', async () => {
  const m = (orderId: string, key: string) => ({ name: 'receipt', email: 'gus@example.org', substitutionData: { orderId, n: { a: 1, b: 2 } }, idempotencyKey: key });
  const first = expectStatus(await batch(acme, [m('o-1', 'k-1'), m('o-2', 'k-2'), m('o-2', 'k-2')]), 200).results;
  expect(first[2]).toEqual({ ...first[1], index: 2 });
  // member order does not make another request
  const again = expectStatus(await batch(acme, [{ ...m('o-1', 'k-1'), substitutionData: { n: { b: 2, a: 1 }, orderId: 'o-1' } }, m('o-3', 'k-2'), m('o-4', 'k-3')]), 200).results;
  expect(again[0]).toEqual(first[0]);
  expect(again[1]).toMatchObject({ index: 1, errorId: 'idempotency_key_reused' });
  expect(again[2]).toMatchObject({ index: 2, status: 'QUEUED' });
  expect(expectStatus(await acme.get('/email-messages?email=gus@example.org'), 200).totalItems).toBe(3);
});

it('the whole request is one unit of the rate limit', async () => {
  const limited = await account('limited', { perMinute: 10, perHour: 100 });
  await setUp(limited);
  const before = Number((await limited.get('/email-templates')).headers.get('ratelimit-remaining'));
  const messages = Array.from({ length: 500 }, (_, i) => ({ name: 'receipt', email: `r${i}@example.org`, substitutionData: { orderId: `o-${i}` } }));
  const res = await batch(limited, messages);
  const body = expectStatus(res, 200);
  expect(body.results).toHaveLength(500);
  expect(body.results.every((r: { status?: string }, i: number) => r.status === 'QUEUED' && (r as { index: number }).index === i)).toBe(true);
  expect(Number(res.headers.get('ratelimit-remaining'))).toBe(before - 1);
});

it('refuses an empty list, more than 500 messages and a body without messages as a whole, storing nothing', async () => {
  expectError(await batch(acme, []), 400, 'validation_failed');
  const tooMany = Array.from({ length: 501 }, (_, i) => ({ name: 'receipt', email: `many${i}@example.org` }));
  expectError(await batch(acme, tooMany), 400, 'validation_failed');
  expectError(await acme.post('/email-messages/batch', { name: 'receipt', email: 'x@example.org' }), 400, 'unknown_property');
  expect(expectStatus(await acme.get('/email-messages?email=many0@example.org'), 200).totalItems).toBe(0);
  // GET on the batch path is no message id
  expectError(await acme.get('/email-messages/batch'), 405, 'method_not_allowed');
});
