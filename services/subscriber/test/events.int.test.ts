// Domain events on the DOMAIN stream (through the outbox relay): types, subjects, the full contact
// state they carry, and the per-subscriber version that lets a projection drop stale events.
import { add, addField, addTag, addTopic, type DomainEventJson, type Env, eventsOf, FT, fieldId, newAccount, num, opt, S, startEnv, text } from './support';

let env: Env;
beforeAll(async () => {
  env = await startEnv({}, ['rss', 'messaging']); // asked before a topic is deleted
});
afterAll(async () => env?.stop());
const c = () => env.client;

const types = (es: DomainEventJson[]) => es.map((e) => e.type);

it('a subscriber life cycle emits created, updated + facts, deleted; each carries the whole contact and a growing version', async () => {
  const a = newAccount();
  const company = await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT);
  const plan = await addField(c(), a, 'Plan', FT.FIELD_TYPE_SINGLE_CHOICE, { options: ['Free', 'Pro'] });
  const [vip, lead] = [await addTag(c(), a, 'VIP'), await addTag(c(), a, 'Lead')];
  const [news, deals] = [await addTopic(c(), a, 'News', { isDefault: true }), await addTopic(c(), a, 'Deals')];
  const s = await add(c(), a, 'life@example.org', {
    firstName: 'Liz',
    subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED,
    tags: [vip.id],
    fields: [{ fieldId: fieldId(company), value: text('ACME') }, { fieldId: fieldId(plan), value: opt(plan.options[1].id!) }],
  });
  await c().replaceSubscriberStatus({ accountId: a, subscriberId: s.id, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE }); // v2: confirmed
  await c().addTagsToSubscribers({ accountId: a, subscriberIds: [s.id], tagIds: [lead.id] }); // v3: tag_added
  await c().removeTagsFromSubscribers({ accountId: a, subscriberIds: [s.id], tagIds: [vip.id] }); // v4: tag_removed
  await c().replaceSubscriberTopics({ accountId: a, subscriberId: s.id, topicIds: [news.id, deals.id], overrideOptOuts: false }); // v5
  await c().optOutOfTopic({ accountId: a, subscriberId: s.id, topicId: deals.id, source: 'footer' }); // v6
  await c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(company), value: text('Other') }); // v7
  await c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(company), value: text('Other') }); // no change: no event
  await c().replaceSubscriberStatus({ accountId: a, subscriberId: s.id, subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED }); // v8
  await c().deleteSubscriber({ accountId: a, subscriberId: s.id }); // v9

  const all = await eventsOf(env.nc, a, (es) => es.some((e) => e.type === 'subscriber.deleted'));
  const mine = all.filter((e) => e.subscriber?.id === s.id);
  expect(mine.map((e) => [e.type, e.version])).toEqual([
    ['subscriber.created', 1],
    ['subscriber.updated', 2],
    ['subscriber.confirmed', 2],
    ['subscriber.updated', 3],
    ['subscriber.tag_added', 3],
    ['subscriber.updated', 4],
    ['subscriber.tag_removed', 4],
    ['subscriber.updated', 5],
    ['subscriber.topics_changed', 5],
    ['subscriber.updated', 6],
    ['subscriber.topics_changed', 6],
    ['subscriber.topic_opted_out', 6],
    ['subscriber.updated', 7],
    ['subscriber.field_values_changed', 7],
    ['subscriber.updated', 8],
    ['subscriber.unsubscribed', 8],
    ['subscriber.deleted', 9],
  ]);
  for (const e of mine) {
    expect(e).toMatchObject({ accountId: a, subject: `domain.${e.type}` });
    expect(Date.parse(e.occurredAt)).not.toBeNaN();
  }
  // the created event alone is enough to build the contact
  expect(mine[0].subscriber).toEqual({
    id: s.id,
    email: 'life@example.org',
    firstName: 'Liz',
    subscriberStatus: 'UNCONFIRMED',
    registeredAt: s.registeredAt,
    tags: [vip.id],
    topicIds: [news.id],
    optOuts: [],
    fields: [
      { fieldId: fieldId(company), personalizationTagName: 'company', value: { kind: 'TEXT', text: 'ACME' } },
      { fieldId: fieldId(plan), personalizationTagName: 'plan', value: { kind: 'SINGLE_OPTION', optionId: plan.options[1].id!, labels: ['Pro'] } },
    ].sort((x, y) => (x.fieldId < y.fieldId ? -1 : 1)),
  });
  expect(mine[1]).toMatchObject({ changes: ['status'], subscriber: { subscriberStatus: 'ACTIVE' } });
  expect(mine[2]).toMatchObject({ previousStatus: 'UNCONFIRMED' });
  expect(mine[4]).toMatchObject({ tagId: lead.id, subscriber: { tags: [vip.id, lead.id].sort() } });
  expect(mine[6]).toMatchObject({ tagId: vip.id, subscriber: { tags: [lead.id] } });
  expect(mine[8]).toMatchObject({ added: [deals.id], removed: [] });
  expect(mine[11]).toMatchObject({ topicId: deals.id, source: 'footer', subscriber: { topicIds: [news.id], optOuts: [{ topicId: deals.id, source: 'footer', at: expect.any(String) }] } });
  expect(mine[13]).toMatchObject({ fieldIds: [fieldId(company)] });
  expect(mine[16].subscriber).toMatchObject({ subscriberStatus: 'UNSUBSCRIBED', email: 'life@example.org' });
});

it('catalog events: field, tag and topic changes; removals are one account-wide event', async () => {
  const a = newAccount();
  const f = await addField(c(), a, 'Score', FT.FIELD_TYPE_NUMBER);
  await c().updateField({ accountId: a, fieldId: fieldId(f), label: 'Points', optionsGiven: false, options: [] });
  const tag = await addTag(c(), a, 'T');
  await c().renameTag({ accountId: a, tagId: tag.id, name: 'T2' });
  const s = await add(c(), a, 'cat@example.org', { tags: [tag.id], fields: [{ fieldId: fieldId(f), value: num(3) }] });
  const topic = await addTopic(c(), a, 'Weekly', { enrollExistingSubscribers: true });
  await c().updateTopic({ accountId: a, topicId: topic.id, label: 'Weekly news', descriptionGiven: false });
  await c().deleteTag({ accountId: a, tagId: tag.id });
  await c().deleteTopic({ accountId: a, topicId: topic.id });

  const es = await eventsOf(env.nc, a, (x) => x.some((e) => e.type === 'topic.deleted'));
  // the account's default topic is created (with its own topic.created) before its first subscriber joins it
  expect(types(es)).toEqual(['field.created', 'field.updated', 'tag.created', 'tag.renamed', 'topic.created', 'subscriber.created', 'topic.created', 'topic.updated', 'tag.deleted', 'topic.deleted']);
  expect(es[0].field).toMatchObject({ id: fieldId(f), personalizationTagName: 'score', fieldType: 'NUMBER', active: true });
  expect(es[1].field).toMatchObject({ label: 'Points', personalizationTagName: 'score' });
  expect(es[3]).toMatchObject({ tag: { id: tag.id, name: 'T2' }, previousName: 'T' });
  expect(es[4]).toMatchObject({ topic: { label: 'Newsletter', active: true, isDefault: true }, enrolledExistingSubscribers: false, enrolledCount: 0 });
  expect(es[5].subscriber).toMatchObject({ topicIds: [(es[4].topic as { id: string }).id] });
  expect(es[6]).toMatchObject({ topic: { id: topic.id, isDefault: false }, enrolledExistingSubscribers: true, enrolledCount: 1 });
  expect(es[8]).toMatchObject({ tag: { id: tag.id }, removedFromSubscribers: 1 });
  expect(es[9]).toMatchObject({ topic: { id: topic.id }, removedFromSubscribers: 1 });
  void s;
});
