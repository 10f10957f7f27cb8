import crypto from 'node:crypto';
import http from 'node:http';
import { connect, type NatsConnection } from 'nats';
import type { BrowserContext } from 'playwright-core';
import { openBrowser, type BrowserHandle } from '@mailer/testing/browser';
import { freePort, startNatsServer, startService, waitFor, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { eventsOf } from '@mailer/testing/subscriber';
import { publicLinks } from '../../services/messaging/src/readers/app/public-links';
import { call, createAccount, gatewaySecrets, startGateway, type GatewayHandle } from './support/harness';

// The public web surface through real processes: a reader's request reaches the real gateway, which
// forwards /t/* and /u/* to the real messaging service's HTTP listener, which asks the real subscriber
// service. Tokens are signed here with the messaging service's TRACKING_SECRET and its publicLinks.
// (The pixel and redirect on stored messages: services/messaging/test/tracking.int.test.ts.)

const TRACKING_SECRET = crypto.randomBytes(32).toString('base64url');
const PUBLIC_BUDGET = 30;
const SCRIPT_LABEL = '<script>alert(1)</script>';

let nats: NatsServerHandle;
let nc: NatsConnection;
let subscriber: RunningService;
let messaging: RunningService;
let gw: GatewayHandle;
let apiKey: string;
let accountId: string;
const topic: Record<'script' | 'product' | 'retired' | 'newsletter', string> = { script: '', product: '', retired: '', newsletter: '' };
let links: ReturnType<typeof publicLinks>;

// Each test is its own reader address (the gateway trusts one proxy hop here), so budgets do not mix.
let addressNo = 0;
const reader = () => ({ 'x-forwarded-for': `198.51.100.${++addressNo}` });

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  subscriber = await startService('subscriber', { NATS_URL: nats.url });
  const httpAddr = `127.0.0.1:${await freePort()}`;
  messaging = await startService('messaging', { NATS_URL: nats.url, SUBSCRIBER_GRPC_ADDR: subscriber.address, MESSAGING_HTTP_ADDR: httpAddr, TRACKING_SECRET });
  gw = await startGateway({
    NATS_URL: nats.url,
    ...gatewaySecrets(),
    SUBSCRIBER_GRPC_ADDR: subscriber.address,
    MESSAGING_HTTP_ADDR: httpAddr,
    GATEWAY_TRUST_PROXY: '1',
    GATEWAY_PUBLIC_PER_MINUTE: String(PUBLIC_BUDGET),
    GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
  });
  links = publicLinks({ PUBLIC_BASE_URL: gw.url, BOUNCE_DOMAIN: 'bounces.localhost', TRACKING_SECRET, TRACKING_SECRET_PREVIOUS: [] });
  ({ accountId, apiKey } = await createAccount(gw, 'pages'));
  const add = async (body: object) => (await call(gw, 'POST', '/topics', { apiKey, body })).json.id as string;
  topic.script = await add({ label: SCRIPT_LABEL, description: 'Deals & "offers" <b>weekly</b>' });
  topic.product = await add({ label: 'Product news' });
  topic.retired = await add({ label: 'Retired topic' });
  topic.newsletter = (await call(gw, 'GET', '/topics', { apiKey })).json.items.find((t: { label: string }) => t.label === 'Newsletter').id;
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await messaging?.stop();
  await subscriber?.stop();
  await nc?.close();
  await nats?.stop();
});

/** A new subscriber in the given topics (before `retired` is deactivated, it may join it). */
async function newReader(topicIds: string[]): Promise<string> {
  const res = await call(gw, 'POST', '/subscribers', { apiKey, body: { email: `r${crypto.randomUUID()}@example.org`, topicIds } });
  expect(res.status).toBe(201);
  return res.json.id;
}

async function topicsOf(subscriberId: string): Promise<Record<string, { subscribed: boolean; optedOut: boolean }>> {
  const res = await call(gw, 'GET', `/subscribers/${subscriberId}/topics`, { apiKey });
  return Object.fromEntries(res.json.topics.map((t: { topicId: string; subscribed: boolean; optedOut: boolean }) => [t.topicId, { subscribed: t.subscribed, optedOut: t.optedOut }]));
}

const pageOf = (subscriberId: string, topicId?: string) => new URL(links.unsubscribeUrl(accountId, { subscriberId, ...(topicId ? { topicId } : {}) })).pathname;
const oneClick = { 'content-type': 'application/x-www-form-urlencoded' };

describe('preference page and one-click unsubscribe through the gateway', () => {
  let retiredMember: string;

  beforeAll(async () => {
    retiredMember = await newReader([topic.script, topic.retired]);
    expect((await call(gw, 'PATCH', `/topics/${topic.retired}`, { apiKey, body: { active: false } })).status).toBe(200);
  });

  it('GET shows the active topics with the reader\'s subscriptions, every label escaped, and changes nothing', async () => {
    const before = await topicsOf(retiredMember);
    const res = await call(gw, 'GET', pageOf(retiredMember), { headers: { ...reader(), 'x-request-id': 'pref-page-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBe('pref-page-1');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*style-src 'sha256-/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // The customer's label and description arrive as text, never as markup.
    expect(res.text).not.toContain('<script>');
    expect(res.text).not.toContain('<b>');
    expect(res.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(res.text).toContain('Deals &amp; &quot;offers&quot; &lt;b&gt;weekly&lt;/b&gt;');
    // Active topics only, each a checkbox checked when subscribed; the form and its two buttons.
    expect(res.text).toContain(`value="${topic.script}" checked>`);
    expect(res.text).toContain(`value="${topic.product}">`);
    expect(res.text).toContain(`value="${topic.newsletter}">`);
    expect(res.text).not.toContain(topic.retired);
    expect(res.text).not.toContain('Retired topic');
    expect(res.text).toMatch(/<form method="post">/);
    expect(res.text).toContain('value="unsubscribe_all"');
    await call(gw, 'GET', pageOf(retiredMember), { headers: reader() });
    expect(await topicsOf(retiredMember)).toEqual(before);
    // The request id travelled to the messaging service's access log; the token did not.
    await waitFor('the request id in the messaging log', () => messaging.output().includes('"requestId":"pref-page-1"'), 5_000);
    expect(messaging.output()).not.toContain(pageOf(retiredMember).slice(3));
    expect(gw.output()).not.toContain(pageOf(retiredMember).slice(3));
  });

  it('RFC 8058 one-click (urlencoded) leaves the mail\'s topic only, as a personal opt-out from the unsubscribe link', async () => {
    const id = await newReader([topic.script, topic.product]);
    const res = await call(gw, 'POST', pageOf(id, topic.product), { rawBody: 'List-Unsubscribe=One-Click', headers: { ...reader(), ...oneClick } });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    const now = await topicsOf(id);
    expect(now[topic.product]).toEqual({ subscribed: false, optedOut: true });
    expect(now[topic.script]).toEqual({ subscribed: true, optedOut: false });
    const facts = await eventsOf(nc, accountId, (e) => e.some((f) => f.type === 'subscriber.topic_opted_out' && f.subscriber?.id === id));
    const optOut = facts.find((f) => f.type === 'subscriber.topic_opted_out' && f.subscriber?.id === id)!;
    expect(optOut).toMatchObject({ topicId: topic.product, source: 'unsubscribe_link' });
    // A repeat (mail clients retry) is answered the same and changes nothing.
    const again = await call(gw, 'POST', pageOf(id, topic.product), { rawBody: 'List-Unsubscribe=One-Click', headers: { ...reader(), ...oneClick } });
    expect(again.status).toBe(200);
    expect(await topicsOf(id)).toEqual(now);
  });

  it('one-click as multipart/form-data on a mail without a topic leaves every topic', async () => {
    const id = await newReader([topic.script, topic.product, topic.newsletter]);
    const form = new FormData();
    form.append('List-Unsubscribe', 'One-Click');
    const res = await fetch(`${gw.url}${pageOf(id)}`, { method: 'POST', body: form, headers: reader() });
    expect(res.status).toBe(200);
    const now = await topicsOf(id);
    for (const t of [topic.script, topic.product, topic.newsletter]) expect([t, now[t]]).toEqual([t, { subscribed: false, optedOut: true }]);
  });

  it('the form\'s "unsubscribe from all" answers a confirmation page', async () => {
    const id = await newReader([topic.product]);
    const res = await call(gw, 'POST', pageOf(id), { rawBody: 'action=unsubscribe_all', headers: { ...reader(), ...oneClick } });
    expect(res.status).toBe(200);
    expect(res.text).toContain('You are unsubscribed from all topics.');
    expect((await topicsOf(id))[topic.product]).toEqual({ subscribed: false, optedOut: true });
  });

  it('refuses bodies that are neither (400), too large (413) or of another type (415), with plain pages and no change', async () => {
    const id = await newReader([topic.product]);
    const cases: Array<[number, string | Buffer, string]> = [
      [400, 'List-Unsubscribe=Nope', 'application/x-www-form-urlencoded'],
      [400, '', 'application/x-www-form-urlencoded'],
      [413, `action=save&${'topic=x&'.repeat(3000)}`, 'application/x-www-form-urlencoded'],
      [415, '{"List-Unsubscribe":"One-Click"}', 'application/json'],
    ];
    for (const [status, body, type] of cases) {
      const res = await call(gw, 'POST', pageOf(id), { rawBody: body, headers: { ...reader(), 'content-type': type } });
      expect([type, res.status, res.headers.get('content-type')]).toEqual([type, status, 'text/html; charset=utf-8']);
    }
    expect((await topicsOf(id))[topic.product]).toEqual({ subscribed: true, optedOut: false });
  });

  it('a forged, edited or foreign token, or a reader that no longer exists, is a plain 404 page (GET and POST)', async () => {
    const id = await newReader([topic.product]);
    const good = pageOf(id, topic.product);
    const other = publicLinks({ PUBLIC_BASE_URL: gw.url, BOUNCE_DOMAIN: 'x', TRACKING_SECRET: crypto.randomBytes(32).toString('hex'), TRACKING_SECRET_PREVIOUS: [] });
    const gone = pageOf(crypto.randomUUID());
    const paths = [
      `${good.slice(0, -2)}${good.endsWith('AA') ? 'BB' : 'AA'}`,
      new URL(other.unsubscribeUrl(accountId, { subscriberId: id })).pathname,
      gone,
      '/u/not-a-token',
      `/t/o/${new URL(links.unsubscribeUrl(accountId, { subscriberId: id })).pathname.slice(3)}`, // an unsubscribe token is no open token
      '/t/c/forged',
    ];
    for (const p of paths) {
      const get = await call(gw, 'GET', p, { headers: reader() });
      expect([p, get.status, get.headers.get('content-type')]).toEqual([p, 404, 'text/html; charset=utf-8']);
      expect(get.headers.get('location')).toBeNull();
      if (p.startsWith('/u/')) {
        const post = await call(gw, 'POST', p, { rawBody: 'List-Unsubscribe=One-Click', headers: { ...reader(), ...oneClick } });
        // A genuine link of a reader deleted since: that reader gets no more mail, so one-click succeeds.
        expect([p, post.status]).toEqual([p, p === gone ? 200 : 404]);
      }
    }
    expect((await topicsOf(id))[topic.product]).toEqual({ subscribed: true, optedOut: false });
  });
});

describe('the gateway\'s forwarding', () => {
  it('never forwards a path that leaves its prefix once decoded', async () => {
    const paths = ['/t/../healthz', '/t/o/../../u/x', '/t/..%2f..%2fhealthz', '/t/%2e%2e/%2e%2e/openapi.json', '/u/..%5c..%5cx', '/t/o/%252e%252e%252fx', '/public/forms/..%2f..%2ft/o/x', '/u/%zz'];
    for (const [i, p] of paths.entries()) {
      // Sent as written (fetch would resolve the dot segments itself).
      const res = await rawGet(p, { ...reader(), 'x-request-id': `escape-${i}` });
      expect([p, res.status, res.type]).toEqual([p, 404, 'text/html; charset=utf-8']);
    }
    // A request that does reach the messaging service, after them: once its log line is out, theirs would be too.
    expect((await rawGet('/u/not-a-token', { ...reader(), 'x-request-id': 'escape-marker' })).status).toBe(404);
    await waitFor('the marker in the messaging log', () => messaging.output().includes('"requestId":"escape-marker"'), 5_000);
    // None of them reached the messaging service.
    for (let i = 0; i < paths.length; i++) expect(messaging.output()).not.toContain(`"requestId":"escape-${i}"`);
  });

  it('limits public requests per client address, not per account: one address is refused while another is not', async () => {
    const busy = reader();
    for (let i = 0; i < PUBLIC_BUDGET; i++) expect((await fetch(`${gw.url}/t/o/forged`, { headers: busy })).status).toBe(404);
    const refused = await fetch(`${gw.url}/t/o/forged`, { headers: busy });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${gw.url}/t/o/forged`, { headers: reader() })).status).toBe(404);
    // The account's API budget is not the one spent.
    expect((await call(gw, 'GET', '/topics', { apiKey })).status).toBe(200);
  }, 60_000);
});

describe('the preference page in a browser without JavaScript', () => {
  let chromium: BrowserHandle;
  let browser: BrowserContext;

  beforeAll(async () => {
    chromium = await openBrowser({ javaScriptEnabled: false, extraHTTPHeaders: reader() });
    browser = chromium.context;
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
  });

  it('shows the topics as checkboxes, and saving the form changes the subscriptions', async () => {
    const id = await newReader([topic.script, topic.product]);
    const page = await browser.newPage();
    const console: string[] = [];
    page.on('console', (m) => console.push(m.text()));
    const res = await page.goto(`${gw.url}${pageOf(id)}`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    // The label is shown as the text it is (escaped markup, no script ran: JavaScript is off anyway).
    const script = page.getByLabel(SCRIPT_LABEL);
    await expect(script.isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Product news').isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Newsletter').isChecked()).resolves.toBe(false);

    await page.getByLabel('Product news').uncheck();
    await page.getByLabel('Newsletter').check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save preferences' }).click()]);
    await expect(page.locator('h1').innerText()).resolves.toBe('Preferences saved');
    const kept = await page.locator('li').allInnerTexts();
    expect(kept.sort()).toEqual([SCRIPT_LABEL, 'Newsletter'].sort());
    // The page's own stylesheet was allowed by its hash: no Content-Security-Policy complaint.
    expect(console.filter((m) => /Content.Security.Policy/i.test(m))).toEqual([]);

    const now = await topicsOf(id);
    expect(now[topic.product]).toEqual({ subscribed: false, optedOut: true });
    expect(now[topic.newsletter]).toEqual({ subscribed: true, optedOut: false });
    expect(now[topic.script]).toEqual({ subscribed: true, optedOut: false });

    // Back on the page, re-joining a topic left earlier lifts that opt-out.
    await page.goto(`${gw.url}${pageOf(id)}`, { waitUntil: 'load' });
    await page.getByLabel('Product news').check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save preferences' }).click()]);
    expect((await topicsOf(id))[topic.product]).toEqual({ subscribed: true, optedOut: false });

    // And "Unsubscribe from all".
    await page.goto(`${gw.url}${pageOf(id)}`, { waitUntil: 'load' });
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Unsubscribe from all' }).click()]);
    await expect(page.locator('body').innerText()).resolves.toContain('You are unsubscribed from all topics.');
    for (const t of [topic.script, topic.product, topic.newsletter]) expect([t, (await topicsOf(id))[t].optedOut]).toEqual([t, true]);
    await page.close();
  }, 120_000);
});

describe('when an owner does not answer', () => {
  it('the preference page is a plain 503 while the subscriber service is down, and every public page while messaging is', async () => {
    const id = await newReader([topic.product]);
    await subscriber.stop();
    const noSubscribers = await call(gw, 'GET', pageOf(id), { headers: reader() });
    expect(noSubscribers.status).toBe(503);
    expect(noSubscribers.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(noSubscribers.text).toContain('Temporarily unavailable');

    // SIGTERM: the HTTP listener closes with the gRPC server and the process exits cleanly.
    expect(await messaging.stop()).toBe(0);
    expect(messaging.output()).toContain('"msg":"stopped"');
    for (const p of [pageOf(id), '/t/o/anything', '/t/c/anything']) {
      const res = await call(gw, 'GET', p, { headers: reader() });
      expect([p, res.status, res.headers.get('content-type')]).toEqual([p, 503, 'text/html; charset=utf-8']);
      // No internals: no address, port or error code of the failed connection.
      expect(res.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|proxy|:\d{4,5}/i);
    }
  }, 60_000);
});

function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; type: string | undefined }> {
  const { hostname, port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method: 'GET', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'] }));
    });
    req.on('error', reject);
    req.end();
  });
}
