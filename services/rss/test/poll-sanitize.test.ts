// Feed HTML is sanitized once per item, when the item is first kept (domain/feed.ts untrustedHtml,
// cleanItem): a poll of a feed whose items were all seen sanitizes nothing (a 5 MB feed's HTML cost
// about a second of CPU on every poll), a new item is sanitized before it is stored, and the preview
// shows clean items. Real pieces: a feed served over loopback HTTP, the outbound guard as the local
// runner configures it, the feed reader and parser, the use cases on an embedded store; the work is
// observed on the sanitizer itself (a spy that calls through).
import { fixedClock } from '@mailer/kit';
import { createOutbound, type Outbound } from '@mailer/outbound';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { listIssues } from '../src/app/issues';
import { checkNewsletter, createNewsletter, previewFeed, type NewsletterDeps } from '../src/app/newsletters';
import { feedReader } from '../src/clients/feeds';
import * as feedHtml from '../src/domain/feed-html';
import type { NewsletterRequest } from '../src/domain/newsletter';
import { issueRepository } from '../src/store/issues';
import { itemRepository } from '../src/store/items';
import { newsletterRepository } from '../src/store/newsletters';
import { serve, startFeedServer, type FeedServer } from './support/feed-server';

const ACCOUNT = 'acc-1';
/** An item's HTML: a phishing form and a script around the text, marked with the item's guid. */
const phishing = (guid: string) => `<p>Read ${guid}</p><form action="https://phish.example/login"><input name="password"></form><script>steal()</script>`;

let temp: TempStore;
let server: FeedServer;
let outbound: Outbound;
let deps: NewsletterDeps;
let sanitizer: jest.SpyInstance;
/** The items whose HTML the sanitizer cleaned since the last look (each item's guid is in its HTML; a null field is no work). */
const sanitized = () => {
  const guids = sanitizer.mock.calls.filter(([markup]) => markup != null).map(([markup]) => /<p>Read ([\w-]+)<\/p>/.exec(String(markup))?.[1]);
  sanitizer.mockClear();
  return guids;
};

/** An RSS 2.0 document of items with the given guids, each carrying the phishing HTML. */
const rss = (guids: string[]) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title><link>https://blog.example/</link>${guids
    .map((g) => `<item><guid isPermaLink="false">${g}</guid><title>Post ${g}</title><link>https://blog.example/${g}</link><description><![CDATA[${phishing(g)}]]></description></item>`)
    .join('')}</channel></rss>`;
const publish = (guids: string[]) => server.route('/feed.xml', serve(rss(guids), 'application/rss+xml'));

beforeEach(async () => {
  temp = await openTempStore('rss-sanitize');
  server = await startFeedServer();
  outbound = createOutbound({ allowHttp: true, allowedCidrs: ['127.0.0.0/8'] });
  sanitizer = jest.spyOn(feedHtml, 'sanitizeFeedHtml');
  let ids = 0;
  deps = {
    store: temp.store,
    newsletters: newsletterRepository(temp.store),
    items: itemRepository(temp.store),
    issues: issueRepository(temp.store),
    feeds: feedReader(outbound),
    catalog: { requireSegment: async () => undefined, requireTopic: async () => undefined, requireSenderProfile: async () => undefined },
    pollIntervalMs: 600_000,
    now: fixedClock('2026-11-24T08:00:00.000Z').now,
    newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
    wakePoller: () => undefined,
    wakeAutoRelease: () => undefined,
    wakeSend: () => undefined,
  };
});
afterEach(async () => {
  sanitizer.mockRestore();
  await outbound.close();
  await server.close();
  await temp.close();
});

const request = (): NewsletterRequest => ({
  name: 'Digest', sourceUrl: `${server.origin}/feed.xml`, siteUrl: null, feedUrl: null, feedTitle: null, triggerMode: 'INSTANT', schedule: null, minItems: null,
  thresholdMaxAgeDays: null, releasePolicy: 'REVIEW', reviewAutoReleaseMinutes: null, segmentId: null, senderProfileId: '8b7a6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d', topicId: null,
  subjectPattern: '{{ items[0].title }}', htmlContent: '{% for item in items %}{{ item.summary }}{% endfor %}', cssContent: null, maxItemsPerIssue: null,
});

it('a poll of a feed whose items were all seen sanitizes nothing; a new item is sanitized before it is stored, and only it', async () => {
  const feed = Array.from({ length: 50 }, (_, i) => `old-${i}`);
  publish(feed);
  const n = await createNewsletter(deps, ACCOUNT, request()); // the baseline keeps keys only
  for (let poll = 0; poll < 3; poll++) expect(await checkNewsletter(deps, ACCOUNT, n.id)).toMatchObject({ newItems: 0, issueId: null });
  expect(sanitized()).toEqual([]);

  publish(['new-1', ...feed]);
  expect(await checkNewsletter(deps, ACCOUNT, n.id)).toMatchObject({ newItems: 1, issueId: expect.any(String) });
  // The new item's HTML only (once when it was kept, again for the issue's values: items stored before
  // the sanitizer existed are cleaned there too).
  expect(new Set(sanitized())).toEqual(new Set(['new-1']));
  // What is stored (and will be mailed) is the clean HTML.
  const [issue] = (await listIssues(deps, ACCOUNT, n.id, 1, 10)).items;
  expect(issue.items.map((i) => [i.key, i.summary])).toEqual([['new-1', '<p>Read new-1</p>']]);

  expect(await checkNewsletter(deps, ACCOUNT, n.id)).toMatchObject({ newItems: 0 });
  expect(sanitized()).toEqual([]);
});

it('the preview shows every item, sanitized', async () => {
  publish(['a', 'b']);
  const preview = await previewFeed(deps, `${server.origin}/feed.xml`);
  expect(preview.items.map((i) => [i.key, i.summary])).toEqual([['a', '<p>Read a</p>'], ['b', '<p>Read b</p>']]);
  expect(sanitized().sort()).toEqual(['a', 'b']);
});
