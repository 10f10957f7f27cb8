// Sending domains end to end, with MAIL_DOMAIN_VERIFICATION=required as the chart runs it: real
// subscriber, form, rss and messaging processes and the gateway, a real DNS server (dns2) the messaging
// service resolves through DNS_SERVERS, and a capture relay. A tenant cannot send as another tenant's
// domain nor hold routes on it; mail carries a DKIM signature of the SENDING account's own key that a
// receiver's verifier (mailauth, against the same DNS) accepts; a landing page whose domain lost its
// verification is no longer served.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import { startCaptureRelay, type CaptureRelay, type CapturedMail } from '@mailer/testing';
import { startTestDns, type TestDns } from '@mailer/testing/dns';
import { startFormStack, type FormStack } from './support/form-stack';
import type { ApiResponse } from './support/harness';
import { dkimOf as dkimIn, selectorOf, sendOne as sendOneVia, verifiedDomain as verifiedDomainIn } from './support/sending-domains';
import { expectStatus, type Api } from './support/subscriber-stack';

jest.setTimeout(120_000);

// The operator's own key for A's domain (DKIM_KEYS), published as a receiver would find it: how A's
// mail was signed before sending domains existed, and what B's mail "from A" was signed with then.
const operatorKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const OPERATOR_SELECTOR = 'ops2026';
const A_DOMAIN = 'shop-a.test';

let dns: TestDns;
let relay: CaptureRelay;
let env: FormStack;
let a: Api;
let b: Api;

beforeAll(async () => {
  dns = await startTestDns();
  relay = await startCaptureRelay();
  dns.setTxt(`${OPERATOR_SELECTOR}._domainkey.${A_DOMAIN}`, [`v=DKIM1; k=rsa; p=${operatorKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`]);
  env = await startFormStack({
    // A landing page's domain is asked about again after a second (default: a minute).
    formEnv: { FORM_PAGE_DOMAIN_RECHECK_SECONDS: '1' },
    messagingEnv: {
      SMTP_URL: relay.url,
      MAIL_SEND_PAUSED: 'false',
      MAIL_DOMAIN_VERIFICATION: 'required',
      DNS_SERVERS: dns.address,
      SECRET_SEALING_KEY: randomBytes(32).toString('base64'),
      DKIM_KEYS: JSON.stringify({ [A_DOMAIN]: { selector: OPERATOR_SELECTOR, privateKey: operatorKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) } }),
    },
  });
  a = await env.account('tenant-a');
  b = await env.account('tenant-b');
}, 120_000);

afterAll(async () => {
  await env?.stop();
  await relay?.close();
  await dns?.close();
});

function expectError(res: ApiResponse, status: number, errorId: string, paths?: string[]): void {
  expect({ status: res.status, errorId: res.json?.errorId }).toEqual({ status, errorId });
  if (paths) expect((res.json.details ?? []).map((d: { path: string }) => d.path)).toEqual(paths);
}

const verifiedDomain = (api: Api, domain: string) => verifiedDomainIn(api, dns, domain);
const sendOne = (api: Api, to: string) => sendOneVia(api, relay, to);
const dkimOf = (mail: CapturedMail) => dkimIn(dns, mail);

describe('a tenant cannot send as another tenant\'s domain', () => {
  it('B\'s sender profile for A\'s verified domain is refused, so B\'s mail never carries a signature of A\'s domain; A\'s mail is signed with A\'s own key', async () => {
    // B first: today any account could do this, and its mail was signed with the key of A's domain.
    expectError(await b.post('/sender-profiles', { name: 'CEO', fromEmail: `ceo@${A_DOMAIN}`, fromName: 'The CEO' }), 409, 'sender_domain_not_verified', ['body.fromEmail']);
    expectError(await b.post('/email-templates', { name: 'wire', subject: 'Urgent wire', html: '<p>pay</p>' }).then(async () => b.post('/email-messages', { name: 'wire', email: 'cfo@victim.example' })), 409, 'sender_profile_required');

    // A proves its domain: PENDING with problems until the records are in DNS, then VERIFIED.
    const added = expectStatus(await a.post('/sending-domains', { domain: 'Shop-A.test' }), 201);
    expect(added).toMatchObject({ domain: A_DOMAIN, status: 'PENDING', problems: [], verifiedAt: null });
    const pending = expectStatus(await a.post(`/sending-domains/${A_DOMAIN}/verify`), 200);
    expect(pending.status).toBe('PENDING');
    expect(pending.problems).toEqual([expect.stringContaining(`no TXT record found at _mailer.${A_DOMAIN}`), expect.stringContaining('no DKIM record found')]);
    for (const r of added.records) dns.addTxt(r.name, r.value);
    const verified = expectStatus(await a.post(`/sending-domains/${A_DOMAIN}/verify`), 200);
    expect(verified).toMatchObject({ status: 'VERIFIED', problems: [], verifiedAt: expect.any(String) });
    const selectorOfA = selectorOf(added);

    expectStatus(await a.post('/sender-profiles', { name: 'Shop', fromEmail: `news@${A_DOMAIN}`, fromName: 'Shop A' }), 201);
    const mailOfA = await sendOne(a, 'ann@example.org');
    expect(await dkimOf(mailOfA)).toEqual([{ domain: A_DOMAIN, selector: selectorOfA, result: 'pass' }]);

    // B adding A's domain proves nothing until B publishes its own token: B still cannot send from it.
    const ofB = expectStatus(await b.post('/sending-domains', { domain: A_DOMAIN }), 201);
    expect(ofB.records[0].value).not.toBe(added.records[0].value);
    const stillPending = expectStatus(await b.post(`/sending-domains/${A_DOMAIN}/verify`), 200);
    expect(stillPending.status).toBe('PENDING');
    expect(stillPending.problems[0]).toMatch(/do not include "mailer-verification=/);
    expectError(await b.post('/sender-profiles', { name: 'CEO', fromEmail: `ceo@${A_DOMAIN}`, fromName: 'The CEO' }), 409, 'sender_domain_not_verified');
    expect(relay.messages.filter((m) => m.headers.from?.includes(A_DOMAIN) && m.rcptTo.includes('cfo@victim.example'))).toEqual([]);
    expect((await b.delete(`/sending-domains/${A_DOMAIN}`)).status).toBe(204);
  });

  it('two accounts that both prove a domain each sign with their own key, never the other\'s', async () => {
    const shared = 'shared.test';
    const ofA = await verifiedDomain(a, shared);
    const ofB = await verifiedDomain(b, shared);
    expect(selectorOf(ofA)).not.toBe(selectorOf(ofB));
    expectStatus(await a.post('/sender-profiles', { name: 'Shared A', fromEmail: `a@${shared}`, fromName: 'A', isDefault: true }), 201);
    expectStatus(await b.post('/sender-profiles', { name: 'Shared B', fromEmail: `b@${shared}`, fromName: 'B', isDefault: true }), 201);
    const [mailOfA, mailOfB] = [await sendOne(a, 'reader-a@example.org'), await sendOne(b, 'reader-b@example.org')];
    expect(await dkimOf(mailOfA)).toEqual([{ domain: shared, selector: selectorOf(ofA), result: 'pass' }]);
    expect(await dkimOf(mailOfB)).toEqual([{ domain: shared, selector: selectorOf(ofB), result: 'pass' }]);
    // B's signature is B's key: claimed under A's selector it does not verify.
    const forged = { ...mailOfB, raw: mailOfB.raw.replace(`s=${selectorOf(ofB)};`, `s=${selectorOf(ofA)};`) };
    expect(forged.raw).not.toBe(mailOfB.raw);
    expect((await dkimOf(forged))[0].result).toBe('fail');
  });
});

describe('landing pages on custom domains', () => {
  it('only the account that verified a domain can hold routes on it; the default host needs no domain', async () => {
    const page = (routePath: string, domain?: string) => ({ name: `Page ${routePath}`, type: 'PAGE', inputFields: [{ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true }], routePath, ...(domain ? { domain } : {}) });
    // B squatting A's domain (A verified it above): refused on create and on PUT.
    expectError(await b.post('/forms', page('spring', A_DOMAIN)), 409, 'page_domain_not_verified', ['body.domain']);
    const onDefault = expectStatus(await b.post('/forms', page('spring')), 201);
    expectError(await b.put(`/forms/${onDefault.id}`, page('spring', `${A_DOMAIN}:8443`)), 409, 'page_domain_not_verified', ['body.domain']);
    // Nor a domain nobody verified.
    expectError(await b.post('/forms', page('autumn', 'pages.nobody.test')), 409, 'page_domain_not_verified');
    // A serves its page there, publishes it; B's path on the default host is untouched.
    const ofA = expectStatus(await a.post('/forms', page('spring', A_DOMAIN)), 201);
    expect(expectStatus(await a.post(`/forms/${ofA.id}/publish`), 200)).toMatchObject({ publishedStatus: 'PUBLISHED', publicUrl: `https://${A_DOMAIN}/public/pages/spring` });

    // A domain in use cannot be deleted: its sender profile first, then its landing page.
    const profiles = expectStatus(await a.get('/sender-profiles'), 200).items.filter((p: { fromEmail: string }) => p.fromEmail.endsWith(`@${A_DOMAIN}`));
    const inUse = await a.delete(`/sending-domains/${A_DOMAIN}`);
    expectError(inUse, 409, 'sending_domain_in_use', profiles.map((p: { id: string }) => `senderProfiles.${p.id}`));
    for (const p of profiles) expect((await a.delete(`/sender-profiles/${p.id}`)).status).toBe(204);
    expectError(await a.delete(`/sending-domains/${A_DOMAIN}`), 409, 'sending_domain_in_use', [`forms.${ofA.id}`]);
    expect((await a.delete(`/forms/${ofA.id}`)).status).toBe(204);
    expect((await a.delete(`/sending-domains/${A_DOMAIN}`)).status).toBe(204);
    expectError(await a.get(`/sending-domains/${A_DOMAIN}`), 404, 'sending_domain_not_found');
  });

  it('a published page whose domain loses its verification (the ownership record gone, verify: PENDING) is not found; verified again, it is back', async () => {
    const domain = 'pages-a.test';
    const { records } = await verifiedDomain(a, domain);
    const form = expectStatus(await a.post('/forms', { name: 'Summer', type: 'PAGE', inputFields: [{ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true }], routePath: 'summer', domain }), 201);
    expectStatus(await a.post(`/forms/${form.id}/publish`), 200);
    const pageStatus = () => readerGet('/public/pages/summer', domain);
    expect(await pageStatus()).toBe(200);

    dns.removeTxt(records[0].name); // the domain changed hands, say
    expect(expectStatus(await a.post(`/sending-domains/${domain}/verify`), 200).status).toBe('PENDING');
    expect(await statusWithin(pageStatus, 404)).toBe(404);
    // Still published (the customer sees why in the domain's problems), and the domain cannot be deleted from under it.
    expect(expectStatus(await a.get(`/forms/${form.id}`), 200).publishedStatus).toBe('PUBLISHED');
    expectError(await a.delete(`/sending-domains/${domain}`), 409, 'sending_domain_in_use', [`forms.${form.id}`]);

    dns.addTxt(records[0].name, records[0].value);
    expect(expectStatus(await a.post(`/sending-domains/${domain}/verify`), 200).status).toBe('VERIFIED');
    expect(await statusWithin(pageStatus, 200)).toBe(200);
  });
});

/** A reader's GET through the gateway on `host` (the gateway keeps the Host it was asked for); the status. */
function readerGet(pathname: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(env.gw.url);
    http.get({ hostname, port, path: pathname, headers: { host, accept: 'text/html' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    }).on('error', reject);
  });
}

/** Polls `status` until it answers `wanted` or 10 s passed; the last answer. */
async function statusWithin(status: () => Promise<number>, wanted: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  let last = await status();
  while (last !== wanted && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    last = await status();
  }
  return last;
}

describe('the sending domains API', () => {
  it('answers the contract\'s errors: bad names, duplicates, unknown domains, another account\'s domain', async () => {
    expectError(await a.post('/sending-domains', { domain: 'localhost' }), 400, 'validation_failed', ['body.domain']);
    expectError(await a.post('/sending-domains', {}), 400, 'validation_failed');
    expectError(await a.post('/sending-domains', { domain: 'x.test', extra: 1 }), 400, 'unknown_property');
    const created = await a.post('/sending-domains', { domain: 'list.test' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/sending-domains/list.test');
    expectError(await a.post('/sending-domains', { domain: 'LIST.test.' }), 409, 'sending_domain_exists');
    expect(expectStatus(await a.get('/sending-domains'), 200).items.map((d: { domain: string }) => d.domain)).toContain('list.test');
    expect(expectStatus(await b.get('/sending-domains'), 200).items.map((d: { domain: string }) => d.domain)).not.toContain('list.test');
    expectError(await b.get('/sending-domains/list.test'), 404, 'sending_domain_not_found');
    expectError(await b.post('/sending-domains/list.test/verify'), 404, 'sending_domain_not_found');
    expectError(await b.delete('/sending-domains/list.test'), 404, 'sending_domain_not_found');
    expect(expectStatus(await a.get('/sending-domains/List.Test'), 200)).toMatchObject({ domain: 'list.test', status: 'PENDING' });
  });
});
