import { schemaErrors } from '../src/openapi/validator';
import { call, expectError, sleep } from './support/harness';
import { expectStatus, INSTANT_PATTERN, startSubscriberStack, UNKNOWN_ID, USAGE_SOURCES, UUID_PATTERN, type Api, type SubscriberStack } from './support/subscriber-stack';

// Subscribers end to end: real gateway -> real subscriber service (gRPC) on one NATS. Every route
// of the API contract's subscriber table, its happy path and its errors, with the JSON an integrator sees.

let env: SubscriberStack;
let a: Api;

beforeAll(async () => {
  env = await startSubscriberStack({ peers: USAGE_SOURCES }); // a topic deleted, a field archived: every usage source is asked
  a = await env.account('subscribers');
}, 60_000);
afterAll(() => env?.stop());

const id = expect.stringMatching(UUID_PATTERN);
const instant = expect.stringMatching(INSTANT_PATTERN);
const EMAIL_VALUE = (email: string) => ({ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, personalizationTagName: 'email', label: 'Email', displayValue: email });

/** An account with a catalogue: one field of every type, two tags, two topics (News is the default). */
async function seeded(name: string) {
  const acc = await env.account(name);
  const field = async (body: Record<string, unknown>) => expectStatus(await acc.post('/fields', body), 201);
  const fields = {
    text: await field({ label: 'Nickname', fieldType: 'TEXT' }),
    long: await field({ label: 'Bio', fieldType: 'LONG_TEXT' }),
    email: await field({ label: 'Work email', fieldType: 'EMAIL' }),
    number: await field({ label: 'Age', fieldType: 'NUMBER' }),
    date: await field({ label: 'Birthday', fieldType: 'DATE' }),
    bool: await field({ label: 'Vegan', fieldType: 'BOOLEAN' }),
    single: await field({ label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Red', 'Green'] }),
    multi: await field({ label: 'Sports', fieldType: 'MULTI_CHOICE', options: ['Run', 'Swim', 'Ride'] }),
  };
  const tags = { vip: expectStatus(await acc.post('/tags', { name: 'VIP' }), 201), beta: expectStatus(await acc.post('/tags', { name: 'Beta' }), 201) };
  // News becomes the default; the account's first default (Newsletter) is then an ordinary topic and
  // is removed so that these tests see exactly News and Deals
  const [newsletter] = expectStatus(await acc.get('/topics'), 200).items;
  const topics = { news: expectStatus(await acc.post('/topics', { label: 'News', isDefault: true }), 201), deals: expectStatus(await acc.post('/topics', { label: 'Deals' }), 201) };
  expect((await acc.delete(`/topics/${newsletter.id}`)).status).toBe(204);
  return { api: acc, fields, tags, topics };
}
type Seeded = Awaited<ReturnType<typeof seeded>>;

/** A value of every kind for the seeded fields (request variants). */
function everyKind(s: Seeded) {
  const f = s.fields;
  return [
    { fieldId: f.text.fieldId, value: { kind: 'TEXT', text: 'Annie' } },
    { fieldId: f.long.fieldId, value: { kind: 'TEXT', text: 'x'.repeat(50_000) } },
    { fieldId: f.email.fieldId, value: { kind: 'EMAIL', text: ' Ann@Work.Example ' } },
    { fieldId: f.number.fieldId, value: { kind: 'NUMBER', number: 41.5 } },
    { fieldId: f.date.fieldId, value: { kind: 'DATE', date: '1983-02-28' } },
    { fieldId: f.bool.fieldId, value: { kind: 'BOOLEAN', booleanValue: true } },
    { fieldId: f.single.fieldId, value: { kind: 'SINGLE_OPTION', optionId: f.single.options[1].id } },
    { fieldId: f.multi.fieldId, value: { kind: 'MULTI_OPTION', optionIds: [f.multi.options[2].id, f.multi.options[0].id] } },
  ];
}
const byFieldId = <T extends { fieldId: string }>(xs: T[]) => [...xs].sort((x, y) => (x.fieldId < y.fieldId ? -1 : 1));

describe('create, read, delete', () => {
  it('/readyz is 200 once NATS and the subscriber service are SERVING', async () => {
    let res = await call(env.gw, 'GET', '/readyz');
    for (let i = 0; i < 50 && res.status !== 200; i++) {
      await sleep(100);
      res = await call(env.gw, 'GET', '/readyz');
    }
    expect([res.status, res.json]).toEqual([200, { status: 'ok' }]);
  });

  it('POST /subscribers -> 201 Subscriber + Location; GET by id and by email return the same record', async () => {
    const res = await a.post('/subscribers', { email: '  Ann@Example.ORG ', firstName: ' Ann ' });
    expect(res.status).toBe(201);
    expect(schemaErrors('Subscriber', res.json)).toEqual([]);
    expect(res.json).toEqual({
      id,
      email: 'ann@example.org',
      firstName: 'Ann',
      subscriberStatus: 'ACTIVE',
      values: [EMAIL_VALUE('ann@example.org'), { fieldRef: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, personalizationTagName: 'first_name', label: 'First name', displayValue: 'Ann' }],
      tags: [],
      registeredAt: instant,
    });
    expect(res.headers.get('location')).toBe(`/subscribers/${res.json.id}`);
    expect(expectStatus(await a.get(res.headers.get('location')!), 200)).toEqual(res.json);
    expect(expectStatus(await a.get(`/subscribers/${res.json.id.toUpperCase()}`), 200)).toEqual(res.json); // any case in paths
    expect(expectStatus(await a.get('/subscribers/by-email/ann%40example.org'), 200)).toEqual(res.json);
    expect(expectStatus(await a.get('/subscribers/by-email/ANN@Example.Org'), 200)).toEqual(res.json);
    expect(expectStatus(await a.get(`/subscribers/by-email/${encodeURIComponent(' ann@example.org ')}`), 200)).toEqual(res.json);
  });

  it('by-email: + and / survive percent-decoding; invalid -> 400 invalid_email; unknown -> 404', async () => {
    const plus = expectStatus(await a.post('/subscribers', { email: 'a+b/c@example.org' }), 201);
    expect(expectStatus(await a.get(`/subscribers/by-email/${encodeURIComponent('a+b/c@example.org')}`), 200).id).toBe(plus.id);
    expectError(await a.get('/subscribers/by-email/not-an-email'), 400, 'invalid_email');
    expectError(await a.get(`/subscribers/by-email/${'x'.repeat(250)}%40b.org`), 400, 'invalid_email');
    expectError(await a.get('/subscribers/by-email/nobody%40example.org'), 404, 'subscriber_not_found');
  });

  it('defaults and allowed create statuses; null firstName', async () => {
    const unconfirmed = expectStatus(await a.post('/subscribers', { email: 'u@example.org', subscriberStatus: 'UNCONFIRMED', firstName: null }), 201);
    expect(unconfirmed).toMatchObject({ subscriberStatus: 'UNCONFIRMED', firstName: null, values: [EMAIL_VALUE('u@example.org')] });
    expect(expectStatus(await a.post('/subscribers', { email: 'b@example.org', subscriberStatus: 'BLOCKED' }), 201).subscriberStatus).toBe('BLOCKED');
    expectError(await a.post('/subscribers', { email: 'x@example.org', subscriberStatus: 'BOUNCED' }), 400, 'validation_failed');
  });

  it('errors: 409 subscriber_email_exists, 400 invalid_email / invalid_uuid / unknown_property, 404 subscriber_not_found', async () => {
    expectStatus(await a.post('/subscribers', { email: 'dup@example.org' }), 201);
    expectError(await a.post('/subscribers', { email: 'DUP@example.org' }), 409, 'subscriber_email_exists');
    expectError(await a.post('/subscribers', { email: 'not-an-email' }), 400, 'invalid_email');
    expectError(await a.post('/subscribers', { email: '' }), 400, 'invalid_email');
    expectError(await a.get(`/subscribers/${UNKNOWN_ID}`), 404, 'subscriber_not_found');
    expectError(await a.get('/subscribers/1234'), 400, 'invalid_uuid');
    const res = await a.post('/subscribers', { email: 'acc@example.org', accountId: 'x' });
    expectError(res, 400, 'unknown_property');
    expect(res.json.details).toContainEqual({ path: 'body.accountId', problem: 'is not a known property' });
    expectError(await a.post('/subscribers', {}), 400, 'validation_failed');
    expectError(await a.get('/subscribers?accountId=x'), 400, 'unknown_property');
    expectError(await a.get('/subscribers?segmentId=not-a-uuid'), 400, 'invalid_uuid'); // listing by segment: test/segment-members.int.test.ts
  });

  it('DELETE /subscribers/{id} -> 204, then 404 everywhere', async () => {
    const s = expectStatus(await a.post('/subscribers', { email: 'gone@example.org' }), 201);
    const del = await a.delete(`/subscribers/${s.id}`);
    expect([del.status, del.text]).toEqual([204, '']);
    expectError(await a.get(`/subscribers/${s.id}`), 404, 'subscriber_not_found');
    expectError(await a.get('/subscribers/by-email/gone%40example.org'), 404, 'subscriber_not_found');
    expectError(await a.delete(`/subscribers/${s.id}`), 404, 'subscriber_not_found');
    expectError(await a.delete('/subscribers/x'), 400, 'invalid_uuid');
    // the address is free again
    expectStatus(await a.post('/subscribers', { email: 'gone@example.org' }), 201);
  });

  it('literal paths are not taken for ids: GET /subscribers/sync -> 405 (Allow: POST), not 400 invalid_uuid', async () => {
    for (const [method, path, allow] of [['GET', '/subscribers/sync', 'POST'], ['DELETE', '/subscribers/sync', 'POST'], ['GET', '/subscribers/tags/add', 'POST'], ['PUT', '/fields', 'GET, POST, HEAD']]) {
      const res = await call(env.gw, method, path, { apiKey: a.apiKey, body: method === 'PUT' ? {} : undefined });
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe(allow);
    }
  });

  it('Idempotency-Key on POST /subscribers replays the 201 with its Location', async () => {
    const first = await a.post('/subscribers', { email: 'idem@example.org' }, { 'idempotency-key': 'create-idem' });
    expect(first.status).toBe(201);
    const again = await a.post('/subscribers', { email: 'idem@example.org' }, { 'idempotency-key': 'create-idem' });
    expect([again.status, again.json, again.headers.get('location'), again.headers.get('idempotency-replay')]).toEqual([201, first.json, first.headers.get('location'), 'true']);
    expectError(await a.post('/subscribers', { email: 'other@example.org' }, { 'idempotency-key': 'create-idem' }), 422, 'idempotency_key_reused');
    expectError(await a.post('/subscribers', { email: 'idem@example.org' }), 409, 'subscriber_email_exists');
  });
});

describe('create with fields, tags and topics', () => {
  let s: Seeded;
  beforeAll(async () => {
    s = await seeded('create');
  });

  it('every field-value kind, tags and the default topic; typed values come back as response variants', async () => {
    const res = await s.api.post('/subscribers', { email: 'full@example.org', fields: everyKind(s), tags: [s.tags.vip.id, s.tags.beta.id] });
    const created = expectStatus(res, 201);
    expect(created.tags).toEqual([s.tags.vip.id, s.tags.beta.id].sort());
    const [run, , ride] = s.fields.multi.options;
    const sportsDisplay = [run, ride].sort((x, y) => (x.id < y.id ? -1 : 1)).map((o) => o.label).join(', '); // labels of the stored (sorted) option ids
    expect(created.values).toContainEqual({ fieldRef: { type: 'CUSTOM', fieldId: s.fields.multi.fieldId }, personalizationTagName: 'sports', label: 'Sports', displayValue: sportsDisplay });
    expect(created.values).toContainEqual({ fieldRef: { type: 'CUSTOM', fieldId: s.fields.bool.fieldId }, personalizationTagName: 'vegan', label: 'Vegan', displayValue: 'true' });

    const values = expectStatus(await s.api.get(`/subscribers/${created.id}/field-values`), 200);
    expect(schemaErrors('SubscriberFieldValues', values)).toEqual([]);
    const f = s.fields;
    expect(values).toEqual({
      values: byFieldId([
        { fieldId: f.text.fieldId, personalizationTagName: 'nickname', value: { kind: 'TEXT', text: 'Annie' } },
        { fieldId: f.long.fieldId, personalizationTagName: 'bio', value: { kind: 'TEXT', text: 'x'.repeat(50_000) } },
        { fieldId: f.email.fieldId, personalizationTagName: 'work_email', value: { kind: 'EMAIL', text: 'ann@work.example' } },
        { fieldId: f.number.fieldId, personalizationTagName: 'age', value: { kind: 'NUMBER', number: 41.5 } },
        { fieldId: f.date.fieldId, personalizationTagName: 'birthday', value: { kind: 'DATE', date: '1983-02-28' } },
        { fieldId: f.bool.fieldId, personalizationTagName: 'vegan', value: { kind: 'BOOLEAN', booleanValue: true } },
        { fieldId: f.single.fieldId, personalizationTagName: 'colour', value: { kind: 'SINGLE_OPTION', optionId: f.single.options[1].id, labels: ['Green'] } },
        {
          fieldId: f.multi.fieldId,
          personalizationTagName: 'sports',
          value: { kind: 'MULTI_OPTION', optionIds: [f.multi.options[2].id, f.multi.options[0].id].sort(), labels: expect.arrayContaining(['Run', 'Ride']) },
        },
      ]),
    });
    const topics = expectStatus(await s.api.get(`/subscribers/${created.id}/topics`), 200);
    expect(topics).toEqual({
      topics: [
        { topicId: s.topics.news.id, label: 'News', subscribed: true, optedOut: false, optedOutAt: null },
        { topicId: s.topics.deals.id, label: 'Deals', subscribed: false, optedOut: false, optedOutAt: null },
      ],
    });
  });

  it('topicIds given: exactly those; [] joins none', async () => {
    const deals = expectStatus(await s.api.post('/subscribers', { email: 'deals@example.org', topicIds: [s.topics.deals.id] }), 201);
    expect(expectStatus(await s.api.get(`/subscribers/${deals.id}/topics`), 200).topics.map((t: { subscribed: boolean }) => t.subscribed)).toEqual([false, true]);
    const none = expectStatus(await s.api.post('/subscribers', { email: 'none@example.org', topicIds: [] }), 201);
    expect(expectStatus(await s.api.get(`/subscribers/${none.id}/topics`), 200).topics.map((t: { subscribed: boolean }) => t.subscribed)).toEqual([false, false]);
  });

  it('a required field must have a value on create', async () => {
    const acc = await env.account('required');
    const req = expectStatus(await acc.post('/fields', { label: 'Company', fieldType: 'TEXT', required: true }), 201);
    const res = await acc.post('/subscribers', { email: 'r@example.org' });
    expectError(res, 400, 'required_field_missing');
    expect(res.json.details).toEqual([{ path: `fields.${req.fieldId}`, problem: expect.stringContaining('company') }]);
    expectStatus(await acc.post('/subscribers', { email: 'r@example.org', fields: [{ fieldId: req.fieldId, value: { kind: 'TEXT', text: 'ACME' } }] }), 201);
  });

  it.each([
    ['kind mismatch', (x: Seeded) => [{ fieldId: x.fields.number.fieldId, value: { kind: 'TEXT', text: '1' } }], 400, 'field_value_kind_mismatch'],
    ['LONG_TEXT takes TEXT, not LONG_TEXT', (x: Seeded) => [{ fieldId: x.fields.long.fieldId, value: { kind: 'LONG_TEXT', text: '1' } }], 400, 'validation_failed'],
    ['TEXT over 10,000', (x: Seeded) => [{ fieldId: x.fields.text.fieldId, value: { kind: 'TEXT', text: 'x'.repeat(10_001) } }], 400, 'validation_failed'],
    ['bad EMAIL value', (x: Seeded) => [{ fieldId: x.fields.email.fieldId, value: { kind: 'EMAIL', text: 'nope' } }], 400, 'invalid_email'],
    ['not a calendar date', (x: Seeded) => [{ fieldId: x.fields.date.fieldId, value: { kind: 'DATE', date: '2023-02-29' } }], 400, 'validation_failed'],
    ['unknown field', () => [{ fieldId: UNKNOWN_ID, value: { kind: 'TEXT', text: 'x' } }], 404, 'field_not_found'],
    ['option of another field', (x: Seeded) => [{ fieldId: x.fields.single.fieldId, value: { kind: 'SINGLE_OPTION', optionId: x.fields.multi.options[0].id } }], 404, 'option_not_found'],
    ['same field twice', (x: Seeded) => [...everyKind(x).slice(0, 1), ...everyKind(x).slice(0, 1)], 400, 'duplicate_ids'],
    ['duplicate option ids', (x: Seeded) => [{ fieldId: x.fields.multi.fieldId, value: { kind: 'MULTI_OPTION', optionIds: [x.fields.multi.options[0].id, x.fields.multi.options[0].id] } }], 400, 'duplicate_ids'],
    ['malformed field id', () => [{ fieldId: 'nickname', value: { kind: 'TEXT', text: 'x' } }], 400, 'invalid_uuid'],
  ])('fields: %s -> %i %s, nothing created', async (_name, fields, status, errorId) => {
    const before = expectStatus(await s.api.get('/subscribers'), 200).totalItems;
    expectError(await s.api.post('/subscribers', { email: 'bad-fields@example.org', fields: fields(s) }), status, errorId);
    expect(expectStatus(await s.api.get('/subscribers'), 200).totalItems).toBe(before);
  });

  it('tags and topics: unknown -> 404, duplicates -> 400 duplicate_ids, inactive topic -> 400 topic_inactive', async () => {
    expectError(await s.api.post('/subscribers', { email: 't@example.org', tags: [UNKNOWN_ID] }), 404, 'tag_not_found');
    expectError(await s.api.post('/subscribers', { email: 't@example.org', tags: [s.tags.vip.id, s.tags.vip.id] }), 400, 'duplicate_ids');
    expectError(await s.api.post('/subscribers', { email: 't@example.org', tags: [s.tags.vip.id, s.tags.vip.id.toUpperCase()] }), 400, 'duplicate_ids');
    expectError(await s.api.post('/subscribers', { email: 't@example.org', topicIds: [UNKNOWN_ID] }), 404, 'topic_not_found');
    expectError(await s.api.post('/subscribers', { email: 't@example.org', topicIds: [s.topics.deals.id, s.topics.deals.id] }), 400, 'duplicate_ids');
    const closed = expectStatus(await s.api.post('/topics', { label: 'Closed' }), 201);
    expectStatus(await s.api.patch(`/topics/${closed.id}`, { active: false }), 200);
    expectError(await s.api.post('/subscribers', { email: 't@example.org', topicIds: [closed.id] }), 400, 'topic_inactive');
    expectError(await s.api.get('/subscribers/by-email/t%40example.org'), 404, 'subscriber_not_found');
  });

  it('inactive options and archived fields take no new values', async () => {
    const colour = s.fields.single;
    expectStatus(await s.api.patch(`/fields/${colour.fieldId}`, { options: [{ id: colour.options[0].id, label: 'Red' }] }), 200); // Green deactivated
    expectError(await s.api.post('/subscribers', { email: 'o@example.org', fields: [{ fieldId: colour.fieldId, value: { kind: 'SINGLE_OPTION', optionId: colour.options[1].id } }] }), 400, 'option_inactive');
    const old = expectStatus(await s.api.post('/fields', { label: 'Old', fieldType: 'TEXT' }), 201);
    expectStatus(await s.api.post(`/fields/${old.fieldId}/archive`), 200);
    expectError(await s.api.post('/subscribers', { email: 'o@example.org', fields: [{ fieldId: old.fieldId, value: { kind: 'TEXT', text: 'x' } }] }), 409, 'field_archived');
  });
});

describe('replaceable data (atomic full replacements)', () => {
  let s: Seeded;
  let subscriber: { id: string };
  beforeAll(async () => {
    s = await seeded('replace');
    subscriber = expectStatus(await s.api.post('/subscribers', { email: 'rep@example.org', firstName: 'Rep', fields: everyKind(s).slice(0, 4), tags: [s.tags.vip.id] }), 201);
  });
  const data = () => s.api.get(`/subscribers/${subscriber.id}/data`);

  it('GET data: SubscriberData, fields sorted by fieldId with request variants, tags sorted', async () => {
    const d = expectStatus(await data(), 200);
    expect(schemaErrors('SubscriberData', d)).toEqual([]);
    expect(d).toEqual({
      subscriberId: subscriber.id,
      email: 'rep@example.org',
      firstName: 'Rep',
      subscriberStatus: 'ACTIVE',
      fields: byFieldId(everyKind(s).slice(0, 4)).map((f) => (f.value.kind === 'EMAIL' ? { ...f, value: { kind: 'EMAIL', text: 'ann@work.example' } } : f)),
      tags: [s.tags.vip.id],
    });
    expectError(await s.api.get(`/subscribers/${UNKNOWN_ID}/data`), 404, 'subscriber_not_found');
  });

  it('PUT data replaces everything; GET data can be sent back unchanged', async () => {
    const body = {
      email: 'REP2@example.org',
      firstName: null,
      subscriberStatus: 'UNSUBSCRIBED',
      fields: everyKind(s).slice(4),
      tags: [s.tags.beta.id, s.tags.vip.id],
    };
    const replaced = expectStatus(await s.api.put(`/subscribers/${subscriber.id}/data`, body), 200);
    expect(replaced).toEqual({
      subscriberId: subscriber.id,
      email: 'rep2@example.org',
      firstName: null,
      subscriberStatus: 'UNSUBSCRIBED',
      fields: byFieldId(everyKind(s).slice(4)).map((f) => (f.value.kind === 'MULTI_OPTION' ? { ...f, value: { ...f.value, optionIds: [...(f.value.optionIds as string[])].sort() } } : f)),
      tags: [s.tags.beta.id, s.tags.vip.id].sort(),
    });
    expect(expectStatus(await data(), 200)).toEqual(replaced);
    const { subscriberId: _, ...roundTrip } = replaced;
    expect(expectStatus(await s.api.put(`/subscribers/${subscriber.id}/data`, roundTrip), 200)).toEqual(replaced);
  });

  it('one bad part -> 4xx and nothing changed', async () => {
    const before = expectStatus(await data(), 200);
    const { subscriberId: _, ...good } = before;
    const bad: Array<[Record<string, unknown>, number, string]> = [
      [{ ...good, email: 'ann@example', tags: [] }, 400, 'invalid_email'],
      [{ ...good, subscriberStatus: 'BOUNCED', firstName: 'Changed' }, 400, 'subscriber_status_not_manual'],
      [{ ...good, subscriberStatus: 'UNCONFIRMED', firstName: 'Changed' }, 400, 'subscriber_status_not_manual'],
      [{ ...good, firstName: 'Changed', tags: [UNKNOWN_ID] }, 404, 'tag_not_found'],
      [{ ...good, firstName: 'Changed', fields: [...good.fields, { fieldId: s.fields.text.fieldId, value: { kind: 'NUMBER', number: 1 } }] }, 400, 'field_value_kind_mismatch'],
      [{ ...good, firstName: 'Changed', fields: [{ fieldId: UNKNOWN_ID, value: { kind: 'TEXT', text: 'x' } }] }, 404, 'field_not_found'],
      [{ ...good, firstName: 'Changed', tags: [s.tags.vip.id, s.tags.vip.id] }, 400, 'duplicate_ids'],
      [{ ...good, firstName: 'x'.repeat(256) }, 400, 'validation_failed'],
      [{ email: good.email, firstName: 'Changed', subscriberStatus: 'ACTIVE', fields: [] }, 400, 'validation_failed'], // tags missing
    ];
    for (const [body, status, errorId] of bad) {
      expectError(await s.api.put(`/subscribers/${subscriber.id}/data`, body), status, errorId);
      expect(expectStatus(await data(), 200)).toEqual(before);
    }
    // another subscriber's address
    expectStatus(await s.api.post('/subscribers', { email: 'taken@example.org' }), 201);
    expectError(await s.api.put(`/subscribers/${subscriber.id}/data`, { ...good, email: 'Taken@example.org', firstName: 'Changed' }), 409, 'subscriber_email_exists');
    expect(expectStatus(await data(), 200)).toEqual(before);
  });

  it('a required field cannot be left out of a full replacement', async () => {
    const req = expectStatus(await s.api.post('/fields', { label: 'Needed', fieldType: 'BOOLEAN', required: true }), 201);
    const before = expectStatus(await data(), 200);
    const { subscriberId: _, ...good } = before;
    expectError(await s.api.put(`/subscribers/${subscriber.id}/data`, good), 400, 'required_field_missing');
    expect(expectStatus(await data(), 200)).toEqual(before);
    const withValue = { ...good, fields: [...good.fields, { fieldId: req.fieldId, value: { kind: 'BOOLEAN', booleanValue: false } }] };
    expectStatus(await s.api.put(`/subscribers/${subscriber.id}/data`, withValue), 200);
    expectStatus(await s.api.patch(`/fields/${req.fieldId}`, { required: false }), 200);
  });

  it('PUT email / first-name / status', async () => {
    const email = expectStatus(await s.api.put(`/subscribers/${subscriber.id}/email`, { email: ' New@Example.org ' }), 200);
    expect(email).toMatchObject({ subscriberId: subscriber.id, email: 'new@example.org' });
    expect(schemaErrors('SubscriberData', email)).toEqual([]);
    expectError(await s.api.put(`/subscribers/${subscriber.id}/email`, { email: 'taken@example.org' }), 409, 'subscriber_email_exists');
    expectError(await s.api.put(`/subscribers/${subscriber.id}/email`, { email: 'broken' }), 400, 'invalid_email');
    expectError(await s.api.put(`/subscribers/${subscriber.id}/email`, {}), 400, 'validation_failed');

    expect(expectStatus(await s.api.put(`/subscribers/${subscriber.id}/first-name`, { firstName: ' Zoe ' }), 200).firstName).toBe('Zoe');
    expect(expectStatus(await s.api.put(`/subscribers/${subscriber.id}/first-name`, { firstName: null }), 200).firstName).toBeNull();
    expectError(await s.api.put(`/subscribers/${subscriber.id}/first-name`, {}), 400, 'validation_failed');
    expectError(await s.api.put(`/subscribers/${subscriber.id}/first-name`, { firstName: 5 }), 400, 'validation_failed');

    expect(expectStatus(await s.api.put(`/subscribers/${subscriber.id}/status`, { subscriberStatus: 'BLOCKED' }), 200).subscriberStatus).toBe('BLOCKED');
    for (const status of ['UNCONFIRMED', 'BOUNCED', 'COMPLAINED']) {
      expectError(await s.api.put(`/subscribers/${subscriber.id}/status`, { subscriberStatus: status }), 400, 'subscriber_status_not_manual');
    }
    expectError(await s.api.put(`/subscribers/${subscriber.id}/status`, { subscriberStatus: 'GONE' }), 400, 'validation_failed');
    expect(expectStatus(await data(), 200)).toMatchObject({ email: 'new@example.org', firstName: null, subscriberStatus: 'BLOCKED' });
    expectError(await s.api.put(`/subscribers/${UNKNOWN_ID}/email`, { email: 'a@b.org' }), 404, 'subscriber_not_found');
    expectError(await s.api.put(`/subscribers/${UNKNOWN_ID}/first-name`, { firstName: 'x' }), 404, 'subscriber_not_found');
    expectError(await s.api.put(`/subscribers/${UNKNOWN_ID}/status`, { subscriberStatus: 'ACTIVE' }), 404, 'subscriber_not_found');
  });
});

describe('topics of a subscriber', () => {
  it('replacement, opt-out with time and source, overrideOptOuts', async () => {
    const s = await seeded('subscriber topics');
    const sub = expectStatus(await s.api.post('/subscribers', { email: 'topics@example.org' }), 201);
    const path = `/subscribers/${sub.id}/topics`;
    const { news, deals } = s.topics;

    const both = expectStatus(await s.api.put(path, { topicIds: [deals.id, news.id] }), 200);
    expect(both.topics.map((t: { subscribed: boolean }) => t.subscribed)).toEqual([true, true]);
    expect(schemaErrors('SubscriberTopics', both)).toEqual([]);

    const before = Date.now();
    const optedOut = expectStatus(await s.api.post(`${path}/${deals.id}/opt-out`, { source: 'preference centre' }), 200);
    expect(optedOut).toEqual({
      topics: [
        { topicId: news.id, label: 'News', subscribed: true, optedOut: false, optedOutAt: null },
        { topicId: deals.id, label: 'Deals', subscribed: false, optedOut: true, optedOutAt: instant },
      ],
    });
    expect(Date.parse(optedOut.topics[1].optedOutAt)).toBeGreaterThanOrEqual(before - 1000);
    // a repeated opt-out keeps the first record; the body is optional
    expect(expectStatus(await s.api.post(`${path}/${deals.id}/opt-out`), 200)).toEqual(optedOut);
    expect(expectStatus(await s.api.get(path), 200)).toEqual(optedOut);

    // replacement keeps a personal opt-out unless overrideOptOuts
    expect(expectStatus(await s.api.put(path, { topicIds: [news.id, deals.id] }), 200)).toEqual(optedOut);
    const overridden = expectStatus(await s.api.put(path, { topicIds: [deals.id], overrideOptOuts: true }), 200);
    expect(overridden.topics).toEqual([
      { topicId: news.id, label: 'News', subscribed: false, optedOut: false, optedOutAt: null },
      { topicId: deals.id, label: 'Deals', subscribed: true, optedOut: false, optedOutAt: null },
    ]);

    // errors, atomic
    const closed = expectStatus(await s.api.post('/topics', { label: 'Closed' }), 201);
    expectStatus(await s.api.patch(`/topics/${closed.id}`, { active: false }), 200);
    expectError(await s.api.put(path, { topicIds: [news.id, closed.id] }), 400, 'topic_inactive');
    expectError(await s.api.put(path, { topicIds: [news.id, UNKNOWN_ID] }), 404, 'topic_not_found');
    expectError(await s.api.put(path, { topicIds: [news.id, news.id] }), 400, 'duplicate_ids');
    expectError(await s.api.put(path, { topicIds: ['news'] }), 400, 'invalid_uuid');
    expectError(await s.api.put(path, {}), 400, 'validation_failed');
    expect(expectStatus(await s.api.get(path), 200).topics.filter((t: { subscribed: boolean }) => t.subscribed).map((t: { topicId: string }) => t.topicId)).toEqual([deals.id]);
    expectError(await s.api.post(`${path}/${UNKNOWN_ID}/opt-out`), 404, 'topic_not_found');
    expectError(await s.api.post(`/subscribers/${UNKNOWN_ID}/topics/${news.id}/opt-out`), 404, 'subscriber_not_found');
    expectError(await s.api.post(`${path}/${news.id}/opt-out`, { source: '' }), 400, 'validation_failed');
    expectError(await s.api.post(`${path}/${news.id}/opt-out`, { reason: 'x' }), 400, 'unknown_property');
    expectError(await s.api.get(`/subscribers/${UNKNOWN_ID}/topics`), 404, 'subscriber_not_found');
  });
});

describe('field values of a subscriber', () => {
  it('PUT one value of every kind, DELETE it, with the errors', async () => {
    const s = await seeded('field values');
    const sub = expectStatus(await s.api.post('/subscribers', { email: 'fv@example.org' }), 201);
    expect(expectStatus(await s.api.get(`/subscribers/${sub.id}/field-values`), 200)).toEqual({ values: [] });
    for (const { fieldId, value } of everyKind(s)) {
      const res = expectStatus(await s.api.put(`/subscribers/${sub.id}/field-values/${fieldId.toUpperCase()}`, value), 200);
      expect(schemaErrors('FieldValueEntry', res)).toEqual([]);
      expect(res.fieldId).toBe(fieldId);
      if (value.kind === 'SINGLE_OPTION') expect(res.value).toEqual({ ...value, labels: ['Green'] });
      else if (value.kind === 'MULTI_OPTION') expect(res.value).toEqual({ kind: 'MULTI_OPTION', optionIds: [...(value.optionIds as string[])].sort(), labels: expect.arrayContaining(['Run', 'Ride']) });
      else if (value.kind === 'EMAIL') expect(res.value).toEqual({ kind: 'EMAIL', text: 'ann@work.example' });
      else expect(res.value).toEqual(value);
    }
    expect(expectStatus(await s.api.get(`/subscribers/${sub.id}/field-values`), 200).values).toHaveLength(8);

    const f = s.fields;
    const set = (fieldId: string, value: unknown) => s.api.put(`/subscribers/${sub.id}/field-values/${fieldId}`, value);
    expectError(await set(f.number.fieldId, { kind: 'TEXT', text: '5' }), 400, 'field_value_kind_mismatch');
    expectError(await set(f.long.fieldId, { kind: 'TEXT', text: 'x'.repeat(100_001) }), 400, 'validation_failed');
    expectError(await set(f.email.fieldId, { kind: 'EMAIL', text: 'a@' }), 400, 'invalid_email');
    expectError(await set(f.single.fieldId, { kind: 'SINGLE_OPTION', optionId: UNKNOWN_ID }), 404, 'option_not_found');
    expectError(await set(f.multi.fieldId, { kind: 'MULTI_OPTION', optionIds: [] }), 400, 'validation_failed');
    expectError(await set(f.bool.fieldId, { kind: 'BOOLEAN', booleanValue: 'yes' }), 400, 'validation_failed');
    expectError(await set(f.bool.fieldId, { kind: 'BOOLEAN', booleanValue: true, text: 'x' }), 400, 'unknown_property');
    expectError(await set(UNKNOWN_ID, { kind: 'TEXT', text: 'x' }), 404, 'field_not_found');
    expectError(await set('EMAIL', { kind: 'EMAIL', text: 'a@b.org' }), 400, 'invalid_uuid');
    expectError(await s.api.put(`/subscribers/${UNKNOWN_ID}/field-values/${f.text.fieldId}`, { kind: 'TEXT', text: 'x' }), 404, 'subscriber_not_found');
    // nothing of that changed a value
    expect(expectStatus(await s.api.get(`/subscribers/${sub.id}/field-values`), 200).values).toHaveLength(8);

    const del = await s.api.delete(`/subscribers/${sub.id}/field-values/${f.text.fieldId}`);
    expect([del.status, del.text]).toEqual([204, '']);
    expect((await s.api.delete(`/subscribers/${sub.id}/field-values/${f.text.fieldId}`)).status).toBe(204); // idempotent
    expectError(await s.api.delete(`/subscribers/${sub.id}/field-values/${UNKNOWN_ID}`), 404, 'field_not_found');
    expectError(await s.api.delete(`/subscribers/${UNKNOWN_ID}/field-values/${f.text.fieldId}`), 404, 'subscriber_not_found');
    const left = expectStatus(await s.api.get(`/subscribers/${sub.id}/field-values`), 200).values;
    expect(left.map((v: { fieldId: string }) => v.fieldId)).not.toContain(f.text.fieldId);
    expect(left).toHaveLength(7);
  });
});

describe('bulk tagging', () => {
  it('add and remove with the exact result records and the skip rules', async () => {
    const s = await seeded('bulk');
    const { vip, beta } = s.tags;
    const active = expectStatus(await s.api.post('/subscribers', { email: 'act@example.org', tags: [vip.id] }), 201);
    const fresh = expectStatus(await s.api.post('/subscribers', { email: 'fresh@example.org' }), 201);
    const blocked = expectStatus(await s.api.post('/subscribers', { email: 'blk@example.org', subscriberStatus: 'BLOCKED' }), 201);
    const selection = [active.id, fresh.id, blocked.id, UNKNOWN_ID];

    const added = expectStatus(await s.api.post('/subscribers/tags/add', { subscriberIds: selection, tagIds: [vip.id] }), 200);
    expect(added).toEqual({ selectedSubscriberCount: 4, taggedSubscriberCount: 1, alreadyTaggedSubscriberCount: 1, skippedSubscriberCount: 2, skippedByStatus: { BLOCKED: 1, NOT_FOUND: 1 } });
    expect(schemaErrors('SelectedSubscriberTaggingAddResult', added)).toEqual([]);
    expect(expectStatus(await s.api.get(`/subscribers/${fresh.id}`), 200).tags).toEqual([vip.id]);
    expect(expectStatus(await s.api.get(`/subscribers/${blocked.id}`), 200).tags).toEqual([]);
    // repeating changes nothing more
    expect(expectStatus(await s.api.post('/subscribers/tags/add', { subscriberIds: selection, tagIds: [vip.id] }), 200)).toMatchObject({ taggedSubscriberCount: 0, alreadyTaggedSubscriberCount: 2 });
    expect(expectStatus(await s.api.post('/subscribers/tags/add', { subscriberIds: [active.id], tagIds: [vip.id, beta.id] }), 200)).toEqual({
      selectedSubscriberCount: 1,
      taggedSubscriberCount: 1,
      alreadyTaggedSubscriberCount: 0,
      skippedSubscriberCount: 0,
      skippedByStatus: {},
    });

    const removed = expectStatus(await s.api.post('/subscribers/tags/remove', { subscriberIds: selection, tagIds: [beta.id] }), 200);
    expect(removed).toEqual({ selectedSubscriberCount: 4, updatedSubscriberCount: 1, withoutSelectedTagsSubscriberCount: 1, skippedSubscriberCount: 2, skippedByStatus: { BLOCKED: 1, NOT_FOUND: 1 } });
    expect(schemaErrors('SelectedSubscriberTaggingRemovalResult', removed)).toEqual([]);
    expect(expectStatus(await s.api.get(`/subscribers?tagId=${vip.id}`), 200).totalItems).toBe(2);

    for (const path of ['/subscribers/tags/add', '/subscribers/tags/remove']) {
      expectError(await s.api.post(path, { subscriberIds: [active.id], tagIds: [UNKNOWN_ID] }), 404, 'tag_not_found');
      expectError(await s.api.post(path, { subscriberIds: [active.id, active.id], tagIds: [vip.id] }), 400, 'duplicate_ids');
      expectError(await s.api.post(path, { subscriberIds: [active.id], tagIds: [vip.id, vip.id] }), 400, 'duplicate_ids');
      expectError(await s.api.post(path, { subscriberIds: ['x'], tagIds: [vip.id] }), 400, 'invalid_uuid');
      expectError(await s.api.post(path, { subscriberIds: [], tagIds: [vip.id] }), 400, 'validation_failed');
      expectError(await s.api.post(path, { subscriberIds: [active.id] }), 400, 'validation_failed');
    }
    // an unknown tag among known ones changes nothing
    expectError(await s.api.post('/subscribers/tags/add', { subscriberIds: [blocked.id, fresh.id], tagIds: [beta.id, UNKNOWN_ID] }), 404, 'tag_not_found');
    expect(expectStatus(await s.api.get(`/subscribers/${fresh.id}`), 200).tags).toEqual([vip.id]);
  });
});

describe('sync', () => {
  it('creates, updates, leaves unchanged; per-row outcomes in row order; idempotent when repeated', async () => {
    const s = await seeded('sync');
    const existing = expectStatus(await s.api.post('/subscribers', { email: 'old@example.org', firstName: 'Old', tags: [s.tags.vip.id], topicIds: [] }), 201);
    const rows = [
      { email: 'New1@Example.org', firstName: 'N1', tags: [s.tags.beta.id], fields: everyKind(s).slice(0, 2) },
      { email: 'old@example.org', firstName: 'Renamed', tags: [s.tags.beta.id], topicIds: [s.topics.deals.id], fields: [everyKind(s)[3]] },
      { email: 'new2@example.org' },
    ];
    const res = await s.api.post('/subscribers/sync', { subscribers: rows });
    const first = expectStatus(res, 200);
    expect(schemaErrors('SyncSubscribersResponse', first)).toEqual([]);
    expect(first).toEqual({
      results: [
        { index: 0, email: 'new1@example.org', subscriberId: id, outcome: 'CREATED' },
        { index: 1, email: 'old@example.org', subscriberId: existing.id, outcome: 'UPDATED' },
        { index: 2, email: 'new2@example.org', subscriberId: id, outcome: 'CREATED' },
      ],
    });
    // an update merges: given tags added, topics joined, given fields replaced, the rest kept
    const data = expectStatus(await s.api.get(`/subscribers/${existing.id}/data`), 200);
    expect(data).toMatchObject({ firstName: 'Renamed', subscriberStatus: 'ACTIVE', tags: [s.tags.vip.id, s.tags.beta.id].sort(), fields: [everyKind(s)[3]] });
    expect(expectStatus(await s.api.get(`/subscribers/${existing.id}/topics`), 200).topics.map((t: { subscribed: boolean }) => t.subscribed)).toEqual([false, true]);
    // a created row joined the default topic
    expect(expectStatus(await s.api.get(`/subscribers/${first.results[0].subscriberId}/topics`), 200).topics[0].subscribed).toBe(true);

    const again = expectStatus(await s.api.post('/subscribers/sync', { subscribers: rows }), 200);
    expect(again.results.map((r: { outcome: string }) => r.outcome)).toEqual(['UNCHANGED', 'UNCHANGED', 'UNCHANGED']);
    expect(again.results.map((r: { subscriberId: string }) => r.subscriberId)).toEqual(first.results.map((r: { subscriberId: string }) => r.subscriberId));

    // firstName null clears, a missing one leaves it; status given changes it
    const cleared = expectStatus(await s.api.post('/subscribers/sync', { subscribers: [{ email: 'old@example.org', firstName: null, subscriberStatus: 'UNSUBSCRIBED' }] }), 200);
    expect(cleared.results[0].outcome).toBe('UPDATED');
    expect(expectStatus(await s.api.get(`/subscribers/${existing.id}/data`), 200)).toMatchObject({ firstName: null, subscriberStatus: 'UNSUBSCRIBED' });
    expect(expectStatus(await s.api.post('/subscribers/sync', { subscribers: [{ email: 'old@example.org' }] }), 200).results[0].outcome).toBe('UNCHANGED');
  });

  it('one bad row never spoils the others, whether the gateway or the service refuses it', async () => {
    const s = await seeded('sync rows');
    const before = expectStatus(await s.api.get('/subscribers'), 200).totalItems;
    const res = await s.api.post('/subscribers/sync', {
      subscribers: [
        { email: 'ok1@example.org' },
        { email: 'bad-uuid@example.org', tags: ['nope'] }, // schema: invalid_uuid
        { email: 'not-an-email' }, // service: invalid_email
        { email: 'ok1@example.org', firstName: 'again' }, // duplicate in the request
        { email: 'unknown-tag@example.org', tags: [UNKNOWN_ID] }, // service: tag_not_found
        { email: 'extra@example.org', colour: 'red' }, // schema: unknown_property
        null, // schema: not an object
        { email: 'kind@example.org', fields: [{ fieldId: s.fields.number.fieldId, value: { kind: 'TEXT', text: '1' } }] },
        { email: 'status@example.org', subscriberStatus: 'BOUNCED' }, // schema: not a create status
        { email: 'ok2@example.org', subscriberStatus: 'UNCONFIRMED' },
      ],
    });
    const body = expectStatus(res, 200);
    expect(schemaErrors('SyncSubscribersResponse', body)).toEqual([]);
    const failed = (index: number, email: string, errorId: string) => ({ index, email, subscriberId: null, outcome: 'FAILED', errorId, message: expect.any(String) });
    expect(body.results).toEqual([
      { index: 0, email: 'ok1@example.org', subscriberId: id, outcome: 'CREATED' },
      failed(1, 'bad-uuid@example.org', 'invalid_uuid'),
      failed(2, 'not-an-email', 'invalid_email'),
      failed(3, 'ok1@example.org', 'duplicate_email_in_request'),
      failed(4, 'unknown-tag@example.org', 'tag_not_found'),
      failed(5, 'extra@example.org', 'unknown_property'),
      failed(6, '', 'validation_failed'),
      failed(7, 'kind@example.org', 'field_value_kind_mismatch'),
      failed(8, 'status@example.org', 'validation_failed'),
      { index: 9, email: 'ok2@example.org', subscriberId: id, outcome: 'CREATED' },
    ]);
    expect(body.results[5].message).toContain('body.subscribers[5].colour');
    expect(expectStatus(await s.api.get('/subscribers'), 200).totalItems).toBe(before + 2);
  });

  it('modes: CREATE_ONLY fails known addresses, UPDATE_ONLY unknown ones; UNCONFIRMED is not set on an update', async () => {
    const s = await seeded('sync modes');
    const known = expectStatus(await s.api.post('/subscribers', { email: 'known@example.org' }), 201);
    const createOnly = expectStatus(await s.api.post('/subscribers/sync', { mode: 'CREATE_ONLY', subscribers: [{ email: 'known@example.org' }, { email: 'c@example.org' }] }), 200);
    expect(createOnly.results).toEqual([
      { index: 0, email: 'known@example.org', subscriberId: known.id, outcome: 'FAILED', errorId: 'subscriber_email_exists', message: expect.any(String) },
      { index: 1, email: 'c@example.org', subscriberId: id, outcome: 'CREATED' },
    ]);
    const updateOnly = expectStatus(await s.api.post('/subscribers/sync', { mode: 'UPDATE_ONLY', subscribers: [{ email: 'known@example.org', firstName: 'K' }, { email: 'u@example.org' }] }), 200);
    expect(updateOnly.results).toEqual([
      { index: 0, email: 'known@example.org', subscriberId: known.id, outcome: 'UPDATED' },
      { index: 1, email: 'u@example.org', subscriberId: null, outcome: 'FAILED', errorId: 'subscriber_not_found', message: expect.any(String) },
    ]);
    const unconfirmed = expectStatus(await s.api.post('/subscribers/sync', { subscribers: [{ email: 'known@example.org', subscriberStatus: 'UNCONFIRMED' }] }), 200);
    expect(unconfirmed.results[0]).toMatchObject({ outcome: 'FAILED', errorId: 'subscriber_status_not_manual' });
    expectError(await s.api.get('/subscribers/by-email/u%40example.org'), 404, 'subscriber_not_found');
  });

  it('request-level errors fail the whole request: sync_too_many_rows, no rows, bad mode', async () => {
    const s = await seeded('sync limits');
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ email: `row${i}@example.org`, fields: [{ fieldId: s.fields.text.fieldId, value: { kind: 'TEXT', text: 'x'.repeat(50) } }] }));
    expectError(await s.api.post('/subscribers/sync', { subscribers: rows(1001) }), 400, 'sync_too_many_rows');
    expectError(await s.api.post('/subscribers/sync', { subscribers: [] }), 400, 'validation_failed');
    expectError(await s.api.post('/subscribers/sync', { subscribers: rows(1), mode: 'MERGE' }), 400, 'validation_failed');
    expectError(await s.api.post('/subscribers/sync', { rows: rows(1) }), 400, 'unknown_property');
    expect(expectStatus(await s.api.get('/subscribers'), 200).totalItems).toBe(0);
    // 1,000 rows of about 2 KiB (over the 1 MiB default body limit) are accepted
    const big = rows(1000).map((r) => ({ ...r, fields: [{ fieldId: s.fields.long.fieldId, value: { kind: 'TEXT', text: 'y'.repeat(2000) } }] }));
    const ok = expectStatus(await s.api.post('/subscribers/sync', { subscribers: big }), 200);
    expect(ok.results.filter((r: { outcome: string }) => r.outcome === 'CREATED')).toHaveLength(1000);
    expect(expectStatus(await s.api.get('/subscribers?pageSize=1'), 200).totalItems).toBe(1000);
  });
});

describe('list', () => {
  it('GET /subscribers: PaginatedSubscribersDto with pagination, filters and statusCounts', async () => {
    const s = await seeded('list');
    const key = s.api;
    for (const [email, status] of [['a1@example.org', 'ACTIVE'], ['a2@example.org', 'ACTIVE'], ['bob@example.org', 'UNSUBSCRIBED'], ['carl@example.org', 'BLOCKED'], ['anna@example.org', 'UNCONFIRMED']]) {
      expectStatus(await key.post('/subscribers', { email, subscriberStatus: status, firstName: email.split('@')[0], tags: email.startsWith('a') ? [s.tags.vip.id] : [] }), 201);
    }
    const all = expectStatus(await key.get('/subscribers'), 200);
    expect(schemaErrors('PaginatedSubscribersDto', all)).toEqual([]);
    expect(all).toMatchObject({ pageNumber: 1, pageSize: 50, totalItems: 5, totalPages: 1 });
    expect(all.statusCounts).toEqual({ UNCONFIRMED: 1, ACTIVE: 2, UNSUBSCRIBED: 1, BOUNCED: 0, COMPLAINED: 0, BLOCKED: 1 });
    expect(all.items[0]).toEqual({ id, email: 'a1@example.org', firstName: 'a1', subscriberStatus: 'ACTIVE', tags: [s.tags.vip.id], registeredAt: instant }); // oldest first
    expect(all.items.map((x: { email: string }) => x.email)).toEqual(['a1@example.org', 'a2@example.org', 'bob@example.org', 'carl@example.org', 'anna@example.org']);

    const page2 = expectStatus(await key.get('/subscribers?pageSize=2&pageNumber=2'), 200);
    expect(page2).toMatchObject({ pageNumber: 2, pageSize: 2, totalItems: 5, totalPages: 3 });
    expect(page2.items).toHaveLength(2);
    expect(expectStatus(await key.get('/subscribers?pageSize=2&pageNumber=9'), 200).items).toEqual([]);

    const active = expectStatus(await key.get('/subscribers?status=ACTIVE'), 200);
    expect(active.totalItems).toBe(2);
    expect(active.statusCounts.BLOCKED).toBe(1); // counted over the filters except status
    const tagged = expectStatus(await key.get(`/subscribers?tagId=${s.tags.vip.id.toUpperCase()}`), 200);
    expect(tagged.totalItems).toBe(3);
    expect(tagged.statusCounts).toEqual({ UNCONFIRMED: 1, ACTIVE: 2, UNSUBSCRIBED: 0, BOUNCED: 0, COMPLAINED: 0, BLOCKED: 0 });
    expect(expectStatus(await key.get(`/subscribers?topicId=${s.topics.news.id}`), 200).totalItems).toBe(5); // default topic
    expect(expectStatus(await key.get(`/subscribers?topicId=${s.topics.deals.id}`), 200).totalItems).toBe(0);
    const search = expectStatus(await key.get('/subscribers?search=A'), 200);
    expect(search.items.map((x: { email: string }) => x.email).sort()).toEqual(['a1@example.org', 'a2@example.org', 'anna@example.org']);

    expectError(await key.get('/subscribers?pageSize=1001'), 400, 'validation_failed');
    expectError(await key.get('/subscribers?status=active'), 400, 'validation_failed');
    expectError(await key.get('/subscribers?tagId=vip'), 400, 'invalid_uuid');
    expectError(await key.get(`/subscribers?tagId=${UNKNOWN_ID}`), 404, 'tag_not_found');
    expectError(await key.get(`/subscribers?topicId=${UNKNOWN_ID}`), 404, 'topic_not_found');
  });
});

describe('service outage', () => {
  it('a subscriber service that goes away -> 503, and /readyz says so', async () => {
    await env.subscriber.stop();
    expectError(await a.get('/subscribers'), 503, 'service_unavailable');
    expectError(await a.get('/tags'), 503, 'service_unavailable');
    expectError(await call(env.gw, 'GET', '/readyz'), 503, 'service_unavailable');
  });
});
