import { schemaErrors } from '../src/openapi/validator';
import { expectError } from './support/harness';
import { expectStatus, INSTANT_PATTERN, startSubscriberStack, UNKNOWN_ID, UUID_PATTERN, type Api, type SubscriberStack } from './support/subscriber-stack';

// Segments through HTTP: real gateway -> real segment service (which reads the real subscriber
// service's catalog and projects contacts from NATS).

let env: SubscriberStack;
beforeAll(async () => {
  env = await startSubscriberStack({ peers: ['segment', 'rss', 'messaging'] }); // rss and messaging: asked before a segment is deleted
}, 90_000);
afterAll(() => env?.stop());

const id = expect.stringMatching(UUID_PATTERN);
const instant = expect.stringMatching(INSTANT_PATTERN);

const firstNameStartsWith = (text: string) => ({
  subjectType: 'FIELD',
  fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' },
  operator: 'TEXT_STARTS_WITH',
  operand: { kind: 'TEXT', text },
});
const containedIn = (segmentId: string) => ({ subjectType: 'SEGMENT', fieldRef: null, operator: 'CONTAINED_IN', operand: { kind: 'SEGMENT', segmentId } });
const expr = (...conditions: unknown[]) => ({ conditionGroups: [{ conditions }] });

/** Polls until `done` holds for the JSON of a 200 answer (the contact projection is asynchronous); bounded. */
async function eventually(a: Api, path: string, done: (body: any) => boolean, timeoutMs = 15_000): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const until = Date.now() + timeoutMs;
  for (;;) {
    const body = expectStatus(await a.get(path), 200);
    if (done(body) || Date.now() > until) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function createSegment(a: Api, name: string, expression: unknown) {
  const res = await a.post('/segments', { name, expression });
  const segment = expectStatus(res, 201);
  expect(res.headers.get('location')).toBe(`/segments/${segment.id}`);
  expect(schemaErrors('Segment', segment)).toEqual([]);
  return segment;
}

describe('segments', () => {
  it('create, read, list, update; count and previews follow the contact projection', async () => {
    const a = await env.account('segments');
    expect(expectStatus(await a.get('/segments'), 200)).toEqual({ items: [] });
    const topic = expectStatus(await a.post('/topics', { label: 'News', enrollExistingSubscribers: false }), 201);
    const ann = expectStatus(await a.post('/subscribers', { email: 'ann@example.org', firstName: 'Ann', topicIds: [topic.id] }), 201);
    const anna = expectStatus(await a.post('/subscribers', { email: 'anna@example.org', firstName: 'Anna', subscriberStatus: 'UNSUBSCRIBED', topicIds: [] }), 201);
    expectStatus(await a.post('/subscribers', { email: 'bob@example.org', firstName: 'Bob' }), 201);
    expectStatus(await a.post('/subscribers', { email: 'nobody@example.org' }), 201);

    const expression = expr(firstNameStartsWith('an'));
    const seg = await createSegment(a, 'An*', expression);
    expect(seg).toEqual({ id, name: 'An*', expression, createdAt: instant, updatedAt: instant });
    expect(expectStatus(await a.get(`/segments/${seg.id.toUpperCase()}`), 200)).toEqual(seg);
    const list = expectStatus(await a.get('/segments'), 200);
    expect(schemaErrors('SegmentList', list)).toEqual([]);
    expect(list).toEqual({ items: [seg] });

    // Ann and Anna match (ignoring case); Bob does not; the contact without first name is UNKNOWN.
    const count = await eventually(a, `/segments/${seg.id}/count`, (b) => b.subscriberCount === 2);
    expect(count).toEqual({ subscriberCount: 2 });
    expect(schemaErrors('SegmentCount', count)).toEqual([]);
    const preview = await eventually(a, `/segments/${seg.id}/preview`, (b) => b.matchingCount === 2 && b.unknownCount === 1);
    expect(schemaErrors('SegmentPreview', preview)).toEqual([]);
    expect(preview).toEqual({
      matchingCount: 2,
      unknownCount: 1,
      reachableCount: 1, // Anna is UNSUBSCRIBED
      contacts: [
        { id: ann.id, email: 'ann@example.org', firstName: 'Ann', subscriberStatus: 'ACTIVE' },
        { id: anna.id, email: 'anna@example.org', firstName: 'Anna', subscriberStatus: 'UNSUBSCRIBED' },
      ],
      captureScopes: [],
    });
    const byTopic = expectStatus(await a.get(`/segments/${seg.id}/preview?topicId=${topic.id}`), 200);
    expect(byTopic).toMatchObject({ matchingCount: 2, reachableCount: 1 });
    // a topicId that is not an active topic of the account is refused, not counted as reaching nobody
    expectError(await a.get(`/segments/${seg.id}/preview?topicId=${UNKNOWN_ID}`), 404, 'topic_not_found');

    // Unsaved preview: same semantics, nothing saved.
    const unsaved = expectStatus(await a.post('/segments/preview', { expression: expr(firstNameStartsWith('BO')) }), 200);
    expect(schemaErrors('SegmentPreview', unsaved)).toEqual([]);
    expect(unsaved).toMatchObject({ matchingCount: 1, unknownCount: 1, reachableCount: 1, captureScopes: [] });
    expect(unsaved.contacts.map((c: { email: string }) => c.email)).toEqual(['bob@example.org']);
    expect(expectStatus(await a.post('/segments/preview', { expression, topicId: topic.id }), 200)).toMatchObject({ matchingCount: 2, reachableCount: 1 });
    expect(expectStatus(await a.get('/segments'), 200).items).toHaveLength(1);

    // PUT replaces name and expression
    const tag = expectStatus(await a.post('/tags', { name: 'VIP' }), 201);
    const tagExpression = expr({ subjectType: 'TAGS', fieldRef: null, operator: 'OPTION_CONTAINS_ANY', operand: { kind: 'OPTIONS', optionIds: [tag.id] } });
    const updated = expectStatus(await a.put(`/segments/${seg.id}`, { name: 'VIPs', expression: tagExpression }), 200);
    expect(updated).toEqual({ ...seg, name: 'VIPs', expression: tagExpression, updatedAt: instant });
    expect(expectStatus(await a.get(`/segments/${seg.id}/count`), 200)).toEqual({ subscriberCount: 0 });

    expect((await a.delete(`/segments/${seg.id}`)).status).toBe(204);
    expectError(await a.get(`/segments/${seg.id}`), 404, 'segment_not_found');
  }, 60_000);

  it('validation errors over HTTP carry the segment errorIds', async () => {
    const a = await env.account('segment validation');
    const post = (expression: unknown) => a.post('/segments', { name: 'x', expression });

    // answered by the gateway (schema)
    expectError(await a.post('/segments', { name: 'x' }), 400, 'validation_failed');
    expectError(await a.post('/segments', { name: '', expression: expr(firstNameStartsWith('a')) }), 400, 'validation_failed');
    expectError(await post({ conditionGroups: [] }), 400, 'segment_expression_empty');
    expectError(await post({ conditionGroups: [{ conditions: [] }] }), 400, 'segment_expression_empty');
    expectError(await post({ conditionGroups: Array.from({ length: 21 }, () => ({ conditions: [firstNameStartsWith('a')] })) }), 400, 'segment_too_many_groups');
    expectError(await post(expr({ ...firstNameStartsWith('a'), operator: 'TEXT_LIKE' })), 400, 'validation_failed');
    expectError(await post(expr(containedIn('not-a-uuid'))), 400, 'invalid_uuid');

    // answered by the segment service
    expectError(await post(expr({ ...firstNameStartsWith('a'), fieldRef: null })), 400, 'segment_field_ref_not_allowed');
    expectError(await post(expr({ ...firstNameStartsWith('a'), operand: { kind: 'NUMBER', number: 3 } })), 400, 'segment_operand_mismatch');
    expectError(await post(expr({ ...firstNameStartsWith('a'), operator: 'NUMBER_GREATER_THAN', operand: { kind: 'NUMBER', number: 3 } })), 400, 'segment_operator_not_allowed');
    expectError(await post(expr(firstNameStartsWith('   '))), 400, 'segment_operand_invalid');
    expectError(await post(expr({ subjectType: 'TAGS', fieldRef: null, operator: 'OPTION_CONTAINS_ANY', operand: { kind: 'OPTIONS', optionIds: [UNKNOWN_ID] } })), 400, 'segment_tag_not_found');
    expectError(await post(expr({ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId: UNKNOWN_ID }, operator: 'IS_EMPTY', operand: { kind: 'NONE' } })), 400, 'segment_field_not_found');
    const res = await post(expr({ ...firstNameStartsWith('a'), fieldRef: null }));
    expect(res.json.details[0]).toEqual({ path: 'expression.conditionGroups[0].conditions[0].fieldRef', problem: expect.any(String) });
    // the same checks on an unsaved preview
    expectError(await a.post('/segments/preview', { expression: expr({ ...firstNameStartsWith('a'), fieldRef: null }) }), 400, 'segment_field_ref_not_allowed');
    // a reference to a segment the account does not have
    expectError(await post(expr(containedIn(UNKNOWN_ID))), 404, 'segment_not_found');

    // names are unique per account
    await createSegment(a, 'Taken', expr(firstNameStartsWith('a')));
    expectError(await a.post('/segments', { name: 'Taken', expression: expr(firstNameStartsWith('b')) }), 409, 'segment_name_taken');
  }, 30_000);

  it('filterGroups (legacy) is refused with segment_legacy_filter_groups; other unknown members with unknown_property', async () => {
    const a = await env.account('segment legacy');
    const legacy = await a.post('/segments', { name: 'legacy', expression: { filterGroups: [{ filters: [] }] } });
    expectError(legacy, 400, 'segment_legacy_filter_groups');
    expect(legacy.json.details).toContainEqual({ path: 'body.expression', problem: expect.any(String) });
    expectError(await a.post('/segments', { name: 'legacy', expression: { ...expr(firstNameStartsWith('a')), filterGroups: [] } }), 400, 'segment_legacy_filter_groups');
    expectError(await a.post('/segments/preview', { expression: { filterGroups: [] } }), 400, 'segment_legacy_filter_groups');

    expectError(await a.post('/segments', { name: 'x', expression: expr(firstNameStartsWith('a')), colour: 'red' }), 400, 'unknown_property');
    expectError(await a.post('/segments', { name: 'x', expression: { ...expr(firstNameStartsWith('a')), mode: 'AND' } }), 400, 'unknown_property');
    const inner = await a.post('/segments', { name: 'x', expression: expr({ ...firstNameStartsWith('a'), negate: true }) });
    expectError(inner, 400, 'unknown_property');
    expect(inner.json.details).toContainEqual({ path: 'body.expression.conditionGroups[0].conditions[0].negate', problem: 'is not a known property' });
    expectError(await a.post('/segments/preview', { expression: expr(firstNameStartsWith('a')), limit: 3 }), 400, 'unknown_property');
    expect(expectStatus(await a.get('/segments'), 200)).toEqual({ items: [] });
  });

  it('references: 409 segment_in_use, 400 segment_cycle', async () => {
    const a = await env.account('segment references');
    const base = await createSegment(a, 'Base', expr(firstNameStartsWith('a')));
    const user = await createSegment(a, 'User', expr(containedIn(base.id)));
    expect(user.expression).toEqual(expr(containedIn(base.id)));

    expectError(await a.put(`/segments/${base.id}`, { name: 'Base', expression: expr(containedIn(user.id)) }), 400, 'segment_cycle');
    const inUse = await a.delete(`/segments/${base.id}`);
    expectError(inUse, 409, 'segment_in_use');
    expect(inUse.json.details).toHaveLength(1);
    expect((await a.delete(`/segments/${user.id}`)).status).toBe(204);
    expect((await a.delete(`/segments/${base.id}`)).status).toBe(204);
    expectError(await a.delete(`/segments/${base.id}`), 404, 'segment_not_found');
  }, 30_000);

  it('another account\'s segment is unknown (404); malformed ids answer 400 invalid_uuid', async () => {
    const owner = await env.account('segment owner');
    const other = await env.account('segment other');
    const seg = await createSegment(owner, 'Mine', expr(firstNameStartsWith('a')));

    expectError(await other.get(`/segments/${seg.id}`), 404, 'segment_not_found');
    expectError(await other.put(`/segments/${seg.id}`, { name: 'Stolen', expression: expr(firstNameStartsWith('b')) }), 404, 'segment_not_found');
    expectError(await other.delete(`/segments/${seg.id}`), 404, 'segment_not_found');
    expectError(await other.get(`/segments/${seg.id}/count`), 404, 'segment_not_found');
    expectError(await other.get(`/segments/${seg.id}/preview`), 404, 'segment_not_found');
    expectError(await other.post('/segments', { name: 'Ref', expression: expr(containedIn(seg.id)) }), 404, 'segment_not_found');
    expect(expectStatus(await other.get('/segments'), 200)).toEqual({ items: [] });
    expect(expectStatus(await owner.get(`/segments/${seg.id}`), 200)).toEqual(seg);

    expectError(await owner.get('/segments/not-a-uuid'), 400, 'invalid_uuid');
    expectError(await owner.put('/segments/not-a-uuid', { name: 'x', expression: expr(firstNameStartsWith('a')) }), 400, 'invalid_uuid');
    expectError(await owner.delete('/segments/not-a-uuid'), 400, 'invalid_uuid');
    expectError(await owner.get('/segments/not-a-uuid/count'), 400, 'invalid_uuid');
    expectError(await owner.get('/segments/not-a-uuid/preview'), 400, 'invalid_uuid');
    expectError(await owner.get(`/segments/${seg.id}/preview?topicId=nope`), 400, 'invalid_uuid');
    expectError(await owner.post('/segments/preview', { expression: expr(firstNameStartsWith('a')), topicId: 'nope' }), 400, 'invalid_uuid');
    expectError(await owner.get(`/segments/${UNKNOWN_ID}`), 404, 'segment_not_found');
  }, 30_000);
});
