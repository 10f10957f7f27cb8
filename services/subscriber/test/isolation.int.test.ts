// Tenant isolation: every kind of id of one account behaves, in another account, exactly like an
// unknown id (reads, writes, references, filters, bulk operations). And restart durability.
import { status } from '@grpc/grpc-js';
import { add, addField, addTag, addTopic, data, type Env, errorOf, FT, fieldId, list, newAccount, num, startEnv, text } from './support';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env?.stop());
const c = () => env.client;

async function populate() {
  const a = newAccount();
  const field = await addField(c(), a, 'Secret', FT.FIELD_TYPE_SINGLE_CHOICE, { options: ['x'] });
  const tag = await addTag(c(), a, 'Private');
  const topic = await addTopic(c(), a, 'Inner');
  const s = await add(c(), a, 'owner@example.org', { tags: [tag.id], fields: [{ fieldId: fieldId(field), value: { value: { $case: 'optionId', value: field.options[0].id! }, labels: [] } }] });
  return { a, field, tag, topic, s, option: field.options[0].id! };
}

it("no operation of account B can read or change account A's data through A's ids", async () => {
  const A = await populate();
  const B = await populate(); // B has data of its own, to tell "empty" from "isolated"
  const b = B.a;
  const before = await data(c(), A.a, A.s.id);
  const nf = (errorId: string) => ({ code: status.NOT_FOUND, errorId });

  // subscribers
  expect(await errorOf(c().getSubscriber({ accountId: b, subscriberId: A.s.id }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().getSubscriberData({ accountId: b, subscriberId: A.s.id }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().getSubscriberByEmail({ accountId: b, email: 'nobody-in-b@example.org' }))).toMatchObject(nf('subscriber_not_found'));
  expect((await c().getSubscriberByEmail({ accountId: b, email: 'owner@example.org' })).subscriber?.id).toBe(B.s.id);
  expect(await errorOf(c().deleteSubscriber({ accountId: b, subscriberId: A.s.id }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().replaceSubscriberEmail({ accountId: b, subscriberId: A.s.id, email: 'x@example.org' }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().replaceSubscriberFirstName({ accountId: b, subscriberId: A.s.id, firstName: 'x' }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().replaceSubscriberStatus({ accountId: b, subscriberId: A.s.id, subscriberStatus: 6 }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().replaceSubscriberData({ accountId: b, subscriberId: A.s.id, email: 'x@example.org', subscriberStatus: 2, fields: [], tags: [] }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().getSubscriberTopics({ accountId: b, subscriberId: A.s.id }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().replaceSubscriberTopics({ accountId: b, subscriberId: A.s.id, topicIds: [], overrideOptOuts: false }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().optOutOfTopic({ accountId: b, subscriberId: A.s.id, topicId: B.topic.id }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().listFieldValues({ accountId: b, subscriberId: A.s.id }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().setFieldValue({ accountId: b, subscriberId: A.s.id, fieldId: fieldId(B.field), value: { value: { $case: 'optionId', value: B.option }, labels: [] } }))).toMatchObject(nf('subscriber_not_found'));
  expect(await errorOf(c().deleteFieldValue({ accountId: b, subscriberId: A.s.id, fieldId: fieldId(B.field) }))).toMatchObject(nf('subscriber_not_found'));

  // A's field, option, tag and topic ids referenced from B's own subscriber
  const own = B.s.id;
  expect(await errorOf(c().setFieldValue({ accountId: b, subscriberId: own, fieldId: fieldId(A.field), value: text('x') }))).toMatchObject(nf('field_not_found'));
  expect(await errorOf(c().setFieldValue({ accountId: b, subscriberId: own, fieldId: fieldId(B.field), value: { value: { $case: 'optionId', value: A.option }, labels: [] } }))).toMatchObject(nf('option_not_found'));
  expect(await errorOf(c().deleteFieldValue({ accountId: b, subscriberId: own, fieldId: fieldId(A.field) }))).toMatchObject(nf('field_not_found'));
  expect(await errorOf(c().replaceSubscriberData({ accountId: b, subscriberId: own, email: 'owner@example.org', subscriberStatus: 2, fields: [], tags: [A.tag.id] }))).toMatchObject(nf('tag_not_found'));
  expect(await errorOf(c().replaceSubscriberTopics({ accountId: b, subscriberId: own, topicIds: [A.topic.id], overrideOptOuts: false }))).toMatchObject(nf('topic_not_found'));
  expect(await errorOf(c().optOutOfTopic({ accountId: b, subscriberId: own, topicId: A.topic.id }))).toMatchObject(nf('topic_not_found'));
  expect(await errorOf(add(c(), b, 'new@example.org', { tags: [A.tag.id] }))).toMatchObject(nf('tag_not_found'));
  expect(await errorOf(add(c(), b, 'new@example.org', { topicIds: [A.topic.id], topicIdsGiven: true }))).toMatchObject(nf('topic_not_found'));
  expect(await errorOf(add(c(), b, 'new@example.org', { fields: [{ fieldId: fieldId(A.field), value: num(1) }] }))).toMatchObject(nf('field_not_found'));
  const synced = await c().syncSubscribers({ accountId: b, mode: 0, subscribers: [{ accountId: A.a, email: 'owner@example.org', subscriberStatus: 0, tags: [A.tag.id], topicIds: [], topicIdsGiven: false, fields: [] }] });
  expect(synced.results[0]).toMatchObject({ errorId: 'tag_not_found' }); // a row's account_id is ignored
  const syncedB = await c().syncSubscribers({ accountId: b, mode: 0, subscribers: [{ accountId: A.a, email: 'owner@example.org', firstName: 'B owner', subscriberStatus: 0, tags: [], topicIds: [], topicIdsGiven: false, fields: [] }] });
  expect(syncedB.results[0]).toMatchObject({ subscriberId: B.s.id }); // matched B's subscriber, not A's

  // catalog ids
  for (const call of [
    c().getField({ accountId: b, fieldId: fieldId(A.field) }),
    c().updateField({ accountId: b, fieldId: fieldId(A.field), label: 'x', optionsGiven: false, options: [] }),
    c().archiveField({ accountId: b, fieldId: fieldId(A.field) }),
    c().restoreField({ accountId: b, fieldId: fieldId(A.field) }),
    c().deleteField({ accountId: b, fieldId: fieldId(A.field) }),
    c().getFieldUsage({ accountId: b, fieldId: fieldId(A.field) }),
    c().listFieldForms({ accountId: b, fieldId: fieldId(A.field) }),
  ]) {
    expect(await errorOf(call)).toMatchObject(nf('field_not_found'));
  }
  for (const call of [c().getTag({ accountId: b, tagId: A.tag.id }), c().renameTag({ accountId: b, tagId: A.tag.id, name: 'x' }), c().deleteTag({ accountId: b, tagId: A.tag.id }), list(c(), b, { tagId: A.tag.id })]) {
    expect(await errorOf(call)).toMatchObject(nf('tag_not_found'));
  }
  for (const call of [c().getTopic({ accountId: b, topicId: A.topic.id }), c().updateTopic({ accountId: b, topicId: A.topic.id, label: 'x', descriptionGiven: false }), c().deleteTopic({ accountId: b, topicId: A.topic.id }), list(c(), b, { topicId: A.topic.id })]) {
    expect(await errorOf(call)).toMatchObject(nf('topic_not_found'));
  }
  // bulk operations: A's subscriber counts as NOT_FOUND in B; A's tag is unknown
  expect(await c().addTagsToSubscribers({ accountId: b, subscriberIds: [A.s.id], tagIds: [B.tag.id] })).toMatchObject({ taggedSubscriberCount: 0, skippedByStatus: { NOT_FOUND: 1 } });
  expect(await errorOf(c().addTagsToSubscribers({ accountId: b, subscriberIds: [B.s.id], tagIds: [A.tag.id] }))).toMatchObject(nf('tag_not_found'));
  expect(await c().removeTagsFromSubscribers({ accountId: b, subscriberIds: [A.s.id], tagIds: [B.tag.id] })).toMatchObject({ updatedSubscriberCount: 0, skippedByStatus: { NOT_FOUND: 1 } });

  // lists and catalogs show only the account's own
  expect((await list(c(), b)).items.map((i) => i.id)).toEqual([B.s.id]);
  expect((await c().listTags({ accountId: b })).items.map((t) => t.id)).toEqual([B.tag.id]);
  const bTopics = (await c().listTopics({ accountId: b })).items;
  expect(bTopics.map((t) => t.id)).toEqual([bTopics[0].id, B.topic.id]);
  expect(bTopics[0]).toMatchObject({ label: 'Newsletter', isDefault: true }); // B's own default topic
  expect((await c().listTopics({ accountId: A.a })).items.map((t) => t.id)).not.toContain(bTopics[0].id);
  expect((await c().listFields({ accountId: b, includeArchived: true })).fields.map(fieldId).filter(Boolean)).toEqual([fieldId(B.field)]);

  // and A is untouched
  expect(await data(c(), A.a, A.s.id)).toEqual(before);
  expect((await c().getTag({ accountId: A.a, tagId: A.tag.id })).tag?.subscriberCount).toBe('1');
  expect((await c().getField({ accountId: A.a, fieldId: fieldId(A.field) })).field?.label).toBe('Secret');
});

it('keeps every acknowledged write (subscribers, catalog, counters) across kill -9 and restart', async () => {
  const a = newAccount();
  const f = await addField(c(), a, 'Level', FT.FIELD_TYPE_NUMBER);
  const tag = await addTag(c(), a, 'Kept');
  const topic = await addTopic(c(), a, 'Kept topic');
  const rows = Array.from({ length: 300 }, (_, i) => ({ accountId: '', email: `k${i}@example.org`, subscriberStatus: i % 3 === 0 ? 6 : 0, tags: [tag.id], topicIds: [], topicIdsGiven: false, fields: [{ fieldId: fieldId(f), value: num(i) }] }));
  const res = await c().syncSubscribers({ accountId: a, mode: 0, subscribers: rows });
  const one = res.results[7].subscriberId!;
  await c().optOutOfTopic({ accountId: a, subscriberId: one, topicId: topic.id, source: 'kept' });
  const beforeList = await list(c(), a);
  const beforeData = await data(c(), a, one);
  const beforeTopics = await c().getSubscriberTopics({ accountId: a, subscriberId: one });

  await env.restart();

  expect(await list(c(), a)).toEqual(beforeList);
  expect(beforeList.statusCounts).toMatchObject({ active: '200', blocked: '100' });
  expect(await data(c(), a, one)).toEqual(beforeData);
  expect(await c().getSubscriberTopics({ accountId: a, subscriberId: one })).toEqual(beforeTopics);
  expect((await c().getTag({ accountId: a, tagId: tag.id })).tag?.subscriberCount).toBe('300');
  expect((await c().getField({ accountId: a, fieldId: fieldId(f) })).field?.label).toBe('Level');
  // and it keeps working
  expect((await c().syncSubscribers({ accountId: a, mode: 0, subscribers: rows })).results.every((r) => r.outcome === 3)).toBe(true);
  await add(c(), a, 'after@example.org');
  expect((await list(c(), a)).statusCounts).toMatchObject({ active: '201', blocked: '100' });
});
