// RSS issues sent as mail (the API contract "RSS newsletters", Sending), through the real gateway and the real
// rss, messaging, subscriber and segment services, a feed served locally and every mail captured by
// a real SMTP relay: the audience rules (segment TRUE members, ACTIVE, in the topic and not opted out,
// not suppressed; another account never), Liquid with items / newsletter / subscriber, escaping, CSS
// inlined, List-Unsubscribe, the counts on the issue, the rss.issue_sent fact, and at most one mail
// per recipient per issue when the rss service is killed mid-send. The readers of an issue share the
// MIME skeleton of its send (one boundary) and each gets their own values; every mail is DKIM-signed
// (DKIM_KEYS) and verifies.
import { generateKeyPairSync } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { startCaptureRelay, waitFor, type CaptureRelay, type CapturedMail } from '@mailer/testing';
import { rss2, startRssStack, type RssStack } from './support/rss-stack';
import { expectStatus, INSTANT_PATTERN, type Api } from './support/subscriber-stack';

jest.setTimeout(240_000);

let relay: CaptureRelay;
let env: RssStack;
let a: Api;
let b: Api;
let profileA: string;
const dkimKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const DKIM_TXT = `v=DKIM1; k=rsa; p=${dkimKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

/** What a receiving server concludes of the mail's DKIM signatures (rss2026._domainkey.example.com is DKIM_TXT). */
async function dkimOf(mail: CapturedMail) {
  const resolver = async (name: string, rr: string) => {
    if (rr === 'TXT' && name === 'rss2026._domainkey.example.com') return [[DKIM_TXT]];
    throw Object.assign(new Error(`no ${rr} ${name}`), { code: 'ENOTFOUND' });
  };
  const { results } = await dkimVerify(Buffer.from(mail.raw), { resolver } as never);
  return results.map((r: { signingDomain?: string; status: { result: string } }) => `${r.signingDomain}: ${r.status.result}`);
}

beforeAll(async () => {
  relay = await startCaptureRelay();
  // Small pages: a send of a few hundred recipients takes many pages, so a kill lands mid-send.
  env = await startRssStack({
    messagingEnv: { SMTP_URL: relay.url, MAIL_SEND_PAUSED: 'false', DKIM_KEYS: JSON.stringify({ 'example.com': { selector: 'rss2026', privateKey: dkimKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) } }) },
    rssEnv: { RSS_SEND_PAGE_SIZE: '25', RSS_SEND_LEASE_SECONDS: '3' },
  });
  a = await env.account('send-a');
  b = await env.account('send-b');
  profileA = expectStatus(await a.post('/sender-profiles', { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'The Blog' }), 201).id;
  expectStatus(await b.post('/sender-profiles', { name: 'Other', fromEmail: 'other@example.com', fromName: 'Other' }), 201);
});
afterAll(async () => {
  await env?.stop();
  await relay?.close();
});

let feedSeq = 0;
function feed(items: Array<{ guid: string; title: string }>) {
  const path = `/send/${++feedSeq}.xml`;
  const set = (next: Array<{ guid: string; title: string }>) => env.feeds.set(path, { body: rss2('Fish Blog', next) });
  set(items);
  return { url: `${env.feeds.origin}${path}`, set };
}

/** The issue once its mail is queued and `delivered` of it delivered (the list reads the count from messaging). */
async function issueOnceDelivered(api: Api, newsletterId: string, issueId: string, delivered: number) {
  return waitFor(`issue ${issueId} SENT with ${delivered} delivered`, async () => {
    const issue = expectStatus(await api.get(`/rss-newsletters/${newsletterId}/issues`), 200).items.find((i: { id: string }) => i.id === issueId);
    return issue?.status === 'SENT' && issue.deliveredCount >= delivered && issue;
  }, 60_000);
}

/** The last rss.issue_sent fact on DOMAIN (read in place: no consumer is created). */
async function lastIssueSentFact() {
  const jsm = await env.stack.nc.jetstreamManager();
  const m = await jsm.streams.getMessage('DOMAIN', { last_by_subj: 'domain.rss.issue_sent' });
  return m.json<Record<string, unknown>>();
}

it('sends an issue to its audience only: segment members, ACTIVE, in the topic, not opted out, not suppressed; rendered, escaped, CSS inlined, List-Unsubscribe; counts and rss.issue_sent', async () => {
  const topic = expectStatus(await a.post('/topics', { label: 'Fish news' }), 201);
  const seg = expectStatus(
    await a.post('/segments', {
      name: 'Anglers',
      expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, operator: 'TEXT_ENDS_WITH', operand: { kind: 'TEXT', text: '@anglers.test' } }] }] },
    }),
    201,
  );
  const add = async (api: Api, email: string, extra: Record<string, unknown> = {}, topics = [topic.id]) => {
    const s = expectStatus(await api.post('/subscribers', { email, ...extra }), 201);
    if (topics.length) expectStatus(await api.put(`/subscribers/${s.id}/topics`, { topicIds: topics }), 200);
    return s;
  };
  await add(a, 'ann@anglers.test', { firstName: 'Ann' });
  await add(a, 'bob@anglers.test', { firstName: '<b>Bob</b>' });
  await add(a, 'out-of-segment@other.test', { firstName: 'Olga' });
  await add(a, 'unsubscribed@anglers.test', { subscriberStatus: 'UNSUBSCRIBED' });
  await add(a, 'unconfirmed@anglers.test', { subscriberStatus: 'UNCONFIRMED' });
  await add(a, 'no-topic@anglers.test', {}, []);
  const optedOut = await add(a, 'opted-out@anglers.test');
  expectStatus(await a.post(`/subscribers/${optedOut.id}/topics/${topic.id}/opt-out`, {}), 200);
  await add(a, 'suppressed@anglers.test');
  expectStatus(await a.post('/suppressions', { email: 'suppressed@anglers.test' }), 201);
  // Another account's subscriber with a matching address: never in account a's audience.
  expectStatus(await b.post('/subscribers', { email: 'carl@anglers.test' }), 201);
  // The segment service projects subscribers from DOMAIN facts: wait until it sees the members.
  await waitFor('the segment to list its 7 members', async () => expectStatus(await a.get(`/subscribers?segmentId=${seg.id}&pageSize=100`), 200).items.length >= 7, 30_000);

  const f = feed([{ guid: 'old', title: 'Old catch' }]);
  const n = expectStatus(
    await a.post('/rss-newsletters', {
      name: 'Fish weekly',
      sourceUrl: f.url,
      triggerMode: 'INSTANT',
      senderProfileId: profileA,
      segmentId: seg.id,
      topicId: topic.id,
      subjectPattern: '{{ items[0].title }} for {{ subscriber.firstName | default: "you" }}',
      htmlContent: '<p class="hi">Hi {{ subscriber.firstName }}, from {{ newsletter.name }}</p>{% for item in items %}<a href="{{ item.link }}">{{ item.title }}</a>{% endfor %}<a href="{{ links.unsubscribe }}">Unsubscribe</a>',
      cssContent: '.hi { color: #123456; }',
    }),
    201,
  );
  f.set([{ guid: 'new', title: 'Trout &amp; &lt;chips&gt;' }, { guid: 'old', title: 'Old catch' }]);
  const { issueId } = expectStatus(await a.post(`/rss-newsletters/${n.id}/check`), 200);
  const issue = await issueOnceDelivered(a, n.id, issueId, 2);
  expect(issue).toMatchObject({ status: 'SENT', itemCount: 1, recipientCount: 2, deliveredCount: 2, sentAt: expect.stringMatching(INSTANT_PATTERN) });

  // Nothing else arrives for the issue: every job handled (the barrier), then counted.
  await env.settled();
  const mails = relay.messages.filter((m) => m.rcptTo.some((r) => r.endsWith('@anglers.test') || r.endsWith('@other.test')));
  expect(mails.map((m) => m.rcptTo[0]).sort()).toEqual(['ann@anglers.test', 'bob@anglers.test']);
  const ann = relay.receivedFor('ann@anglers.test')[0];
  expect(ann.subject).toBe('Trout & <chips> for Ann');
  expect(ann.html).toContain('style="color: #123456;"');
  expect(ann.html).toContain('Hi Ann, from Fish weekly');
  // Feed text is escaped in the html: the item title arrives as text, never as markup.
  expect(ann.html).toContain('Trout &amp; &lt;chips&gt;');
  expect(ann.headers['list-unsubscribe']).toMatch(/^<https:\/\/mail\.rss\.test\/u\/[^>]+>$/);
  expect(ann.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
  const bob = relay.receivedFor('bob@anglers.test')[0];
  expect(bob.html).toContain('Hi &lt;b&gt;Bob&lt;/b&gt;');
  expect(bob.html).not.toContain('<b>Bob</b>');
  expect(bob.subject).toBe('Trout & <chips> for <b>Bob</b>');
  // One MIME skeleton for the send: both mails have its boundary; each has its own values.
  const boundaryOf = (m: CapturedMail) => /boundary="([^"]+)"/.exec(m.raw)![1];
  expect(boundaryOf(ann)).toMatch(/^--_NmP-[0-9a-f]{16}-Part_1$/);
  expect(boundaryOf(bob)).toBe(boundaryOf(ann));
  expect(bob.messageId).not.toBe(ann.messageId);
  expect(bob.headers['list-unsubscribe']).not.toBe(ann.headers['list-unsubscribe']);
  for (const m of [ann, bob]) {
    // the template's unsubscribe link is the reader's own (never tracked); the item link goes through the reader's own click redirect
    expect(m.html).toContain(`href="${(m.headers['list-unsubscribe'] as string).slice(1, -1)}"`);
    expect(m.html).toMatch(new RegExp(`href="https://mail\\.rss\\.test/t/c/[^"]+"`));
    expect(m.text).toContain((m.headers['list-unsubscribe'] as string).slice(1, -1));
    expect(await dkimOf(m)).toEqual(['example.com: pass']);
  }
  const clickOf = (m: CapturedMail) => /href="(https:\/\/mail\.rss\.test\/t\/c\/[^"]+)"/.exec(m.html as string)![1];
  expect(clickOf(bob)).not.toBe(clickOf(ann));

  expect(await lastIssueSentFact()).toEqual({ type: 'rss.issue_sent', accountId: a.accountId, occurredAt: issue.sentAt, newsletterId: n.id, issueId, itemCount: 1, recipientCount: 2 });
  // The mail is marketing mail of kind RSS in the account's message log.
  const log = expectStatus(await a.get('/email-messages?email=ann@anglers.test'), 200);
  expect(log.items).toEqual([expect.objectContaining({ kind: 'RSS', status: 'DELIVERED', subject: 'Trout & <chips> for Ann' })]);
});

it('kill -9 of the rss service mid-send: the send resumes at its last queued page and every recipient gets the issue exactly once', async () => {
  const c = await env.account('send-c');
  const profile = expectStatus(await c.post('/sender-profiles', { name: 'Crash', fromEmail: 'crash@example.com', fromName: 'Crash' }), 201);
  const total = 400;
  const emails = Array.from({ length: total }, (_, i) => `reader${String(i).padStart(3, '0')}@crash.test`);
  for (let i = 0; i < total; i += 200) {
    const res = expectStatus(await c.post('/subscribers/sync', { mode: 'CREATE_ONLY', subscribers: emails.slice(i, i + 200).map((email) => ({ email })) }), 200);
    expect(res.results.every((r: { outcome: string }) => r.outcome === 'CREATED')).toBe(true);
  }
  const f = feed([{ guid: 'c-old', title: 'Old' }]);
  const n = expectStatus(
    await c.post('/rss-newsletters', { name: 'Crash digest', sourceUrl: f.url, triggerMode: 'INSTANT', senderProfileId: profile.id, subjectPattern: '{{ items[0].title }}', htmlContent: '<p>{{ items[0].title }}</p>' }),
    201,
  );
  // Delivery is slowed so the queueing is what the kill interrupts, not only the SMTP sends.
  relay.setDataDelay(20);
  f.set([{ guid: 'c-new', title: 'Crash news' }, { guid: 'c-old', title: 'Old' }]);
  const { issueId } = expectStatus(await c.post(`/rss-newsletters/${n.id}/check`), 200);
  // Kill the rss service once some pages are queued and others are not.
  const seen = await waitFor('some pages queued', async () => {
    const issue: { status: string; recipientCount: number } | undefined = expectStatus(await c.get(`/rss-newsletters/${n.id}/issues`), 200).items[0];
    return issue && issue.recipientCount > 0 && issue;
  }, 30_000);
  expect(seen).toMatchObject({ status: 'SENDING' });
  expect(seen.recipientCount).toBeLessThan(total);
  await env.restartRss({ kill9: true });
  relay.setDataDelay(0);

  const issue = await issueOnceDelivered(c, n.id, issueId, total);
  expect(issue).toMatchObject({ status: 'SENT', recipientCount: total, deliveredCount: total });
  await env.settled();
  const received = relay.messages.filter((m) => m.rcptTo[0]?.endsWith('@crash.test')).map((m) => m.rcptTo[0]);
  expect(received.length).toBe(total);
  expect(new Set(received).size).toBe(total);
  expect(await lastIssueSentFact()).toMatchObject({ issueId, recipientCount: total });
});
