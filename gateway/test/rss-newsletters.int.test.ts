// RSS newsletters through the real gateway and the real rss, subscriber, segment and messaging
// services, feeds served by a local HTTP server (the API contract "RSS newsletters"): CRUD and the body rules
// (ids checked in their services, schedules, ranges, never a 5xx), the baseline, check in each
// trigger mode with maxItemsPerIssue carry-over, REVIEW release and discard, pause and resume with
// and without rebaseline, a failing feed (lastError, no issue), tenant isolation, and a restart.
import { expectError } from './support/harness';
import { rss2, startRssStack, type RssStack } from './support/rss-stack';
import { expectStatus, INSTANT_PATTERN, UNKNOWN_ID, UUID_PATTERN, type Api } from './support/subscriber-stack';

jest.setTimeout(180_000);

let env: RssStack;
let a: Api;
let b: Api;
let profileA: string;
let profileB: string;

beforeAll(async () => {
  env = await startRssStack();
  a = await env.account('rss-a');
  b = await env.account('rss-b');
  profileA = expectStatus(await a.post('/sender-profiles', { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'Blog' }), 201).id;
  profileB = expectStatus(await b.post('/sender-profiles', { name: 'Other', fromEmail: 'other@example.com', fromName: 'Other' }), 201).id;
});
afterAll(async () => {
  await env?.stop();
});

type Item = { guid: string; title: string; date?: Date };
let feedSeq = 0;
const HOUR = 3_600_000;

/** A new feed path with the given items; returns its URL and a setter for later versions. */
function feed(items: Item[], title = 'The Blog') {
  const path = `/feeds/${++feedSeq}.xml`;
  const set = (next: Item[]) => env.feeds.set(path, { body: rss2(title, next) });
  set(items);
  return { url: `${env.feeds.origin}${path}`, path, set };
}

const items = (prefix: string, n: number, hoursAgo = 0): Item[] =>
  Array.from({ length: n }, (_, i) => ({ guid: `${prefix}-${i}`, title: `${prefix} post ${i}`, date: new Date(Date.now() - (hoursAgo + i) * HOUR) }));

const newsletterBody = (url: string, extra: Record<string, unknown> = {}) => ({
  name: 'Digest',
  sourceUrl: url,
  triggerMode: 'INSTANT',
  senderProfileId: profileA,
  subjectPattern: '{{ newsletter.feedTitle }}: {{ items[0].title }}',
  htmlContent: '{% for item in items %}<p><a href="{{ item.link }}">{{ item.title }}</a></p>{% endfor %}',
  ...extra,
});

async function create(api: Api, url: string, extra: Record<string, unknown> = {}) {
  return expectStatus(await api.post('/rss-newsletters', newsletterBody(url, extra)), 201);
}
const check = async (api: Api, id: string) => expectStatus(await api.post(`/rss-newsletters/${id}/check`), 200);
const issuesOf = async (api: Api, id: string) => expectStatus(await api.get(`/rss-newsletters/${id}/issues`), 200);

/** The issue list once every released issue's mail is queued (SENT): the send poller works at once. */
async function sentIssues(api: Api, id: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const page = await issuesOf(api, id);
    const sending = page.items.some((i: { status: string }) => i.status === 'RELEASED' || i.status === 'SENDING');
    if (!sending || Date.now() > deadline) return page;
    await new Promise((r) => setTimeout(r, 200));
  }
}

it('previews any feed: title, site and items', async () => {
  const f = feed(items('pv', 2));
  const preview = expectStatus(await a.post('/rss-newsletters/preview', { url: f.url }), 200);
  expect(preview).toEqual({
    feedTitle: 'The Blog',
    siteUrl: 'https://blog.example/',
    items: [
      { guid: 'pv-0', title: 'pv post 0', link: 'https://blog.example/pv-0', publishedAt: expect.stringMatching(INSTANT_PATTERN), summary: 'About pv post 0' },
      { guid: 'pv-1', title: 'pv post 1', link: 'https://blog.example/pv-1', publishedAt: expect.stringMatching(INSTANT_PATTERN), summary: 'About pv post 1' },
    ],
  });
  expectError(await a.post('/rss-newsletters/preview', { url: `${env.feeds.origin}/nothing.xml` }), 422, 'feed_http_error');
  env.feeds.set('/not-a-feed.html', { contentType: 'text/html', body: '<html><body>hello</body></html>' });
  expectError(await a.post('/rss-newsletters/preview', { url: `${env.feeds.origin}/not-a-feed.html` }), 422, 'feed_unreadable');
  // Only loopback is allowed besides public addresses (OUTBOUND_ALLOWED_CIDRS=127.0.0.0/8).
  expectError(await a.post('/rss-newsletters/preview', { url: 'http://10.1.2.3/feed.xml' }), 400, 'feed_not_allowed');
  expectError(await a.post('/rss-newsletters/preview', { url: 'not a url' }), 400, 'validation_failed');
});

it('creates a newsletter: ACTIVE, feed details filled from the feed, a Location; GET, list, PUT and DELETE', async () => {
  const f = feed(items('crud', 3));
  const res = await a.post('/rss-newsletters', newsletterBody(f.url, { id: UNKNOWN_ID }));
  const n = expectStatus(res, 201);
  expect(n).toMatchObject({
    id: expect.stringMatching(UUID_PATTERN),
    name: 'Digest',
    sourceUrl: f.url,
    siteUrl: 'https://blog.example/',
    feedTitle: 'The Blog',
    feedUrl: f.url,
    triggerMode: 'INSTANT',
    releasePolicy: 'AUTO',
    maxItemsPerIssue: 10,
    status: 'ACTIVE',
    lastCheckedAt: expect.stringMatching(INSTANT_PATTERN),
    lastItemPublishedAt: expect.stringMatching(INSTANT_PATTERN),
    lastError: null,
    segmentId: null,
    topicId: null,
    cssContent: '',
    pendingItemCount: 0,
    createdAt: expect.stringMatching(INSTANT_PATTERN),
  });
  expect(n.id).not.toBe(UNKNOWN_ID);
  expect(res.headers.get('location')).toBe(`/rss-newsletters/${n.id}`);
  expect(expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200)).toEqual(n);
  expect(expectStatus(await a.get('/rss-newsletters'), 200).items.map((x: { id: string }) => x.id)).toContain(n.id);

  const topic = expectStatus(await a.post('/topics', { label: 'Blog readers' }), 201);
  const put = expectStatus(await a.put(`/rss-newsletters/${n.id}`, newsletterBody(f.url, { name: 'Weekly', triggerMode: 'SCHEDULE', schedule: 'CRON_TZ=Europe/Berlin 0 8 * * 1', topicId: topic.id, feedTitle: 'Mine' })), 200);
  expect(put).toMatchObject({ id: n.id, name: 'Weekly', triggerMode: 'SCHEDULE', schedule: 'CRON_TZ=Europe/Berlin 0 8 * * 1', topicId: topic.id, feedTitle: 'Mine', nextScheduledAt: expect.stringMatching(INSTANT_PATTERN) });
  // The next Monday 08:00 in Berlin (07:00 UTC in winter, 06:00 in summer).
  const next = new Date(put.nextScheduledAt);
  expect(next.getUTCDay()).toBe(1);
  expect([6, 7]).toContain(next.getUTCHours());

  expect((await a.delete(`/rss-newsletters/${n.id}`)).status).toBe(204);
  expectError(await a.get(`/rss-newsletters/${n.id}`), 404, 'rss_newsletter_not_found');
  expectError(await a.delete(`/rss-newsletters/${n.id}`), 404, 'rss_newsletter_not_found');
  expectError(await a.get(`/rss-newsletters/${n.id}/issues`), 404, 'rss_newsletter_not_found');
});

it('refuses bad bodies with precise errorIds, never a 5xx, and creates nothing', async () => {
  const f = feed(items('bad', 1));
  const before = expectStatus(await a.get('/rss-newsletters'), 200).items.length;
  const cases: Array<[Record<string, unknown>, number, string]> = [
    [{ senderProfileId: undefined }, 400, 'validation_failed'],
    [{ triggerMode: 'WEEKLY' }, 400, 'validation_failed'],
    [{ triggerMode: 'SCHEDULE' }, 400, 'validation_failed'],
    [{ triggerMode: 'SCHEDULE', schedule: '0 8 * *' }, 400, 'rss_schedule_invalid'],
    [{ triggerMode: 'SCHEDULE', schedule: '99 8 * * *' }, 400, 'rss_schedule_invalid'],
    [{ triggerMode: 'SCHEDULE', schedule: 'CRON_TZ=Nowhere/Land 0 8 * * *' }, 400, 'rss_schedule_invalid'],
    [{ triggerMode: 'THRESHOLD' }, 400, 'validation_failed'],
    [{ triggerMode: 'THRESHOLD', minItems: 0 }, 400, 'validation_failed'],
    [{ maxItemsPerIssue: 101 }, 400, 'validation_failed'],
    [{ reviewAutoReleaseMinutes: 0 }, 400, 'validation_failed'],
    [{ thresholdMaxAgeDays: 2147483648 }, 400, 'validation_failed'],
    [{ htmlContent: '{% for item in items %}' }, 400, 'validation_failed'],
    [{ name: '   ' }, 400, 'validation_failed'],
    [{ sourceUrl: 'ftp://blog.example/feed' }, 400, 'validation_failed'],
    [{ colour: 'red' }, 400, 'unknown_property'],
    [{ segmentId: 'not-a-uuid' }, 400, 'invalid_uuid'],
    [{ senderProfileId: UNKNOWN_ID }, 404, 'sender_profile_not_found'],
    [{ senderProfileId: profileB }, 404, 'sender_profile_not_found'],
    [{ segmentId: UNKNOWN_ID }, 404, 'segment_not_found'],
    [{ topicId: UNKNOWN_ID }, 404, 'topic_not_found'],
    [{ sourceUrl: `${env.feeds.origin}/missing.xml` }, 422, 'feed_http_error'],
    [{ sourceUrl: 'http://192.168.1.1/feed.xml' }, 400, 'feed_not_allowed'],
  ];
  for (const [extra, status, errorId] of cases) {
    const res = await a.post('/rss-newsletters', newsletterBody(f.url, extra));
    expectError(res, status, errorId);
  }
  for (const raw of [null, [], 'x', 42, { name: 1 }, { ...newsletterBody(f.url), minItems: 'three' }, { ...newsletterBody(f.url), triggerMode: null }]) {
    const res = await a.post('/rss-newsletters', raw);
    expect(res.status).toBe(400);
  }
  expect(expectStatus(await a.get('/rss-newsletters'), 200).items.length).toBe(before);
  expectError(await a.get('/rss-newsletters/not-a-uuid'), 400, 'invalid_uuid');
  const n = await create(a, f.url);
  expectError(await a.post(`/rss-newsletters/${n.id}/resume`, { rebaseline: 'yes' }), 400, 'validation_failed');
  expectError(await a.post(`/rss-newsletters/${n.id}/resume`, { rebaseline: true, extra: 1 }), 400, 'unknown_property');
  expectError(await a.post('/rss-newsletters/preview', {}), 400, 'validation_failed');
  expectError(await a.get(`/rss-newsletters/${n.id}/issues?pageSize=0`), 400, 'validation_failed');
  expectError(await a.get(`/rss-newsletters/${n.id}/issues?pageNumber=x`), 400, 'validation_failed');
  expectError(await a.post(`/rss-newsletters/${n.id}/issues/not-a-uuid/release`), 400, 'invalid_uuid');
  expectError(await a.get(`/rss-newsletters/${UNKNOWN_ID}`), 404, 'rss_newsletter_not_found');
});

it('baseline: items in the feed at creation are never an issue', async () => {
  const f = feed(items('base', 5));
  const n = await create(a, f.url);
  expect(await check(a, n.id)).toEqual({ newItems: 0, issueId: null });
  // The same items under changed guids but unchanged links are not new either.
  f.set(items('base', 5).map((i) => ({ ...i, guid: `${i.guid}-v2`, link: `https://blog.example/${i.guid}` })));
  expect(await check(a, n.id)).toEqual({ newItems: 0, issueId: null });
  expect(expectStatus(await a.get(`/rss-newsletters/${n.id}/issues`), 200)).toEqual({ items: [], pageNumber: 1, pageSize: 50, totalItems: 0, totalPages: 0 });
});

it('INSTANT + AUTO: new items make an issue released and sent at once; maxItemsPerIssue carries the rest over', async () => {
  const old = items('inst-old', 2, 48);
  const f = feed(old);
  const n = await create(a, f.url, { maxItemsPerIssue: 2 });
  f.set([...items('inst', 3), ...old]);
  const first = await check(a, n.id);
  expect(first).toEqual({ newItems: 3, issueId: expect.stringMatching(UUID_PATTERN) });
  // Released at once and sent: the account has no subscriber, so the audience is empty.
  let page = await sentIssues(a, n.id);
  expect(page.items).toHaveLength(1);
  expect(page.items[0]).toMatchObject({
    id: first.issueId,
    status: 'SENT',
    itemCount: 2,
    subject: 'The Blog: inst post 0',
    releasedAt: expect.stringMatching(INSTANT_PATTERN),
    sentAt: expect.stringMatching(INSTANT_PATTERN),
    recipientCount: 0,
    deliveredCount: 0,
  });
  expect(page.items[0].items.map((i: { title: string }) => i.title)).toEqual(['inst post 0', 'inst post 1']);
  expect(expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200).pendingItemCount).toBe(1);
  // The carried-over item makes the next issue, though the feed has nothing new.
  const second = await check(a, n.id);
  expect(second).toEqual({ newItems: 0, issueId: expect.stringMatching(UUID_PATTERN) });
  page = await issuesOf(a, n.id);
  expect(page.items.map((i: { itemCount: number }) => i.itemCount)).toEqual([1, 2]);
  expect(page.items[0].items[0].title).toBe('inst post 2');
  expect(await check(a, n.id)).toEqual({ newItems: 0, issueId: null });
});

it('THRESHOLD: an issue once minItems wait; SCHEDULE: check collects, the tick sends', async () => {
  const t = feed([]);
  const thr = await create(a, t.url, { triggerMode: 'THRESHOLD', minItems: 3, thresholdMaxAgeDays: 7 });
  t.set(items('thr-a', 2));
  expect(await check(a, thr.id)).toEqual({ newItems: 2, issueId: null });
  expect(expectStatus(await a.get(`/rss-newsletters/${thr.id}`), 200).pendingItemCount).toBe(2);
  // An item older than thresholdMaxAgeDays does not count towards minItems.
  t.set([{ guid: 'thr-old', title: 'ancient', date: new Date(Date.now() - 30 * 24 * HOUR) }, ...items('thr-a', 2)]);
  expect(await check(a, thr.id)).toEqual({ newItems: 1, issueId: null });
  expect(expectStatus(await a.get(`/rss-newsletters/${thr.id}`), 200).pendingItemCount).toBe(2);
  t.set([...items('thr-b', 1), ...items('thr-a', 2)]);
  const made = await check(a, thr.id);
  expect(made).toEqual({ newItems: 1, issueId: expect.stringMatching(UUID_PATTERN) });
  const issue = (await issuesOf(a, thr.id)).items[0];
  expect(issue.itemCount).toBe(3);
  expect(issue.items.map((i: { title: string }) => i.title)).not.toContain('ancient');

  const s = feed([]);
  const sch = await create(a, s.url, { triggerMode: 'SCHEDULE', schedule: '0 8 * * *' });
  s.set(items('sch', 2));
  expect(await check(a, sch.id)).toEqual({ newItems: 2, issueId: null });
  const got = expectStatus(await a.get(`/rss-newsletters/${sch.id}`), 200);
  expect(got).toMatchObject({ pendingItemCount: 2, nextScheduledAt: expect.stringMatching(/T08:00:00(\.000)?Z$/) });
  expect((await issuesOf(a, sch.id)).items).toEqual([]);
});

it('REVIEW: issues wait PENDING_REVIEW; release and discard once, 409 after, 404 for unknown issues', async () => {
  const f = feed([]);
  const n = await create(a, f.url, { releasePolicy: 'REVIEW', reviewAutoReleaseMinutes: 60 });
  f.set(items('rev-a', 1));
  const one = (await check(a, n.id)).issueId;
  f.set([...items('rev-b', 1), ...items('rev-a', 1)]);
  const two = (await check(a, n.id)).issueId;
  const page = await issuesOf(a, n.id);
  expect(page.items.map((i: { id: string; status: string }) => [i.id, i.status])).toEqual([
    [two, 'PENDING_REVIEW'],
    [one, 'PENDING_REVIEW'],
  ]);
  expect(page.items[0].autoReleaseAt).toMatch(INSTANT_PATTERN);
  expect(page.items[0].releasedAt).toBeNull();

  const released = expectStatus(await a.post(`/rss-newsletters/${n.id}/issues/${one}/release`), 200);
  expect(released).toMatchObject({ id: one, status: 'RELEASED', releasedAt: expect.stringMatching(INSTANT_PATTERN), autoReleaseAt: null });
  expectError(await a.post(`/rss-newsletters/${n.id}/issues/${one}/release`), 409, 'rss_issue_not_pending_review');
  expectError(await a.post(`/rss-newsletters/${n.id}/issues/${one}/discard`), 409, 'rss_issue_not_pending_review');
  expect(expectStatus(await a.post(`/rss-newsletters/${n.id}/issues/${two}/discard`), 200)).toMatchObject({ id: two, status: 'DISCARDED', releasedAt: null });
  expectError(await a.post(`/rss-newsletters/${n.id}/issues/${two}/release`), 409, 'rss_issue_not_pending_review');
  expectError(await a.post(`/rss-newsletters/${n.id}/issues/${UNKNOWN_ID}/release`), 404, 'rss_issue_not_found');
  expectError(await a.post(`/rss-newsletters/${UNKNOWN_ID}/issues/${one}/release`), 404, 'rss_newsletter_not_found');
  // A discarded issue's items are not offered again.
  expect(await check(a, n.id)).toEqual({ newItems: 0, issueId: null });
});

it('pause and resume: rebaseline marks what was published while paused seen; without it the poller sends it', async () => {
  const f = feed(items('pr', 1, 5));
  const n = await create(a, f.url);
  const paused = expectStatus(await a.post(`/rss-newsletters/${n.id}/pause`), 200);
  expect(paused).toMatchObject({ status: 'PAUSED', nextScheduledAt: null });
  expect(expectStatus(await a.post(`/rss-newsletters/${n.id}/pause`), 200).status).toBe('PAUSED');
  expectError(await a.post(`/rss-newsletters/${n.id}/check`), 409, 'rss_newsletter_paused');
  f.set([...items('pr-while', 2), ...items('pr', 1, 5)]);
  expect(expectStatus(await a.post(`/rss-newsletters/${n.id}/resume`, { rebaseline: true }), 200).status).toBe('ACTIVE');
  expectError(await a.post(`/rss-newsletters/${n.id}/resume`, {}), 409, 'rss_newsletter_not_paused');
  expect(await check(a, n.id)).toEqual({ newItems: 0, issueId: null });

  expectStatus(await a.post(`/rss-newsletters/${n.id}/pause`), 200);
  f.set([...items('pr-later', 1), ...items('pr-while', 2), ...items('pr', 1, 5)]);
  // No body: rebaseline false. The poller reads at once and the item makes an issue.
  expect(expectStatus(await a.post(`/rss-newsletters/${n.id}/resume`), 200).status).toBe('ACTIVE');
  const deadline = Date.now() + 15_000;
  let page = await issuesOf(a, n.id);
  while (page.items.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    page = await issuesOf(a, n.id);
  }
  expect(page.items).toHaveLength(1);
  expect(page.items[0].items.map((i: { title: string }) => i.title)).toEqual(['pr-later post 0']);
});

it('a failing feed sets lastError and makes no issue; a good read clears it', async () => {
  const f = feed(items('fail', 1));
  const n = await create(a, f.url);
  env.feeds.set(f.path, { status: 500, body: 'oops' });
  expectError(await a.post(`/rss-newsletters/${n.id}/check`), 422, 'feed_http_error');
  let got = expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200);
  expect(got.lastError).toMatch(/^feed_http_error: /);
  env.feeds.set(f.path, { body: '<?xml version="1.0"?><rss version="2.0"><channel><title>x</title><item><title>half' });
  expectError(await a.post(`/rss-newsletters/${n.id}/check`), 422, 'feed_unreadable');
  got = expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200);
  expect(got.lastError).toMatch(/^feed_unreadable: /);
  expect((await issuesOf(a, n.id)).items).toEqual([]);
  f.set([...items('fail-new', 1), ...items('fail', 1)]);
  expect((await check(a, n.id)).newItems).toBe(1);
  expect(expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200).lastError).toBeNull();
});

it('isolates accounts: another account sees, changes and checks nothing', async () => {
  const f = feed(items('iso', 1));
  const n = await create(a, f.url);
  expectError(await b.get(`/rss-newsletters/${n.id}`), 404, 'rss_newsletter_not_found');
  expectError(await b.put(`/rss-newsletters/${n.id}`, newsletterBody(f.url, { senderProfileId: profileB })), 404, 'rss_newsletter_not_found');
  expectError(await b.post(`/rss-newsletters/${n.id}/check`), 404, 'rss_newsletter_not_found');
  expectError(await b.post(`/rss-newsletters/${n.id}/pause`), 404, 'rss_newsletter_not_found');
  expectError(await b.get(`/rss-newsletters/${n.id}/issues`), 404, 'rss_newsletter_not_found');
  expectError(await b.delete(`/rss-newsletters/${n.id}`), 404, 'rss_newsletter_not_found');
  expect(expectStatus(await b.get('/rss-newsletters'), 200).items.map((x: { id: string }) => x.id)).not.toContain(n.id);
  expect(expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200).status).toBe('ACTIVE');
});

it('a sender profile a newsletter sends from cannot be deleted (409 sender_profile_in_use) until the newsletter is gone', async () => {
  const profile = expectStatus(await a.post('/sender-profiles', { name: 'Kept', fromEmail: 'kept@example.com', fromName: 'Kept' }), 201);
  const f = feed(items('sp', 1));
  const n = await create(a, f.url, { senderProfileId: profile.id });
  const res = await a.delete(`/sender-profiles/${profile.id}`);
  expectError(res, 409, 'sender_profile_in_use');
  expect(res.json.details).toEqual([{ path: `rssNewsletters.${n.id}`, problem: expect.stringContaining('Digest') }]);
  expect((await a.delete(`/rss-newsletters/${n.id}`)).status).toBe(204);
  expect((await a.delete(`/sender-profiles/${profile.id}`)).status).toBe(204);
});

it('a field a newsletter prints (its merge tags) or its segment reads is in the field usage report, from the real rss and segment services; printed by an active newsletter, it cannot be deleted', async () => {
  const field = expectStatus(await a.post('/fields', { label: 'Loyalty tier', fieldType: 'TEXT' }), 201);
  expect(field.personalizationTagName).toBe('loyalty_tier');
  const segment = expectStatus(
    await a.post('/segments', { name: 'Gold readers', expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId: field.fieldId }, operator: 'TEXT_EQUALS', operand: { kind: 'TEXT', text: 'gold' } }] }] } }),
    201,
  );
  const n = await create(a, feed(items('tier', 1)).url, {
    name: 'Tier digest',
    segmentId: segment.id,
    subjectPattern: 'For {{ subscriber.loyalty_tier | default: "you" }}: {{ items[0].title }}',
    htmlContent: '{% if subscriber["loyalty_tier"] == "gold" %}<p>Gold!</p>{% endif %}{% for item in items %}<p>{{ item.title }}</p>{% endfor %}',
  });
  const mergeTag = (area: string) => ({
    category: 'CONTENT_MERGE_TAG', area, artifactId: n.id, artifactName: 'Tier digest', status: 'ACTIVE',
    reason: `the newsletter's ${area} prints subscriber.loyalty_tier`, link: `/rss-newsletters/${n.id}`, permanentDeleteBlocking: true,
  });
  const report = expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200);
  expect(report.sources).toEqual(expect.arrayContaining(['segment', 'form', 'rss', 'messaging'].map((service) => ({ service, answered: true }))));
  // both templates print the field: one usage each (merge tags warn: archiving blanks them in the next issues)
  expect(report.contentMergeTagUsages).toEqual([mergeTag('subjectPattern'), mergeTag('htmlContent')]);
  // the newsletter's segment reads the field: the segment service reports it
  expect(report.warningUsages).toEqual([expect.objectContaining({ category: 'SEGMENT', artifactId: segment.id, artifactName: 'Gold readers', permanentDeleteBlocking: true })]);
  expect(report).toMatchObject({ archiveBlocked: false, permanentDeleteBlocked: true, blockingUsages: [] });
  expect(report.permanentDeleteBlockingUsages.map((u: { category: string }) => u.category).sort()).toEqual(['CONTENT_MERGE_TAG', 'CONTENT_MERGE_TAG', 'SEGMENT']);
  // another account's newsletters are not reported for its own field of the same tag
  const bField = expectStatus(await b.post('/fields', { label: 'Loyalty tier', fieldType: 'TEXT' }), 201);
  expect(expectStatus(await b.get(`/fields/${bField.fieldId}/usage`), 200).contentMergeTagUsages).toEqual([]);

  // archived, the field stays printed (blank); deleting it is refused while the newsletter prints it
  expectStatus(await a.post(`/fields/${field.fieldId}/archive`), 200);
  const refused = await a.delete(`/fields/${field.fieldId}`);
  expectError(refused, 409, 'field_delete_blocked');
  expect(JSON.stringify(refused.json.details)).toContain('Tier digest');
  // paused, the newsletter prints nothing: its merge tags no longer block the delete (its segment still does)
  expectStatus(await a.post(`/rss-newsletters/${n.id}/pause`), 200);
  const paused = expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200);
  expect(paused.contentMergeTagUsages.map((u: { status: string; permanentDeleteBlocking: boolean }) => [u.status, u.permanentDeleteBlocking])).toEqual([['PAUSED', false], ['PAUSED', false]]);
  expect(paused.permanentDeleteBlockingUsages.map((u: { category: string }) => u.category)).toEqual(['SEGMENT']);
  expect((await a.delete(`/rss-newsletters/${n.id}`)).status).toBe(204);
  expect((await a.delete(`/segments/${segment.id}`)).status).toBe(204);
  expect((await a.delete(`/fields/${field.fieldId}`)).status).toBe(204);
});

it('a segment or topic a newsletter sends to cannot be deleted (409 segment_in_use / topic_in_use) until the newsletter lets go; the services asked must answer', async () => {
  const topic = expectStatus(await a.post('/topics', { label: 'Weekly readers' }), 201);
  const segment = expectStatus(
    await a.post('/segments', { name: 'Readers', expression: { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, operator: 'IS_NOT_EMPTY', operand: { kind: 'NONE' } }] }] } }),
    201,
  );
  const f = feed(items('use', 1));
  const n = await create(a, f.url, { name: 'Uses both', segmentId: segment.id, topicId: topic.id });
  const segmentInUse = await a.delete(`/segments/${segment.id}`);
  expectError(segmentInUse, 409, 'segment_in_use');
  expect(segmentInUse.json.details).toEqual([{ path: `rssNewsletters.${n.id}`, problem: '"Uses both" sends its issues to this segment' }]);
  const topicInUse = await a.delete(`/topics/${topic.id}`);
  expectError(topicInUse, 409, 'topic_in_use');
  expect(topicInUse.json.details).toEqual([{ path: `rssNewsletters.${n.id}`, problem: '"Uses both" sends its issues to this topic' }]);
  // Another account's delete of the same ids is a plain 404: its own records are all it sees.
  expectError(await b.delete(`/segments/${segment.id}`), 404, 'segment_not_found');

  // While the rss service is away the deletes cannot be proven safe: 503, nothing deleted.
  await env.rss.stop();
  try {
    const refused = await a.delete(`/segments/${segment.id}`);
    expectError(refused, 503, 'service_unavailable');
    expect(refused.json.message).toMatch(/^The rss service/);
    expectError(await a.delete(`/topics/${topic.id}`), 503, 'service_unavailable');
  } finally {
    await env.restartRss();
  }
  expectStatus(await a.get(`/segments/${segment.id}`), 200);

  expectStatus(await a.put(`/rss-newsletters/${n.id}`, newsletterBody(f.url, { name: 'Uses both' })), 200);
  // The services reconnect to the restarted rss service by themselves (a 503 meanwhile).
  const deleted = async (path: string) => {
    for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 200))) {
      const res = await a.delete(path);
      if (res.status !== 503 || Date.now() > deadline) return res.status;
    }
  };
  expect(await deleted(`/segments/${segment.id}`)).toBe(204);
  expect(await deleted(`/topics/${topic.id}`)).toBe(204);
});

it('keeps newsletters, seen items and review issues across a restart of the rss service', async () => {
  const f = feed(items('rs', 2));
  const n = await create(a, f.url, { releasePolicy: 'REVIEW' });
  f.set([...items('rs-new', 1), ...items('rs', 2)]);
  const { issueId } = await check(a, n.id);
  await env.restartRss();
  expect(expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200).id).toBe(n.id);
  expect(await check(a, n.id)).toEqual({ newItems: 0, issueId: null });
  expect(expectStatus(await a.post(`/rss-newsletters/${n.id}/issues/${issueId}/release`), 200).status).toBe('RELEASED');
});

it('SCHEDULE: the cron tick makes the issue of the collected items, after a restart too (waits for the next minute)', async () => {
  const f = feed(items('tick-old', 1, 24));
  const n = await create(a, f.url, { triggerMode: 'SCHEDULE', schedule: '* * * * *' });
  f.set([...items('tick', 2), ...items('tick-old', 1, 24)]);
  expect(await check(a, n.id)).toEqual({ newItems: 2, issueId: null });
  const tick = Date.parse(expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200).nextScheduledAt);
  expect(tick - Date.now()).toBeLessThanOrEqual(60_000);
  // The tick is a due time in the store, not a timer: a restarted service still makes the issue.
  await env.restartRss();
  const deadline = tick + 20_000;
  let page = await issuesOf(a, n.id);
  while (page.items.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    page = await issuesOf(a, n.id);
  }
  expect(page.items).toHaveLength(1);
  expect(page.items[0]).toMatchObject({ status: expect.stringMatching(/^(RELEASED|SENDING|SENT)$/), itemCount: 2 });
  expect(Date.parse(page.items[0].createdAt)).toBeGreaterThanOrEqual(tick);
  const after = expectStatus(await a.get(`/rss-newsletters/${n.id}`), 200);
  expect(after.pendingItemCount).toBe(0);
  expect(Date.parse(after.nextScheduledAt)).toBeGreaterThan(tick);
});
