// POST /email-messages and the reads, end to end: a real nats-server, the real subscriber and
// messaging services and a real gateway. What an integrator notices: 202 with a message that is
// stored (GET shows it QUEUED with its history) and a delivery job on the JOBS stream; the precise
// errors of the API contract (404 template, 422 render failure, 409 no sender, 400 reserved key / bad bodies,
// never a 5xx); suppressed addresses and BLOCKED subscribers recorded SUPPRESSED with no job;
// Idempotency-Key replays; tenant isolation; pagination and filters, newest first.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, spawnReady, startService, type RunningProcess, type RunningService } from '@mailer/testing';
import { schemaErrors } from '../src/openapi/validator';
import { adminRequest, call, createAccount, expectError, startGateway, startStack, waitForLog, type ApiResponse, type GatewayHandle, type Stack } from './support/harness';
import { api, expectStatus, INSTANT_PATTERN, UNKNOWN_ID, UUID_PATTERN, type Api } from './support/subscriber-stack';

let stack: Stack;
let subscriber: RunningService;
let messaging: RunningProcess;
let gw: GatewayHandle;
let dataDir: string;
let messagingEnv: NodeJS.ProcessEnv;
let acme: Api;
let other: Api;
let empty: Api;

const SUPPRESSED_ADDRESS = 'suppressed@example.org';

async function account(name: string): Promise<Api> {
  const { accountId, apiKey } = await createAccount(gw, name);
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
  return api(gw, apiKey, accountId);
}

/**
 * Jobs on JOBS for the account, read message by message (STREAM.MSG.GET) rather than with a
 * consumer: JOBS is a work queue, which refuses a second consumer overlapping the delivery worker's
 * (jobs.email.>), and reading this way leaves every job in place for that worker.
 */
async function emailJobs(accountId: string): Promise<Array<{ accountId: string; messageId: string }>> {
  const subject = `jobs.email.${accountId}`;
  const jsm = await stack.nc.jetstreamManager();
  const { state } = await jsm.streams.info('JOBS');
  const out: Array<{ accountId: string; messageId: string }> = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
    const m = await jsm.streams.getMessage('JOBS', { seq }).catch(() => null); // null: acked and removed
    if (m?.subject === subject) out.push(m.json());
  }
  return out;
}

const send = (a: Api, body: Record<string, unknown>, headers?: Record<string, string>) => a.post('/email-messages', body, headers);

async function setUp(a: Api, template: Record<string, unknown> = {}): Promise<void> {
  expectStatus(await a.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' }), 201);
  expectStatus(
    await a.post('/email-templates', {
      name: 'welcome',
      subject: 'Hello {{ subscriber.firstName | default: "friend" }}',
      html: '<html><body><p>Hi {{ name }}, order {{ order.id }}</p><a href="https://shop.example/orders/{{ order.id }}">Your order</a><a href="mailto:help@shop.example">help</a></body></html>',
      ...template,
    }),
    201,
  );
}

beforeAll(async () => {
  stack = await startStack(0);
  subscriber = await startService('subscriber', { NATS_URL: stack.nats.url, MESSAGING_GRPC_ADDR: '127.0.0.1:1', SEGMENT_GRPC_ADDR: '127.0.0.1:1', FORM_GRPC_ADDR: '127.0.0.1:1', RSS_GRPC_ADDR: '127.0.0.1:1' });
  const messagingAddress = `127.0.0.1:${await freePort()}`;
  gw = await startGateway({ NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_GRPC_ADDR: messagingAddress, GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000' });
  acme = await account('acme');
  other = await account('other');
  empty = await account('empty');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-messaging-'));
  messagingEnv = {
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
    // Acceptance alone: no delivery worker, so jobs stay on JOBS and messages QUEUED (delivery has its own tests).
    MAIL_SEND_PAUSED: 'true',
  };
  messaging = await spawnReady('services/messaging/dist/main.js', messagingEnv);
  await setUp(acme);
  await setUp(other);
  expectStatus(await acme.post('/suppressions', { email: SUPPRESSED_ADDRESS }), 201);
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await messaging?.stop();
  await subscriber?.stop();
  await stack?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('POST /email-messages', () => {
  it('answers 202 QUEUED, stores the message (GET shows it with its history) and puts one email job on JOBS', async () => {
    expectStatus(await acme.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann' }), 201);
    const res = await send(acme, { name: 'welcome', email: ' Ann@Example.org ', substitutionData: { name: 'Ann <3', order: { id: 'o-1' } }, eventProperties: { orderId: 'o-1', nested: { n: 1 } } });
    const accepted = expectStatus(res, 202);
    expect(accepted).toEqual({ messageId: expect.stringMatching(UUID_PATTERN), status: 'QUEUED' });
    expect(schemaErrors('EmailMessageAccepted', accepted)).toEqual([]);

    const message = expectStatus(await acme.get(`/email-messages/${accepted.messageId}`), 200);
    expect(schemaErrors('EmailMessage', message)).toEqual([]);
    expect(message).toMatchObject({
      messageId: accepted.messageId,
      kind: 'TRANSACTIONAL',
      templateName: 'welcome',
      email: 'ann@example.org',
      subscriberId: expect.stringMatching(UUID_PATTERN),
      subject: 'Hello Ann',
      status: 'QUEUED',
      suppressionReason: null,
      sentAt: null,
      bounce: null,
      openCount: 0,
      attempts: [],
      eventProperties: { orderId: 'o-1', nested: { n: 1 } },
      history: [{ status: 'QUEUED', at: message.createdAt }],
    });
    expect(message.createdAt).toMatch(INSTANT_PATTERN);

    const jobs = await emailJobs(acme.accountId);
    expect(jobs).toContainEqual({ accountId: acme.accountId, messageId: accepted.messageId });
    expect(jobs.filter((j) => j.messageId === accepted.messageId)).toHaveLength(1);
  });

  it('404 template_not_found for an unknown template (nothing stored)', async () => {
    expectError(await send(acme, { name: 'nope', email: 'x@example.org' }), 404, 'template_not_found');
    expect(expectStatus(await acme.get('/email-messages?email=x@example.org'), 200).totalItems).toBe(0);
  });

  it('422 template_render_failed with the engine\'s message for a template that passes a render limit (nothing queued)', async () => {
    // Hostile with the caller's data only (one hostile alone is refused at save: email-catalog.int.test.ts).
    expectStatus(await acme.post('/email-templates', { name: 'hostile', subject: 'x', html: '{% for i in (1..n) %}xxxxxxxxxxxxxxxxxxxxxxxx{% endfor %}' }), 201);
    const res = await send(acme, { name: 'hostile', email: 'h@example.org', substitutionData: { n: 100_000_000 } });
    expectError(res, 422, 'template_render_failed');
    expect(res.json.message).toMatch(/html/);
    expect(expectStatus(await acme.get('/email-messages?templateName=hostile'), 200).totalItems).toBe(0);
  });

  it('a template whose subject, html and text all render empty is accepted and stored (an empty part is no server error)', async () => {
    expectStatus(await acme.post('/email-templates', { name: 'all-missing', subject: '{{ s }}', html: '{{ h }}', text: '{{ t }}' }), 201);
    const accepted = expectStatus(await send(acme, { name: 'all-missing', email: 'e@example.org' }), 202);
    const message = expectStatus(await acme.get(`/email-messages/${accepted.messageId}`), 200);
    expect(message).toMatchObject({ status: 'QUEUED', subject: '', templateName: 'all-missing' });
  });

  it('409 sender_profile_required when the account has no sender profile', async () => {
    expectStatus(await empty.post('/email-templates', { name: 'welcome', subject: 's', html: '<p>x</p>' }), 201);
    expectError(await send(empty, { name: 'welcome', email: 'a@example.org' }), 409, 'sender_profile_required');
  });

  it('400 reserved_substitution_key and 400 invalid_email', async () => {
    expectError(await send(acme, { name: 'welcome', email: 'a@example.org', substitutionData: { links: {} } }), 400, 'reserved_substitution_key');
    expectError(await send(acme, { name: 'welcome', email: 'not-an-address' }), 400, 'invalid_email');
  });

  it('a suppressed address is recorded SUPPRESSED with its reason and gets no job', async () => {
    const before = (await emailJobs(acme.accountId)).length;
    const accepted = expectStatus(await send(acme, { name: 'welcome', email: SUPPRESSED_ADDRESS }), 202);
    expect(accepted.status).toBe('SUPPRESSED');
    const message = expectStatus(await acme.get(`/email-messages/${accepted.messageId}`), 200);
    expect(message).toMatchObject({ status: 'SUPPRESSED', suppressionReason: 'MANUAL', history: [{ status: 'SUPPRESSED' }] });
    const jobs = await emailJobs(acme.accountId);
    expect(jobs.map((j) => j.messageId)).not.toContain(accepted.messageId);
    expect(jobs).toHaveLength(before);
  });

  it('a BLOCKED subscriber is SUPPRESSED (reason BLOCKED); an UNSUBSCRIBED one still gets transactional mail', async () => {
    expectStatus(await acme.post('/subscribers', { email: 'blocked@example.org', subscriberStatus: 'BLOCKED' }), 201);
    expectStatus(await acme.post('/subscribers', { email: 'gone@example.org', subscriberStatus: 'UNSUBSCRIBED' }), 201);
    const blocked = expectStatus(await send(acme, { name: 'welcome', email: 'blocked@example.org' }), 202);
    expect(blocked.status).toBe('SUPPRESSED');
    expect(expectStatus(await acme.get(`/email-messages/${blocked.messageId}`), 200)).toMatchObject({ status: 'SUPPRESSED', suppressionReason: 'BLOCKED' });
    const unsubscribed = expectStatus(await send(acme, { name: 'welcome', email: 'gone@example.org' }), 202);
    expect(unsubscribed.status).toBe('QUEUED');
    expect((await emailJobs(acme.accountId)).map((j) => j.messageId)).toEqual(expect.arrayContaining([unsubscribed.messageId]));
  });

  it('the suppression of one account does not touch another account\'s mail to that address', async () => {
    expect(expectStatus(await send(other, { name: 'welcome', email: SUPPRESSED_ADDRESS }), 202).status).toBe('QUEUED');
  });

  it('an address taken off the suppression list is mailed again', async () => {
    const a = await account('unsuppress');
    await setUp(a);
    expectStatus(await a.post('/suppressions', { email: 'again@example.org' }), 201);
    expect(expectStatus(await send(a, { name: 'welcome', email: 'again@example.org' }), 202).status).toBe('SUPPRESSED');
    expectStatus(await a.delete('/suppressions/again@example.org'), 204);
    expect(expectStatus(await send(a, { name: 'welcome', email: 'again@example.org' }), 202).status).toBe('QUEUED');
  });

  it('Idempotency-Key: a replay answers the same messageId and stores one message', async () => {
    const body = { name: 'welcome', email: 'idem@example.org' };
    const first = expectStatus(await send(acme, body, { 'Idempotency-Key': 'send-1' }), 202);
    const replay = await send(acme, body, { 'Idempotency-Key': 'send-1' });
    expect(expectStatus(replay, 202)).toEqual(first);
    expect(replay.headers.get('idempotency-replay')).toBe('true');
    const page = expectStatus(await acme.get('/email-messages?email=idem@example.org'), 200);
    expect(page.totalItems).toBe(1);
    expect((await emailJobs(acme.accountId)).filter((j) => j.messageId === first.messageId)).toHaveLength(1);
  });

  it('refuses unknown properties except inside substitutionData and eventProperties', async () => {
    const res = await send(acme, { name: 'welcome', email: 'a@example.org', colour: 'red' });
    expectError(res, 400, 'unknown_property');
    expect(expectStatus(await send(acme, { name: 'welcome', email: 'free@example.org', substitutionData: { any: { deep: [1, { x: null }] } }, eventProperties: { k: [true] } }), 202).status).toBe('QUEUED');
  });

  it('answers each bad body with its precise 400 or 404, naming the member', async () => {
    const ok = { name: 'welcome', email: 'a@example.org' };
    // [body, status, errorId, the member `details` names (400s)]
    const cases: Array<[unknown, number, string, string?]> = [
      [{}, 400, 'validation_failed', 'body.name'],
      [{ name: 'welcome' }, 400, 'validation_failed', 'body.email'],
      [{ email: 'a@example.org' }, 400, 'validation_failed', 'body.name'],
      [{ ...ok, name: 1 }, 400, 'validation_failed', 'body.name'],
      [{ ...ok, email: 7 }, 400, 'validation_failed', 'body.email'],
      [{ ...ok, name: '' }, 400, 'validation_failed', 'body.name'],
      [{ ...ok, name: 'x'.repeat(500) }, 400, 'validation_failed', 'body.name'],
      [{ ...ok, email: 'a'.repeat(300) + '@example.org' }, 400, 'invalid_email', 'body.email'],
      [{ ...ok, substitutionData: [] }, 400, 'validation_failed', 'body.substitutionData'],
      [{ ...ok, substitutionData: 'x' }, 400, 'validation_failed', 'body.substitutionData'],
      [{ ...ok, eventProperties: 3 }, 400, 'validation_failed', 'body.eventProperties'],
      [{ ...ok, substitutionData: { subscriber: 1, event: 2 } }, 400, 'reserved_substitution_key'],
      [{ ...ok, name: '../../etc' }, 404, 'template_not_found'],
      [{ ...ok, name: '{{ x }}' }, 404, 'template_not_found'],
      [{ ...ok, email: 'a@example.org\r\nBcc: x@evil.example' }, 400, 'invalid_email'],
      [{ ...ok, email: 'a@example.org\nBcc: x@evil.example' }, 400, 'invalid_email'],
      [[], 400, 'validation_failed', 'body'],
      [null, 400, 'validation_failed', 'body'],
      ['text', 400, 'validation_failed', 'body'],
      [42, 400, 'validation_failed', 'body'],
    ];
    for (const [body, status, errorId, member] of cases) {
      const res = await call(gw, 'POST', '/email-messages', { apiKey: acme.apiKey, rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      const label = JSON.stringify(body).slice(0, 80);
      expect({ label, status: res.status, errorId: res.json?.errorId }).toEqual({ label, status, errorId });
      expect(schemaErrors('ErrorMessageDto', res.json)).toEqual([]);
      if (member) expect({ label, paths: res.json.details?.map((d: { path: string }) => d.path) }).toEqual({ label, paths: expect.arrayContaining([member]) });
    }
    expect(expectStatus(await acme.get('/email-messages?email=a@example.org'), 200).totalItems).toBe(0); // nothing stored
    const raw = await call(gw, 'POST', '/email-messages', { apiKey: acme.apiKey, rawBody: '{"name": "welcome", "email": ', headers: { 'content-type': 'application/json' } });
    expectError(raw, 400, 'malformed_json');
  });

  const sendRaw = (rawBody: string) => call(gw, 'POST', '/email-messages', { apiKey: acme.apiKey, rawBody, headers: { 'content-type': 'application/json' } });

  it('a __proto__ member in free-form values is refused (it could not be stored as sent), plain or escaped, and nothing is stored', async () => {
    for (const [raw, path] of [
      ['{"name":"welcome","email":"proto@example.org","eventProperties":{"k":1,"__proto__":{"admin":true}}}', 'body.eventProperties.__proto__'],
      ['{"name":"welcome","email":"proto@example.org","substitutionData":{"a":{"__pr\\u006fto__":{"name":"polluted"}}}}', 'body.substitutionData.a.__proto__'],
    ]) {
      const res = await sendRaw(raw);
      expectError(res, 400, 'validation_failed');
      expect(res.json.details).toEqual([{ path, problem: 'is a reserved member name that cannot be stored' }]);
    }
    expect(expectStatus(await acme.get('/email-messages?email=proto@example.org'), 200).totalItems).toBe(0);
  });

  it('constructor and prototype members are plain data: stored and read back as sent, nothing merged into other objects', async () => {
    const accepted = expectStatus(await sendRaw('{"name":"welcome","email":"proto@example.org","substitutionData":{"constructor":{"prototype":{"x":1}}},"eventProperties":{"constructor":{"prototype":{"admin":true}},"k":1}}'), 202);
    expect(accepted.status).toBe('QUEUED');
    const stored = expectStatus(await acme.get(`/email-messages/${accepted.messageId}`), 200);
    expect(stored.eventProperties).toEqual({ constructor: { prototype: { admin: true } }, k: 1 });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('GET /email-messages', () => {
  let a: Api;
  const sent: string[] = [];

  beforeAll(async () => {
    a = await account('lister');
    await setUp(a);
    expectStatus(await a.post('/email-templates', { name: 'receipt', subject: 'Receipt', html: '<p>r</p>' }), 201);
    // Oldest first here, so newest first in the answers.
    for (const [name, email] of [['welcome', 'p1@example.org'], ['receipt', 'p2@example.org'], ['welcome', 'p3@example.org'], ['receipt', 'p1@example.org']]) {
      sent.push(expectStatus(await send(a, { name, email }), 202).messageId);
    }
  });

  const ids = (res: ApiResponse) => expectStatus(res, 200).items.map((m: { messageId: string }) => m.messageId);

  it('lists newest first and paginates like the rest of the API', async () => {
    const page1 = expectStatus(await a.get('/email-messages?pageSize=3'), 200);
    expect(schemaErrors('PaginatedEmailMessages', page1)).toEqual([]);
    expect(page1).toMatchObject({ pageNumber: 1, pageSize: 3, totalItems: 4, totalPages: 2 });
    expect(page1.items.map((m: { messageId: string }) => m.messageId)).toEqual([...sent].reverse().slice(0, 3));
    expect(ids(await a.get('/email-messages?pageSize=3&pageNumber=2'))).toEqual([sent[0]]);
    expect(ids(await a.get('/email-messages?pageSize=3&pageNumber=3'))).toEqual([]);
    expect(expectStatus(await a.get('/email-messages'), 200)).toMatchObject({ pageNumber: 1, pageSize: 50, totalItems: 4 });
  });

  it('filters by email (canonical form), templateName and status', async () => {
    expect(ids(await a.get('/email-messages?email=P1@Example.org'))).toEqual([sent[3], sent[0]]);
    expect(ids(await a.get('/email-messages?templateName=receipt'))).toEqual([sent[3], sent[1]]);
    expect(ids(await a.get('/email-messages?templateName=receipt&email=p2@example.org'))).toEqual([sent[1]]);
    expect(ids(await a.get('/email-messages?status=QUEUED'))).toHaveLength(4);
    expect(ids(await a.get('/email-messages?status=SENT'))).toEqual([]);
  });

  it('refuses bad query parameters with 400', async () => {
    expectError(await a.get('/email-messages?pageSize=0'), 400, 'validation_failed');
    expectError(await a.get('/email-messages?pageSize=1001'), 400, 'validation_failed');
    expectError(await a.get('/email-messages?pageNumber=-1'), 400, 'validation_failed');
    expectError(await a.get('/email-messages?status=LOST'), 400, 'validation_failed');
    expectError(await a.get('/email-messages?colour=red'), 400, 'unknown_property');
  });

  it('GET /email-messages/{id}: 404 email_message_not_found for an unknown id, 400 invalid_uuid for a malformed one', async () => {
    expectError(await a.get(`/email-messages/${UNKNOWN_ID}`), 404, 'email_message_not_found');
    expectError(await a.get('/email-messages/not-a-uuid'), 400, 'invalid_uuid');
    expect(expectStatus(await a.get(`/email-messages/${sent[0]!.toUpperCase()}`), 200).messageId).toBe(sent[0]);
  });

  it('keeps accounts apart: another account neither lists nor reads these messages', async () => {
    expectError(await other.get(`/email-messages/${sent[0]}`), 404, 'email_message_not_found');
    expect(ids(await other.get('/email-messages?email=p1@example.org'))).toEqual([]);
    expect(ids(await empty.get('/email-messages'))).toEqual([]);
  });
});

// Last: it deletes and re-creates the JOBS stream.
describe('durability of an accepted message', () => {
  it('a job committed while JetStream cannot take it survives a crash of the service and is published after the restart', async () => {
    const a = await account('crash');
    await setUp(a);
    const jsm = await stack.nc.jetstreamManager();
    // Without the JOBS stream every publish of the relay fails: the job can only be in the outbox.
    await jsm.streams.delete('JOBS');
    const accepted = expectStatus(await send(a, { name: 'welcome', email: 'crash@example.org' }), 202);
    expect(accepted.status).toBe('QUEUED');
    // It answered after the bounded wait (logged), since the job is durable in the outbox anyway.
    await waitForLog(messaging, (line) => line.includes('email job not published in time'), 10_000);
    await messaging.kill9();
    // The restarted service declares the streams again and its relay publishes what was pending.
    messaging = await spawnReady('services/messaging/dist/main.js', messagingEnv);
    const deadline = Date.now() + 20_000;
    let jobs: Array<{ accountId: string; messageId: string }> = [];
    while (Date.now() < deadline) {
      jobs = await emailJobs(a.accountId).catch(() => []);
      if (jobs.length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(jobs).toEqual([{ accountId: a.accountId, messageId: accepted.messageId }]);
    expect(expectStatus(await a.get(`/email-messages/${accepted.messageId}`), 200).status).toBe('QUEUED');
  });
});

// Last of all: it stops the subscriber service.
describe('when the subscriber service does not answer', () => {
  it('a send answers 503 service_unavailable naming it (the BLOCKED rule cannot be checked), never a 5xx without errorId; reads still work', async () => {
    const a = await account('outage');
    await setUp(a);
    const before = expectStatus(await send(a, { name: 'welcome', email: 'before@example.org' }), 202);
    await subscriber.stop();
    const res = await send(a, { name: 'welcome', email: 'during@example.org' });
    expectError(res, 503, 'service_unavailable');
    expect(res.json.message).toMatch(/subscriber service/);
    // An unknown template is still the caller's error first.
    expectError(await send(a, { name: 'nope', email: 'during@example.org' }), 404, 'template_not_found');
    expect(expectStatus(await a.get(`/email-messages/${before.messageId}`), 200).status).toBe('QUEUED');
    expect(expectStatus(await a.get('/email-messages?email=during@example.org'), 200).totalItems).toBe(0);
  });
});
