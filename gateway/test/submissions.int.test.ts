// Public submissions through the real gateway (support/form-stack.ts: real subscriber, form and
// messaging services): JSON and urlencoded bodies, values checked against the form's inputs with
// precise details, CORS for allowedOrigins (preflight too), the honeypot, the per address and form
// limit, inactive and unknown forms, fuzzed bodies that never end in a 5xx; then the submission job:
// decisions visible in GET /forms/{id}/submissions, quotas, tenant isolation, a kill -9 between 202
// and the decision.
import { startCaptureRelay, waitFor, type CaptureRelay } from '@mailer/testing';
import { eventsOf } from '@mailer/testing/subscriber';
import { startFormStack, type FormStack } from './support/form-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(180_000);

const PUBLIC_BASE_URL = 'https://mail.forms.test';
let env: FormStack;
let a: Api;
let b: Api;
let relay: CaptureRelay;

beforeAll(async () => {
  relay = await startCaptureRelay();
  env = await startFormStack({
    publicBaseUrl: PUBLIC_BASE_URL,
    gatewayEnv: { GATEWAY_PUBLIC_PER_MINUTE: '100000' },
    formEnv: { FORM_ACCOUNT_SUBSCRIBER_LIMIT: '0' },
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false' },
  });
  a = await env.account('submit-a');
  b = await env.account('submit-b');
  // The confirmation mail goes out from the account's default sender profile.
  for (const api of [a, b]) expectStatus(await api.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' }), 201);
}, 180_000);

afterAll(async () => {
  if (process.env.DUMP_FORM_LOG) require('fs').writeFileSync(process.env.DUMP_FORM_LOG, env.form.output() + '\n----SUBSCRIBER\n' + env.subscriber.output()); // eslint-disable-line
  await env?.stop();
  await relay?.close();
});

const EMAIL = { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true };
const FIRST_NAME = { fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, isRequired: false };
let seq = 0;

async function createForm(api: Api, extra: Record<string, unknown> = {}): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return expectStatus(await api.post('/forms', { name: `Form ${++seq}`, type: 'DEFAULT', inputFields: [EMAIL, FIRST_NAME], ...extra }), 201);
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function send(formId: string, body: string, headers: Record<string, string> = {}, method = 'POST'): Promise<Answer> {
  const res = await fetch(`${env.gw.url}/public/forms/${formId}/submissions`, { method, body: method === 'POST' ? body : undefined, headers, redirect: 'manual' });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
const submit = (formId: string, body: unknown, headers: Record<string, string> = {}) =>
  send(formId, JSON.stringify(body), { 'content-type': 'application/json', accept: 'application/json', ...headers });
const pathsOf = (r: Answer) => (r.json?.details ?? []).map((d: { path: string }) => d.path);

describe('POST /public/forms/{formId}/submissions', () => {
  it('accepts a JSON submission with 202 {received: true}', async () => {
    const form = await createForm(a);
    const r = await submit(form.id, { values: { email: 'Ann@Example.org', first_name: 'Ann' }, consent: { text: 'Yes, send me news' } });
    expect([r.status, r.json]).toEqual([202, { received: true }]);
  });

  it('accepts an urlencoded submission (a plain HTML form) and answers a browser with a 303 to the thank-you page', async () => {
    const form = await createForm(a);
    const body = new URLSearchParams({ 'values[email]': 'plain@example.org', 'values[first_name]': 'Plain', website: '' }).toString();
    const json = await send(form.id, body, { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
    expect([json.status, json.json]).toEqual([202, { received: true }]);
    const browser = await send(form.id, body, { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,application/xhtml+xml' });
    expect(browser.status).toBe(303);
    expect(browser.headers.get('location')).toBe(`/public/forms/${form.id}/thank-you`);
    // A browser's refused post gets the form again with the problem marked.
    const bad = await send(form.id, new URLSearchParams({ 'values[email]': 'not an address' }).toString(), { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('text/html');
    expect(bad.text).toContain('must be a valid email address');
    // A script in a value comes back escaped in the page, never as markup.
    const xss = await send(form.id, new URLSearchParams({ 'values[email]': 'bad', 'values[first_name]': '<script>alert(1)</script>' }).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html',
    });
    expect(xss.status).toBe(400);
    expect(xss.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(xss.text).not.toContain('<script>alert(1)');
  });

  it('refuses values that do not fit the inputs with 400 validation_failed naming each input', async () => {
    const plan = expectStatus(await a.post('/fields', { label: 'Plan', fieldType: 'SINGLE_CHOICE', personalizationTagName: 'plan', options: ['Free', 'Pro'] }), 201).fieldId;
    const age = expectStatus(await a.post('/fields', { label: 'Age', fieldType: 'NUMBER', personalizationTagName: 'age' }), 201).fieldId;
    const form = await createForm(a, {
      inputFields: [EMAIL, FIRST_NAME, { fieldRef: { type: 'CUSTOM', fieldId: plan }, isRequired: true }, { fieldRef: { type: 'CUSTOM', fieldId: age }, isRequired: false }],
    });
    const cases: Array<[unknown, string[]]> = [
      [{ values: {} }, ['values.email', 'values.plan']],
      [{ values: { email: 'x@', plan: 'Free' } }, ['values.email']],
      [{ values: { email: 'x@example.org', plan: 'Gold' } }, ['values.plan']],
      [{ values: { email: 'x@example.org', plan: 'Free', age: 'old' } }, ['values.age']],
      [{ values: { email: 'x@example.org', plan: 'Free', first_name: 42 } }, ['values.first_name']],
      [{ values: { email: 'x@example.org', plan: 'Free', nickname: 'x' } }, ['values.nickname']],
      [{ values: { email: 'x@example.org', plan: 'Free' }, consent: { text: '' } }, ['consent.text']],
      [{ values: { email: 'x@example.org', plan: 'Free' }, extra: 1 }, ['extra']],
      [[], ['']],
    ];
    for (const [body, paths] of cases) {
      const r = await submit(form.id, body);
      expect([JSON.stringify(body), r.status, r.json?.errorId, pathsOf(r)]).toEqual([JSON.stringify(body), 400, 'validation_failed', paths]);
    }
    expect((await submit(form.id, { values: { email: 'x@example.org', plan: 'Pro', age: 31 } })).status).toBe(202);
  });

  it('drops a bot that fills the honeypot with the same 202, in JSON and urlencoded', async () => {
    const form = await createForm(a);
    const json = await submit(form.id, { values: { email: 'bot1@example.org' }, website: 'http://spam.example' });
    expect([json.status, json.json]).toEqual([202, { received: true }]);
    const body = new URLSearchParams({ 'values[email]': 'bot2@example.org', website: 'spam' }).toString();
    const plain = await send(form.id, body, { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' });
    expect([plain.status, plain.json]).toEqual([202, { received: true }]);
    // Nothing stored: see 'the honeypot stores nothing' below (GET /forms/{id}/submissions).
  });

  it('answers 404 form_not_found for an unknown form and 404 form_inactive for an inactive one', async () => {
    expect((await submit('0190a1b2-0000-7000-8000-000000000000', { values: { email: 'x@example.org' } })).json?.errorId).toBe('form_not_found');
    expect((await submit('not-a-form', { values: { email: 'x@example.org' } })).json?.errorId).toBe('form_not_found');
    const form = await createForm(a);
    expectStatus(await a.post(`/forms/${form.id}/deactivate`), 200);
    const r = await submit(form.id, { values: { email: 'x@example.org' } });
    expect([r.status, r.json?.errorId]).toEqual([404, 'form_inactive']);
  });

  it('answers CORS for the allowed origins only, preflight too', async () => {
    const form = await createForm(a, { allowedOrigins: ['https://shop.example.com'] });
    const ok = await send(form.id, '', { origin: 'https://shop.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }, 'OPTIONS');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    const refusedPreflight = await send(form.id, '', { origin: 'https://evil.example', 'access-control-request-method': 'POST' }, 'OPTIONS');
    expect(refusedPreflight.status).toBe(403);
    expect(refusedPreflight.headers.get('access-control-allow-origin')).toBeNull();

    const allowed = await submit(form.id, { values: { email: 'cors@example.org' } }, { origin: 'https://shop.example.com' });
    expect([allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([202, 'https://shop.example.com']);
    const refused = await submit(form.id, { values: { email: 'cors@example.org' } }, { origin: 'https://evil.example' });
    expect([refused.status, refused.json?.errorId, refused.headers.get('access-control-allow-origin')]).toEqual([403, 'origin_not_allowed', null]);
    // The landing page's own origin (PUBLIC_BASE_URL) may always post.
    expect((await submit(form.id, { values: { email: 'page@example.org' } }, { origin: PUBLIC_BASE_URL })).status).toBe(202);
  });

  it('limits one client address to FORM_SUBMISSIONS_PER_MINUTE (10) submissions per form and minute; other forms are not affected', async () => {
    const form = await createForm(a);
    const other = await createForm(a);
    const statuses: number[] = [];
    for (let i = 0; i < 13; i++) statuses.push((await submit(form.id, { values: { email: `flood${i}@example.org` } })).status);
    expect(statuses).toEqual([...Array(10).fill(202), 429, 429, 429]);
    const limited = await submit(form.id, { values: { email: 'flood@example.org' } });
    expect(limited.json?.errorId).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await submit(other.id, { values: { email: 'flood@example.org' } })).status).toBe(202);
  });

  it('never answers a fuzzed body with a 5xx', async () => {
    const form = await createForm(a);
    const bodies: Array<[string, string]> = [
      ['application/json', '{'],
      ['application/json', 'null'],
      ['application/json', '"text"'],
      ['application/json', '{"values": null}'],
      ['application/json', '{"values": {"email": ["a@b.c"]}}'],
      ['application/json', '{"values": {"email": {"$gt": ""}}}'],
      ['application/json', '{"values": {"__proto__": {"x": 1}, "email": "p@example.org"}}'],
      ['application/json', '{"values": {"email": "a@example.org"}, "consent": "yes"}'],
      ['application/json', `{"values": {"email": "${'a'.repeat(20_000)}@example.org"}}`],
      ['application/x-www-form-urlencoded', '%zz=%%'],
      ['application/x-www-form-urlencoded', 'values[email][]=a@b.c&values[email]=x'],
      ['text/plain', 'hello'],
      ['multipart/form-data', 'garbage'],
    ];
    for (let i = 0; i < 40; i++) {
      const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(Math.random() * 200) }, () => Math.floor(Math.random() * 256)));
      bodies.push([i % 2 ? 'application/json' : 'application/x-www-form-urlencoded', bytes.toString('latin1')]);
    }
    const fuzzForm = async () => (await createForm(a)).id;
    let formId = form.id;
    for (const [type, body] of bodies) {
      let r = await send(formId, body, { 'content-type': type, accept: 'application/json' });
      if (r.status === 429) {
        formId = await fuzzForm();
        r = await send(formId, body, { 'content-type': type, accept: 'application/json' });
      }
      expect([type, body.slice(0, 60), r.status < 500, typeof r.json?.errorId === 'string' || r.status === 202]).toEqual([type, body.slice(0, 60), true, true]);
    }
  });
});

/** The form's submissions once every one is decided (the job runs after the 202). */
async function decided(api: Api, formId: string, count: number, timeoutMs = 30_000): Promise<any[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return waitFor(`${count} submissions of ${formId} decided`, async () => {
    const { items } = expectStatus(await api.get(`/forms/${formId}/submissions?pageSize=1000`), 200);
    return items.length >= count && items.every((i: { processedAt: string | null }) => i.processedAt !== null) && items;
  }, timeoutMs);
}
/** Submits and waits for the decision of that one submission (the newest of the form). */
async function decisionOf(api: Api, formId: string, email: string, extra: Record<string, unknown> = {}): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const before = expectStatus(await api.get(`/forms/${formId}/submissions`), 200).totalItems;
  expect((await submit(formId, { values: { email, ...extra } })).status).toBe(202);
  return (await decided(api, formId, before + 1))[0];
}

describe('the submission job: every decision, in the log and the form.submitted fact', () => {
  it('QUEUED for a new address (subscriber UNCONFIRMED), then CONFIRMATION_MAIL_ALREADY_SENT for the same form, then SUPPRESSED_COOLDOWN after 3 mails', async () => {
    const topic = expectStatus(await a.post('/topics', { label: 'Weekly' }), 201).id;
    const forms = [await createForm(a, { topicIds: [topic] }), await createForm(a), await createForm(a), await createForm(a)];
    const first = await decisionOf(a, forms[0].id, 'New.Reader@example.org', { first_name: '<script>alert(1)</script>' });
    expect(first).toMatchObject({ email: 'new.reader@example.org', decision: 'QUEUED', values: { email: 'new.reader@example.org', first_name: '<script>alert(1)</script>' } });
    const subscriber = expectStatus(await a.get(`/subscribers/${first.subscriberId}`), 200);
    expect(subscriber.subscriberStatus).toBe('UNCONFIRMED');
    expect((await decisionOf(a, forms[0].id, 'new.reader@example.org')).decision).toBe('CONFIRMATION_MAIL_ALREADY_SENT');
    expect((await decisionOf(a, forms[1].id, 'new.reader@example.org')).decision).toBe('QUEUED');
    expect((await decisionOf(a, forms[2].id, 'new.reader@example.org')).decision).toBe('QUEUED');
    expect((await decisionOf(a, forms[3].id, 'new.reader@example.org')).decision).toBe('SUPPRESSED_COOLDOWN');
    // The filter by decision.
    const queued = expectStatus(await a.get(`/forms/${forms[0].id}/submissions?decision=QUEUED`), 200);
    expect(queued.items.map((i: { submissionId: string }) => i.submissionId)).toEqual([first.submissionId]);
    // Every decision is a form.submitted fact.
    const facts = await eventsOf(env.stack.nc, a.accountId, (e) => e.filter((f) => f.type === 'form.submitted' && f.email === 'new.reader@example.org').length >= 5);
    const mine = facts.filter((f) => f.type === 'form.submitted' && f.email === 'new.reader@example.org');
    expect(mine.map((f) => f.decision)).toEqual(['QUEUED', 'CONFIRMATION_MAIL_ALREADY_SENT', 'QUEUED', 'QUEUED', 'SUPPRESSED_COOLDOWN']);
    expect(mine[0]).toMatchObject({ formId: forms[0].id, submissionId: first.submissionId, subscriberId: first.subscriberId });
    // Three QUEUED decisions, three confirmation mails, each with a confirm link; the others sent none.
    await env.settled();
    const mails = relay.receivedFor('new.reader@example.org');
    expect(mails).toHaveLength(3);
    for (const mail of mails) expect(mail.text ?? mail.html ?? '').toContain(`${PUBLIC_BASE_URL}/public/confirm/`);
  });

  it('SUPPRESSED_ALREADY_SUBSCRIBED for an ACTIVE subscriber (topics added, values not overwritten)', async () => {
    const topic = expectStatus(await a.post('/topics', { label: 'Offers' }), 201).id;
    const form = await createForm(a, { topicIds: [topic] });
    const s = expectStatus(await a.post('/subscribers', { email: 'active@example.org', firstName: 'Original' }), 201);
    const d = await decisionOf(a, form.id, 'active@example.org', { first_name: 'Stranger' });
    expect([d.decision, d.subscriberId]).toEqual(['SUPPRESSED_ALREADY_SUBSCRIBED', s.id]);
    const after = expectStatus(await a.get(`/subscribers/${s.id}`), 200);
    expect([after.subscriberStatus, after.firstName]).toEqual(['ACTIVE', 'Original']);
    const topics = expectStatus(await a.get(`/subscribers/${s.id}/topics`), 200).topics;
    expect(topics.find((t: { topicId: string }) => t.topicId === topic)?.subscribed).toBe(true);
    await env.settled();
    expect(relay.receivedFor('active@example.org')).toHaveLength(0);
  });

  it('SUPPRESSED_SUBSCRIBER_POLICY for a BLOCKED subscriber and for an address on the suppression list (no subscriber created)', async () => {
    const form = await createForm(a);
    const s = expectStatus(await a.post('/subscribers', { email: 'blocked@example.org' }), 201);
    expectStatus(await a.put(`/subscribers/${s.id}/status`, { subscriberStatus: 'BLOCKED' }), 200);
    expect((await decisionOf(a, form.id, 'blocked@example.org')).decision).toBe('SUPPRESSED_SUBSCRIBER_POLICY');
    expect(expectStatus(await a.get(`/subscribers/${s.id}`), 200).subscriberStatus).toBe('BLOCKED');
    expectStatus(await a.post('/suppressions', { email: 'suppressed@example.org' }), 201);
    const d = await decisionOf(a, form.id, 'suppressed@example.org');
    expect([d.decision, d.subscriberId]).toEqual(['SUPPRESSED_SUBSCRIBER_POLICY', null]);
    expect((await a.get('/subscribers/by-email/suppressed@example.org')).status).toBe(404);
  });

  it('a single opt-in form decides null and makes the subscriber ACTIVE', async () => {
    const form = await createForm(a, { doubleOptIn: false });
    const d = await decisionOf(a, form.id, 'single@example.org');
    expect(d.decision).toBeNull();
    expect(d.processedAt).not.toBeNull();
    expect(expectStatus(await a.get(`/subscribers/${d.subscriberId}`), 200).subscriberStatus).toBe('ACTIVE');
    await env.settled();
    expect(relay.receivedFor('single@example.org')).toHaveLength(0);
  });

  it('a flood for one address mails once: one QUEUED, the rest CONFIRMATION_MAIL_ALREADY_SENT', async () => {
    const form = await createForm(a);
    const answers = await Promise.all(Array.from({ length: 8 }, () => submit(form.id, { values: { email: 'flooded@example.org' } })));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(202));
    const items = await decided(a, form.id, 8);
    const decisions = items.map((i) => i.decision).sort();
    expect(decisions).toEqual(['QUEUED', ...Array(7).fill('CONFIRMATION_MAIL_ALREADY_SENT')].sort());
    expect(new Set(items.map((i) => i.subscriberId)).size).toBe(1);
    await env.settled();
    expect(relay.receivedFor('flooded@example.org')).toHaveLength(1);
  });

  it('the honeypot stores nothing; the log is the account\'s own (tenant isolation)', async () => {
    const form = await createForm(a);
    await submit(form.id, { values: { email: 'bot@example.org' }, website: 'x' });
    await decisionOf(a, form.id, 'human@example.org');
    const items = expectStatus(await a.get(`/forms/${form.id}/submissions`), 200).items;
    expect(items.map((i: { email: string }) => i.email)).toEqual(['human@example.org']);
    const foreign = await b.get(`/forms/${form.id}/submissions`);
    expect([foreign.status, foreign.json?.errorId]).toEqual([404, 'form_not_found']);
    expect((await a.get(`/forms/${form.id}/submissions?pageSize=0`)).status).toBe(400);
    expect((await a.get(`/forms/${form.id}/submissions?decision=MAYBE`)).status).toBe(400);
  });
});
