import { expectError } from './support/harness';
import { expectStatus, startSubscriberStack, type Api, type SubscriberStack } from './support/subscriber-stack';

// Tenant isolation through HTTP: the account always comes from the API key. A second account can
// neither read nor change the first one's subscribers, fields, tags, topics or field values, nor
// use the first one's ids in its own requests: each answers 404 exactly like an unknown id.

let env: SubscriberStack;
let a: Api; // the victim
let b: Api; // the other tenant
let mine: {
  subscriber: { id: string; email: string };
  field: { fieldId: string; options: Array<{ id: string }> };
  text: { fieldId: string };
  tag: { id: string };
  topic: { id: string };
};
let theirs: { subscriber: { id: string }; field: { fieldId: string }; tag: { id: string }; topic: { id: string } };

/** Everything account A can see of itself, to prove nothing changed. */
async function snapshot() {
  const s = mine.subscriber.id;
  return {
    subscriber: (await a.get(`/subscribers/${s}`)).json,
    data: (await a.get(`/subscribers/${s}/data`)).json,
    topics: (await a.get(`/subscribers/${s}/topics`)).json,
    values: (await a.get(`/subscribers/${s}/field-values`)).json,
    list: (await a.get('/subscribers')).json,
    fields: (await a.get('/fields?includeArchived=true')).json,
    tags: (await a.get('/tags')).json,
    topicList: (await a.get('/topics')).json,
  };
}

beforeAll(async () => {
  env = await startSubscriberStack();
  a = await env.account('tenant a');
  b = await env.account('tenant b');
  const field = expectStatus(await a.post('/fields', { label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Red', 'Green'] }), 201);
  const text = expectStatus(await a.post('/fields', { label: 'Note', fieldType: 'TEXT' }), 201);
  const tag = expectStatus(await a.post('/tags', { name: 'VIP' }), 201);
  const topic = expectStatus(await a.post('/topics', { label: 'News' }), 201);
  const subscriber = expectStatus(
    await a.post('/subscribers', {
      email: 'shared@example.org',
      firstName: 'Ann',
      tags: [tag.id],
      fields: [
        { fieldId: field.fieldId, value: { kind: 'SINGLE_OPTION', optionId: field.options[0].id } },
        { fieldId: text.fieldId, value: { kind: 'TEXT', text: 'private' } },
      ],
    }),
    201,
  );
  mine = { subscriber, field, text, tag, topic };
  theirs = {
    field: expectStatus(await b.post('/fields', { label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Blue'] }), 201),
    tag: expectStatus(await b.post('/tags', { name: 'VIP' }), 201), // names are per account
    topic: expectStatus(await b.post('/topics', { label: 'News' }), 201),
    subscriber: expectStatus(await b.post('/subscribers', { email: 'shared@example.org' }), 201), // so are email addresses
  };
}, 60_000);
afterAll(() => env?.stop());

it('the same names and addresses live independently in each account', () => {
  expect(theirs.subscriber.id).not.toBe(mine.subscriber.id);
  expect(theirs.tag.id).not.toBe(mine.tag.id);
  expect(theirs.field.fieldId).not.toBe(mine.field.fieldId);
});

it('another account cannot read the first one\'s data (404 like an unknown id)', async () => {
  const s = mine.subscriber.id;
  for (const path of [`/subscribers/${s}`, `/subscribers/${s}/data`, `/subscribers/${s}/topics`, `/subscribers/${s}/field-values`]) {
    expectError(await b.get(path), 404, 'subscriber_not_found');
  }
  // by email, B finds its own subscriber with that address, never A's
  expect(expectStatus(await b.get('/subscribers/by-email/shared%40example.org'), 200).id).toBe(theirs.subscriber.id);
  for (const path of [`/fields/${mine.field.fieldId}`, `/fields/${mine.field.fieldId}/usage`, `/fields/${mine.field.fieldId}/forms`]) {
    expectError(await b.get(path), 404, 'field_not_found');
  }
  expectError(await b.get(`/tags/${mine.tag.id}`), 404, 'tag_not_found');
  expectError(await b.get(`/topics/${mine.topic.id}`), 404, 'topic_not_found');

  const lists = {
    subscribers: expectStatus(await b.get('/subscribers'), 200).items.map((x: { id: string }) => x.id),
    fields: expectStatus(await b.get('/fields?includeArchived=true'), 200).fields.map((f: { fieldId?: string }) => f.fieldId).filter(Boolean),
    tags: expectStatus(await b.get('/tags'), 200).items.map((t: { id: string }) => t.id),
    // B's own default topic, then B's topic; none of A's
    topics: expectStatus(await b.get('/topics'), 200).items.map((t: { id: string; label: string }) => (t.label === 'Newsletter' ? 'default' : t.id)),
  };
  expect(lists).toEqual({ subscribers: [theirs.subscriber.id], fields: [theirs.field.fieldId], tags: [theirs.tag.id], topics: ['default', theirs.topic.id] });
  const mineDefault = expectStatus(await a.get('/topics'), 200).items.find((t: { isDefault: boolean }) => t.isDefault).id;
  expectError(await b.get(`/topics/${mineDefault}`), 404, 'topic_not_found');
  // counts are per account too
  expect(expectStatus(await b.get(`/tags/${theirs.tag.id}`), 200).subscriberCount).toBe(0);
  expect(expectStatus(await b.get(`/subscribers?search=shared`), 200).totalItems).toBe(1);
});

it('another account cannot change the first one\'s data; nothing of A changes', async () => {
  const before = await snapshot();
  const s = mine.subscriber.id;
  const notFound: Array<[Promise<unknown>, string]> = [
    [b.delete(`/subscribers/${s}`), 'subscriber_not_found'],
    [b.put(`/subscribers/${s}/data`, { email: 'x@example.org', firstName: null, subscriberStatus: 'BLOCKED', fields: [], tags: [] }), 'subscriber_not_found'],
    [b.put(`/subscribers/${s}/email`, { email: 'x@example.org' }), 'subscriber_not_found'],
    [b.put(`/subscribers/${s}/first-name`, { firstName: 'Mallory' }), 'subscriber_not_found'],
    [b.put(`/subscribers/${s}/status`, { subscriberStatus: 'BLOCKED' }), 'subscriber_not_found'],
    [b.put(`/subscribers/${s}/topics`, { topicIds: [] }), 'subscriber_not_found'],
    [b.post(`/subscribers/${s}/topics/${theirs.topic.id}/opt-out`), 'subscriber_not_found'],
    [b.put(`/subscribers/${s}/field-values/${theirs.field.fieldId}`, { kind: 'SINGLE_OPTION', optionId: mine.field.options[0].id }), 'subscriber_not_found'],
    [b.delete(`/subscribers/${s}/field-values/${mine.text.fieldId}`), 'subscriber_not_found'],
    [b.patch(`/fields/${mine.field.fieldId}`, { label: 'Pwned' }), 'field_not_found'],
    [b.post(`/fields/${mine.field.fieldId}/archive`), 'field_not_found'],
    [b.post(`/fields/${mine.field.fieldId}/restore`), 'field_not_found'],
    [b.delete(`/fields/${mine.field.fieldId}`), 'field_not_found'],
    [b.put(`/tags/${mine.tag.id}`, { name: 'Pwned' }), 'tag_not_found'],
    [b.delete(`/tags/${mine.tag.id}`), 'tag_not_found'],
    [b.patch(`/topics/${mine.topic.id}`, { label: 'Pwned', active: false }), 'topic_not_found'],
    [b.delete(`/topics/${mine.topic.id}`), 'topic_not_found'],
  ];
  for (const [res, errorId] of notFound) expectError((await res) as never, 404, errorId);

  // bulk tagging skips A's subscribers as not found in B's account
  const tagged = expectStatus(await b.post('/subscribers/tags/add', { subscriberIds: [s], tagIds: [theirs.tag.id] }), 200);
  expect(tagged).toEqual({ selectedSubscriberCount: 1, taggedSubscriberCount: 0, alreadyTaggedSubscriberCount: 0, skippedSubscriberCount: 1, skippedByStatus: { NOT_FOUND: 1 } });
  const untagged = expectStatus(await b.post('/subscribers/tags/remove', { subscriberIds: [s], tagIds: [theirs.tag.id] }), 200);
  expect(untagged).toMatchObject({ updatedSubscriberCount: 0, skippedByStatus: { NOT_FOUND: 1 } });
  // sync matches by email within B's own account
  const synced = expectStatus(await b.post('/subscribers/sync', { subscribers: [{ email: 'shared@example.org', firstName: 'Mallory' }] }), 200);
  expect(synced.results[0]).toMatchObject({ subscriberId: theirs.subscriber.id, outcome: 'UPDATED' });

  expect(await snapshot()).toEqual(before);
});

it('another account cannot use the first one\'s ids in its own requests (404 like unknown ids)', async () => {
  const before = await snapshot();
  const own = theirs.subscriber.id;
  const cases: Array<[Promise<unknown>, string]> = [
    [b.post('/subscribers', { email: 'b1@example.org', tags: [mine.tag.id] }), 'tag_not_found'],
    [b.post('/subscribers', { email: 'b1@example.org', topicIds: [mine.topic.id] }), 'topic_not_found'],
    [b.post('/subscribers', { email: 'b1@example.org', fields: [{ fieldId: mine.text.fieldId, value: { kind: 'TEXT', text: 'x' } }] }), 'field_not_found'],
    [b.post('/subscribers', { email: 'b1@example.org', fields: [{ fieldId: theirs.field.fieldId, value: { kind: 'SINGLE_OPTION', optionId: mine.field.options[0].id } }] }), 'option_not_found'],
    [b.put(`/subscribers/${own}/data`, { email: 'shared@example.org', firstName: null, subscriberStatus: 'ACTIVE', fields: [], tags: [mine.tag.id] }), 'tag_not_found'],
    [b.put(`/subscribers/${own}/topics`, { topicIds: [mine.topic.id] }), 'topic_not_found'],
    [b.post(`/subscribers/${own}/topics/${mine.topic.id}/opt-out`), 'topic_not_found'],
    [b.put(`/subscribers/${own}/field-values/${mine.text.fieldId}`, { kind: 'TEXT', text: 'x' }), 'field_not_found'],
    [b.put(`/subscribers/${own}/field-values/${theirs.field.fieldId}`, { kind: 'SINGLE_OPTION', optionId: mine.field.options[1].id }), 'option_not_found'],
    [b.delete(`/subscribers/${own}/field-values/${mine.text.fieldId}`), 'field_not_found'],
    [b.patch(`/fields/${theirs.field.fieldId}`, { options: [{ id: mine.field.options[0].id, label: 'Stolen' }] }), 'option_not_found'],
    [b.post('/subscribers/tags/add', { subscriberIds: [own], tagIds: [mine.tag.id] }), 'tag_not_found'],
    [b.post('/subscribers/tags/remove', { subscriberIds: [own], tagIds: [mine.tag.id] }), 'tag_not_found'],
    [b.get(`/subscribers?tagId=${mine.tag.id}`), 'tag_not_found'],
    [b.get(`/subscribers?topicId=${mine.topic.id}`), 'topic_not_found'],
  ];
  for (const [res, errorId] of cases) expectError((await res) as never, 404, errorId);
  const row = expectStatus(await b.post('/subscribers/sync', { subscribers: [{ email: 'b2@example.org', tags: [mine.tag.id] }] }), 200);
  expect(row.results[0]).toMatchObject({ outcome: 'FAILED', errorId: 'tag_not_found', subscriberId: null });
  // B's own data is as it was, and A's too
  expect(expectStatus(await b.get(`/subscribers/${own}/data`), 200)).toMatchObject({ tags: [], fields: [] });
  expect(expectStatus(await b.get('/subscribers'), 200).totalItems).toBe(1);
  expect(await snapshot()).toEqual(before);
});
