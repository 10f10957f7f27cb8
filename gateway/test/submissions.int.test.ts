// Public submissions through the real gateway (support/form-stack.ts: real subscriber, form and
// messaging services): JSON and urlencoded bodies, values checked against the form's inputs with
// precise details, CORS for allowedOrigins (preflight too), the honeypot, the per address and form
// limit, inactive and unknown forms, fuzzed bodies that never end in a 5xx; then the submission job:
// decisions visible in GET /forms/{id}/submissions, quotas, tenant isolation, a kill -9 between 202
// and the decision.
import { startFormStack, type FormStack } from './support/form-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(180_000);

const PUBLIC_BASE_URL = 'https://mail.forms.test';
let env: FormStack;
let a: Api;
let b: Api;

beforeAll(async () => {
  env = await startFormStack({
    publicBaseUrl: PUBLIC_BASE_URL,
    gatewayEnv: { GATEWAY_PUBLIC_PER_MINUTE: '100000' },
    formEnv: { FORM_ACCOUNT_SUBSCRIBER_LIMIT: '0' },
  });
  a = await env.account('submit-a');
  b = await env.account('submit-b');
}, 180_000);

afterAll(async () => {
  await env?.stop();
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
    expect(env.form.output()).toContain('submission dropped: honeypot filled');
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
