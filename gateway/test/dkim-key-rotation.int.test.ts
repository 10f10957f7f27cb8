// SECRET_SEALING_KEY rotated on the messaging service, with MAIL_DOMAIN_VERIFICATION=required, real
// processes (subscriber, form, rss, messaging, webhook, gateway), a local DNS server and a capture
// relay: the DKIM private keys of sending domains are sealed under it. With the old value in
// SECRET_SEALING_KEY_PREVIOUS every account's mail is still signed with its own key (a key used is
// re-sealed at once); `npm run admin -- reseal-secrets` re-seals the others; then the old value can go
// and mail is still signed. Removed too early, an account's mail would go unsigned.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, startCaptureRelay, type CaptureRelay } from '@mailer/testing';
import { startTestDns, type TestDns } from '@mailer/testing/dns';
import { startFormStack, type FormStack } from './support/form-stack';
import { dkimOf, selectorOf, sendOne, verifiedDomain } from './support/sending-domains';
import { expectStatus } from './support/subscriber-stack';

jest.setTimeout(180_000);

const key = () => randomBytes(32).toString('base64');
const [OLD_KEY, NEW_KEY] = [key(), key()];
let dns: TestDns;
let relay: CaptureRelay;
let env: FormStack;

beforeAll(async () => {
  dns = await startTestDns();
  relay = await startCaptureRelay();
  env = await startFormStack({
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false', MAIL_DOMAIN_VERIFICATION: 'required', DNS_SERVERS: dns.address, SECRET_SEALING_KEY: OLD_KEY },
    // reseal-secrets asks every service that keeps secrets sealed: the webhook service too.
    peers: ['webhook'],
  });
}, 120_000);

afterAll(async () => {
  await env?.stop();
  await relay?.close();
  await dns?.close();
});

const run = promisify(execFile);
async function resealSecrets(): Promise<{ dkimKeys: { domains: number; resealed: number; failed: string[] } }> {
  const { stdout } = await run(process.execPath, [path.join(repoRoot, 'scripts/admin.js'), 'reseal-secrets'], { env: { ...process.env, ADMIN_URL: env.gw.adminUrl, ADMIN_TOKEN: env.gw.adminToken } });
  return JSON.parse(stdout);
}

it('rotating SECRET_SEALING_KEY: mail stays signed with each account\'s own key through the rotation, reseal-secrets and the removal of the old key', async () => {
  const used = await env.account('sends during the rotation');
  const idle = await env.account('idle during the rotation');
  const selectors: Record<string, string> = {};
  for (const [api, domain] of [[used, 'used.test'], [idle, 'idle.test']] as const) {
    selectors[domain] = selectorOf(await verifiedDomain(api, dns, domain));
    expectStatus(await api.post('/sender-profiles', { name: domain, fromEmail: `news@${domain}`, fromName: domain, isDefault: true }), 201);
  }
  const signed = (domain: string) => [{ domain, selector: selectors[domain], result: 'pass' }];
  let n = 0;
  const mailOf = async (api: typeof used) => dkimOf(dns, await sendOne(api, relay, `reader-${++n}@example.org`));
  expect(await mailOf(used)).toEqual(signed('used.test'));

  // The new key, the old one as previous: both accounts' keys still sign; the used one is re-sealed.
  await env.restartMessaging({ SECRET_SEALING_KEY: NEW_KEY, SECRET_SEALING_KEY_PREVIOUS: OLD_KEY });
  expect(await mailOf(used)).toEqual(signed('used.test'));

  // Had the old key gone now, the idle account's key (sealed under it alone) would sign nothing.
  await env.restartMessaging({ SECRET_SEALING_KEY: NEW_KEY, SECRET_SEALING_KEY_PREVIOUS: '' });
  expect(await mailOf(idle)).toEqual([{ domain: undefined, selector: undefined, result: 'none' }]); // no signature
  expect(await mailOf(used)).toEqual(signed('used.test'));
  expect((await resealSecrets()).dkimKeys).toEqual({ domains: 2, resealed: 0, failed: [`${idle.accountId}/idle.test`] });

  // With the old key back, reseal-secrets re-seals the rest; a second run finds nothing left.
  await env.restartMessaging({ SECRET_SEALING_KEY: NEW_KEY, SECRET_SEALING_KEY_PREVIOUS: OLD_KEY });
  expect((await resealSecrets()).dkimKeys).toEqual({ domains: 2, resealed: 1, failed: [] });
  expect((await resealSecrets()).dkimKeys).toEqual({ domains: 2, resealed: 0, failed: [] });

  // The old key removed: every account's mail is signed with its own key, as before the rotation.
  await env.restartMessaging({ SECRET_SEALING_KEY: NEW_KEY, SECRET_SEALING_KEY_PREVIOUS: '' });
  expect(await mailOf(idle)).toEqual(signed('idle.test'));
  expect(await mailOf(used)).toEqual(signed('used.test'));
});
