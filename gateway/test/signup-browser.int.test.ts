// Signing up as a reader does it, in headless Chromium, through the real gateway and the real
// subscriber, form and messaging services (support/form-stack.ts), mail captured at an SMTP relay:
// - the hosted landing page: fill the inputs, press the button, read the page that follows (the
//   form again with the problem marked, then the thank-you page), find the confirmation mail, open
//   its link (the page names the account);
// - the README's embed snippet on a page of another origin: accepted when that origin is in the
//   form's allowedOrigins, a plain page (never our JSON) when it is not;
// - the options a reader is offered and may choose are the field's as they are now (an option added
//   after the form was saved, one deactivated);
// - every refusal a browser can meet is a page, and /favicon.ico needs no key.
// PUBLIC_BASE_URL is the gateway's own address here, so the hosted page is served on our origin.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { freePort, startCaptureRelay, type CaptureRelay } from '@mailer/testing';
import { openBrowser, type BrowserHandle } from '@mailer/testing/browser';
import type { Page } from 'playwright-core';
import { startFormStack, type FormStack } from './support/form-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(240_000);

const ACCOUNT_NAME = 'Ann & Bob <Books>';
let PUBLIC_BASE_URL: string;
let relay: CaptureRelay;
let env: FormStack;
let a: Api;
let chromium: BrowserHandle;
let site: http.Server;
let sitePort: number;
/** The page each path of the customer's site serves. */
const sitePages = new Map<string, string>();

beforeAll(async () => {
  const gatewayPort = await freePort();
  PUBLIC_BASE_URL = `http://127.0.0.1:${gatewayPort}`;
  relay = await startCaptureRelay();
  env = await startFormStack({
    publicBaseUrl: PUBLIC_BASE_URL,
    gatewayEnv: { GATEWAY_PORT: String(gatewayPort), GATEWAY_PUBLIC_PER_MINUTE: '100000' },
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false' },
  });
  expect(env.gw.url).toBe(PUBLIC_BASE_URL);
  a = await env.account(ACCOUNT_NAME);
  expectStatus(await a.post('/sender-profiles', { name: 'Books', fromEmail: 'news@books.example', fromName: 'Books' }), 201);
  // A customer's website: one plain HTTP server, reached by the browser as two origins
  // (http://shop.test:<port> and http://elsewhere.test:<port>).
  site = http.createServer((req, res) => {
    const body = sitePages.get(req.url ?? '');
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as AddressInfo).port;
  chromium = await openBrowser({ localHosts: ['shop.test', 'elsewhere.test'] });
}, 240_000);

afterAll(async () => {
  await chromium?.close();
  await new Promise((resolve) => site?.close(resolve));
  await env?.stop();
  await relay?.close();
});

const EMAIL = { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true, label: 'Your email' };
const FIRST_NAME = { fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, isRequired: false, label: 'Your first name' };
let seq = 0;
const unique = (name: string) => `${name}-${++seq}-${Date.now()}`;

/** A reader's fresh tab. */
const tab = (): Promise<Page> => chromium.context.newPage();

/** Clicks the button and waits for the page that follows; its response. */
async function press(page: Page, button: string) {
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: button }).click()]);
  expect(response).not.toBeNull();
  return response!;
}

/** The confirm link of the first mail to `email`. */
async function confirmLinkOf(email: string): Promise<string> {
  await relay.waitFor(() => relay.receivedFor(email).length > 0, 30_000);
  const link = new RegExp(`${PUBLIC_BASE_URL}/public/confirm/[A-Za-z0-9_-]+`).exec(relay.receivedFor(email)[0].html ?? '')?.[0];
  expect(link).toBeDefined();
  return link!;
}

/** The form's submissions once `count` are there. */
async function submissionsOf(formId: string, count: number): Promise<Array<{ email: string; values: Record<string, unknown> }>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const items = expectStatus(await a.get(`/forms/${formId}/submissions?pageSize=100`), 200).items;
    if (items.length >= count || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The documented embed snippet (docs/integrators.md, "Signup forms") for this gateway and form. */
function readmeSnippet(formId: string): string {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'integrators.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Signup forms'));
  const snippet = /```html\n([\s\S]*?)```/.exec(section)?.[1];
  expect(snippet).toContain('<form');
  return snippet!.replaceAll('https://<gateway>', PUBLIC_BASE_URL).replaceAll('<formId>', formId);
}

describe('the hosted landing page', () => {
  it('a reader fills it in, sees a problem marked, corrects it, gets the thank-you page, the mail, and a confirm page naming the account', async () => {
    // A choice field whose options change after the form is saved: the page offers them as they are now.
    const plan = expectStatus(await a.post('/fields', { label: 'Plan', fieldType: 'SINGLE_CHOICE', personalizationTagName: 'plan', options: ['Free', 'Pro'] }), 201);
    const routePath = unique('join');
    const form = expectStatus(
      await a.post('/forms', {
        name: 'Books weekly',
        type: 'PAGE',
        routePath,
        inputFields: [EMAIL, FIRST_NAME, { fieldRef: { type: 'CUSTOM', fieldId: plan.fieldId }, isRequired: true, label: 'Your plan', inputControl: 'RADIO_GROUP' }],
      }),
      201,
    );
    const published = expectStatus(await a.post(`/forms/${form.id}/publish`), 200);
    expect(published.publicUrl).toBe(`${PUBLIC_BASE_URL}/public/pages/${routePath}`);
    const free = plan.options.find((o: { label: string }) => o.label === 'Free');
    expectStatus(await a.patch(`/fields/${plan.fieldId}`, { options: [{ id: free.id, label: 'Free' }, { id: null, label: 'Gold' }] }), 200);
    // What an integrator reads of the form follows too; the form's own label stays.
    for (const read of [`/forms/${form.id}`, `/forms/${form.id}/embedding`]) {
      const input = expectStatus(await a.get(read), 200).inputFields.find((f: { personalizationTagName: string }) => f.personalizationTagName === 'plan');
      expect([read, input.optionValues, input.label]).toEqual([read, ['Free', 'Gold'], 'Your plan']);
    }
    const pro = await fetch(`${env.gw.url}/public/forms/${form.id}/submissions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ values: { email: 'pro@example.org', plan: 'Pro' } }),
    });
    expect([pro.status, ((await pro.json()) as { details: unknown }).details]).toEqual([400, [{ path: 'values.plan', problem: 'must be one of the options: Free, Gold' }]]);

    const page = await tab();
    const opened = await page.goto(published.publicUrl, { waitUntil: 'load' });
    expect(opened?.status()).toBe(200);
    await expect(page.locator('h1').innerText()).resolves.toBe('Books weekly');
    // Offered: the options as they are now (Gold added, Pro deactivated), under the form's own label.
    await expect(page.locator('fieldset input[type=radio]').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value))).resolves.toEqual(['Free', 'Gold']);
    await expect(page.locator('legend').innerText()).resolves.toContain('Your plan');

    // An address the browser lets through but the form service refuses: the form again, problem marked, values kept.
    await page.getByLabel('Your email').fill('ann@localhost');
    await page.getByLabel('Your first name').fill('Ann');
    await page.getByLabel('Gold').check();
    const refused = await press(page, 'Subscribe');
    expect(refused.status()).toBe(400);
    expect(refused.headers()['content-type']).toContain('text/html');
    await expect(page.locator('[role=alert]').innerText()).resolves.toContain('Please correct the marked fields');
    await expect(page.locator('#e-email').innerText()).resolves.toBe('must be a valid email address');
    await expect(page.getByLabel('Your first name').inputValue()).resolves.toBe('Ann');
    await expect(page.getByLabel('Gold').isChecked()).resolves.toBe(true);

    // Corrected on that page (which posts from our origin too): the thank-you page.
    const email = `${unique('ann')}@example.org`;
    await page.getByLabel('Your email').fill(email);
    const accepted = await press(page, 'Subscribe');
    expect(accepted.status()).toBe(200);
    expect(page.url()).toBe(`${PUBLIC_BASE_URL}/public/forms/${form.id}/thank-you`);
    await expect(page.locator('h1').innerText()).resolves.toBe('Thank you');
    const [stored] = await submissionsOf(form.id, 1);
    expect(stored).toMatchObject({ email, values: { email, first_name: 'Ann', plan: 'Gold' } });

    // The confirmation mail's link: the page names the account the reader subscribes to.
    const link = await confirmLinkOf(email);
    await page.goto(link, { waitUntil: 'load' });
    await expect(page.locator('h1').innerText()).resolves.toBe('Confirm your subscription');
    await expect(page.locator('strong').innerText()).resolves.toBe(ACCOUNT_NAME);
    await press(page, 'Confirm');
    await expect(page.locator('h1').innerText()).resolves.toBe('Subscription confirmed');
    expect(expectStatus(await a.get(`/subscribers/by-email/${encodeURIComponent(email)}`), 200).subscriberStatus).toBe('ACTIVE');
    await page.close();
  });

  it('a form deactivated while its page is open: pressing the button shows a plain page, not JSON', async () => {
    const routePath = unique('closing');
    const form = expectStatus(await a.post('/forms', { name: 'Closing soon', type: 'PAGE', routePath, inputFields: [EMAIL] }), 201);
    const { publicUrl } = expectStatus(await a.post(`/forms/${form.id}/publish`), 200);
    const page = await tab();
    await page.goto(publicUrl, { waitUntil: 'load' });
    expectStatus(await a.post(`/forms/${form.id}/deactivate`), 200);
    await page.getByLabel('Your email').fill(`${unique('late')}@example.org`);
    const answer = await press(page, 'Subscribe');
    expect(answer.status()).toBe(404);
    expect(answer.headers()['content-type']).toContain('text/html');
    await expect(page.locator('h1').innerText()).resolves.toBe('Signup closed');
    await expect(page.locator('body').innerText()).resolves.not.toContain('errorId');
    await page.close();
  });
});

describe("the README's embed snippet on a customer's website", () => {
  it('posts from an origin in allowedOrigins: the thank-you page, then the mail', async () => {
    const form = expectStatus(await a.post('/forms', { name: 'Shop signup', type: 'INLINE', inputFields: [EMAIL, FIRST_NAME], allowedOrigins: [`http://shop.test:${sitePort}`] }), 201);
    sitePages.set('/signup.html', `<!doctype html><html><head><title>Shop</title></head><body><h1>Our shop</h1>\n${readmeSnippet(form.id)}</body></html>`);
    const page = await tab();
    await page.goto(`http://shop.test:${sitePort}/signup.html`, { waitUntil: 'load' });
    const email = `${unique('embed')}@example.org`;
    await page.locator('input[name="values[email]"]').fill(email);
    const answer = await press(page, 'Subscribe');
    expect(answer.status()).toBe(200);
    expect(page.url()).toBe(`${PUBLIC_BASE_URL}/public/forms/${form.id}/thank-you`);
    await expect(page.locator('h1').innerText()).resolves.toBe('Thank you');
    await confirmLinkOf(email);
    expect((await submissionsOf(form.id, 1)).map((s) => s.email)).toEqual([email]);
    await page.close();
  });

  it('posts from an origin not in allowedOrigins: a plain 403 page, nothing stored, no mail', async () => {
    const form = expectStatus(await a.post('/forms', { name: 'Shop only', type: 'INLINE', inputFields: [EMAIL], allowedOrigins: [`http://shop.test:${sitePort}`] }), 201);
    sitePages.set('/copied.html', `<!doctype html><html><head><title>Elsewhere</title></head><body>\n${readmeSnippet(form.id)}</body></html>`);
    const page = await tab();
    await page.goto(`http://elsewhere.test:${sitePort}/copied.html`, { waitUntil: 'load' });
    const email = `${unique('copied')}@example.org`;
    await page.locator('input[name="values[email]"]').fill(email);
    const answer = await press(page, 'Subscribe');
    expect(answer.status()).toBe(403);
    expect(answer.headers()['content-type']).toContain('text/html');
    await expect(page.locator('h1').innerText()).resolves.toBe('Signup not possible here');
    await expect(page.locator('body').innerText()).resolves.not.toContain('origin_not_allowed');
    expect(expectStatus(await a.get(`/forms/${form.id}/submissions`), 200).items).toEqual([]);
    expect(relay.receivedFor(email)).toEqual([]);
    await page.close();
  });
});

describe('what a browser gets for every refusal (Accept prefers text/html)', () => {
  const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'content-type': 'application/x-www-form-urlencoded' };
  const post = (formId: string, headers: Record<string, string> = {}, body = 'values%5Bemail%5D=reader%40example.org') =>
    fetch(`${env.gw.url}/public/forms/${formId}/submissions`, { method: 'POST', headers: { ...BROWSER, ...headers }, body, redirect: 'manual' });
  const pageOf = async (res: Response) => ({ status: res.status, type: res.headers.get('content-type'), h1: /<h1>([^<]*)<\/h1>/.exec(await res.text())?.[1] });

  it('unknown form, Origin null (a sandboxed frame, a page hiding its origin), rate limited, unreadable body: each a page', async () => {
    const form = expectStatus(await a.post('/forms', { name: 'Pages', type: 'DEFAULT', inputFields: [EMAIL] }), 201);
    expect(await pageOf(await post('0190a1b2-0000-7000-8000-000000000000'))).toEqual({ status: 404, type: 'text/html; charset=utf-8', h1: 'Form not found' });
    expect(await pageOf(await post(form.id, { origin: 'null' }))).toEqual({ status: 403, type: 'text/html; charset=utf-8', h1: 'Signup not possible here' });
    expect(await pageOf(await post(form.id, { 'content-type': 'text/plain' }, 'hello'))).toEqual({ status: 415, type: 'text/html; charset=utf-8', h1: 'The form could not be sent' });
    // The same refusals, asked by a program, stay JSON.
    const json = await post(form.id, { origin: 'null', accept: 'application/json' });
    expect([json.status, ((await json.json()) as { errorId: string }).errorId]).toEqual([403, 'origin_not_allowed']);
    // 10 a minute per address and form (FORM_SUBMISSIONS_PER_MINUTE), then a page with Retry-After.
    let last: Response | undefined;
    for (let i = 0; i < 11; i++) last = await post(form.id, { origin: PUBLIC_BASE_URL });
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await pageOf(last!)).toEqual({ status: 429, type: 'text/html; charset=utf-8', h1: 'Too many signups' });
  });

  it('/favicon.ico needs no API key, on any host that serves pages', async () => {
    for (const host of [undefined, 'join.books.example']) {
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`${env.gw.url}/favicon.ico`, { headers: host ? { host } : {} }, resolve).on('error', reject),
      );
      res.resume();
      expect([host, res.statusCode, res.headers['cache-control']]).toEqual([host, 204, 'public, max-age=86400']);
    }
  });

  it('while the field catalog cannot be read, readers still sign up: the page as saved, the post accepted and decided once the catalog is back', async () => {
    const routePath = unique('outage');
    const form = expectStatus(await a.post('/forms', { name: 'Outage', type: 'PAGE', routePath, inputFields: [EMAIL] }), 201);
    const { publicUrl } = expectStatus(await a.post(`/forms/${form.id}/publish`), 200);
    const email = `${unique('outage')}@example.org`;
    process.kill(env.subscriber.pid, 'SIGSTOP');
    try {
      const landing = await fetch(publicUrl, { headers: { accept: BROWSER.accept } });
      expect([landing.status, (await landing.text()).includes('name="values[email]"')]).toEqual([200, true]);
      const accepted = await post(form.id, { origin: PUBLIC_BASE_URL }, `values%5Bemail%5D=${encodeURIComponent(email)}`);
      expect([accepted.status, accepted.headers.get('location')]).toEqual([303, `/public/forms/${form.id}/thank-you`]);
      // An integrator asking for the form is told the truth instead: the catalog is away.
      expectStatus(await a.get(`/forms/${form.id}`), 503);
    } finally {
      process.kill(env.subscriber.pid, 'SIGCONT');
    }
    await confirmLinkOf(email);
  });
});
