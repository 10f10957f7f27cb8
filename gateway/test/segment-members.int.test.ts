import { schemaErrors } from '../src/openapi/validator';
import { expectError } from './support/harness';
import { startWiredStack, type WiredStack } from './support/segment-wired-stack';
import { expectStatus, UNKNOWN_ID, USAGE_SOURCES, type Api } from './support/subscriber-stack';

// Subscribers by segment (GET /subscribers?segmentId=, GET /segments/{id}/subscribers) and the
// segment service's field usages, end to end: gateway -> subscriber service -> segment service (and
// back for the catalog), real processes wired to each other as in a deployment.

let env: WiredStack;
beforeAll(async () => {
  env = await startWiredStack({}, USAGE_SOURCES);
}, 90_000);
afterAll(() => env?.stop());

const STATUSES = ['UNCONFIRMED', 'ACTIVE', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED', 'BLOCKED'] as const;
const counts = (c: Partial<Record<(typeof STATUSES)[number], number>>) => Object.fromEntries(STATUSES.map((s) => [s, c[s] ?? 0]));

const firstNameStartsWith = (text: string) => ({ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, operator: 'TEXT_STARTS_WITH', operand: { kind: 'TEXT', text } });
const containedIn = (segmentId: string) => ({ subjectType: 'SEGMENT', fieldRef: null, operator: 'CONTAINED_IN', operand: { kind: 'SEGMENT', segmentId } });
const scoreAbove = (fieldId: string, n: number) => ({ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId }, operator: 'NUMBER_GREATER_THAN', operand: { kind: 'NUMBER', number: n } });
const groups = (...gs: unknown[][]) => ({ conditionGroups: gs.map((conditions) => ({ conditions })) });

async function createSegment(a: Api, name: string, expression: unknown): Promise<{ id: string; name: string }> {
  return expectStatus(await a.post('/segments', { name, expression }), 201);
}

async function addSubscriber(a: Api, body: Record<string, unknown>): Promise<{ id: string }> {
  return expectStatus(await a.post('/subscribers', body), 201);
}

/** Both routes; they must answer the same page. */
async function bySegment(a: Api, segmentId: string, query = ''): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const body = expectStatus(await a.get(`/subscribers?segmentId=${segmentId}${query ? `&${query}` : ''}`), 200);
  expect(schemaErrors('PaginatedSubscribersDto', body)).toEqual([]);
  return body;
}

describe('subscribers by segment', () => {
  let a: Api;
  let seg: { id: string };
  let tag: { id: string };
  const ids: Record<string, string> = {};
  /** The plain list's overviews of the members, in its order (registeredAt, then id). */
  let members: Array<{ id: string }>;

  beforeAll(async () => {
    a = await env.account('by-segment');
    tag = expectStatus(await a.post('/tags', { name: 'vip' }), 201);
    const people: Array<[string, Record<string, unknown>]> = [
      ['ann', { firstName: 'Ann', tags: [tag.id] }],
      ['bob', { firstName: 'Bob', tags: [tag.id] }], // FALSE
      ['anna', { firstName: 'Anna', subscriberStatus: 'UNSUBSCRIBED' }],
      ['nobody', {}], // no first name: UNKNOWN, not a member
      ['andy', { firstName: 'Andy', tags: [tag.id] }],
      ['alice', { firstName: 'alice', subscriberStatus: 'BLOCKED' }],
      ['amy', { firstName: 'Amy', subscriberStatus: 'UNCONFIRMED' }],
    ];
    for (const [name, extra] of people) ids[name] = (await addSubscriber(a, { email: `${name}@example.org`, ...extra })).id;
    // written just before: the answers below must already include every subscriber (read-after-write)
    seg = await createSegment(a, 'A*', groups([firstNameStartsWith('a')]));
    const all = expectStatus(await a.get('/subscribers?pageSize=1000'), 200).items as Array<{ id: string }>;
    const memberIds = new Set(['ann', 'anna', 'andy', 'alice', 'amy'].map((n) => ids[n]));
    members = all.filter((s) => memberIds.has(s.id));
  });

  it('members are the contacts for which the expression is TRUE (not UNKNOWN), in list order, with statusCounts', async () => {
    const page = await bySegment(a, seg.id);
    expect(page).toEqual({
      items: members,
      pageNumber: 1,
      pageSize: 50,
      totalItems: 5,
      totalPages: 1,
      statusCounts: counts({ ACTIVE: 2, UNSUBSCRIBED: 1, BLOCKED: 1, UNCONFIRMED: 1 }),
    });
    expect(page.items.map((s: { id: string }) => s.id)).not.toContain(ids.nobody);
    expect(page.items.map((s: { id: string }) => s.id)).not.toContain(ids.bob);
    // the same answer on the segment's own route (ids in any case)
    const viaSegment = expectStatus(await a.get(`/segments/${seg.id.toUpperCase()}/subscribers`), 200);
    expect(schemaErrors('PaginatedSubscribersDto', viaSegment)).toEqual([]);
    expect(viaSegment).toEqual(page);
    // the count agrees
    expect(expectStatus(await a.get(`/segments/${seg.id}/count`), 200)).toEqual({ subscriberCount: 5 });
  });

  it('pages in (registeredAt, id) order', async () => {
    const pages = [];
    for (const n of [1, 2, 3]) {
      const p = expectStatus(await a.get(`/segments/${seg.id}/subscribers?pageNumber=${n}&pageSize=2`), 200);
      expect(p).toMatchObject({ pageNumber: n, pageSize: 2, totalItems: 5, totalPages: 3 });
      pages.push(...p.items);
    }
    expect(pages).toEqual(members);
    // deep pages are read from the end: same result
    expect((await bySegment(a, seg.id, 'pageNumber=2&pageSize=3')).items).toEqual(members.slice(3));
    const past = await bySegment(a, seg.id, 'pageNumber=4&pageSize=2');
    expect(past).toMatchObject({ items: [], totalItems: 5, totalPages: 3 });
    expectError(await a.get(`/segments/${seg.id}/subscribers?pageSize=1001`), 400, 'validation_failed');
    expectError(await a.get(`/segments/${seg.id}/subscribers?status=ACTIVE`), 400, 'unknown_property');
  });

  it('combines with status, tagId, topicId and search; statusCounts ignore only status', async () => {
    const active = await bySegment(a, seg.id, 'status=ACTIVE');
    expect(active.items.map((s: { id: string }) => s.id)).toEqual([ids.ann, ids.andy]);
    expect(active).toMatchObject({ totalItems: 2, totalPages: 1, statusCounts: counts({ ACTIVE: 2, UNSUBSCRIBED: 1, BLOCKED: 1, UNCONFIRMED: 1 }) });

    const tagged = await bySegment(a, seg.id, `tagId=${tag.id}`);
    expect(tagged.items.map((s: { id: string }) => s.id)).toEqual([ids.ann, ids.andy]); // bob has the tag but is no member
    expect(tagged).toMatchObject({ totalItems: 2, statusCounts: counts({ ACTIVE: 2 }) });

    const ann = await bySegment(a, seg.id, 'search=ANN');
    expect(ann.items.map((s: { id: string }) => s.id)).toEqual([ids.ann, ids.anna]);
    expect(ann).toMatchObject({ totalItems: 2, statusCounts: counts({ ACTIVE: 1, UNSUBSCRIBED: 1 }) });
    const byEmail = await bySegment(a, seg.id, `search=${encodeURIComponent('alice@')}`);
    expect(byEmail.items.map((s: { id: string }) => s.id)).toEqual([ids.alice]);
    expect((await bySegment(a, seg.id, 'search=a.')).totalItems).toBe(0); // the prefix is literal text, not a pattern

    const blockedVip = await bySegment(a, seg.id, `status=BLOCKED&tagId=${tag.id}`);
    expect(blockedVip).toMatchObject({ items: [], totalItems: 0, totalPages: 0, statusCounts: counts({ ACTIVE: 2 }) });

    const topic = expectStatus(await a.post('/topics', { label: 'News', enrollExistingSubscribers: false }), 201);
    expect(await bySegment(a, seg.id, `topicId=${topic.id}`)).toMatchObject({ items: [], totalItems: 0 });

    expectError(await a.get(`/subscribers?segmentId=${seg.id}&tagId=${UNKNOWN_ID}`), 404, 'tag_not_found');
    expectError(await a.get(`/subscribers?segmentId=${seg.id}&topicId=${UNKNOWN_ID}`), 404, 'topic_not_found');
  });

  it('reflects writes acknowledged before the request (read-after-write)', async () => {
    const aaron = await addSubscriber(a, { email: 'aaron@example.org', firstName: 'Aaron' });
    const withAaron = await bySegment(a, seg.id);
    expect(withAaron.totalItems).toBe(6);
    expect(withAaron.items.map((s: { id: string }) => s.id)).toContain(aaron.id);

    expectStatus(await a.put(`/subscribers/${aaron.id}/first-name`, { firstName: 'Zed' }), 200);
    expect((await bySegment(a, seg.id)).items.map((s: { id: string }) => s.id)).not.toContain(aaron.id);
    expectStatus(await a.put(`/subscribers/${aaron.id}/first-name`, { firstName: 'Abe' }), 200);
    expectStatus(await a.put(`/subscribers/${aaron.id}/status`, { subscriberStatus: 'BLOCKED' }), 200);
    const blocked = await bySegment(a, seg.id, 'status=BLOCKED');
    expect(blocked.items).toEqual([expect.objectContaining({ id: ids.alice }), expect.objectContaining({ id: aaron.id, firstName: 'Abe', subscriberStatus: 'BLOCKED' })]);

    expect(await a.delete(`/subscribers/${aaron.id}`)).toMatchObject({ status: 204 });
    expect(await bySegment(a, seg.id)).toMatchObject({ items: members, totalItems: 5 });
  });

  it('a segment referencing another takes its three-valued result', async () => {
    const notA = await createSegment(a, 'not A*', groups([{ ...containedIn(seg.id), operator: 'NOT_CONTAINED_IN' }]));
    // bob is FALSE for A* so TRUE here; nobody is UNKNOWN for A* and stays UNKNOWN (not a member)
    expect((await bySegment(a, notA.id)).items.map((s: { id: string }) => s.id)).toEqual([ids.bob]);
  });

  it('unknown, malformed and other accounts\' segments', async () => {
    expectError(await a.get(`/subscribers?segmentId=${UNKNOWN_ID}`), 404, 'segment_not_found');
    expectError(await a.get(`/segments/${UNKNOWN_ID}/subscribers`), 404, 'segment_not_found');
    expectError(await a.get('/subscribers?segmentId=not-a-uuid'), 400, 'invalid_uuid');
    expectError(await a.get('/segments/not-a-uuid/subscribers'), 400, 'invalid_uuid');

    const b = await env.account('other');
    await addSubscriber(b, { email: 'ann@example.org', firstName: 'Ann' });
    expectError(await b.get(`/subscribers?segmentId=${seg.id}`), 404, 'segment_not_found');
    expectError(await b.get(`/segments/${seg.id}/subscribers`), 404, 'segment_not_found');
    // b's own segment of the same expression sees only b's contacts
    const bSeg = await createSegment(b, 'A*', groups([firstNameStartsWith('a')]));
    const page = await bySegment(b, bSeg.id);
    expect(page).toMatchObject({ totalItems: 1, items: [expect.objectContaining({ email: 'ann@example.org' })] });
    expect(page.items[0].id).not.toBe(ids.ann);
  });
});

describe('field usages of segments (FieldUsageService of the segment service)', () => {
  it('lists the segments using a field; deletion is blocked until they are gone', async () => {
    const a = await env.account('field-usage');
    const field = expectStatus(await a.post('/fields', { label: 'Score', fieldType: 'NUMBER' }), 201);
    const other = expectStatus(await a.post('/fields', { label: 'Other', fieldType: 'NUMBER' }), 201);
    // the condition sits in the second group
    const direct = await createSegment(a, 'High scorers', groups([firstNameStartsWith('z')], [firstNameStartsWith('a'), scoreAbove(field.fieldId, 5)]));
    const indirect = await createSegment(a, 'Within high scorers', groups([containedIn(direct.id)]));
    await createSegment(a, 'Unrelated', groups([scoreAbove(other.fieldId, 1)]));

    const report = expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200);
    expect(schemaErrors('FieldUsageReport', report)).toEqual([]);
    const directUsage = {
      category: 'SEGMENT',
      area: 'expression conditionGroups[1].conditions[1]',
      artifactId: direct.id,
      artifactName: 'High scorers',
      status: 'SAVED',
      reason: expect.stringContaining('reads the field'),
      link: `/segments/${direct.id}`,
      permanentDeleteBlocking: true,
    };
    expect(report).toMatchObject({ archiveBlocked: false, permanentDeleteBlocked: true, blockingUsages: [], permanentDeleteBlockingUsages: [directUsage] });
    expect(report.warningUsages).toEqual([
      directUsage,
      expect.objectContaining({ category: 'SEGMENT', artifactId: indirect.id, artifactName: 'Within high scorers', permanentDeleteBlocking: false, reason: expect.stringContaining(direct.id) }),
    ]);
    expect(report.sources).toContainEqual({ service: 'segment', answered: true });

    // reading a field does not block archival (saved conditions keep evaluating); it blocks deletion
    expectStatus(await a.post(`/fields/${field.fieldId}/archive`), 200);
    const refused = await a.delete(`/fields/${field.fieldId}`);
    expectError(refused, 409, 'field_delete_blocked');
    expect(refused.json.details).toEqual([{ path: 'permanentDeleteBlockingUsages[0]', problem: expect.stringContaining('High scorers') }]);

    // the indirect user goes first (segment_in_use), then the direct one; then the field can go
    expectError(await a.delete(`/segments/${direct.id}`), 409, 'segment_in_use');
    expect(await a.delete(`/segments/${indirect.id}`)).toMatchObject({ status: 204 });
    expect(expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200)).toMatchObject({ permanentDeleteBlocked: true, warningUsages: [directUsage] });
    expect(await a.delete(`/segments/${direct.id}`)).toMatchObject({ status: 204 });
    expect(expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200)).toMatchObject({ archiveBlocked: false, permanentDeleteBlocked: false, warningUsages: [], permanentDeleteBlockingUsages: [] });
    expect(await a.delete(`/fields/${field.fieldId}`)).toMatchObject({ status: 204 });

    // another account's segments are not reported
    const b = await env.account('field-usage-other');
    const bField = expectStatus(await b.post('/fields', { label: 'Score', fieldType: 'NUMBER' }), 201);
    expect(expectStatus(await b.get(`/fields/${bField.fieldId}/usage`), 200).warningUsages).toEqual([]);
    expect(expectStatus(await a.get(`/fields/${other.fieldId}/usage`), 200).warningUsages).toEqual([expect.objectContaining({ artifactName: 'Unrelated' })]);
  });
});

describe('segment service down', () => {
  // last: stops the segment service
  it('answers 503 segment_service_unavailable', async () => {
    const a = await env.account('down');
    const seg = await createSegment(a, 'A*', groups([firstNameStartsWith('a')]));
    await env.segment.stop();
    const down = await a.get(`/subscribers?segmentId=${seg.id}`);
    expectError(down, 503, 'segment_service_unavailable');
    // a fixed text naming the capability: no address, port or transport words
    expect(down.json).toEqual({ errorId: 'segment_service_unavailable', message: 'The segment service, which evaluates the segment, is unavailable; retry later.' });
    expectError(await a.get(`/segments/${seg.id}/subscribers`), 503, 'segment_service_unavailable');
    // the plain list does not need it
    expectStatus(await a.get('/subscribers'), 200);
  });
});
