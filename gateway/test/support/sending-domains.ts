// Sending domains as an integrator and a receiving server see them, for the tests that run the real
// messaging service with a local DNS server (@mailer/testing/dns) and a capture relay: prove a domain,
// send a mail, and check its DKIM signatures against the same DNS.
import { randomBytes } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import type { CaptureRelay, CapturedMail } from '@mailer/testing';
import type { TestDns } from '@mailer/testing/dns';
import { expectStatus, type Api } from './subscriber-stack';

/** Adds the domain to the account, publishes its records in DNS and verifies it; the domain as answered. */
export async function verifiedDomain(api: Api, dns: TestDns, domain: string): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const added = expectStatus(await api.post('/sending-domains', { domain }), 201);
  for (const r of added.records) dns.addTxt(r.name, r.value);
  const verified = expectStatus(await api.post(`/sending-domains/${domain}/verify`), 200);
  expect(verified).toMatchObject({ status: 'VERIFIED', problems: [] });
  return verified;
}

/** The DKIM selector of a sending domain as the API answers it. */
export const selectorOf = (d: { records: Array<{ name: string }> }): string => d.records[1].name.split('._domainkey.')[0];

/** Sends one transactional mail from the account's default profile; the mail as the relay got it. */
export async function sendOne(api: Api, relay: CaptureRelay, to: string): Promise<CapturedMail> {
  const template = `t-${randomBytes(4).toString('hex')}`;
  expectStatus(await api.post('/email-templates', { name: template, subject: 'Hello', html: '<p>Hello from us</p>', tracking: { opens: false, clicks: false } }), 201);
  expectStatus(await api.post('/email-messages', { name: template, email: to }), 202);
  const [mail] = await relay.waitFor((all) => all.some((m) => m.rcptTo.includes(to)), 20_000);
  return relay.receivedFor(to)[0] ?? mail;
}

/** What a receiving server concludes of the mail's DKIM signatures, looking keys up in the test DNS. */
export async function dkimOf(dns: TestDns, mail: CapturedMail): Promise<Array<{ domain?: string; selector?: string; result: string }>> {
  const { results } = await dkimVerify(Buffer.from(mail.raw), { resolver: (name: string, rr: string) => dns.resolve(name, rr) } as never);
  return results.map((r: { signingDomain?: string; selector?: string; status: { result: string } }) => ({ domain: r.signingDomain, selector: r.selector, result: r.status.result }));
}
