// Sender profiles and email templates end to end: a real nats-server, the real subscriber and
// messaging service processes and a real gateway. Every status code of the operations, the default
// rules, tenant isolation, escaping in render previews, and hostile templates that must end in a
// quick 4xx (never a 5xx) while the service keeps answering.
import { startService, type RunningService } from '@mailer/testing';
import { schemaErrors } from '../src/openapi/validator';
import { adminRequest, call, createAccount, expectError, startGateway, startStack, type GatewayHandle, type Stack } from './support/harness';
import { api, expectStatus, INSTANT_PATTERN, UNKNOWN_ID, UUID_PATTERN, type Api } from './support/subscriber-stack';

let stack: Stack;
let subscriber: RunningService;
let messaging: RunningService;
let form: RunningService;
let rss: RunningService;
let gw: GatewayHandle;
let a: Api;
let b: Api;

async function account(name: string): Promise<Api> {
  const { accountId, apiKey } = await createAccount(gw, name);
  await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
  return api(gw, apiKey, accountId);
}

beforeAll(async () => {
  stack = await startStack(0);
  subscriber = await startService('subscriber', { NATS_URL: stack.nats.url });
  // Deleting a profile or template asks the form service which forms name it (none here).
  form = await startService('form', { NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address });
  // ... and the rss service which newsletters send from a profile (none here).
  rss = await startService('rss', { NATS_URL: stack.nats.url });
  messaging = await startService('messaging', {
    NATS_URL: stack.nats.url,
    SUBSCRIBER_GRPC_ADDR: subscriber.address,
    FORM_GRPC_ADDR: form.address,
    RSS_GRPC_ADDR: rss.address,
    MAIL_ALLOWED_FROM_DOMAINS: 'example.com, Example.org',
  });
  gw = await startGateway({
    NATS_URL: stack.nats.url,
    SUBSCRIBER_GRPC_ADDR: subscriber.address,
    MESSAGING_GRPC_ADDR: messaging.address,
    GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
  });
  a = await account('catalog-a');
  b = await account('catalog-b');
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await messaging?.stop();
  await form?.stop();
  await rss?.stop();
  await subscriber?.stop();
  await stack?.stop();
});

const profile = (extra: Record<string, unknown> = {}) => ({ name: 'Newsletter', fromEmail: ' News@Example.com ', fromName: 'Example News', ...extra });
const template = (name: string, extra: Record<string, unknown> = {}) => ({ name, subject: 'Hello {{ subscriber.firstName }}', html: '<p>{{ greeting }}</p>', ...extra });

describe('sender profiles', () => {
  it('create, list, get, replace, delete; the first profile is the default and the flag moves', async () => {
    const res = await a.post('/sender-profiles', profile());
    const first = expectStatus(res, 201);
    expect(schemaErrors('SenderProfile', first)).toEqual([]);
    expect(first).toMatchObject({ id: expect.stringMatching(UUID_PATTERN), fromEmail: 'news@example.com', replyTo: null, isDefault: true, createdAt: expect.stringMatching(INSTANT_PATTERN) });
    expect(res.headers.get('location')).toBe(`/sender-profiles/${first.id}`);

    const second = expectStatus(await a.post('/sender-profiles', profile({ name: 'Support', fromEmail: 'help@example.org', replyTo: 'Desk@Elsewhere.net' })), 201);
    expect(second).toMatchObject({ isDefault: false, replyTo: 'desk@elsewhere.net' });
    expect(expectStatus(await a.get(`/sender-profiles/${second.id.toUpperCase()}`), 200)).toEqual(second);

    // isDefault true moves the flag; clearing it on the default is refused; absent keeps it.
    expect(expectStatus(await a.put(`/sender-profiles/${second.id}`, profile({ name: 'Support', fromEmail: 'help@example.org', isDefault: true })), 200)).toMatchObject({ isDefault: true, replyTo: null });
    expectError(await a.put(`/sender-profiles/${second.id}`, profile({ isDefault: false })), 409, 'sender_profile_is_default');
    expectStatus(await a.put(`/sender-profiles/${second.id}`, profile({ name: 'Renamed', fromEmail: 'help@example.org' })), 200);
    const list = expectStatus(await a.get('/sender-profiles'), 200);
    expect(schemaErrors('SenderProfileList', list)).toEqual([]);
    expect(list.items.map((p: { name: string; isDefault: boolean }) => [p.name, p.isDefault])).toEqual([['Newsletter', false], ['Renamed', true]]);

    // Deleting the default promotes the oldest remaining profile.
    expect((await a.delete(`/sender-profiles/${second.id}`)).status).toBe(204);
    expect(expectStatus(await a.get(`/sender-profiles/${first.id}`), 200).isDefault).toBe(true);
    expectError(await a.get(`/sender-profiles/${second.id}`), 404, 'sender_profile_not_found');
    expectError(await a.delete(`/sender-profiles/${second.id}`), 404, 'sender_profile_not_found');
    expectError(await a.put(`/sender-profiles/${second.id}`, profile()), 404, 'sender_profile_not_found');
  });

  it('bad input: 400 with the precise errorId', async () => {
    expectError(await a.post('/sender-profiles', profile({ fromEmail: 'not an address' })), 400, 'invalid_email');
    expectError(await a.post('/sender-profiles', profile({ replyTo: 'nope@' })), 400, 'invalid_email');
    const domain = await a.post('/sender-profiles', profile({ fromEmail: 'news@evil.example' }));
    expectError(domain, 400, 'sender_domain_not_allowed');
    expect(domain.json.details).toEqual([{ path: 'body.fromEmail', problem: expect.stringContaining('evil.example') }]);
    expectError(await a.post('/sender-profiles', profile({ name: '   ' })), 400, 'validation_failed');
    expectError(await a.post('/sender-profiles', profile({ fromName: 'News\r\nBcc: all@example.com' })), 400, 'validation_failed');
    expectError(await a.post('/sender-profiles', profile({ name: 'x'.repeat(101) })), 400, 'validation_failed');
    expectError(await a.post('/sender-profiles', profile({ colour: 'red' })), 400, 'unknown_property');
    expectError(await a.post('/sender-profiles', { name: 'x' }), 400, 'validation_failed');
    expectError(await a.get('/sender-profiles/not-a-uuid'), 400, 'invalid_uuid');
    expectError(await a.delete('/sender-profiles/not-a-uuid'), 400, 'invalid_uuid');
    expectError(await a.get(`/sender-profiles/${UNKNOWN_ID}`), 404, 'sender_profile_not_found');
  });

  it('a profile named by a template cannot be deleted (409 sender_profile_in_use) until the template lets go', async () => {
    const p = expectStatus(await a.post('/sender-profiles', profile({ name: 'In use' })), 201);
    expectStatus(await a.post('/email-templates', template('uses-profile', { senderProfileId: p.id.toUpperCase() })), 201);
    const res = await a.delete(`/sender-profiles/${p.id}`);
    expectError(res, 409, 'sender_profile_in_use');
    expect(res.json.details).toEqual([{ path: 'emailTemplates.uses-profile', problem: expect.any(String) }]);
    expectStatus(await a.put('/email-templates/uses-profile', template('uses-profile', { senderProfileId: null })), 200);
    expect((await a.delete(`/sender-profiles/${p.id}`)).status).toBe(204);
  });
});

describe('email templates', () => {
  it('create, get, list, save a version, delete', async () => {
    const res = await a.post('/email-templates', template('welcome'));
    const t = expectStatus(res, 201);
    expect(schemaErrors('EmailTemplate', t)).toEqual([]);
    expect(res.headers.get('location')).toBe('/email-templates/welcome');
    expect(t).toMatchObject({ name: 'welcome', text: null, senderProfileId: null, tracking: { opens: true, clicks: true }, variables: ['greeting', 'subscriber'], version: 1 });
    expect(expectStatus(await a.get('/email-templates/welcome'), 200)).toEqual(t);

    const v2 = expectStatus(await a.put('/email-templates/welcome', template('welcome', { text: 'Hi {{ name }}', tracking: { clicks: false } })), 200);
    expect(v2).toMatchObject({ version: 2, text: 'Hi {{ name }}', tracking: { opens: true, clicks: false }, variables: ['greeting', 'name', 'subscriber'], createdAt: t.createdAt });
    expect(v2.updatedAt >= t.updatedAt).toBe(true);
    expect(expectStatus(await a.put('/email-templates/welcome', template('welcome')), 200).version).toBe(3);

    const list = expectStatus(await a.get('/email-templates'), 200);
    expect(schemaErrors('EmailTemplateList', list)).toEqual([]);
    expect(list.items.map((x: { name: string }) => x.name)).toContain('welcome');

    expect((await a.delete('/email-templates/welcome')).status).toBe(204);
    expectError(await a.get('/email-templates/welcome'), 404, 'template_not_found');
    expectError(await a.delete('/email-templates/welcome'), 404, 'template_not_found');
    expectError(await a.put('/email-templates/welcome', template('welcome')), 404, 'template_not_found');
    expectError(await a.post('/email-templates/welcome/render', {}), 404, 'template_not_found');
    // A new template under the old name starts again at version 1 with its own sources.
    const again = expectStatus(await a.post('/email-templates', template('welcome', { html: '<p>fresh</p>' })), 201);
    expect(again.version).toBe(1);
    expect(expectStatus(await a.post('/email-templates/welcome/render', {}), 200).html).toContain('fresh');
  });

  it('bad input: 400/404/409 with the precise errorId', async () => {
    expectStatus(await a.post('/email-templates', template('taken')), 201);
    expectError(await a.post('/email-templates', template('taken')), 409, 'template_name_exists');
    expectError(await a.post('/email-templates', template('Bad Name')), 400, 'validation_failed');
    expectError(await a.get('/email-templates/Bad%20Name'), 400, 'validation_failed');
    expectError(await a.put('/email-templates/taken', template('other-name')), 400, 'template_name_immutable');
    expectError(await a.post('/email-templates', template('unknown-sender', { senderProfileId: UNKNOWN_ID })), 404, 'sender_profile_not_found');
    expectError(await a.post('/email-templates', template('bad-sender', { senderProfileId: 'nope' })), 400, 'invalid_uuid');
    expectError(await a.post('/email-templates', template('extra', { footer: 'x' })), 400, 'unknown_property');

    const syntax = await a.post('/email-templates', template('broken', { subject: 'ok', html: '<p>\n  {% if x %}never closed' }));
    expectError(syntax, 400, 'template_syntax_error');
    expect(syntax.json.details).toEqual([{ path: 'html', problem: expect.stringMatching(/^line 2, col 3: /) }]);
    const both = await a.post('/email-templates', template('broken', { subject: '{{ a', text: '{% endfor %}' }));
    expect(both.json.details.map((d: { path: string }) => d.path)).toEqual(['subject', 'text']);
    // No file access: the include family does not exist.
    expectError(await a.post('/email-templates', template('includes', { html: "{% include 'secrets' %}" })), 400, 'template_syntax_error');
    expectError(await a.get('/email-templates/broken'), 404, 'template_not_found');
  });

  it('render: subscriber values from the subscriber service, escaping, raw, header-safe subject', async () => {
    const field = expectStatus(await a.post('/fields', { label: 'City', fieldType: 'TEXT', personalizationTagName: 'city' }), 201);
    expectStatus(await a.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann', fields: [{ fieldId: field.fieldId, value: { kind: 'TEXT', text: 'Köln <b>' } }] }), 201);
    expectStatus(
      await a.post('/email-templates', {
        name: 'preview',
        subject: 'Hi {{ subscriber.firstName }} {{ title }}',
        html: '<p>{{ subscriber.firstName }} from {{ subscriber.fields.city }}: {{ v }} / {{ v | raw }} / {{ missing }}.</p>',
        text: '{{ subscriber.email }} {{ v }}',
      }),
      201,
    );
    const out = expectStatus(await a.post('/email-templates/preview/render', { email: ' ANN@example.org ', substitutionData: { v: '<script>alert(1)</script>', title: 'line1\r\nBcc: x@evil.example' } }), 200);
    expect(schemaErrors('RenderedEmail', out)).toEqual([]);
    expect(out.html).toContain('<p>Ann from Köln &lt;b&gt;: &lt;script&gt;alert(1)&lt;/script&gt; / <script>alert(1)</script> / .</p>');
    expect(out.subject).toBe('Hi Ann line1 Bcc: x@evil.example');
    expect(out.subject).not.toMatch(/[\r\n]/);
    expect(out.text).toBe('ann@example.org <script>alert(1)</script>');

    // Not a subscriber of the account: subscriber is {email}; the same address in B is unknown to A's data.
    const stranger = expectStatus(await a.post('/email-templates/preview/render', { email: 'bob@example.org' }), 200);
    expect(stranger.html).toContain('<p> from : ');
    expect(stranger.text).toBe('bob@example.org ');
    expectStatus(await b.post('/email-templates', { name: 'preview', subject: '{{ subscriber.firstName }}', html: '{{ subscriber.fields.city }}' }), 201);
    expect(expectStatus(await b.post('/email-templates/preview/render', { email: 'ann@example.org' }), 200)).toMatchObject({ subject: '', html: '' });

    // Text derived from html when omitted.
    expectStatus(await a.post('/email-templates', { name: 'derived', subject: 's', html: '<h1>Title</h1><p>Body {{ v }}</p>' }), 201);
    expect(expectStatus(await a.post('/email-templates/derived/render', { substitutionData: { v: 'x' } }), 200).text).toMatch(/TITLE\s+Body x/);
  });

  it('render refusals: reserved keys, invalid email', async () => {
    expectStatus(await a.post('/email-templates', template('refusals')), 201);
    for (const key of ['subscriber', 'event', 'links']) {
      const res = await a.post('/email-templates/refusals/render', { substitutionData: { [key]: { x: 1 } } });
      expectError(res, 400, 'reserved_substitution_key');
      expect(res.json.details).toEqual([{ path: `substitutionData.${key}`, problem: expect.any(String) }]);
    }
    expectError(await a.post('/email-templates/refusals/render', { email: 'not-an-address' }), 400, 'invalid_email');
  });
});

describe('hostile templates', () => {
  // Hostile whatever the data: refused at save by the bounded test render (a sample reader, no data).
  const hostileAlone: Array<[string, string, string]> = [
    ['huge-range', '{% for i in (1..100000000) %}x{% endfor %}', 'html'],
    ['nested-loops', '{% for i in (1..100000) %}{% for j in (1..100000) %}{{ i }}{% endfor %}{% endfor %}', 'html'],
    ['doubling', '{% assign s = "xx" %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s.size }}', 'html'],
    ['capture-growth', '{% capture s %}x{% endcapture %}{% for i in (1..64) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}{{ s.size }}', 'html'],
    ['heap-bomb-subject', '{{ (1..30000000) | join: "," }}', 'subject'],
  ];

  it.each(hostileAlone)('%s: refused at save with 422 template_render_failed naming the part; nothing stored', async (name, source, part) => {
    const body = { name, subject: part === 'subject' ? source : 's', html: part === 'html' ? source : '<p>x</p>' };
    const res = await a.post('/email-templates', body);
    expectError(res, 422, 'template_render_failed');
    expect(res.json.details).toEqual([{ path: part, problem: expect.any(String) }]);
    expectError(await a.get(`/email-templates/${name}`), 404, 'template_not_found');
    // A PUT of a stored template to it is refused the same way, and the stored one is kept.
    expectStatus(await a.post('/email-templates', { name, subject: 's', html: '<p>fine</p>' }), 201);
    expectError(await a.put(`/email-templates/${name}`, body), 422, 'template_render_failed');
    expect(expectStatus(await a.get(`/email-templates/${name}`), 200).html).toBe('<p>fine</p>');
  });

  // Hostile only with the caller's data: saved (a legitimate template may loop over what it is given),
  // and every render with such data is stopped by the engine's limits.
  // Rows of three: jest passes `done` to a test function with more parameters than the row has values.
  const hostileWithData: Array<[string, string, Record<string, unknown>]> = [
    ['data-range', '{% for i in (1..n) %}x{% endfor %}', { n: 100_000_000 }],
    ['data-nested-loops', '{% for i in (1..n) %}{% for j in (1..n) %}{{ i }}{% endfor %}{% endfor %}', { n: 100_000 }],
    ['huge-output', '{% for i in (1..5000) %}{{ big }}{% endfor %}', { big: 'y'.repeat(10_000) }],
    ['data-doubling', '{% assign s = seed %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s.size }}', { seed: 'xx' }],
    ['data-capture-growth', '{% capture s %}{{ seed }}{% endcapture %}{% for i in (1..64) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}{{ s.size }}', { seed: 'x' }],
  ];

  it.each(hostileWithData)('%s: saved, and a render with the data is refused with 422 template_render_failed', async (name, html, data) => {
    expectStatus(await a.post('/email-templates', { name, subject: 's', html }), 201);
    const res = await a.post(`/email-templates/${name}/render`, { substitutionData: data });
    expectError(res, 422, 'template_render_failed');
    expect(res.json.details).toEqual([{ path: 'html', problem: expect.stringMatching(/limit exceeded|output exceeds/) }]);
  });

  // Each render may run 500 ms; run one after another, 16 would pass the gateway's 5 s deadline (503).
  // Renders yield to the event loop, so they share the CPU and all end near their own limit.
  it('a burst of hostile renders in parallel: every one 422, and other requests still answered', async () => {
    const html = '{% for i in (1..n) %}{% for j in (1..n) %}{{ i }}{% endfor %}{% endfor %}';
    expectStatus(await a.post('/email-templates', { name: 'burst', subject: 's', html }), 201);
    const renders = Array.from({ length: 16 }, () => a.post('/email-templates/burst/render', { substitutionData: { n: 100_000 } }));
    const other = a.get('/sender-profiles');
    const results = await Promise.all(renders);
    for (const res of results) expectError(res, 422, 'template_render_failed');
    expectStatus(await other, 200);
  });

  it('prototype access renders nothing and pollutes nothing', async () => {
    const html = '[{{ constructor.constructor }}][{{ v.constructor.name }}][{{ __proto__ }}][{{ v.__proto__.polluted }}][{{ "" | constructor }}]';
    const res = await a.post('/email-templates', { name: 'proto', subject: '{{ constructor }}', html });
    // A filter that does not exist is a syntax error (strict filters); without it the rest renders empty.
    expectError(res, 400, 'template_syntax_error');
    expectStatus(await a.post('/email-templates', { name: 'proto', subject: '{{ constructor }}', html: html.replace('[{{ "" | constructor }}]', '') }), 201);
    const out = expectStatus(await a.post('/email-templates/proto/render', { substitutionData: { v: 'text', __proto__: { polluted: 'yes' } } }), 200);
    expect(out).toMatchObject({ subject: '', html: '[][][][]' });
    // Still the same account state and a healthy service after all of the above.
    expectStatus(await a.get('/sender-profiles'), 200);
    expect(expectStatus(await a.post('/email-templates/derived/render', { substitutionData: { v: 'ok' } }), 200).text).toContain('Body ok');
  });
});

describe('tenant isolation', () => {
  it("account B can neither see nor use A's profiles and templates", async () => {
    const pa = expectStatus(await a.post('/sender-profiles', profile({ name: 'A only' })), 201);
    expectStatus(await a.post('/email-templates', template('a-only')), 201);
    expect(expectStatus(await b.get('/sender-profiles'), 200).items.map((p: { id: string }) => p.id)).not.toContain(pa.id);
    expectError(await b.get(`/sender-profiles/${pa.id}`), 404, 'sender_profile_not_found');
    expectError(await b.put(`/sender-profiles/${pa.id}`, profile()), 404, 'sender_profile_not_found');
    expectError(await b.delete(`/sender-profiles/${pa.id}`), 404, 'sender_profile_not_found');
    expectError(await b.post('/email-templates', template('uses-a', { senderProfileId: pa.id })), 404, 'sender_profile_not_found');
    expect(expectStatus(await b.get('/email-templates'), 200).items.map((t: { name: string }) => t.name)).not.toContain('a-only');
    expectError(await b.get('/email-templates/a-only'), 404, 'template_not_found');
    expectError(await b.post('/email-templates/a-only/render', {}), 404, 'template_not_found');
    expectError(await b.delete('/email-templates/a-only'), 404, 'template_not_found');
    // B's first profile is B's default, whatever A has.
    expect(expectStatus(await b.post('/sender-profiles', profile({ name: 'B first' })), 201).isDefault).toBe(true);
    expect(expectStatus(await a.get(`/sender-profiles/${pa.id}`), 200).name).toBe('A only');
  });

  it('unauthenticated requests are 401', async () => {
    expectError(await call(gw, 'GET', '/sender-profiles'), 401, 'api_key_missing');
    expectError(await call(gw, 'POST', '/email-templates/x/render', { body: {} }), 401, 'api_key_missing');
  });
});
