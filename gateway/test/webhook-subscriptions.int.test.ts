// Webhook subscriptions through the real gateway and the real webhook service (the API contract "Webhooks"):
// CRUD, the event list, the body rules (unknown event, explicit null content type, target URL guard),
// secret visibility and rotation, PUT active, tenant isolation, and fuzzed bodies each answered with
// their precise errorId.
import { expectError } from './support/harness';
import { expectStatus, INSTANT_PATTERN, UNKNOWN_ID, UUID_PATTERN, type Api } from './support/subscriber-stack';
import { startWebhookStack, type WebhookStack } from './support/webhook-stack';

jest.setTimeout(120_000);

let env: WebhookStack;
let a: Api;
let b: Api;

beforeAll(async () => {
  // The production defaults of the outbound guard: https only, no address range allowed.
  env = await startWebhookStack({ webhookEnv: { OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_ALLOWED_CIDRS: '' } });
  a = await env.account('webhooks-a');
  b = await env.account('webhooks-b');
});
afterAll(async () => {
  await env?.stop();
});

const TARGET = 'https://hooks.example.com/mailer';
const body = (extra: Record<string, unknown> = {}) => ({ targetUrl: TARGET, event: 'subscriber.created', ...extra });
const isSecret = (s: unknown) => typeof s === 'string' && /^whsec_/.test(s) && Buffer.from(s.slice(6), 'base64').length === 32;

async function create(api: Api, extra: Record<string, unknown> = {}) {
  const res = await api.post('/webhook-subscriptions', body(extra));
  return expectStatus(res, 201);
}

it('lists the webhook events a subscription may name', async () => {
  const { events } = expectStatus(await a.get('/webhook-events'), 200);
  expect(events).toEqual(expect.arrayContaining(['subscriber.created', 'subscriber.tag_added', 'form.submitted', 'email.bounced', 'event.received', 'rss.issue_sent', 'broadcast.sent']));
  expect(events).not.toContain('*');
});

it('creates a subscription: active, application/json by default, with a fresh secret and a Location', async () => {
  const res = await a.post('/webhook-subscriptions', body());
  const sub = expectStatus(res, 201);
  expect(sub).toEqual({
    id: expect.stringMatching(UUID_PATTERN),
    targetUrl: TARGET,
    event: 'subscriber.created',
    deliveryContentType: 'application/json',
    active: true,
    secret: expect.anything(),
    createdAt: expect.stringMatching(INSTANT_PATTERN),
    updatedAt: expect.stringMatching(INSTANT_PATTERN),
    disabledReason: null,
  });
  expect(isSecret(sub.secret)).toBe(true);
  expect(res.headers.get('location')).toBe(`/webhook-subscriptions/${sub.id}`);
  const other = await create(a);
  expect(other.secret).not.toBe(sub.secret);
  // '*' and text/plain are accepted.
  expect(await create(a, { event: '*', deliveryContentType: 'text/plain' })).toMatchObject({ event: '*', deliveryContentType: 'text/plain' });
});

it('shows the secret on create and GET of one only; rotation answers a new one that GET then shows', async () => {
  const sub = await create(a);
  expect(expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200)).toMatchObject({ id: sub.id, secret: sub.secret });
  const listed = expectStatus(await a.get('/webhook-subscriptions'), 200).items.find((s: { id: string }) => s.id === sub.id);
  expect(listed).toBeDefined();
  expect(listed).not.toHaveProperty('secret');
  const put = expectStatus(await a.put(`/webhook-subscriptions/${sub.id}`, body({ event: '*' })), 200);
  expect(put).toMatchObject({ id: sub.id, event: '*' });
  expect(put).not.toHaveProperty('secret');

  const rotated = expectStatus(await a.post(`/webhook-subscriptions/${sub.id}/rotate-secret`), 200);
  expect(Object.keys(rotated)).toEqual(['secret']);
  expect(isSecret(rotated.secret)).toBe(true);
  expect(rotated.secret).not.toBe(sub.secret);
  expect(expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200).secret).toBe(rotated.secret);
  // Secrets never reach a log line of either process.
  for (const secret of [sub.secret, rotated.secret]) {
    expect(env.webhook.output()).not.toContain(secret.slice(6));
    expect(env.gw.output()).not.toContain(secret.slice(6));
  }
});

it('refuses an unknown event with 400 unknown_webhook_event, on create and PUT', async () => {
  for (const event of ['subscriber.exploded', 'webhook.test', '**', 'SUBSCRIBER.CREATED', 'subscriber.created ']) {
    expectError(await a.post('/webhook-subscriptions', body({ event })), 400, 'unknown_webhook_event');
  }
  const sub = await create(a);
  expectError(await a.put(`/webhook-subscriptions/${sub.id}`, body({ event: 'nope' })), 400, 'unknown_webhook_event');
  expect(expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200).event).toBe('subscriber.created');
});

it('refuses an explicit null deliveryContentType and any other type; omitted on PUT means application/json', async () => {
  for (const deliveryContentType of [null, 'text/html', 'application/xml', '']) {
    expectError(await a.post('/webhook-subscriptions', body({ deliveryContentType })), 400, 'validation_failed');
  }
  const sub = await create(a, { deliveryContentType: 'text/plain' });
  expectError(await a.put(`/webhook-subscriptions/${sub.id}`, body({ deliveryContentType: null })), 400, 'validation_failed');
  expect(expectStatus(await a.put(`/webhook-subscriptions/${sub.id}`, body()), 200).deliveryContentType).toBe('application/json');
});

it('refuses target URLs the outbound guard does not allow with 400 webhook_target_not_allowed', async () => {
  for (const targetUrl of ['http://hooks.example.com/x', 'ftp://hooks.example.com/x', 'not a url', '/relative/path', 'https://user:pass@hooks.example.com/x', 'javascript:alert(1)',
    // literal non-public addresses (the guard checks names again on the address connected to)
    'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/x', 'https://[fd00::1]/x', 'https://0x7f.1/x', 'https://localhost:8443/x']) {
    const res = await a.post('/webhook-subscriptions', body({ targetUrl }));
    expectError(res, 400, 'webhook_target_not_allowed');
  }
  const sub = await create(a);
  expectError(await a.put(`/webhook-subscriptions/${sub.id}`, body({ targetUrl: 'http://hooks.example.com/x' })), 400, 'webhook_target_not_allowed');
  expect(expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200).targetUrl).toBe(TARGET);
  // Too long or missing: the contract's own validation.
  expectError(await a.post('/webhook-subscriptions', body({ targetUrl: `https://h.example.com/${'a'.repeat(2100)}` })), 400, 'validation_failed');
  expectError(await a.post('/webhook-subscriptions', { event: '*' }), 400, 'validation_failed');
});

it('PUT active: false disables without a reason, active: true enables again, omitted keeps the state', async () => {
  const sub = await create(a);
  expect(expectStatus(await a.put(`/webhook-subscriptions/${sub.id}`, body({ active: false })), 200)).toMatchObject({ active: false, disabledReason: null });
  expect(expectStatus(await a.put(`/webhook-subscriptions/${sub.id}`, body({ event: '*' })), 200)).toMatchObject({ active: false, event: '*' });
  expect(expectStatus(await a.put(`/webhook-subscriptions/${sub.id}`, body({ active: true })), 200)).toMatchObject({ active: true, disabledReason: null });
  expect(expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200).active).toBe(true);
});

it('deletes a subscription; unknown and malformed ids are 404 and 400', async () => {
  const sub = await create(a);
  expect((await a.delete(`/webhook-subscriptions/${sub.id}`)).status).toBe(204);
  expectError(await a.get(`/webhook-subscriptions/${sub.id}`), 404, 'webhook_subscription_not_found');
  expectError(await a.delete(`/webhook-subscriptions/${sub.id}`), 404, 'webhook_subscription_not_found');
  expectError(await a.get(`/webhook-subscriptions/${UNKNOWN_ID}`), 404, 'webhook_subscription_not_found');
  expectError(await a.post(`/webhook-subscriptions/${UNKNOWN_ID}/rotate-secret`), 404, 'webhook_subscription_not_found');
  expectError(await a.get('/webhook-subscriptions/not-a-uuid'), 400, 'invalid_uuid');
  // Ids are accepted in any case.
  const upper = await create(a);
  expect(expectStatus(await a.get(`/webhook-subscriptions/${upper.id.toUpperCase()}`), 200).id).toBe(upper.id);
});

it('keeps accounts apart: another account neither sees nor changes a subscription', async () => {
  const sub = await create(a);
  expect(expectStatus(await b.get('/webhook-subscriptions'), 200).items.map((s: { id: string }) => s.id)).not.toContain(sub.id);
  expectError(await b.get(`/webhook-subscriptions/${sub.id}`), 404, 'webhook_subscription_not_found');
  expectError(await b.put(`/webhook-subscriptions/${sub.id}`, body({ active: false })), 404, 'webhook_subscription_not_found');
  expectError(await b.post(`/webhook-subscriptions/${sub.id}/rotate-secret`), 404, 'webhook_subscription_not_found');
  expectError(await b.delete(`/webhook-subscriptions/${sub.id}`), 404, 'webhook_subscription_not_found');
  // Untouched for its owner.
  expect(expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200)).toMatchObject({ active: true, secret: sub.secret });
});

describe('fuzzed bodies: one bad member in an otherwise valid body, of any valid shape', () => {
  // Valid values of each member (undefined: omitted); `active` exists on PUT only.
  const VALID: Record<string, unknown[]> = {
    targetUrl: [TARGET, 'https://hooks.example.com/a?b=1&c=%20', 'https://HOOKS.example.com:8443/x'],
    event: ['subscriber.created', '*', 'email.bounced', 'form.submitted'],
    deliveryContentType: [undefined, 'application/json', 'text/plain'],
    active: [undefined, true, false],
  };
  const wrongTypes = (member: string, but: unknown[] = []): Array<[string, unknown, string]> =>
    [null, 0, -1, 1e308, true, [], {}, ['*'], { a: 1 }].filter((v) => !but.includes(v)).map((v) => [member, v, 'validation_failed']);
  const refused = (values: unknown[]): Array<[string, unknown, string]> => values.map((v) => ['targetUrl', v, 'webhook_target_not_allowed']);
  // [member, value, errorId]; the value `undefined` removes the member
  const BAD: Array<[string, unknown, string]> = [
    ...wrongTypes('targetUrl'),
    ['targetUrl', undefined, 'validation_failed'],
    ['targetUrl', '', 'validation_failed'],
    ['targetUrl', '   ', 'validation_failed'],
    ['targetUrl', `https://hooks.example.com/${'a'.repeat(2100)}`, 'validation_failed'],
    ...refused(['https://[::1]/', 'https://0x7f.1/', 'https://127.0.0.1/x', 'https://10.1.2.3/', 'https://%00/', 'http://hooks.example.com/', 'ftp://hooks.example.com/', 'subscriber.created', '*', 'text/plain', '\u0000', '😀', 'https://user:pw@hooks.example.com/']),
    ...wrongTypes('event'),
    ['event', undefined, 'validation_failed'],
    ['event', '', 'validation_failed'],
    ['event', 'e'.repeat(101), 'validation_failed'],
    ...['subscriber.CREATED', 'subscriber.*', 'text/plain', '😀', ' * ', 'nope'].map((v): [string, unknown, string] => ['event', v, 'unknown_webhook_event']),
    ...wrongTypes('deliveryContentType'),
    ...['text/html', 'TEXT/PLAIN', 'application/json; charset=utf-8', ''].map((v): [string, unknown, string] => ['deliveryContentType', v, 'validation_failed']),
    ...['secret', 'id', 'createdAt', '__proto__', 'constructor', 'accountId'].map((k): [string, unknown, string] => [k, 'x', 'unknown_property']),
  ];
  const BAD_ON_PUT: Array<[string, unknown, string]> = [...wrongTypes('active', [true]), ['active', 'true', 'validation_failed']];

  it('150 cases: each refused with 400, its errorId and the member in details; valid bodies saved', async () => {
    let seed = 1414;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const sub = await create(a);
    const failures: string[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < 150; i++) {
      const put = i % 2 === 0;
      const fuzzed: Record<string, unknown> = {};
      for (const [member, values] of Object.entries(VALID)) {
        const v = pick(values);
        if (v !== undefined && (member !== 'active' || put)) fuzzed[member] = v;
      }
      // one in ten is valid as it is; else one bad member (`active` on POST is an unknown member)
      const [member, value, errorId]: [string, unknown, string] | [] = i % 10 === 9 ? [] : pick([...BAD, ...(put ? BAD_ON_PUT : [['active', true, 'unknown_property'] as [string, unknown, string]])]);
      if (member !== undefined) {
        if (value === undefined) delete fuzzed[member];
        else Object.defineProperty(fuzzed, member, { value, enumerable: true, configurable: true, writable: true }); // "__proto__" as a member
      }
      const res = put ? await a.put(`/webhook-subscriptions/${sub.id}`, fuzzed) : await a.post('/webhook-subscriptions', fuzzed);
      const want = errorId ? { status: 400, errorId, member: `body.${member}` } : { status: put ? 200 : 201, errorId: undefined, member: undefined };
      const got = { status: res.status, errorId: res.json?.errorId, member: errorId ? res.json?.details?.find((d: { path: string }) => d.path === want.member)?.path : undefined };
      if (JSON.stringify(got) !== JSON.stringify(want)) failures.push(`#${i} ${put ? 'PUT' : 'POST'} ${JSON.stringify(fuzzed).slice(0, 200)}: ${res.status} ${res.text.slice(0, 200)}`);
      if (!errorId && res.status < 300) expect({ i, body: res.json }).toMatchObject({ i, body: { targetUrl: expect.stringMatching(/^https:\/\/hooks\.example\.com/), event: fuzzed.event } });
      seen.add(errorId ?? 'saved');
    }
    expect(failures).toEqual([]);
    expect([...seen].sort()).toEqual(['saved', 'unknown_property', 'unknown_webhook_event', 'validation_failed', 'webhook_target_not_allowed']);
    expect(expectStatus(await a.get(`/webhook-subscriptions/${sub.id}`), 200).id).toBe(sub.id);
  });
});
