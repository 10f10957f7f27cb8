// Sending domains on a real embedded store, verified against a real DNS server (dns2 on a free port,
// through node's resolver as the service runs it): the records an account is given, verification
// before and after they are published, deletes refused while in use, and the domain policy: with
// `required` nothing is accepted from an unverified domain (profiles saved earlier included), and in
// either mode mail is signed with the SENDING account's own key only, never another account's.
import { createPublicKey, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { DomainError } from '@mailer/kit';
import { startTestDns, type TestDns } from '@mailer/testing/dns';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { sealer } from '@mailer/tokens';
import { createSenderProfile, deleteSenderProfile, senderForSend, updateSenderProfile } from '../src/templates/app/sender-profiles';
import {
  createSendingDomain,
  deleteSendingDomain,
  domainPolicy,
  getSendingDomain,
  listSendingDomains,
  recordsOf,
  resealDkimKeys,
  verifySendingDomain,
  type SendingDomainDeps,
} from '../src/templates/app/sending-domains';
import { dnsTxtLookup } from '../src/clients/dns';
import { sendingDomainCollection } from '../src/templates/store/sending-domains';

const A = '0193b6f0-0000-7000-8000-00000000000a';
const B = '0193b6f0-0000-7000-8000-00000000000b';
const keys = sealer(randomBytes(32), 'dkim-private-key');
const operatorPem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const OPERATOR_KEYS = { 'shop-a.example': { selector: 'operator', privateKey: operatorPem } };

let dns: TestDns;
let tmp: TempStore;
let deps: SendingDomainDeps;
let formsUsingDomain: Array<{ id: string; name: string }>;

beforeAll(async () => {
  dns = await startTestDns();
});
afterAll(() => dns?.close());
beforeEach(async () => {
  tmp = await openTempStore('domains');
  formsUsingDomain = [];
  deps = {
    store: tmp.store,
    now: () => new Date('2026-03-01T10:00:00Z'),
    newId: randomUUID,
    keys,
    dns: dnsTxtLookup([dns.address]),
    forms: { formsUsing: async (_accountId, ref) => ('domain' in ref ? { count: formsUsingDomain.length, forms: formsUsingDomain } : { count: 0, forms: [] }) },
  };
});
afterEach(() => tmp.close());

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected a refusal');
}

/** Publishes both records of the account's domain, as its owner would in their zone. */
async function publish(accountId: string, domain: string): Promise<void> {
  for (const r of recordsOf(await getSendingDomain(deps, accountId, domain))) dns.addTxt(r.name, r.value);
}

const catalog = (verification: 'required' | 'off') => ({
  store: tmp.store,
  now: deps.now,
  newId: randomUUID,
  allowedFromDomains: [],
  domains: domainPolicy({ store: tmp.store, verification, keys, operatorKeys: OPERATOR_KEYS }),
});

describe('sending domains', () => {
  it('are added PENDING with an ownership token and a DKIM key of this account; the private key is stored sealed', async () => {
    const d = await createSendingDomain(deps, A, ' News.Example. ');
    expect(d).toMatchObject({ domain: 'news.example', status: 'PENDING', problems: [], verifiedAt: null });
    const [ownership, dkim] = recordsOf(d);
    expect(ownership).toEqual({ purpose: 'OWNERSHIP', type: 'TXT', name: '_mailer.news.example', value: expect.stringMatching(/^mailer-verification=[0-9a-f]{32}$/) });
    expect(dkim).toEqual({ purpose: 'DKIM', type: 'TXT', name: expect.stringMatching(/^mailer[0-9a-f]{10}\._domainkey\.news\.example$/), value: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/) });
    const publicKey = createPublicKey({ key: Buffer.from(dkim.value.split('p=')[1], 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const [stored] = await sendingDomainCollection(tmp.store).find({ accountId: A });
    expect(JSON.stringify(stored)).not.toContain('PRIVATE KEY');
    expect(keys.open(stored.dkim.sealedPrivateKey, `${A}:news.example`)).toContain('BEGIN PRIVATE KEY');
    expect(() => keys.open(stored.dkim.sealedPrivateKey, `${B}:news.example`)).toThrow(); // bound to its account

    // The same domain again in the account: 409; in another account: its own token and key.
    expect((await refusal(createSendingDomain(deps, A, 'news.example'))).errorId).toBe('sending_domain_exists');
    const other = await createSendingDomain(deps, B, 'news.example');
    expect(recordsOf(other)[0].value).not.toBe(ownership.value);
    expect(other.dkim.selector).not.toBe(d.dkim.selector);
    expect(other.dkim.publicKey).not.toBe(d.dkim.publicKey);
    expect((await listSendingDomains(deps, A)).map((x) => x.domain)).toEqual(['news.example']);
  });

  it('refuse names that are not domains, and answer 404 for domains the account has not added', async () => {
    for (const bad of ['', 'localhost', '10.0.0.1', 'a..b.example', '-a.example', `${'a'.repeat(64)}.example`, 'exa mple.com', 'user@example.com']) {
      const err = await refusal(createSendingDomain(deps, A, bad));
      expect([bad, err.errorId, err.details?.[0]?.path]).toEqual([bad, 'validation_failed', 'body.domain']);
    }
    expect((await createSendingDomain(deps, A, 'bücher.example')).domain).toBe('xn--bcher-kva.example');
    await createSendingDomain(deps, A, 'shop.example');
    expect((await refusal(getSendingDomain(deps, B, 'shop.example'))).errorId).toBe('sending_domain_not_found');
    expect((await refusal(verifySendingDomain(deps, B, 'shop.example'))).errorId).toBe('sending_domain_not_found');
    expect((await refusal(deleteSendingDomain(deps, B, 'shop.example'))).errorId).toBe('sending_domain_not_found');
    expect((await refusal(getSendingDomain(deps, A, 'not a domain'))).errorId).toBe('sending_domain_not_found');
    expect((await getSendingDomain(deps, A, 'SHOP.example')).domain).toBe('shop.example');
  });

  it('without SECRET_SEALING_KEY no domain can be added (503): a key pair is never stored in clear', async () => {
    const err = await refusal(createSendingDomain({ ...deps, keys: null }, A, 'shop.example'));
    expect(err.errorId).toBe('service_unavailable');
    expect(await listSendingDomains(deps, A)).toEqual([]);
  });

  it('verify: PENDING with problems before the records exist, VERIFIED once the ownership record is published, PENDING again when it goes', async () => {
    await createSendingDomain(deps, A, 'verify-a.example');
    const before = await verifySendingDomain(deps, A, 'verify-a.example');
    expect(before.status).toBe('PENDING');
    expect(before.problems).toEqual([
      expect.stringContaining('no TXT record found at _mailer.verify-a.example'),
      expect.stringMatching(/^no DKIM record found at mailer[0-9a-f]{10}\._domainkey\.verify-a\.example/),
    ]);
    expect(before.checkedAt).toEqual(deps.now());

    // Another account's token is not this account's proof.
    await createSendingDomain(deps, B, 'verify-a.example');
    await publish(B, 'verify-a.example');
    const stillPending = await verifySendingDomain(deps, A, 'verify-a.example');
    expect(stillPending.status).toBe('PENDING');
    expect(stillPending.problems[0]).toMatch(/do not include "mailer-verification=/);

    const [ownership, dkim] = recordsOf(before);
    dns.addTxt(ownership.name, ownership.value);
    const onlyOwnership = await verifySendingDomain(deps, A, 'verify-a.example');
    expect(onlyOwnership).toMatchObject({ status: 'VERIFIED', verifiedAt: deps.now() });
    expect(onlyOwnership.problems).toEqual([expect.stringMatching(/^no DKIM record found/)]);
    // A DNS provider may wrap the key in spaces; a record with another key is a problem.
    dns.setTxt(dkim.name, [dkim.value.replace('p=', 'p= ')]);
    expect((await verifySendingDomain(deps, A, 'verify-a.example')).problems).toEqual([]);
    dns.setTxt(dkim.name, [recordsOf(await getSendingDomain(deps, B, 'verify-a.example'))[1].value]);
    expect((await verifySendingDomain(deps, A, 'verify-a.example')).problems).toEqual([expect.stringMatching(/does not hold this domain's DKIM public key/)]);

    dns.setTxt(ownership.name, ['v=spf1 -all']);
    const lost = await verifySendingDomain(deps, A, 'verify-a.example');
    expect(lost).toMatchObject({ status: 'PENDING', verifiedAt: null });
  });

  it('a lookup that fails proves nothing: a VERIFIED domain stays VERIFIED and the problem says so', async () => {
    await createSendingDomain(deps, A, 'flaky.example');
    await publish(A, 'flaky.example');
    expect((await verifySendingDomain(deps, A, 'flaky.example')).status).toBe('VERIFIED');
    // A resolver that takes every question and never answers: the lookup gives up at its deadline.
    const blackHole = createSocket('udp4');
    await new Promise<void>((resolve) => blackHole.bind(0, '127.0.0.1', resolve));
    try {
      const silent = { ...deps, dns: dnsTxtLookup([`127.0.0.1:${blackHole.address().port}`], { deadlineMs: 500 }) };
      const started = Date.now();
      const after = await verifySendingDomain(silent, A, 'flaky.example');
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(after.status).toBe('VERIFIED');
      expect(after.problems).toEqual([
        'the DNS lookup of _mailer.flaky.example failed (ETIMEOUT); try again later',
        expect.stringMatching(/^the DNS lookup of mailer[0-9a-f]{10}\._domainkey\.flaky\.example failed \(ETIMEOUT\)/),
      ]);
    } finally {
      blackHole.close();
    }
    // Nothing listening at all: refused, a failure too.
    const refused = await verifySendingDomain({ ...deps, dns: dnsTxtLookup(['127.0.0.1:9'], { deadlineMs: 1_000 }) }, A, 'flaky.example');
    expect(refused.status).toBe('VERIFIED');
    expect(refused.problems[0]).toMatch(/^the DNS lookup of _mailer\.flaky\.example failed \(E[A-Z]+\)/);
  });

  it('delete is refused while a sender profile sends from the domain or a landing page is served on it', async () => {
    await createSendingDomain(deps, A, 'busy.example');
    await publish(A, 'busy.example');
    await verifySendingDomain(deps, A, 'busy.example');
    const profile = await createSenderProfile(catalog('required'), A, { name: 'Busy', fromEmail: 'hello@busy.example', fromName: 'Busy' });
    // A profile of the same name in another account, or of a subdomain, does not count.
    await createSenderProfile(catalog('off'), B, { name: 'B', fromEmail: 'x@busy.example', fromName: 'B' });
    await createSenderProfile(catalog('off'), A, { name: 'Sub', fromEmail: 'x@mail.busy.example', fromName: 'Sub' });
    let err = await refusal(deleteSendingDomain(deps, A, 'busy.example'));
    expect(err).toMatchObject({ errorId: 'sending_domain_in_use', details: [{ path: `senderProfiles.${profile._id}`, problem: expect.stringContaining('hello@busy.example') }] });
    await deleteSenderProfile(catalog('required'), A, profile._id);
    formsUsingDomain = [{ id: 'form-1', name: 'Spring' }];
    err = await refusal(deleteSendingDomain(deps, A, 'busy.example'));
    expect(err).toMatchObject({ errorId: 'sending_domain_in_use', details: [{ path: 'forms.form-1', problem: expect.stringContaining('Spring') }] });
    formsUsingDomain = [];
    await deleteSendingDomain(deps, A, 'busy.example');
    expect((await refusal(getSendingDomain(deps, A, 'busy.example'))).errorId).toBe('sending_domain_not_found');
  });
});

describe('the domain policy (MAIL_DOMAIN_VERIFICATION)', () => {
  it('required: sender profiles and sends from a domain the account has not verified are refused, a profile saved before included', async () => {
    const off = catalog('off');
    const required = catalog('required');
    // Saved while verification was off (or before the domain lost its proof).
    const old = await createSenderProfile(off, B, { name: 'CEO', fromEmail: 'ceo@shop-a.example', fromName: 'The CEO' });
    expect(await senderForSend(off, B, null)).toMatchObject({ _id: old._id });

    const send = await refusal(senderForSend(required, B, null));
    expect(send).toMatchObject({ errorId: 'sender_domain_not_verified', details: [{ path: `senderProfiles.${old._id}` }] });
    const create = await refusal(createSenderProfile(required, B, { name: 'CEO', fromEmail: 'ceo@shop-a.example', fromName: 'The CEO' }));
    expect(create).toMatchObject({ errorId: 'sender_domain_not_verified', details: [{ path: 'body.fromEmail' }] });
    expect((await refusal(updateSenderProfile(required, B, old._id, { name: 'CEO', fromEmail: 'ceo@shop-a.example', fromName: 'x' }))).errorId).toBe('sender_domain_not_verified');

    // A verifying its domain does not let B use it; B adding it without publishing its own token neither.
    await createSendingDomain(deps, A, 'shop-a.example');
    await publish(A, 'shop-a.example');
    expect((await verifySendingDomain(deps, A, 'shop-a.example')).status).toBe('VERIFIED');
    await createSendingDomain(deps, B, 'shop-a.example');
    expect((await verifySendingDomain(deps, B, 'shop-a.example')).status).toBe('PENDING');
    expect((await refusal(senderForSend(required, B, null))).errorId).toBe('sender_domain_not_verified');
    expect((await refusal(createSenderProfile(required, B, { name: 'CEO', fromEmail: 'ceo@shop-a.example', fromName: 'x' }))).errorId).toBe('sender_domain_not_verified');
    // Exactly the domain: a verified parent does not cover a subdomain.
    expect((await refusal(createSenderProfile(required, A, { name: 'Sub', fromEmail: 'a@mail.shop-a.example', fromName: 'x' }))).errorId).toBe('sender_domain_not_verified');
    // A's own profile on its verified domain is fine, as is a page on it (any port).
    await createSenderProfile(required, A, { name: 'Shop', fromEmail: 'Shop@Shop-A.example', fromName: 'Shop' });
    await required.domains.requireVerified(A, 'shop-a.example:8443', 'PAGE', 'body.domain');
    expect(await refusal(required.domains.requireVerified(B, 'shop-a.example', 'PAGE', 'body.domain'))).toMatchObject({ errorId: 'page_domain_not_verified', details: [{ path: 'body.domain' }] });
    // off accepts anything.
    await off.domains.requireVerified(B, 'shop-a.example', 'PAGE', 'body.domain');
  });

  it('signs with the sending account\'s own key of a verified domain only; the operator\'s DKIM_KEYS only with off', async () => {
    await createSendingDomain(deps, A, 'shop-a.example');
    await publish(A, 'shop-a.example');
    const a = await verifySendingDomain(deps, A, 'shop-a.example');
    const ownKeyOfA = keys.open(a.dkim.sealedPrivateKey, `${A}:shop-a.example`);
    await createSendingDomain(deps, B, 'shop-a.example'); // PENDING: B's key is not used either
    for (const verification of ['required', 'off'] as const) {
      const policy = domainPolicy({ store: tmp.store, verification, keys, operatorKeys: OPERATOR_KEYS });
      expect(await policy.dkimKeyFor(A, 'shop-a.example')).toEqual({ selector: a.dkim.selector, privateKey: ownKeyOfA });
      const ofB = await policy.dkimKeyFor(B, 'shop-a.example');
      expect(ofB?.privateKey).not.toBe(ownKeyOfA);
      // As before with off (the operator's key for the domain); with required nothing signs B's mail.
      expect(ofB).toEqual(verification === 'off' ? OPERATOR_KEYS['shop-a.example'] : null);
    }
    // B proving the domain too: B's mail is signed with B's own key.
    await publish(B, 'shop-a.example');
    const b = await verifySendingDomain(deps, B, 'shop-a.example');
    const policy = domainPolicy({ store: tmp.store, verification: 'required', keys, operatorKeys: OPERATOR_KEYS });
    expect(await policy.dkimKeyFor(B, 'shop-a.example')).toEqual({ selector: b.dkim.selector, privateKey: keys.open(b.dkim.sealedPrivateKey, `${B}:shop-a.example`) });
    // A key that no longer opens (SECRET_SEALING_KEY replaced) is never swapped for another one.
    const replaced = domainPolicy({ store: tmp.store, verification: 'off', keys: sealer(randomBytes(32), 'dkim-private-key'), operatorKeys: OPERATOR_KEYS, logger: { error: () => undefined } });
    expect(await replaced.dkimKeyFor(A, 'shop-a.example')).toBeNull();
  });

  it('SECRET_SEALING_KEY rotated: a key sealed under a previous key still signs and is re-sealed when used; resealDkimKeys does the rest; then the previous key can go', async () => {
    const [oldMaster, newMaster] = [randomBytes(32), randomBytes(32)];
    const before = { ...deps, keys: sealer(oldMaster, 'dkim-private-key') };
    const sealedFirst: Record<string, string> = {};
    for (const [account, domain] of [[A, 'used.example'], [B, 'idle.example']]) {
      await createSendingDomain(before, account, domain);
      await publish(account, domain);
      sealedFirst[domain] = (await verifySendingDomain(before, account, domain)).dkim.sealedPrivateKey;
    }
    const privateKey = before.keys.open(sealedFirst['used.example'], `${A}:used.example`);
    const sealedOf = async (account: string, domain: string) => (await getSendingDomain(deps, account, domain)).dkim.sealedPrivateKey;
    const onlyNew = sealer(newMaster, 'dkim-private-key');
    const rotated = sealer([newMaster, oldMaster], 'dkim-private-key');
    const errors: unknown[] = [];
    const policy = (keys: typeof rotated) => domainPolicy({ store: tmp.store, verification: 'required', keys, operatorKeys: {}, logger: { error: (o: unknown) => void errors.push(o) } });

    // Used after the rotation: the same key signs, and it is stored sealed under the new key from then on.
    expect(await policy(rotated).dkimKeyFor(A, 'used.example')).toMatchObject({ privateKey });
    expect(onlyNew.open(await sealedOf(A, 'used.example'), `${A}:used.example`)).toBe(privateKey);
    // The idle one is still under the old key: without it, it would no longer open.
    expect(await policy(onlyNew).dkimKeyFor(B, 'idle.example')).toBeNull();
    expect(errors).toEqual([{ accountId: B, domain: 'idle.example' }]);
    expect(await resealDkimKeys({ store: tmp.store, keys: onlyNew })).toEqual({ domains: 2, resealed: 0, failed: [`${B}/idle.example`] });

    expect(await resealDkimKeys({ store: tmp.store, keys: rotated })).toEqual({ domains: 2, resealed: 1, failed: [] });
    expect(await resealDkimKeys({ store: tmp.store, keys: rotated })).toEqual({ domains: 2, resealed: 0, failed: [] });
    // The previous key removed: both still sign with their own key.
    expect(await policy(onlyNew).dkimKeyFor(B, 'idle.example')).toMatchObject({ privateKey: before.keys.open(sealedFirst['idle.example'], `${B}:idle.example`) });
    expect(await policy(onlyNew).dkimKeyFor(A, 'used.example')).toMatchObject({ privateKey });
    expect(await resealDkimKeys({ store: tmp.store, keys: null })).toEqual({ domains: 2, resealed: 0, failed: [`${A}/used.example`, `${B}/idle.example`] });
  });
});
