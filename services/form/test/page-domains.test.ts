// The check a landing page on a custom domain passes at every view (app/page-domains.ts): the
// messaging service's answer, kept per account and domain for the recheck time; asked once for
// readers arriving together; while messaging does not answer, the last answer stands (none: served).
import { failedPrecondition, PeerUnavailable } from '@mailer/kit';
import { pageDomainCheck } from '../src/app/page-domains';

const A = 'acc-a';
let now = 0;
let verified: Set<string>;
let down: boolean;
let asked: string[];
const warnings: unknown[] = [];

const messaging = {
  async requirePageDomain(accountId: string, domain: string) {
    asked.push(`${accountId} ${domain}`);
    await new Promise((r) => setImmediate(r));
    if (down) throw new PeerUnavailable('messaging', 'service_unavailable', 'The messaging service is unavailable; retry later.', { code: 'UNAVAILABLE', details: 'connection refused' });
    if (!verified.has(domain)) throw failedPrecondition('page_domain_not_verified', `the account has not verified ${domain}`);
  },
};
const check = () => pageDomainCheck({ messaging, recheckMs: 60_000, now: () => new Date(now), logger: { warn: (o: unknown) => void warnings.push(o) } });

beforeEach(() => {
  now = 0;
  verified = new Set(['join.shop.example']);
  down = false;
  asked = [];
  warnings.length = 0;
});

it('serves a domain its account has verified and not one it lost; the answer is kept for the recheck time, then asked again', async () => {
  const pages = check();
  expect(await pages.servable(A, 'join.shop.example')).toBe(true);
  expect(await pages.servable(A, 'other.example')).toBe(false);
  verified.delete('join.shop.example'); // verify found the record gone: PENDING
  now += 59_999;
  expect(await pages.servable(A, 'join.shop.example')).toBe(true); // still the kept answer
  now += 1;
  expect(await pages.servable(A, 'join.shop.example')).toBe(false);
  expect(asked).toEqual([`${A} join.shop.example`, `${A} other.example`, `${A} join.shop.example`]);
});

it('readers arriving together wait for one question', async () => {
  const pages = check();
  const answers = await Promise.all(Array.from({ length: 20 }, () => pages.servable(A, 'join.shop.example')));
  expect(answers).toEqual(Array(20).fill(true));
  expect(asked).toHaveLength(1);
});

it('while messaging does not answer, the last answer stands, and a domain never asked about is served', async () => {
  const pages = check();
  expect(await pages.servable(A, 'lost.example')).toBe(false);
  down = true;
  now += 60_000;
  expect(await pages.servable(A, 'lost.example')).toBe(false);
  expect(await pages.servable(A, 'join.shop.example')).toBe(true);
  expect(warnings).toEqual([{ accountId: A, domain: 'lost.example', servable: false }, { accountId: A, domain: 'join.shop.example', servable: true }]);
  // Back: asked again once the kept answer is older than the recheck time.
  down = false;
  verified.add('lost.example');
  now += 60_000;
  expect(await pages.servable(A, 'lost.example')).toBe(true);
});
