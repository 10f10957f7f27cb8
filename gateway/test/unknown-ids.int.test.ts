import { expectError } from './support/harness';
import { startWiredStack, type WiredStack } from './support/segment-wired-stack';
import { expectStatus, UNKNOWN_ID, type Api } from './support/subscriber-stack';

// Every id a request names must be the caller's: an id that does not exist in the account (unknown,
// or a real id of another account) is a 404 `<thing>_not_found` (inside a segment expression: the
// 400 segment_*_not_found of the catalogue; a referenced segment 404 segment_not_found), never a 200
// with an empty result and never the other account's object. Gateway -> subscriber and segment
// services, wired to each other as in a deployment.

let env: WiredStack;
let a: Api; // the caller
let theirs: Awaited<ReturnType<typeof populate>>; // real objects of another account
let mine: Awaited<ReturnType<typeof populate>>;

async function populate(api: Api, tag: string) {
  const topic = expectStatus(await api.post('/topics', { label: `Topic ${tag}` }), 201);
  const inactive = expectStatus(await api.post('/topics', { label: `Closed ${tag}` }), 201);
  expectStatus(await api.patch(`/topics/${inactive.id}`, { active: false }), 200);
  const t = expectStatus(await api.post('/tags', { name: `Tag ${tag}` }), 201);
  const field = expectStatus(await api.post('/fields', { label: `Plan ${tag}`, fieldType: 'SINGLE_CHOICE', options: ['Free', 'Pro'] }), 201);
  const source = expectStatus(await api.post('/purchase-sources', { name: `Shop ${tag}`, timeZone: 'UTC' }), 201);
  const subscriber = expectStatus(await api.post('/subscribers', { email: `ann@${tag}.example.org`, firstName: 'Ann', topicIds: [topic.id], tags: [t.id] }), 201);
  const segment = expectStatus(await api.post('/segments', { name: 'Anns', expression: groups(firstNameStartsWith('A')) }), 201);
  return { topic, inactive, tag: t, field, option: field.options[0].id as string, source, subscriber, segment };
}

const groups = (...conditions: unknown[]) => ({ conditionGroups: [{ conditions }] });
const firstNameStartsWith = (text: string) => ({ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text } });
const options = (subjectType: 'TAGS' | 'TOPICS', id: string) => ({ subjectType, fieldRef: null, operator: 'OPTION_CONTAINS_ANY', operand: { kind: 'OPTIONS', optionIds: [id] } });
const fieldEmpty = (fieldId: string) => ({ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId }, operator: 'IS_EMPTY', operand: { kind: 'NONE' } });
const optionOf = (fieldId: string, id: string) => ({ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId }, operator: 'OPTION_IS_ANY_OF', operand: { kind: 'OPTIONS', optionIds: [id] } });
const containedIn = (segmentId: string) => ({ subjectType: 'SEGMENT', fieldRef: null, operator: 'CONTAINED_IN', operand: { kind: 'SEGMENT', segmentId } });
const purchased = (sourceId: string) => ({ subjectType: 'PURCHASES', fieldRef: null, operator: 'PURCHASED', operand: { kind: 'PURCHASE', purchase: { sourceId, scopeKind: 'ALL_PRODUCTS' } } });

beforeAll(async () => {
  env = await startWiredStack();
  a = await env.account('caller');
  const b = await env.account('other');
  mine = await populate(a, 'mine');
  theirs = await populate(b, 'theirs');
}, 120_000);
afterAll(() => env?.stop());

describe('a preview topicId must be an active topic of the account', () => {
  it('saved segment preview: unknown, another account\'s, inactive -> 404 topic_not_found; own active topic -> 200', async () => {
    const path = `/segments/${mine.segment.id}/preview`;
    for (const topicId of [UNKNOWN_ID, theirs.topic.id, mine.inactive.id]) expectError(await a.get(`${path}?topicId=${topicId}`), 404, 'topic_not_found');
    expect(expectStatus(await a.get(`${path}?topicId=${mine.topic.id}`), 200)).toMatchObject({ matchingCount: 1, reachableCount: 1 });
  });

  it('unsaved expression preview: the same', async () => {
    const expression = groups(firstNameStartsWith('A'));
    for (const topicId of [UNKNOWN_ID, theirs.topic.id, mine.inactive.id]) expectError(await a.post('/segments/preview', { expression, topicId }), 404, 'topic_not_found');
    expect(expectStatus(await a.post('/segments/preview', { expression, topicId: mine.topic.id }), 200)).toMatchObject({ matchingCount: 1, reachableCount: 1 });
  });
});

describe('ids inside a segment expression', () => {
  const cases = (): [string, unknown, number, string][] => [
    ['tag', options('TAGS', theirs.tag.id), 400, 'segment_tag_not_found'],
    ['topic', options('TOPICS', theirs.topic.id), 400, 'segment_topic_not_found'],
    ['field', fieldEmpty(theirs.field.fieldId), 400, 'segment_field_not_found'],
    ['option', optionOf(mine.field.fieldId, theirs.option), 400, 'segment_option_not_found'],
    ['purchase source', purchased(theirs.source.id), 400, 'segment_purchase_source_not_found'],
    ['segment', containedIn(theirs.segment.id), 404, 'segment_not_found'],
  ];
  it('another account\'s ids are unknown on create, update and preview', async () => {
    for (const [, condition, status, errorId] of cases()) {
      const expression = groups(condition);
      expectError(await a.post('/segments', { name: 'Stolen', expression }), status, errorId);
      expectError(await a.put(`/segments/${mine.segment.id}`, { name: 'Anns', expression }), status, errorId);
      expectError(await a.post('/segments/preview', { expression }), status, errorId);
    }
    // the same conditions with the caller's own ids are accepted
    for (const condition of [options('TAGS', mine.tag.id), options('TOPICS', mine.topic.id), fieldEmpty(mine.field.fieldId), optionOf(mine.field.fieldId, mine.option), purchased(mine.source.id)]) {
      expectStatus(await a.post('/segments/preview', { expression: groups(condition) }), 200);
    }
  });
});

describe('ids in paths, filters and bodies', () => {
  it('subscriber list filters: tagId, topicId, segmentId of another account (or unknown) -> 404', async () => {
    for (const id of [UNKNOWN_ID, theirs.tag.id]) expectError(await a.get(`/subscribers?tagId=${id}`), 404, 'tag_not_found');
    for (const id of [UNKNOWN_ID, theirs.topic.id]) expectError(await a.get(`/subscribers?topicId=${id}`), 404, 'topic_not_found');
    for (const id of [UNKNOWN_ID, theirs.segment.id]) {
      expectError(await a.get(`/subscribers?segmentId=${id}`), 404, 'segment_not_found');
      expectError(await a.get(`/segments/${id}/subscribers`), 404, 'segment_not_found');
    }
    // the caller's own filters answer its own subscriber
    expect(expectStatus(await a.get(`/subscribers?tagId=${mine.tag.id}&topicId=${mine.topic.id}`), 200).items.map((s: { id: string }) => s.id)).toEqual([mine.subscriber.id]);
  });

  it('bulk tagging, subscriber topics and create: another account\'s tag / topic -> 404, nothing changes', async () => {
    const s = mine.subscriber.id;
    for (const op of ['add', 'remove']) expectError(await a.post(`/subscribers/tags/${op}`, { subscriberIds: [s], tagIds: [theirs.tag.id] }), 404, 'tag_not_found');
    expectError(await a.put(`/subscribers/${s}/topics`, { topicIds: [theirs.topic.id] }), 404, 'topic_not_found');
    expectError(await a.post(`/subscribers/${s}/topics/${theirs.topic.id}/opt-out`), 404, 'topic_not_found');
    expectError(await a.post('/subscribers', { email: 'new@mine.example.org', tags: [theirs.tag.id] }), 404, 'tag_not_found');
    expectError(await a.post('/subscribers', { email: 'new@mine.example.org', topicIds: [theirs.topic.id] }), 404, 'topic_not_found');
    expectError(await a.put(`/subscribers/${s}/field-values/${theirs.field.fieldId}`, { kind: 'SINGLE_OPTION', optionId: theirs.option }), 404, 'field_not_found');
    expectError(await a.put(`/subscribers/${s}/field-values/${mine.field.fieldId}`, { kind: 'SINGLE_OPTION', optionId: theirs.option }), 404, 'option_not_found');
    expectError(await a.put(`/subscribers/${s}/data`, { email: 'ann@mine.example.org', firstName: 'Ann', subscriberStatus: 'ACTIVE', fields: [], tags: [theirs.tag.id] }), 404, 'tag_not_found');
    expect(expectStatus(await a.get(`/subscribers/${s}/data`), 200)).toMatchObject({ tags: [mine.tag.id], fields: [] });
    expect(expectStatus(await a.get('/subscribers?pageSize=10'), 200).totalItems).toBe(1);
  });

  it('purchase sources of another account -> 404 purchase_source_not_found', async () => {
    const orders = [{ orderId: 'o-1', email: 'ann@mine.example.org', orderedAt: new Date().toISOString(), currency: 'EUR', amount: 10, items: [{ productId: 'p' }] }];
    expectError(await a.post(`/purchase-sources/${theirs.source.id}/orders`, { orders }), 404, 'purchase_source_not_found');
    expectError(await a.post(`/purchase-sources/${theirs.source.id}/baseline`, { capturedOrdersFromUtc: '2020-01-01T00:00:00Z', complete: true }), 404, 'purchase_source_not_found');
  });
});
