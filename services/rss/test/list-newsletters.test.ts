// The newsletter list answers each newsletter's pending item count (items found by a poll, waiting
// for the next issue) from one query on the items, whatever the number of newsletters; another
// account's items never count. Real pieces: the use case and the repositories on an embedded store.
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { listNewsletters, newsletterView } from '../src/app/newsletters';
import type { ItemSnapshot } from '../src/domain/issues';
import { resolveNewsletterRequest, type Newsletter } from '../src/domain/newsletter';
import { itemRepository, type ItemRepository } from '../src/store/items';
import { newsletterRepository, type NewsletterRepository } from '../src/store/newsletters';

const ACCOUNT = 'acc-1';
const OTHER = 'acc-2';
const NOW = new Date('2026-11-24T08:00:00.000Z');

let temp: TempStore;
let newsletters: NewsletterRepository;
let items: ItemRepository;
/** The item repository's calls, by method, since the last look. */
let calls: string[];

beforeEach(async () => {
  temp = await openTempStore('rss-list');
  newsletters = newsletterRepository(temp.store);
  const real = itemRepository(temp.store);
  calls = [];
  items = new Proxy(real, { get: (target, key: keyof ItemRepository) => (calls.push(String(key)), target[key]) });
});
afterEach(() => temp.close());

const settings = resolveNewsletterRequest({
  name: 'Digest', sourceUrl: 'https://blog.example/feed.xml', siteUrl: null, feedUrl: null, feedTitle: null, triggerMode: 'INSTANT', schedule: null, minItems: null,
  thresholdMaxAgeDays: null, releasePolicy: 'REVIEW', reviewAutoReleaseMinutes: null, segmentId: null, senderProfileId: '8b7a6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d', topicId: null,
  subjectPattern: '{{ items[0].title }}', htmlContent: '{% for item in items %}{{ item.title }}{% endfor %}', cssContent: null, maxItemsPerIssue: null,
});

async function newsletter(accountId: string, n: number): Promise<Newsletter> {
  return newsletters.create({
    ...settings, id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, accountId, status: 'ACTIVE', lastCheckedAt: null, lastItemPublishedAt: null,
    lastError: null, createdAt: new Date(NOW.getTime() + n), updatedAt: NOW, etag: null, lastModified: null, nextPollAt: NOW, nextTickAt: null,
  });
}

const item = (key: string): ItemSnapshot => ({ key, guid: key, title: key, link: `https://blog.example/${key}`, publishedAt: NOW, summary: '', content: '', author: '', imageUrl: '' });
const pending = (n: Newsletter, count: number) => items.addPending(n.accountId, n.id, Array.from({ length: count }, (_, i) => item(`${n.id}-${i}`)), NOW);

it("answers every newsletter's pending count from one query on the items, another account's items not counted", async () => {
  const [a, b, c] = [await newsletter(ACCOUNT, 1), await newsletter(ACCOUNT, 2), await newsletter(ACCOUNT, 3)];
  const foreign = await newsletter(OTHER, 4);
  await pending(a, 3);
  await pending(c, 1);
  await items.markSeen(c.accountId, c.id, [item('seen')], NOW); // a seen item waits for nothing
  await pending(foreign, 5);
  // The foreign newsletter's items under our account's newsletter id: still not ours.
  await items.addPending(OTHER, a.id, [item('intruder')], NOW);
  calls = [];

  const list = await listNewsletters({ newsletters, items }, ACCOUNT);

  expect(list.map((v) => [v.newsletter.id, v.pendingItemCount])).toEqual([[a.id, 3], [b.id, 0], [c.id, 1]]);
  expect(calls).toEqual(['countPendingByNewsletter']);
  expect(await listNewsletters({ newsletters, items }, 'acc-none')).toEqual([]);
});

it('answers one newsletter with its pending count', async () => {
  const a = await newsletter(ACCOUNT, 1);
  await pending(a, 2);
  expect((await newsletterView({ items }, a)).pendingItemCount).toBe(2);
});
