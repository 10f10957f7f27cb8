// Hosted landing pages on the form service's public listener (the kit's listener with the service's
// policy, the landing router, a real embedded store): a PUBLISHED PAGE form is served on its host
// only, every other state and host is the same plain 404 page, and the thank-you page after a
// browser's submission. (Through the gateway in a real browser: landing.browser.int.test.ts.)
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import pino from 'pino';
import { createMetrics, failedPrecondition, startHttpListener, type HttpListener } from '@mailer/kit';
import { STYLESHEET } from '@mailer/kit/html';
import { openStore, type Store } from '@mailer/store';
import { pageDomainCheck } from '../src/app/page-domains';
import type { Form } from '../src/domain/form';
import type { FormHttpDeps } from '../src/http/app';
import { PAGES_CSP } from '../src/http/form-html';
import { landingRoutes } from '../src/http/landing';
import { formRepository } from '../src/store/forms';
import { catalogFieldOf, customInput, emailInput, formFixture } from './support/form-fixture';

const BASE_HOST = 'mail.example.net';
const PUBLIC_BASE_URL = `https://${BASE_HOST}`;
let dir: string;
let store: Store;
let listener: HttpListener;
const lostDomains = new Set<string>();
const pageDomainNotVerified = () => failedPrecondition('page_domain_not_verified', 'the account has not verified the domain');

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'form-landing-'));
  store = await openStore({ dataDir: dir });
  const app = express();
  // The account's catalog holds the fields its stored forms were saved with.
  const catalog = { fields: async (accountId: string) => (await formRepository(store).list(accountId)).flatMap((f) => f.inputFields.map(catalogFieldOf)) };
  // The messaging service's word on custom domains: verified unless a test says the account lost it.
  const messaging = {
    async requirePageDomain(accountId: string, domain: string) {
      if (lostDomains.has(`${accountId} ${domain}`)) throw pageDomainNotVerified();
    },
  };
  const pageDomains = pageDomainCheck({ messaging, recheckMs: 0, now: () => new Date(), logger: pino({ level: 'silent' }) });
  app.use(landingRoutes({ store, config: { PUBLIC_BASE_URL }, catalog, pageDomains } as unknown as FormHttpDeps));
  listener = await startHttpListener({ address: '127.0.0.1:0', app, logger: pino({ level: 'silent' }), metrics: createMetrics('form-landing-test'), contentSecurityPolicy: PAGES_CSP });
}, 60_000);

afterAll(async () => {
  await listener?.close(1_000);
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function page(over: Partial<Form>): Promise<Form> {
  const id = `form-${++n}`;
  const form = formFixture(id, `acc-${n}`, { type: 'PAGE', landingPageStatus: 'PUBLISHED', routePath: `page-${n}`, lastPublishedAt: new Date(), ...over });
  await formRepository(store).create(form);
  return form;
}

/** A GET with the headers the gateway's proxy sets (Host kept, X-Forwarded-Host = the reader's Host). */
function get(pathname: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: listener.port, path: pathname, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}
const viaGateway = (host: string) => ({ host, 'x-forwarded-host': host, accept: 'text/html' });

test('a published page is served on the default host, as a form posting to its submissions endpoint', async () => {
  const form = await page({ name: 'Weekly <news>', inputFields: [emailInput(), { ...customInput('f-1', 1), label: 'Your city', placeholder: 'Berlin' }] });
  const res = await get(`/public/pages/${form.routePath}`, viaGateway(BASE_HOST));
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toContain('<h1>Weekly &lt;news&gt;</h1>');
  expect(res.body).toContain(`<form method="post" action="/public/forms/${form.id}/submissions"`);
  expect(res.body).toMatch(/<input type="email" name="values\[email\]" id="f-email" required/);
  expect(res.body).toContain('placeholder="Berlin"');
  expect(res.body).not.toMatch(/<script/i);
  // The page's form must post with its origin: the page overrides the listener's no-referrer for itself.
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.body).toContain('<meta name="referrer" content="same-origin">');
  // The policy allows exactly the page's one stylesheet, no script, and posting to this origin only.
  const csp = String(res.headers['content-security-policy']);
  const hash = createHash('sha256').update(STYLESHEET, 'utf8').digest('base64');
  expect(res.body).toContain(`<style>${STYLESHEET}</style>`);
  expect(csp).toContain(`style-src 'sha256-${hash}'`);
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("form-action 'self'");
  expect(csp).not.toContain('script-src');
});

test("the gateway's X-Forwarded-Host names the host, with Host as the fallback; the host is case-insensitive", async () => {
  const form = await page({});
  expect((await get(`/public/pages/${form.routePath}`, { host: '127.0.0.1:9', 'x-forwarded-host': BASE_HOST.toUpperCase() })).status).toBe(200);
  expect((await get(`/public/pages/${form.routePath}`, { host: BASE_HOST })).status).toBe(200);
  expect((await get(`/public/pages/${form.routePath}`, { host: BASE_HOST, 'x-forwarded-host': 'other.example.org' })).status).toBe(404);
});

test("a custom domain's page is served on that host only (any port), and not on the default host", async () => {
  const form = await page({ domain: 'join.shop.example' });
  for (const host of ['join.shop.example', 'JOIN.shop.example', 'join.shop.example:8443']) {
    expect([host, (await get(`/public/pages/${form.routePath}`, viaGateway(host))).status]).toEqual([host, 200]);
  }
  for (const host of [BASE_HOST, 'shop.example', 'evil.join.shop.example']) {
    expect([host, (await get(`/public/pages/${form.routePath}`, viaGateway(host))).status]).toEqual([host, 404]);
  }
  // The same routePath on the default host is another form's page.
  const other = await page({ routePath: form.routePath, name: 'Default host form' });
  const res = await get(`/public/pages/${form.routePath}`, viaGateway(BASE_HOST));
  expect([res.status, res.body.includes(`/public/forms/${other.id}/submissions`)]).toEqual([200, true]);
});

test("a custom domain's page whose account no longer has the domain verified is the plain 404 page", async () => {
  const form = await page({ domain: 'lost.shop.example' });
  expect((await get(`/public/pages/${form.routePath}`, viaGateway('lost.shop.example'))).status).toBe(200);
  lostDomains.add(`${form.accountId} lost.shop.example`);
  const res = await get(`/public/pages/${form.routePath}`, viaGateway('lost.shop.example'));
  expect([res.status, res.body]).toEqual([404, (await get('/public/pages/no-such-page', viaGateway(BASE_HOST))).body]);
  lostDomains.delete(`${form.accountId} lost.shop.example`); // verified again
  expect((await get(`/public/pages/${form.routePath}`, viaGateway('lost.shop.example'))).status).toBe(200);
});

test('draft, unpublished, inactive, non-page and unknown pages are the same plain 404 page', async () => {
  const cases = {
    draft: (await page({ landingPageStatus: 'DRAFT', lastPublishedAt: null })).routePath,
    unpublished: (await page({ landingPageStatus: 'UNPUBLISHED' })).routePath,
    inactive: (await page({ status: 'INACTIVE' })).routePath,
    'not a PAGE form': (await page({ type: 'INLINE' })).routePath,
    unknown: 'no-such-page',
    'not a route path': 'Bad_Path',
  };
  const bodies = new Set<string>();
  for (const [name, routePath] of Object.entries(cases)) {
    const res = await get(`/public/pages/${routePath}`, viaGateway(BASE_HOST));
    expect([name, res.status, res.headers['content-type']]).toEqual([name, 404, 'text/html; charset=utf-8']);
    expect(res.body).toContain('<h1>Page not found</h1>');
    bodies.add(res.body);
  }
  expect(bodies.size).toBe(1);
});

test('the thank-you page of an active form says the same for everyone; an unknown or inactive form is 404', async () => {
  const form = await page({ name: 'Join <us>' });
  const res = await get(`/public/forms/${form.id}/thank-you`, viaGateway(BASE_HOST));
  expect(res.status).toBe(200);
  expect(res.body).toContain('<title>Join &lt;us&gt;</title>');
  expect(res.body).toContain('<h1>Thank you</h1>');
  const inactive = await page({ status: 'INACTIVE' });
  expect((await get(`/public/forms/${inactive.id}/thank-you`, viaGateway(BASE_HOST))).status).toBe(404);
  expect((await get('/public/forms/nope/thank-you', viaGateway(BASE_HOST))).status).toBe(404);
});
