// Use case SendIssue (app/issues.ts), the rss side of an issue's pages, every branch, against the real
// messaging service's AudienceSendService (with the real subscriber and segment services answering the
// audience, mail delivered to a capture relay), on a real embedded store, newsletters read from a
// local feed through the real outbound guard. A peer that does not answer is a real client of an
// address where nothing listens. (The send poller's due rows and leases over a reopened store:
// durable-time.test.ts.)
import crypto from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { createClient } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxRepository, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { createOutbound, type Outbound } from '@mailer/outbound';
import { senderProfilesV1, subscriberV1 } from '@mailer/proto';
import { freePort, startCaptureRelay, startMesh, startNatsServer, waitForSettled, type CaptureRelay, type NatsServerHandle, type ServiceMesh } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { addReq } from '@mailer/testing/subscriber';
import { sendIssue, type IssueDeps, type SendFailureReason } from '../src/app/issues';
import { checkNewsletter, createNewsletter, type NewsletterDeps } from '../src/app/newsletters';
import { feedReader } from '../src/clients/feeds';
import { issueMail } from '../src/clients/issue-mail';
import { accountCatalog } from '../src/clients/peers';
import type { NewsletterRequest } from '../src/domain/newsletter';
import { issueRepository } from '../src/store/issues';
import { itemRepository } from '../src/store/items';
import { newsletterRepository } from '../src/store/newsletters';
import { serve, startFeedServer, type FeedServer } from './support/feed-server';

jest.setTimeout(150_000);

const RETRY_MS = 60_000;
let nats: NatsServerHandle;
let nc: NatsConnection;
let relay: CaptureRelay;
let mesh: ServiceMesh;
let feeds: FeedServer;
let outbound: Outbound;
let tmp: TempStore;
let nowhere: string;
const closers: Array<() => void> = [];
let failed: SendFailureReason[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  relay = await startCaptureRelay();
  mesh = await startMesh({ NATS_URL: nats.url }, ['subscriber', 'segment', 'messaging'], { messaging: { SMTP_URL: relay.url } });
  feeds = await startFeedServer();
  outbound = createOutbound({ allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] });
  nowhere = `127.0.0.1:${await freePort()}`;
});
afterAll(async () => {
  closers.forEach((close) => close());
  await outbound?.close();
  await feeds?.close();
  await mesh?.stop();
  await relay?.close();
  await nc?.close();
  await nats?.stop();
});
beforeEach(async () => {
  tmp = await openTempStore('send-issue');
  failed = [];
});
afterEach(() => tmp.close());

const client = <C>(make: (address: string) => C & { close(): void }, address: string): C => {
  const c = make(address);
  closers.push(() => c.close());
  return c;
};

/** The rss service's deps on this test's store; `messaging` is where the issue's pages are asked. */
function deps(opts: { messaging?: string; now?: () => Date } = {}): NewsletterDeps & IssueDeps {
  const catalog = client((a) => accountCatalog({ segment: mesh.env.SEGMENT_GRPC_ADDR, subscriber: mesh.env.SUBSCRIBER_GRPC_ADDR, messaging: a }, 10_000), mesh.env.MESSAGING_GRPC_ADDR);
  return {
    store: tmp.store,
    newsletters: newsletterRepository(tmp.store),
    items: itemRepository(tmp.store),
    issues: issueRepository(tmp.store),
    feeds: feedReader(outbound),
    mail: client((a) => issueMail(a, 2), opts.messaging ?? mesh.env.MESSAGING_GRPC_ADDR),
    outbox: outboxRepository(tmp.store),
    notifyOutbox: () => undefined,
    catalog,
    pollIntervalMs: 600_000,
    now: opts.now ?? (() => new Date()),
    newId: crypto.randomUUID,
    wakePoller: () => undefined,
    wakeAutoRelease: () => undefined,
    wakeSend: () => undefined,
    sendLeaseMs: 60_000,
    sendRetryMs: RETRY_MS,
    sendMaxAttempts: 2,
    issueFailed: (reason) => failed.push(reason),
  };
}

let feedNo = 0;
const rss = (guids: string[], description = (g: string) => `About ${g}`) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title><link>https://blog.example/</link><description>d</description>${guids
    .map((g) => `<item><guid isPermaLink="false">${g}</guid><title>Post ${g}</title><link>https://blog.example/${g}</link><description>${description(g)}</description></item>`)
    .join('')}</channel></rss>`;

/** A new account (a sender profile, `readers` ACTIVE subscribers) with an INSTANT newsletter whose feed just got a new item: its issue RELEASED. */
async function releasedIssue(readers: number, over: Partial<NewsletterRequest> = {}, newItemSummary?: string) {
  const d = deps();
  const accountId = crypto.randomUUID();
  const profiles = client((a) => createClient(senderProfilesV1.SenderProfileServiceClient, a, 10_000), mesh.env.MESSAGING_GRPC_ADDR);
  const profile = (await profiles.createSenderProfile({ accountId, profile: { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'The Blog' } })).senderProfile!;
  const subscribers = client((a) => createClient(subscriberV1.SubscriberServiceClient, a, 10_000), mesh.env.SUBSCRIBER_GRPC_ADDR);
  const emails = Array.from({ length: readers }, (_, i) => `reader${i}-${accountId.slice(0, 8)}@example.org`);
  for (const [i, email] of emails.entries()) await subscribers.addSubscriber(addReq(accountId, email, { firstName: i === 1 ? 'Boom' : 'Reader' }));
  const path = `/feed-${++feedNo}.xml`;
  feeds.route(path, serve(rss(['old']), 'application/rss+xml'));
  const newsletter = await createNewsletter(d, accountId, {
    name: 'Digest', sourceUrl: `${feeds.origin}${path}`, siteUrl: null, feedUrl: null, feedTitle: null, triggerMode: 'INSTANT', schedule: null, minItems: null,
    thresholdMaxAgeDays: null, releasePolicy: null, reviewAutoReleaseMinutes: null, segmentId: null, senderProfileId: profile.id, topicId: null,
    subjectPattern: '{{ items[0].title }}', htmlContent: '{% for item in items %}<h1>{{ item.title }}</h1>{% endfor %}', cssContent: null, maxItemsPerIssue: null,
    ...over,
  });
  feeds.route(path, serve(rss(['new', 'old'], (g) => (g === 'new' && newItemSummary) || `About ${g}`), 'application/rss+xml'));
  const { issueId } = await checkNewsletter(d, accountId, newsletter.id);
  expect(await d.issues.get(accountId, newsletter.id, issueId!)).toMatchObject({ status: 'RELEASED' });
  return { accountId, newsletter, issueId: issueId!, emails, profileId: profile.id };
}

const sentFacts = async (issueId: string) =>
  (await tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({})).filter((f) => f.subject === 'domain.rss.issue_sent' && (f.payload as { issueId: string }).issueId === issueId);
/** Mail received per reader, once the messaging service handled every job. */
async function mailsPerReader(emails: string[]) {
  await waitForSettled(nc, { outboxes: mesh.outboxes() });
  return emails.map((e) => relay.receivedFor(e).length);
}

it('pages of the real audience until the last: SENT with the count and one rss.issue_sent; claimed again, nothing more; each reader one mail', async () => {
  const d = deps();
  const { accountId, newsletter, issueId, emails } = await releasedIssue(5);
  await sendIssue(d, accountId, newsletter.id, issueId);
  expect(await d.issues.get(accountId, newsletter.id, issueId)).toMatchObject({ status: 'SENT', recipientCount: 5, sendDueAt: null, lastError: null, sentAt: expect.any(Date) });
  expect(await sentFacts(issueId)).toEqual([expect.objectContaining({ payload: expect.objectContaining({ recipientCount: 5, itemCount: 1 }) })]);
  await sendIssue(d, accountId, newsletter.id, issueId); // a redelivered claim of a SENT issue
  expect(await sentFacts(issueId)).toHaveLength(1);
  expect(await mailsPerReader(emails)).toEqual([1, 1, 1, 1, 1]);
});

it('the messaging service not answering: an outage, retried without counting a try; lastError says so; then it sends', async () => {
  const { accountId, newsletter, issueId, emails } = await releasedIssue(2);
  const down = deps({ messaging: nowhere });
  for (let i = 0; i < 3; i++) await sendIssue(down, accountId, newsletter.id, issueId);
  expect(await down.issues.get(accountId, newsletter.id, issueId)).toMatchObject({ status: 'SENDING', recipientCount: 0, sendFailures: 0, lastError: expect.stringMatching(/^service_unavailable: /), sendDueAt: expect.any(Date) });
  expect(failed).toEqual([]);
  await sendIssue(deps(), accountId, newsletter.id, issueId);
  expect(await down.issues.get(accountId, newsletter.id, issueId)).toMatchObject({ status: 'SENT', recipientCount: 2, lastError: null });
  expect(await mailsPerReader(emails)).toEqual([1, 1]);
});

it("a render failure at send (one reader's mail passes the output limit): a counted try each time, FAILED after the last with its reason; the pages before it stay queued", async () => {
  // Printed twice for Boom (reader 1), a 600,000-character summary passes the renderer's 1 MiB limit.
  const { accountId, newsletter, issueId, emails } = await releasedIssue(3, {
    htmlContent: '{% for item in items %}<h1>{{ item.title }}</h1>{% if subscriber.firstName == "Boom" %}{{ item.summary }}{{ item.summary }}{% endif %}{% endfor %}',
  }, 'x'.repeat(600_000));
  const d = deps();
  await sendIssue(d, accountId, newsletter.id, issueId);
  let now = await d.issues.get(accountId, newsletter.id, issueId);
  expect(now).toMatchObject({ status: 'SENDING', sendFailures: 1, lastError: expect.stringMatching(/^template_render_failed: /) });
  await sendIssue(d, accountId, newsletter.id, issueId);
  now = await d.issues.get(accountId, newsletter.id, issueId);
  expect(now).toMatchObject({ status: 'FAILED', sendFailures: 2, sendDueAt: null, sentAt: null });
  expect(failed).toEqual(['template_render_failed']);
  // FAILED is never tried again: asked to send it, nothing is asked of messaging and nothing changes
  await sendIssue(d, accountId, newsletter.id, issueId);
  expect(await d.issues.get(accountId, newsletter.id, issueId)).toEqual(now);
  expect(failed).toEqual(['template_render_failed']);
  const perReader = await mailsPerReader(emails);
  expect(perReader[1]).toBe(0);
  expect(perReader.reduce((sum, n) => sum + n, 0)).toBe(now!.recipientCount); // the pages queued before Boom's
});

it('a newsletter deleted while its issue is claimed (its record gone, its issues not yet): nothing is asked or sent, the issue is no longer due; an unknown issue: nothing', async () => {
  const d = deps();
  const { accountId, newsletter, issueId, emails } = await releasedIssue(1);
  expect(await d.newsletters.delete(accountId, newsletter.id)).toBe(true); // deleteNewsletter's first step
  await sendIssue(d, accountId, newsletter.id, issueId);
  expect(await d.issues.get(accountId, newsletter.id, issueId)).toMatchObject({ status: 'RELEASED', sendDueAt: null, recipientCount: 0 });
  await sendIssue(d, accountId, newsletter.id, crypto.randomUUID());
  expect(await sentFacts(issueId)).toEqual([]);
  expect(await mailsPerReader(emails)).toEqual([0]);
});

it('two replicas sending one issue at once: the second finds it taken (or sent), each reader gets one mail, one fact', async () => {
  const { accountId, newsletter, issueId, emails } = await releasedIssue(4);
  await Promise.all([sendIssue(deps(), accountId, newsletter.id, issueId), sendIssue(deps(), accountId, newsletter.id, issueId)]);
  const d = deps();
  // A replica that lost the race to claim it may leave it SENDING mid-way: the next claim finishes it.
  if ((await d.issues.get(accountId, newsletter.id, issueId))!.status !== 'SENT') await sendIssue(d, accountId, newsletter.id, issueId);
  expect(await d.issues.get(accountId, newsletter.id, issueId)).toMatchObject({ status: 'SENT', recipientCount: 4 });
  expect(await sentFacts(issueId)).toHaveLength(1);
  expect(await mailsPerReader(emails)).toEqual([1, 1, 1, 1]);
});
