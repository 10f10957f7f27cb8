// The rss service's field usages: which subscriber tags a Liquid template prints, and the handler ->
// use case -> repository path on a real embedded store.
import { commonV1 } from '@mailer/proto';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { mergeTagUsages, subscriberTagsIn, type NewsletterTemplates } from '../src/domain/merge-tags';
import { fieldUsageHandlers } from '../src/handlers/field-usage';
import { NEWSLETTERS, newsletterRepository, newsletterSchema, type NewsletterDoc } from '../src/store/newsletters';

describe('subscriberTagsIn', () => {
  it('finds subscriber members in outputs and tags, dotted or quoted, filters and all', () => {
    const t = 'Hi {{ subscriber.first_name | default: "there" }}! {% if subscriber["company"] %}{{subscriber.Company}}{% endif %} {{ items[0].title }}';
    expect([...subscriberTagsIn(t)].sort()).toEqual(['company', 'first_name']);
  });
  it('text outside Liquid and other objects are no merge tags', () => {
    expect(subscriberTagsIn('subscriber.first_name {{ newsletter.name }} {{ item.subscriber_count }} {{ subscriberx.a }}').size).toBe(0);
  });
});

describe('mergeTagUsages', () => {
  const n = (over: Partial<NewsletterTemplates> = {}): NewsletterTemplates => ({ id: 'n1', name: 'Blog digest', status: 'ACTIVE', subjectPattern: 'News for {{ subscriber.first_name }}', htmlContent: '<p>{{ subscriber.first_name }}</p>', ...over });
  it('one usage per template printing the tag; an active newsletter blocks a permanent delete, a paused one does not', () => {
    expect(mergeTagUsages(n(), 'FIRST_NAME').map((u) => [u.area, u.effect, u.permanentDeleteBlocking])).toEqual([
      ['subjectPattern', 'CONTENT_MERGE_TAG', true],
      ['htmlContent', 'CONTENT_MERGE_TAG', true],
    ]);
    expect(mergeTagUsages(n({ status: 'PAUSED', subjectPattern: 'News' }), 'first_name').map((u) => [u.area, u.permanentDeleteBlocking])).toEqual([['htmlContent', false]]);
    expect(mergeTagUsages(n(), 'company')).toEqual([]);
  });
});

describe('ListFieldUsages on the embedded store', () => {
  let temp: TempStore;
  beforeAll(async () => {
    temp = await openTempStore('rss-usage');
    const { store } = temp;
    const now = new Date();
    const doc = (id: string, accountId: string, name: string, htmlContent: string): NewsletterDoc => ({
      _id: id,
      accountId,
      name,
      status: 'ACTIVE',
      subjectPattern: 'Digest',
      htmlContent,
      cssContent: '',
      sourceUrl: 'https://blog.example/feed.xml',
      siteUrl: null,
      feedUrl: null,
      feedTitle: null,
      triggerMode: 'INSTANT',
      schedule: null,
      minItems: null,
      thresholdMaxAgeDays: null,
      releasePolicy: 'AUTO',
      reviewAutoReleaseMinutes: null,
      segmentId: null,
      senderProfileId: 'sp-1',
      topicId: null,
      maxItemsPerIssue: 10,
      lastCheckedAt: null,
      lastItemPublishedAt: null,
      lastError: null,
      etag: null,
      lastModified: null,
      nextPollAt: null,
      nextTickAt: null,
      dueAt: null,
      leaseUntil: null,
      createdAt: now,
      updatedAt: now,
    });
    await store.collection<NewsletterDoc>(NEWSLETTERS, newsletterSchema).insertMany([
      doc('n-b', 'acc-1', 'B weekly', '{{ subscriber.company }}'),
      doc('n-a', 'acc-1', 'A daily', 'Dear {{ subscriber.company }}'),
      doc('n-c', 'acc-1', 'C plain', '{{ items.size }} new posts'),
      doc('n-x', 'acc-2', 'Other account', '{{ subscriber.company }}'),
    ]);
  });
  afterAll(() => temp?.close());
  const list = (req: Partial<commonV1.ListFieldUsagesRequest>) =>
    fieldUsageHandlers({ newsletters: newsletterRepository(temp.store) }).listFieldUsages({ accountId: 'acc-1', fieldId: 'f-id', personalizationTagName: 'company', ...req }, undefined as never);

  it("lists the account's newsletters printing the field, by name, as live merge tags", async () => {
    const { usages } = await list({});
    expect(usages.map((u) => [u.artifactId, u.area, u.category, u.effect])).toEqual([
      ['n-a', 'htmlContent', commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_CONTENT_MERGE_TAG, commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_CONTENT_MERGE_TAG],
      ['n-b', 'htmlContent', commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_CONTENT_MERGE_TAG, commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_CONTENT_MERGE_TAG],
    ]);
  });

  it('another account or a request without a tag name has no usages; no account is validation_failed', async () => {
    expect((await list({ accountId: 'acc-3' })).usages).toEqual([]);
    expect((await list({ personalizationTagName: '' })).usages).toEqual([]);
    await expect(list({ accountId: '' })).rejects.toMatchObject({ errorId: 'validation_failed' });
  });
});
