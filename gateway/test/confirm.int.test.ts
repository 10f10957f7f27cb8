// Double opt-in end to end through the real gateway (support/form-stack.ts: real subscriber, form and
// messaging services; messaging sends to a capture relay): a submission's confirmation mail carries
// a link that confirms (GET shows a button and changes nothing, POST makes the subscriber ACTIVE,
// twice shows the same page), one mail for concurrent submissions of one address, the customer's
// form name escaped in mail and page, the page naming the account (its display name, from the
// gateway's account records, escaped), expired (410) and forged or truncated (404) tokens, a page
// that changes nothing for an unsubscribed subscriber, and no token in any log line; and the page in
// headless Chromium with JavaScript off: the button posts and the reader sees the success page.
import crypto from 'node:crypto';
import { startCaptureRelay, type CaptureRelay } from '@mailer/testing';
import { openBrowser, type BrowserHandle } from '@mailer/testing/browser';
import { confirmTokens } from '../../services/form/src/app/confirm-token';
import { startFormStack, type FormStack } from './support/form-stack';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(240_000);

const PUBLIC_BASE_URL = 'https://mail.forms.test';
const SECRET = crypto.randomBytes(32).toString('base64url');
const tokens = confirmTokens({ PUBLIC_BASE_URL, TRACKING_SECRET: SECRET, TRACKING_SECRET_PREVIOUS: [] });
const HOSTILE_NAME = `<script>alert("x")</script> Ann's & News`;
// The account's display name, as the operator set it: customer text like any other.
const ACCOUNT_NAME = `Ann's <b>Shop</b> & Co`;
const ACCOUNT_NAME_HTML = 'Ann&#39;s &lt;b&gt;Shop&lt;/b&gt; &amp; Co';
let relay: CaptureRelay;
let env: FormStack;
let a: Api;

beforeAll(async () => {
  relay = await startCaptureRelay();
  env = await startFormStack({
    publicBaseUrl: PUBLIC_BASE_URL,
    gatewayEnv: { GATEWAY_PUBLIC_PER_MINUTE: '100000' },
    formEnv: { TRACKING_SECRET: SECRET },
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false' },
  });
  a = await env.account(ACCOUNT_NAME);
  expectStatus(await a.post('/sender-profiles', { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'The Shop' }), 201);
}, 240_000);

afterAll(async () => {
  await env?.stop();
  await relay?.close();
});

const EMAIL = { fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true };
const createForm = async (name: string): Promise<{ id: string }> => expectStatus(await a.post('/forms', { name, type: 'DEFAULT', inputFields: [EMAIL] }), 201);

async function submit(formId: string, email: string): Promise<void> {
  const res = await fetch(`${env.gw.url}/public/forms/${formId}/submissions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ values: { email }, consent: { text: 'Yes, send me news' } }),
  });
  expect(res.status).toBe(202);
}

/** The confirm link of the mail to `email`, pointed at the test's gateway. */
async function confirmLink(email: string): Promise<{ url: string; token: string; html: string }> {
  await relay.waitFor(() => relay.receivedFor(email).length > 0, 120_000);
  const mail = relay.receivedFor(email)[0]!;
  const token = new RegExp(`${PUBLIC_BASE_URL}/public/confirm/([A-Za-z0-9_-]+)`).exec(mail.html ?? '')?.[1];
  expect(token).toBeDefined();
  return { url: `${env.gw.url}/public/confirm/${token}`, token: token!, html: mail.html! };
}

const page = async (url: string, method: 'GET' | 'POST' = 'GET') => {
  const res = await fetch(url, { method, redirect: 'manual', headers: { accept: 'text/html' }, ...(method === 'POST' ? { body: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
};
const subscriberOf = async (email: string) => expectStatus(await a.get(`/subscribers/by-email/${encodeURIComponent(email)}`), 200);

it('the mail links to a page whose GET changes nothing and whose button confirms; twice shows the same page', async () => {
  const form = await createForm(HOSTILE_NAME);
  const email = `ann-${crypto.randomUUID()}@example.org`;
  await submit(form.id, email);
  const { url, html } = await confirmLink(email);
  // the customer's form name is text in the mail
  expect(html).toMatch(/&lt;script&gt;alert\((&quot;|&#34;)x(&quot;|&#34;)\)&lt;\/script&gt; Ann(&#39;|&#x27;)s &amp; News/);
  expect(html).not.toContain('<script>');

  const shown = await page(url);
  expect(shown.status).toBe(200);
  expect(shown.type).toContain('text/html');
  expect(shown.text).toContain('<form method="post" action=""><button type="submit">Confirm</button></form>');
  expect(shown.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Ann&#39;s &amp; News');
  expect(shown.text).not.toContain('<script>');
  // whom the reader subscribes to: the account's display name
  expect(shown.text).toContain(`receive emails from <strong>${ACCOUNT_NAME_HTML}</strong>`);
  expect(shown.text).not.toContain('<b>');
  expect(await page(url)).toEqual(shown); // a scanner's second prefetch: the same, still nothing changed
  const before = await subscriberOf(email);
  expect(before.subscriberStatus).toBe('UNCONFIRMED');

  const confirmed = await page(url, 'POST');
  expect(confirmed.status).toBe(200);
  expect(confirmed.text).toContain('Subscription confirmed');
  expect(confirmed.text).toContain(`You will receive emails from <strong>${ACCOUNT_NAME_HTML}</strong>`);
  const after = expectStatus(await a.get(`/subscribers/${before.id}`), 200);
  expect(after.subscriberStatus).toBe('ACTIVE');
  expect(await page(url, 'POST')).toEqual(confirmed);
  expect((await subscriberOf(email)).subscriberStatus).toBe('ACTIVE');
});

it('five concurrent submissions of one address: one confirmation mail', async () => {
  const form = await createForm('Weekly');
  const email = `bob-${crypto.randomUUID()}@example.org`;
  await Promise.all(Array.from({ length: 5 }, () => submit(form.id, email)));
  await confirmLink(email);
  await env.settled(); // every submission decided and every mail job done, then counted
  expect(relay.receivedFor(email)).toHaveLength(1);
});

it('an expired link is 410 on GET and POST and changes nothing; forged, truncated and foreign tokens are 404', async () => {
  const form = await createForm('Daily');
  const email = `cat-${crypto.randomUUID()}@example.org`;
  await submit(form.id, email);
  const { token } = await confirmLink(email);
  const { accountId, submissionId } = tokens.verify(token, new Date()).ok ? (tokens.verify(token, new Date()) as { claims: { accountId: string; submissionId: string } }).claims : ({} as never);
  const expired = tokens.url(accountId, submissionId, new Date(Date.now() - 1000)).replace(PUBLIC_BASE_URL, env.gw.url);
  for (const method of ['GET', 'POST'] as const) {
    const r = await page(expired, method);
    expect(r.status).toBe(410);
    expect(r.text).toContain('This confirmation link has expired');
  }
  expect((await subscriberOf(email)).subscriberStatus).toBe('UNCONFIRMED');

  const other = confirmTokens({ PUBLIC_BASE_URL, TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'), TRACKING_SECRET_PREVIOUS: [] });
  const forged = other.url(accountId, submissionId, new Date(Date.now() + 86_400_000)).replace(PUBLIC_BASE_URL, env.gw.url);
  const unknownSubmission = tokens.url(accountId, crypto.randomUUID(), new Date(Date.now() + 86_400_000)).replace(PUBLIC_BASE_URL, env.gw.url);
  for (const url of [forged, unknownSubmission, `${env.gw.url}/public/confirm/${token.slice(0, -3)}`, `${env.gw.url}/public/confirm/x`]) {
    for (const method of ['GET', 'POST'] as const) {
      const r = await page(url, method);
      expect([url, method, r.status]).toEqual([url, method, 404]);
      expect(r.text).toContain('This link is not valid');
    }
  }
  expect((await subscriberOf(email)).subscriberStatus).toBe('UNCONFIRMED');
});

it('an unsubscribed subscriber: the POST shows a page and changes nothing', async () => {
  const form = await createForm('Monthly');
  const email = `dan-${crypto.randomUUID()}@example.org`;
  await submit(form.id, email);
  const { url } = await confirmLink(email);
  const sub = await subscriberOf(email);
  expectStatus(await a.put(`/subscribers/${sub.id}/status`, { subscriberStatus: 'UNSUBSCRIBED' }), 200);
  const r = await page(url, 'POST');
  expect(r.status).toBe(409);
  expect(r.text).toContain('Nothing was changed');
  expect((await subscriberOf(email)).subscriberStatus).toBe('UNSUBSCRIBED');
});

it('a subscriber deleted since: 410 page', async () => {
  const form = await createForm('Gone');
  const email = `fay-${crypto.randomUUID()}@example.org`;
  await submit(form.id, email);
  const { url } = await confirmLink(email);
  const sub = await subscriberOf(email);
  expect((await a.delete(`/subscribers/${sub.id}`)).status).toBe(204);
  const r = await page(url, 'POST');
  expect(r.status).toBe(410);
  expect(r.text).toContain('This subscription no longer exists');
});

describe('in a browser (headless Chromium, JavaScript off)', () => {
  let chromium: BrowserHandle;
  beforeAll(async () => {
    chromium = await openBrowser({ javaScriptEnabled: false });
  }, 180_000);
  afterAll(async () => {
    await chromium?.close();
  });

  it('the link shows the form name and a Confirm button; clicking it posts and shows success; the subscriber is ACTIVE', async () => {
    const form = await createForm(HOSTILE_NAME);
    const email = `eve-${crypto.randomUUID()}@example.org`;
    await submit(form.id, email);
    const { url } = await confirmLink(email);
    const page = await chromium.context.newPage();
    const res = await page.goto(url, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    await expect(page.locator('h1').innerText()).resolves.toBe('Confirm your subscription');
    // the customer's texts are shown as the texts they are: the account's name, the form's name
    await expect(page.locator('strong').innerText()).resolves.toBe(ACCOUNT_NAME);
    await expect(page.locator('em').innerText()).resolves.toBe(HOSTILE_NAME);
    const sub = await subscriberOf(email);
    expect(sub.subscriberStatus).toBe('UNCONFIRMED');

    const [answer] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Confirm' }).click()]);
    expect(answer?.status()).toBe(200);
    expect(answer?.request().method()).toBe('POST');
    expect(page.url()).toBe(url);
    await expect(page.locator('h1').innerText()).resolves.toBe('Subscription confirmed');
    await expect(page.locator('strong').innerText()).resolves.toBe(ACCOUNT_NAME);
    expect(expectStatus(await a.get(`/subscribers/${sub.id}`), 200).subscriberStatus).toBe('ACTIVE');
    await page.close();
  });
});

it('no confirm token in any log line of the form service or the gateway', async () => {
  const found = /\/public\/confirm\/([A-Za-z0-9_-]{20,})/;
  // the confirm requests of the tests above were logged, by route pattern
  expect(env.form.output()).toContain('"route":"/public/confirm/:token"');
  for (const output of [env.form.output(), env.gw.output()]) expect(found.exec(output)?.[0] ?? null).toBeNull();
});
