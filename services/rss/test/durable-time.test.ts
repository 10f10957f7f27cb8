// Durable time of the rss service on a real embedded store (docs/architecture.md "Durable time"): SCHEDULE
// ticks and review auto-releases are due rows claimed with a lease, worked by the use cases the
// pollers call, and they survive a reopened store. The feed is a scripted FeedReader (the port the
// feed fetcher plugs into); time is a fixed clock.
import { DomainError, fixedClock, GrpcStatus, PeerUnavailable } from '@mailer/kit';
import { openStore, type Store } from '@mailer/store';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { autoReleaseIssue, discardIssue, listIssues, releaseIssue, sendIssue, type IssueDeps } from '../src/app/issues';
import { OUTBOX_COLLECTION, outboxRepository, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { checkNewsletter, createNewsletter, pauseNewsletter, POLL_LEASE_MS, type NewsletterDeps } from '../src/app/newsletters';
import { pollDueNewsletter } from '../src/app/poll';
import type { FeedReader, FeedSnapshot, IssueMail } from '../src/app/ports';
import type { ReadItem } from '../src/domain/issues';
import type { NewsletterRequest } from '../src/domain/newsletter';
import { dueAutoReleases, dueSends, issueCollection, issueRepository } from '../src/store/issues';
import { itemRepository } from '../src/store/items';
import { dueNewsletters, newsletterCollection, newsletterRepository } from '../src/store/newsletters';

const ACCOUNT = 'acc-1';
const item = (n: number, publishedAt: Date): ReadItem => ({ key: `k${n}`, guid: `g${n}`, title: `Post ${n}`, link: `https://blog.example/${n}`, publishedAt, author: '', imageUrl: '', untrustedHtml: { summary: null, content: null, base: null } });

let temp: TempStore;
let store: Store;
let feed: FeedSnapshot;
let reads = 0;
const clock = fixedClock('2026-11-24T07:59:00.000Z');
let ids = 0;
const SEND_RETRY_MS = 60_000;
const failedReasons: string[] = [];
/**
 * The audience as a scripted IssueMail walks it (the port the messaging service's audience pages plug
 * into): recipient ids in order, two per page. `failAt`: the cursor whose page fails with `failWith`
 * (by default: messaging does not answer).
 */
const audience = ['r1', 'r2', 'r3', 'r4', 'r5'];
const asked: string[] = [];
const mailed = new Map<string, string[]>();
let failAt: string | null = null;
const messagingDown = () => new PeerUnavailable('messaging', 'service_unavailable', 'The messaging service is unavailable; retry later.', { code: 'UNAVAILABLE', details: 'connection refused' });
let failWith: () => Error = messagingDown;
const mail: IssueMail = {
  async queuePage(issue, _newsletter, after) {
    asked.push(after);
    if (after === failAt) throw failWith();
    const start = after === '' ? 0 : audience.indexOf(after) + 1;
    const page = audience.slice(start, start + 2);
    const got = mailed.get(issue.id) ?? [];
    mailed.set(issue.id, [...got, ...page.filter((r) => !got.includes(r))]);
    return { recipientCount: page.length, next: start + 2 >= audience.length ? '' : page[page.length - 1] };
  },
  deliveredCounts: async (_accountId, issueIds) => new Map(issueIds.map((id) => [id, mailed.get(id)?.length ?? 0])),
};

const feeds: FeedReader = {
  async read() {
    reads++;
    return { kind: 'feed', feed, etag: null, lastModified: null, url: 'https://blog.example/feed.xml' };
  },
};

function depsOf(s: Store): NewsletterDeps & IssueDeps {
  return {
    store: s,
    newsletters: newsletterRepository(s),
    items: itemRepository(s),
    issues: issueRepository(s),
    feeds,
    mail,
    outbox: outboxRepository(s),
    notifyOutbox: () => undefined,
    catalog: { requireSegment: async () => undefined, requireTopic: async () => undefined, requireSenderProfile: async () => undefined },
    pollIntervalMs: 600_000,
    now: clock.now,
    newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
    wakePoller: () => undefined,
    wakeAutoRelease: () => undefined,
    wakeSend: () => undefined,
    sendLeaseMs: 60_000,
    sendRetryMs: SEND_RETRY_MS,
    sendMaxAttempts: 3,
    issueFailed: (reason) => failedReasons.push(reason),
  };
}

const request = (extra: Partial<NewsletterRequest>): NewsletterRequest => ({
  name: 'Digest',
  sourceUrl: 'https://blog.example/feed.xml',
  siteUrl: null,
  feedUrl: null,
  feedTitle: null,
  triggerMode: 'INSTANT',
  schedule: null,
  minItems: null,
  thresholdMaxAgeDays: null,
  releasePolicy: null,
  reviewAutoReleaseMinutes: null,
  segmentId: null,
  senderProfileId: '8b7a6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
  topicId: null,
  subjectPattern: '{{ items[0].title }}',
  htmlContent: '{{ items.size }}',
  cssContent: null,
  maxItemsPerIssue: null,
  ...extra,
});

beforeAll(async () => {
  temp = await openTempStore('rss-durable');
  store = temp.store;
});
afterAll(async () => {
  await store.close();
  await temp.close().catch(() => undefined);
});

it('SCHEDULE: the tick is a due row; claimed once under a lease, it makes the issue and arms the next tick; it survives a reopened store', async () => {
  const deps = depsOf(store);
  feed = { title: 'Blog', siteUrl: null, feedUrl: null, items: [item(1, new Date('2026-11-20T00:00:00Z'))] };
  const n = await createNewsletter(deps, ACCOUNT, request({ triggerMode: 'SCHEDULE', schedule: '0 8 * * *' }));
  expect(n.nextTickAt).toEqual(new Date('2026-11-24T08:00:00.000Z'));
  feed = { ...feed, items: [item(3, clock.now()), item(2, clock.now()), ...feed.items] };
  expect(await checkNewsletter(deps, ACCOUNT, n.id)).toMatchObject({ newItems: 2, issueId: null });

  // Reopen the store: what is due lives in it, not in a timer.
  await store.close();
  store = await openStore({ dataDir: temp.dir });
  const reopened = depsOf(store);
  const due = dueNewsletters(newsletterCollection(store));
  expect(await due.claim(clock.now(), POLL_LEASE_MS, 10)).toEqual([]);
  expect(await due.nextDueAt()).toEqual(new Date('2026-11-24T08:00:00.000Z'));
  clock.set('2026-11-24T08:00:01.000Z');
  const claimed = await due.claim(clock.now(), POLL_LEASE_MS, 10);
  expect(claimed.map((c) => c._id)).toEqual([n.id]);
  // A second replica finds it leased.
  expect(await due.claim(clock.now(), POLL_LEASE_MS, 10)).toEqual([]);
  const outcome = await pollDueNewsletter(reopened, ACCOUNT, n.id);
  expect(outcome).toMatchObject({ newItems: 0, issueId: expect.any(String) });
  const { items } = await listIssues(reopened, ACCOUNT, n.id, 1, 10);
  expect(items.map((i) => [i.status, i.items.map((x) => x.key)])).toEqual([['RELEASED', ['k3', 'k2']]]);
  const after = await reopened.newsletters.get(ACCOUNT, n.id);
  expect(after?.nextTickAt).toEqual(new Date('2026-11-25T08:00:00.000Z'));
  // Nothing is due until the next poll: the lease was given back and the tick moved on.
  expect(await due.claim(clock.now(), POLL_LEASE_MS, 10)).toEqual([]);
  expect(await due.nextDueAt()).toEqual(new Date(clock.now().getTime() + 600_000));
});

it('a tick with nothing collected makes no issue; a paused newsletter is never due', async () => {
  const deps = depsOf(store);
  clock.set('2026-11-24T08:59:00.000Z');
  feed = { title: 'Blog', siteUrl: null, feedUrl: null, items: [item(10, clock.now())] };
  const n = await createNewsletter(deps, ACCOUNT, request({ triggerMode: 'SCHEDULE', schedule: '0 9 * * *' }));
  clock.set('2026-11-24T09:00:00.000Z');
  expect(await pollDueNewsletter(deps, ACCOUNT, n.id)).toMatchObject({ newItems: 0, issueId: null });
  await pauseNewsletter(deps, ACCOUNT, n.id);
  clock.set('2026-11-26T09:00:00.000Z');
  const due = await dueNewsletters(newsletterCollection(store)).claim(clock.now(), POLL_LEASE_MS, 100);
  expect(due.map((d) => d._id)).not.toContain(n.id);
});

it('REVIEW: an issue releases itself once reviewAutoReleaseMinutes pass, claimed once', async () => {
  const deps = depsOf(store);
  clock.set('2026-11-24T10:00:00.000Z');
  feed = { title: 'Blog', siteUrl: null, feedUrl: null, items: [] };
  const n = await createNewsletter(deps, ACCOUNT, request({ releasePolicy: 'REVIEW', reviewAutoReleaseMinutes: 5 }));
  feed = { ...feed, items: [item(20, clock.now())] };
  const { issueId } = await checkNewsletter(deps, ACCOUNT, n.id);
  const reviews = dueAutoReleases(issueCollection(store));
  expect(await reviews.nextDueAt()).toEqual(new Date('2026-11-24T10:05:00.000Z'));
  clock.advance(4 * 60_000);
  expect(await reviews.claim(clock.now(), 60_000, 10)).toEqual([]);
  clock.advance(60_000);
  const claimed = await reviews.claim(clock.now(), 60_000, 10);
  expect(claimed.map((c) => c._id)).toEqual([issueId]);
  expect(await reviews.claim(clock.now(), 60_000, 10)).toEqual([]);
  await autoReleaseIssue(deps, ACCOUNT, n.id, issueId!);
  const issue = await deps.issues.get(ACCOUNT, n.id, issueId!);
  expect(issue).toMatchObject({ status: 'RELEASED', releasedAt: clock.now(), autoReleaseAt: null });
  expect(await reviews.nextDueAt()).toBeNull();
});

it('a manual check waits for the lease a poll holds, then answers rss_check_in_progress', async () => {
  const deps = depsOf(store);
  feed = { title: 'Blog', siteUrl: null, feedUrl: null, items: [] };
  const n = await createNewsletter(deps, ACCOUNT, request({}));
  expect(await deps.newsletters.lease(ACCOUNT, n.id, clock.now(), POLL_LEASE_MS)).toBe(true);
  const before = reads;
  await expect(checkNewsletter(deps, ACCOUNT, n.id)).rejects.toMatchObject({ errorId: 'rss_check_in_progress' });
  expect(reads).toBe(before);
});

it('released issues are sent through due rows: page by page, resumed at the last queued page after a failure, SENT once with one rss.issue_sent', async () => {
  const deps = depsOf(store);
  clock.set('2026-11-24T11:00:00.000Z');
  feed = { title: 'Blog', siteUrl: null, feedUrl: null, items: [] };
  const n = await createNewsletter(deps, ACCOUNT, request({}));
  feed = { ...feed, items: [item(30, clock.now())] };
  const sends = dueSends(issueCollection(store));
  // Earlier tests released issues too: send those first.
  for (const row of await sends.claim(clock.now(), 60_000, 100)) await sendIssue(deps, row.accountId, row.newsletterId, row._id);
  asked.length = 0;
  failAt = 'r2';
  const { issueId } = await checkNewsletter(deps, ACCOUNT, n.id);
  let claimed = await sends.claim(clock.now(), 60_000, 10);
  expect(claimed.map((c) => c._id)).toEqual([issueId]);
  await sendIssue(deps, ACCOUNT, n.id, issueId!);
  // The first page is queued and recorded; the second failed: SENDING, due again later.
  let issue = await deps.issues.get(ACCOUNT, n.id, issueId!);
  // messaging did not answer: shown, not counted as a failed try (an outage is retried without limit).
  expect(issue).toMatchObject({ status: 'SENDING', sendCursor: 'r2', recipientCount: 2, sentAt: null, sendDueAt: new Date(clock.now().getTime() + SEND_RETRY_MS), sendFailures: 0 });
  expect(issue!.lastError).toMatch(/^service_unavailable: /);
  expect(await sends.claim(clock.now(), 60_000, 10)).toEqual([]);
  failAt = null;
  clock.advance(SEND_RETRY_MS);
  claimed = await sends.claim(clock.now(), 60_000, 10);
  expect(claimed.map((c) => c._id)).toEqual([issueId]);
  await sendIssue(deps, ACCOUNT, n.id, issueId!);
  // Resumed at the stored cursor: the first page was never asked again.
  expect(asked).toEqual(['', 'r2', 'r2', 'r4']);
  issue = await deps.issues.get(ACCOUNT, n.id, issueId!);
  expect(issue).toMatchObject({ status: 'SENT', recipientCount: 5, sentAt: clock.now(), sendDueAt: null, lastError: null });
  expect(mailed.get(issueId!)).toEqual(audience);
  // Sent again (a redelivered claim): nothing is asked, no second fact.
  await sendIssue(deps, ACCOUNT, n.id, issueId!);
  expect(asked).toHaveLength(4);
  const facts = (await store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({})).filter((f) => (f.payload as { issueId?: string }).issueId === issueId);
  expect(facts.map((f) => [f.subject, f.payload])).toEqual([
    ['domain.rss.issue_sent', { type: 'rss.issue_sent', accountId: ACCOUNT, occurredAt: clock.now().toISOString(), newsletterId: n.id, issueId, itemCount: 1, recipientCount: 5 }],
  ]);
  expect(await sends.nextDueAt()).toBeNull();
  // The list shows what the messaging service counts as delivered.
  const { items } = await listIssues(deps, ACCOUNT, n.id, 1, 10);
  expect(items.find((i) => i.id === issueId)).toMatchObject({ status: 'SENT', recipientCount: 5, deliveredCount: 5 });
});

it('a send that cannot proceed is FAILED after sendMaxAttempts tries with lastError; released again it resumes at its cursor; a FAILED issue can be discarded', async () => {
  const deps = depsOf(store);
  clock.set('2026-11-24T12:00:00.000Z');
  feed = { title: 'Blog', siteUrl: null, feedUrl: null, items: [] };
  const n = await createNewsletter(deps, ACCOUNT, request({}));
  const sends = dueSends(issueCollection(store));
  const sendDue = async () => {
    for (const row of await sends.claim(clock.now(), 60_000, 100)) await sendIssue(deps, row.accountId, row.newsletterId, row._id);
  };
  await sendDue();
  asked.length = 0;
  failedReasons.length = 0;
  // The second page fails as a deleted segment does: a refusal no retry gets past.
  failAt = 'r2';
  failWith = () => new DomainError(GrpcStatus.NOT_FOUND, 'segment_not_found', 'segment 5f0c... does not exist');
  feed = { ...feed, items: [item(40, clock.now())] };
  const { issueId } = await checkNewsletter(deps, ACCOUNT, n.id);
  await sendDue();
  let issue = await deps.issues.get(ACCOUNT, n.id, issueId!);
  expect(issue).toMatchObject({ status: 'SENDING', sendCursor: 'r2', recipientCount: 2, sendFailures: 1, lastError: 'segment_not_found: segment 5f0c... does not exist' });
  // An outage between the tries neither counts nor resets the count.
  failWith = messagingDown;
  clock.advance(SEND_RETRY_MS);
  await sendDue();
  expect(await deps.issues.get(ACCOUNT, n.id, issueId!)).toMatchObject({ status: 'SENDING', sendFailures: 1, lastError: expect.stringMatching(/^service_unavailable: /) });
  failWith = () => new DomainError(GrpcStatus.NOT_FOUND, 'segment_not_found', 'segment 5f0c... does not exist');
  for (let i = 0; i < 2; i++) {
    clock.advance(SEND_RETRY_MS);
    await sendDue();
  }
  issue = await deps.issues.get(ACCOUNT, n.id, issueId!);
  expect(issue).toMatchObject({ status: 'FAILED', sendCursor: 'r2', recipientCount: 2, sendFailures: 3, sendDueAt: null, sentAt: null, lastError: 'segment_not_found: segment 5f0c... does not exist' });
  expect(failedReasons).toEqual(['segment_not_found']);
  // FAILED is not due: the poller leaves it, however long it waits.
  clock.advance(24 * 3_600_000);
  expect(await sends.claim(clock.now(), 60_000, 10)).toEqual([]);
  expect(asked).toEqual(['', 'r2', 'r2', 'r2', 'r2']);

  // The cause is fixed; released again, the send resumes at its cursor: the first page is never asked again.
  failAt = null;
  const released = await releaseIssue(deps, ACCOUNT, n.id, issueId!);
  expect(released).toMatchObject({ status: 'RELEASED', lastError: null, sendFailures: 0, releasedAt: issue!.releasedAt });
  await sendDue();
  expect(asked.slice(5)).toEqual(['r2', 'r4']);
  expect(await deps.issues.get(ACCOUNT, n.id, issueId!)).toMatchObject({ status: 'SENT', recipientCount: 5, lastError: null });
  expect(mailed.get(issueId!)).toEqual(audience);
  // SENT is neither releasable nor discardable.
  await expect(releaseIssue(deps, ACCOUNT, n.id, issueId!)).rejects.toMatchObject({ errorId: 'rss_issue_not_pending_review' });

  // Another issue fails on its first page (a bug: counted as `other`, its words never shown) and is discarded.
  failAt = '';
  failWith = () => new Error('TypeError: x is undefined at /app/services/messaging/dist/x.js:1');
  feed = { ...feed, items: [item(41, clock.now()), ...feed.items] };
  const second = (await checkNewsletter(deps, ACCOUNT, n.id)).issueId!;
  for (let i = 0; i < 3; i++) {
    await sendDue();
    clock.advance(SEND_RETRY_MS);
  }
  expect(await deps.issues.get(ACCOUNT, n.id, second)).toMatchObject({ status: 'FAILED', recipientCount: 0, lastError: 'internal_error: the mail of this issue could not be queued' });
  expect(failedReasons).toEqual(['segment_not_found', 'other']);
  expect(await discardIssue(deps, ACCOUNT, n.id, second)).toMatchObject({ status: 'DISCARDED' });
  await expect(releaseIssue(deps, ACCOUNT, n.id, second)).rejects.toMatchObject({ errorId: 'rss_issue_not_pending_review' });
  failAt = null;
  failWith = messagingDown;
});
