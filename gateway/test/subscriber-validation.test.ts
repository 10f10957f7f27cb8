import { ApiError } from '../src/errors';
import { requestValidator } from '../src/openapi/validator';

// Request validation of the subscriber domain's operations, compiled from the OpenAPI document:
// the discriminated field values, id lists, limits and the errorIds the schemas declare.

const A = '3f0c2a5e-2a7b-4c47-9a43-1d8f3a0e6b21';
const B = '7d9e6c1a-0b4f-4d2e-8a3c-5f6e7d8c9b0a';
const uuids = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a validation error');
}
const body = (operationId: string, b: unknown, params: Record<string, string> = {}) => requestValidator(operationId)({ body: b, params });
const refused = (operationId: string, b: unknown, params: Record<string, string> = {}) => failure(() => body(operationId, b, params));
const setValue = (value: unknown) => body('setFieldValue', value, { subscriberId: A, fieldId: B });
const valueError = (value: unknown) => failure(() => setValue(value));

describe('field values: a union discriminated by kind', () => {
  it.each([
    { kind: 'TEXT', text: '' },
    { kind: 'TEXT', text: 'x'.repeat(100_000) },
    { kind: 'EMAIL', text: 'Ann@Example.org' },
    { kind: 'NUMBER', number: -0.5 },
    { kind: 'NUMBER', number: 1e300 },
    { kind: 'DATE', date: '2024-02-29' },
    { kind: 'BOOLEAN', booleanValue: false },
    { kind: 'SINGLE_OPTION', optionId: A.toUpperCase() },
    { kind: 'MULTI_OPTION', optionIds: [A, B] },
  ])('accepts %p', (value) => {
    expect(() => setValue(value)).not.toThrow();
  });

  it.each([
    [{ kind: 'TEXT', text: 5 }, 'validation_failed', 'body.text'],
    [{ kind: 'TEXT', number: 5 }, 'unknown_property', 'body.number'], // a member of another kind is unknown in this one
    [{ kind: 'TEXT' }, 'validation_failed', 'body.text'],
    [{ kind: 'TEXT', text: 'x'.repeat(100_001) }, 'validation_failed', 'body.text'],
    [{ kind: 'EMAIL', text: 'x'.repeat(255) }, 'invalid_email', 'body.text'],
    [{ kind: 'EMAIL', text: '' }, 'invalid_email', 'body.text'],
    [{ kind: 'NUMBER', number: '5' }, 'validation_failed', 'body.number'],
    [{ kind: 'NUMBER', number: null }, 'validation_failed', 'body.number'],
    [{ kind: 'DATE', date: '2023-02-29' }, 'validation_failed', 'body.date'],
    [{ kind: 'DATE', date: '2024-01-01T00:00:00Z' }, 'validation_failed', 'body.date'],
    [{ kind: 'BOOLEAN', booleanValue: 'true' }, 'validation_failed', 'body.booleanValue'],
    [{ kind: 'SINGLE_OPTION', optionId: 'red' }, 'invalid_uuid', 'body.optionId'],
    [{ kind: 'SINGLE_OPTION', optionId: A, labels: ['Red'] }, 'unknown_property', 'body.labels'], // labels are response-only
    [{ kind: 'MULTI_OPTION', optionIds: [A, A] }, 'duplicate_ids', 'body.optionIds'],
    [{ kind: 'MULTI_OPTION', optionIds: [] }, 'validation_failed', 'body.optionIds'],
    [{ kind: 'MULTI_OPTION', optionIds: uuids(501) }, 'validation_failed', 'body.optionIds'],
    [{ kind: 'MULTI_OPTION', optionIds: A }, 'validation_failed', 'body.optionIds'],
    [{ kind: 'LONG_TEXT', text: 'x' }, 'validation_failed', 'body.kind'],
    [{ kind: 'text', text: 'x' }, 'validation_failed', 'body.kind'],
    [{ text: 'x' }, 'validation_failed', 'body.kind'],
    [{ kind: null }, 'validation_failed', 'body.kind'],
    [null, 'validation_failed', 'body'],
    [['TEXT'], 'validation_failed', 'body'],
  ])('%p -> %s at %s', (value, errorId, path) => {
    const e = valueError(value);
    expect([e.status, e.errorId]).toEqual([400, errorId]);
    expect(e.details!.map((d) => d.path)).toContain(path);
  });

  it('a wrong member type is not reported as unknown in the other kinds', () => {
    expect(valueError({ kind: 'NUMBER', number: 'x' }).details).toEqual([{ path: 'body.number', problem: 'must be number' }]);
  });
});

describe('id lists: uniqueItems -> duplicate_ids, format -> invalid_uuid, limits', () => {
  const add = (extra: Record<string, unknown>) => body('addSubscriber', { email: 'a@b.org', ...extra });
  it.each([
    ['tags', [A, A], 'duplicate_ids'],
    ['topicIds', [B, A, B], 'duplicate_ids'],
    ['tags', ['nope'], 'invalid_uuid'],
    ['tags', uuids(1001), 'validation_failed'],
    ['topicIds', null, 'validation_failed'],
    ['tags', A, 'validation_failed'],
  ])('AddSubscriber.%s = %p -> %s', (member, value, errorId) => {
    expect(failure(() => add({ [member]: value })).errorId).toBe(errorId);
  });

  it('AddSubscriber accepts 1,000 tags and an empty topic list', () => {
    expect(() => add({ tags: uuids(1000), topicIds: [] })).not.toThrow();
  });

  it('fields: FieldValueInput items', () => {
    expect(() => add({ fields: [{ fieldId: A, value: { kind: 'TEXT', text: 'x' } }] })).not.toThrow();
    expect(failure(() => add({ fields: [{ fieldId: 'EMAIL', value: { kind: 'TEXT', text: 'x' } }] })).errorId).toBe('invalid_uuid');
    expect(failure(() => add({ fields: [{ fieldId: A }] })).details).toEqual([{ path: 'body.fields[0].value', problem: 'is required' }]);
    expect(failure(() => add({ fields: [{ fieldId: A, value: { kind: 'TEXT', text: 1 } }] })).details).toEqual([{ path: 'body.fields[0].value.text', problem: 'must be string' }]);
  });

  it('bulk tagging: 1..10,000 distinct subscribers, 1..1,000 distinct tags', () => {
    expect(() => body('addTagsToSubscribers', { subscriberIds: uuids(10_000), tagIds: [A] })).not.toThrow();
    expect(refused('addTagsToSubscribers', { subscriberIds: uuids(10_001), tagIds: [A] }).errorId).toBe('validation_failed');
    expect(refused('removeTagsFromSubscribers', { subscriberIds: [A, A], tagIds: [B] }).errorId).toBe('duplicate_ids');
    expect(refused('removeTagsFromSubscribers', { subscriberIds: [A], tagIds: [B, B] }).details).toEqual([{ path: 'body.tagIds', problem: 'holds the same id twice (items 0 and 1)' }]);
    expect(refused('addTagsToSubscribers', { subscriberIds: [], tagIds: [A] }).errorId).toBe('validation_failed');
    expect(refused('addTagsToSubscribers', { subscriberIds: [A] }).errorId).toBe('validation_failed');
    expect(refused('addTagsToSubscribers', { subscriberIds: [A], tagIds: uuids(1001) }).errorId).toBe('validation_failed');
  });

  it('unknown_property still wins over duplicates', () => {
    expect(refused('addTagsToSubscribers', { subscriberIds: [A, A], tagIds: [B], extra: 1 }).errorId).toBe('unknown_property');
  });
});

describe('subscriber bodies', () => {
  it('email: at most 254 characters, else invalid_email (what the service answers too)', () => {
    expect(refused('addSubscriber', { email: `${'a'.repeat(250)}@b.org` }).errorId).toBe('invalid_email');
    expect(refused('replaceSubscriberEmail', { email: '' }, { subscriberId: A }).errorId).toBe('invalid_email');
    expect(refused('replaceSubscriberEmail', { email: 5 }, { subscriberId: A }).errorId).toBe('validation_failed');
    expect(failure(() => requestValidator('getSubscriberByEmail')({ params: { email: 'x'.repeat(255) } })).toDto()).toMatchObject({ errorId: 'invalid_email', details: [{ path: 'path.email' }] });
  });

  it('firstName: nullable, at most 255 characters; required (nullable) in the replacements', () => {
    expect(() => body('addSubscriber', { email: 'a@b.org', firstName: 'x'.repeat(255) })).not.toThrow();
    expect(refused('addSubscriber', { email: 'a@b.org', firstName: 'x'.repeat(256) }).errorId).toBe('validation_failed');
    expect(() => body('replaceSubscriberFirstName', { firstName: null }, { subscriberId: A })).not.toThrow();
    expect(refused('replaceSubscriberFirstName', {}, { subscriberId: A }).details).toEqual([{ path: 'body.firstName', problem: 'is required' }]);
  });

  it('ReplaceSubscriberData needs every member; status is any status (the service refuses non-manual ones)', () => {
    const full = { email: 'a@b.org', firstName: null, subscriberStatus: 'BOUNCED', fields: [], tags: [] };
    expect(() => body('replaceSubscriberData', full, { subscriberId: A })).not.toThrow();
    for (const member of Object.keys(full)) {
      const { [member]: _, ...rest } = full as Record<string, unknown>;
      expect(refused('replaceSubscriberData', rest, { subscriberId: A }).details).toContainEqual({ path: `body.${member}`, problem: 'is required' });
    }
    expect(refused('replaceSubscriberStatus', { subscriberStatus: 'active' }, { subscriberId: A }).errorId).toBe('validation_failed');
  });

  it('topics replacement: topicIds required, overrideOptOuts defaults to false; opt-out body optional', () => {
    expect(body('replaceSubscriberTopics', { topicIds: [] }, { subscriberId: A }).body).toEqual({ topicIds: [], overrideOptOuts: false });
    expect(refused('replaceSubscriberTopics', {}, { subscriberId: A }).errorId).toBe('validation_failed');
    const optOut = requestValidator('optOutOfTopic');
    expect(optOut({ params: { subscriberId: A, topicId: B } }).body).toBeUndefined();
    expect(optOut({ params: { subscriberId: A, topicId: B }, body: { source: 'preference centre' } }).body).toEqual({ source: 'preference centre' });
    expect(failure(() => optOut({ params: { subscriberId: A, topicId: B }, body: { source: '' } })).errorId).toBe('validation_failed');
    expect(failure(() => optOut({ params: { subscriberId: A, topicId: B }, body: { source: 'x'.repeat(101) } })).errorId).toBe('validation_failed');
    expect(failure(() => optOut({ params: { subscriberId: A, topicId: 'x' } })).errorId).toBe('invalid_uuid');
  });

  it('segmentId on GET /subscribers is a UUID', () => {
    expect(() => requestValidator('listSubscribers')({ query: { segmentId: A } })).not.toThrow();
    expect(failure(() => requestValidator('listSubscribers')({ query: { segmentId: 'x' } })).errorId).toBe('invalid_uuid');
  });
});

describe('sync: rows validated one by one', () => {
  const sync = (b: unknown) => requestValidator('syncSubscribers')({ body: b });
  const row = (i: number) => ({ email: `r${i}@example.org` });

  it('mode defaults to UPSERT; valid rows give no item errors', () => {
    const v = sync({ subscribers: [row(0), row(1)] });
    expect(v.body).toEqual({ subscribers: [row(0), row(1)], mode: 'UPSERT' });
    expect(v.itemErrors).toEqual([]);
  });

  it('a bad row is an item error with the errorId it would get alone; the others pass', () => {
    const v = sync({ subscribers: [row(0), { email: 'a@b.org', tags: ['x'] }, null, { email: 'c@b.org', colour: 'red', tags: [A, A] }, row(4)], mode: 'CREATE_ONLY' });
    expect(v.itemErrors.map((e) => [e.index, e.error.errorId, e.error.details?.[0].path])).toEqual([
      [1, 'invalid_uuid', 'body.subscribers[1].tags[0]'],
      [2, 'validation_failed', 'body.subscribers[2]'],
      [3, 'unknown_property', 'body.subscribers[3].colour'],
    ]);
  });

  it('request-level problems fail the whole request', () => {
    expect(failure(() => sync({ subscribers: Array.from({ length: 1001 }, (_, i) => row(i)) })).toDto()).toMatchObject({
      errorId: 'sync_too_many_rows',
      details: [{ path: 'body.subscribers', problem: 'must NOT have more than 1000 items' }],
    });
    // ... even when rows are bad too: the request's own problem is the one reported
    expect(failure(() => sync({ subscribers: Array.from({ length: 1001 }, () => ({ email: 5 })) })).errorId).toBe('sync_too_many_rows');
    expect(failure(() => sync({ subscribers: [] })).errorId).toBe('validation_failed');
    expect(failure(() => sync({ subscribers: [row(0)], mode: 'MERGE' })).errorId).toBe('validation_failed');
    expect(failure(() => sync({ subscribers: [row(0)], extra: true })).errorId).toBe('unknown_property');
    expect(failure(() => sync({ subscribers: row(0) })).errorId).toBe('validation_failed');
    expect(failure(() => sync(undefined)).errorId).toBe('validation_failed');
  });
});

describe('fields, tags, topics', () => {
  it('AddField: defaults, personalizationTagName rule, limits', () => {
    expect(body('addField', { label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Red'] }).body).toEqual({ label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Red'], required: false, internal: false });
    expect(() => body('addField', { personalizationTagName: '', label: 'L', fieldType: 'TEXT' })).not.toThrow();
    expect(() => body('addField', { personalizationTagName: 'a' + 'b'.repeat(63), label: 'L', fieldType: 'TEXT' })).not.toThrow();
    for (const name of ['Colour', '1st', '_x', 'a-b', 'a' + 'b'.repeat(64), 'ü']) {
      expect([name, refused('addField', { personalizationTagName: name, label: 'L', fieldType: 'TEXT' }).errorId]).toEqual([name, 'invalid_personalization_tag_name']);
    }
    expect(refused('addField', { label: '', fieldType: 'TEXT' }).errorId).toBe('validation_failed');
    expect(refused('addField', { label: 'x'.repeat(256), fieldType: 'TEXT' }).errorId).toBe('validation_failed');
    expect(refused('addField', { label: 'L', fieldType: 'CHOICE' }).errorId).toBe('validation_failed');
    expect(refused('addField', { label: 'L', fieldType: 'SINGLE_CHOICE', options: Array.from({ length: 501 }, (_, i) => `o${i}`) }).errorId).toBe('validation_failed');
    expect(refused('addField', { label: 'L', fieldType: 'SINGLE_CHOICE', options: [''] }).errorId).toBe('validation_failed');
  });

  it('PATCH field: every member optional; options with id null or absent; position integer', () => {
    const patch = (b: unknown) => body('updateField', b, { fieldId: A });
    expect(() => patch({})).not.toThrow();
    expect(() => patch({ options: [{ id: null, label: 'New' }, { id: A, label: 'Old', position: 3, active: false }, { label: 'Also new' }] })).not.toThrow();
    expect(failure(() => patch({ options: [{ id: 'x', label: 'L' }] })).errorId).toBe('invalid_uuid');
    expect(failure(() => patch({ options: [{ id: A }] })).errorId).toBe('validation_failed');
    expect(failure(() => patch({ position: 1.5 })).errorId).toBe('validation_failed');
    expect(failure(() => patch({ fieldType: 'TEXT' })).errorId).toBe('unknown_property');
    expect(failure(() => patch({ personalizationTagName: 'x' })).errorId).toBe('unknown_property');
    expect(failure(() => patch({ label: null })).errorId).toBe('validation_failed');
  });

  it('tags: name 1..100', () => {
    expect(() => body('addTag', { name: 'x'.repeat(100) })).not.toThrow();
    expect(refused('addTag', { name: 'x'.repeat(101) }).errorId).toBe('validation_failed');
    expect(refused('renameTag', { name: '' }, { tagId: A }).errorId).toBe('validation_failed');
    expect(refused('renameTag', {}, { tagId: A }).errorId).toBe('validation_failed');
  });

  it('topics: label 1..255, description <= 2,000 and nullable, enrollExistingSubscribers default false', () => {
    expect(body('addTopic', { label: 'News' }).body).toEqual({ label: 'News', enrollExistingSubscribers: false, isDefault: false });
    expect(() => body('addTopic', { label: 'News', description: null })).not.toThrow();
    expect(refused('addTopic', { label: 'x'.repeat(256) }).errorId).toBe('validation_failed');
    expect(refused('addTopic', { label: 'News', description: 'x'.repeat(2001) }).errorId).toBe('validation_failed');
    expect(body('updateTopic', { description: null }, { topicId: A }).body).toEqual({ description: null });
    expect(refused('updateTopic', { isDefault: null }, { topicId: A }).errorId).toBe('validation_failed');
    expect(refused('updateTopic', { enrollExistingSubscribers: true }, { topicId: A }).errorId).toBe('unknown_property');
  });

  it('field paths take a custom field id, or EMAIL / FIRST_NAME where a built-in field can be named', () => {
    expect(() => requestValidator('getField')({ params: { fieldId: 'EMAIL' } })).not.toThrow();
    expect(() => requestValidator('archiveField')({ params: { fieldId: 'FIRST_NAME' } })).not.toThrow();
    expect(() => requestValidator('getField')({ params: { fieldId: A.toUpperCase() } })).not.toThrow();
    const e = failure(() => requestValidator('getField')({ params: { fieldId: 'email' } }));
    expect([e.errorId, e.details!.map((d) => d.path)]).toEqual(['invalid_uuid', ['path.fieldId', 'path.fieldId']]);
    expect(failure(() => requestValidator('getFieldUsage')({ params: { fieldId: 'EMAIL' } })).errorId).toBe('invalid_uuid');
    expect(failure(() => requestValidator('setFieldValue')({ params: { subscriberId: A, fieldId: 'EMAIL' }, body: { kind: 'TEXT', text: 'x' } })).errorId).toBe('invalid_uuid');
  });

  it('includeArchived is a boolean query parameter', () => {
    const list = requestValidator('listFields');
    expect(list({ query: {} }).query).toEqual({ includeArchived: false });
    expect(list({ query: { includeArchived: 'true' } }).query).toEqual({ includeArchived: true });
    expect(failure(() => list({ query: { includeArchived: 'yes' } })).errorId).toBe('validation_failed');
  });
});
