import { schemaErrors } from '../src/openapi/validator';
import { expectError } from './support/harness';
import { expectStatus, INSTANT_PATTERN, startSubscriberStack, UNKNOWN_ID, USAGE_SOURCES, UUID_PATTERN, type Api, type SubscriberStack } from './support/subscriber-stack';

// Fields, tags and topics through HTTP: real gateway -> real subscriber service, shapes exactly as
// an integrator sees them. The services that report field usages run for real (a form, a segment
// created through the API are what they report); the subscriber service reaches segment, form and
// rss through fault-injecting peers that forward to them, so a test can make one not answer.

let env: SubscriberStack;
beforeAll(async () => {
  env = await startSubscriberStack({ peers: USAGE_SOURCES, faulty: ['segment', 'form', 'rss'] });
}, 90_000);
afterAll(() => env?.stop());
afterEach(() => Object.values(env?.faulty ?? {}).forEach((peer) => peer.heal()));

const id = expect.stringMatching(UUID_PATTERN);
const instant = expect.stringMatching(INSTANT_PATTERN);

const EMAIL_FIELD = { type: 'BUILT_IN', builtInField: 'EMAIL', personalizationTagName: 'email', label: 'Email', fieldType: 'EMAIL', required: true, internal: false, active: true, position: 0, options: [] };
const FIRST_NAME_FIELD = { type: 'BUILT_IN', builtInField: 'FIRST_NAME', personalizationTagName: 'first_name', label: 'First name', fieldType: 'TEXT', required: false, internal: false, active: true, position: 1, options: [] };

async function addField(a: Api, body: Record<string, unknown>) {
  const res = await a.post('/fields', body);
  const field = expectStatus(res, 201);
  expect(res.headers.get('location')).toBe(`/fields/${field.fieldId}`);
  expect(schemaErrors('Field', field)).toEqual([]);
  return field;
}

describe('tags', () => {
  it('CRUD with the exact Tag shape; names unique per account ignoring case', async () => {
    const a = await env.account('tags');
    expect(expectStatus(await a.get('/tags'), 200)).toEqual({ items: [] });

    const res = await a.post('/tags', { name: '  VIP ' });
    const vip = expectStatus(res, 201);
    expect(vip).toEqual({ id, name: 'VIP', subscriberCount: 0, createdAt: instant });
    expect(res.headers.get('location')).toBe(`/tags/${vip.id}`);
    expect(schemaErrors('Tag', vip)).toEqual([]);

    expectError(await a.post('/tags', { name: 'vip' }), 409, 'tag_name_exists');
    const beta = expectStatus(await a.post('/tags', { name: 'Beta' }), 201);
    const list = expectStatus(await a.get('/tags'), 200);
    expect(schemaErrors('TagList', list)).toEqual([]);
    expect(list.items.map((t: { name: string }) => t.name)).toEqual(['Beta', 'VIP']); // by name

    expect(expectStatus(await a.get(`/tags/${vip.id.toUpperCase()}`), 200)).toEqual(vip);
    const renamed = expectStatus(await a.put(`/tags/${vip.id}`, { name: 'Gold' }), 200);
    expect(renamed).toEqual({ ...vip, name: 'Gold' });
    expectError(await a.put(`/tags/${vip.id}`, { name: 'BETA' }), 409, 'tag_name_exists');

    // subscriberCount counts current assignments
    expectStatus(await a.post('/subscribers', { email: 'tagged@example.org', tags: [vip.id, beta.id] }), 201);
    expect(expectStatus(await a.get(`/tags/${vip.id}`), 200).subscriberCount).toBe(1);

    expect((await a.delete(`/tags/${vip.id}`)).status).toBe(204);
    expectError(await a.get(`/tags/${vip.id}`), 404, 'tag_not_found');
    expectError(await a.delete(`/tags/${vip.id}`), 404, 'tag_not_found');
    // the deleted tag left the subscriber
    const subscriber = expectStatus(await a.get('/subscribers/by-email/tagged%40example.org'), 200);
    expect(subscriber.tags).toEqual([beta.id]);
  });

  it('errors: validation, invalid_uuid, unknown ids', async () => {
    const a = await env.account('tag errors');
    expectError(await a.post('/tags', {}), 400, 'validation_failed');
    expectError(await a.post('/tags', { name: '' }), 400, 'validation_failed');
    expectError(await a.post('/tags', { name: '   ' }), 400, 'validation_failed'); // blank after trimming (service)
    expectError(await a.post('/tags', { name: 'x'.repeat(101) }), 400, 'validation_failed');
    expectError(await a.post('/tags', { name: 'a', colour: 'red' }), 400, 'unknown_property');
    expectError(await a.get('/tags/not-a-uuid'), 400, 'invalid_uuid');
    expectError(await a.get(`/tags/${UNKNOWN_ID}`), 404, 'tag_not_found');
    expectError(await a.put(`/tags/${UNKNOWN_ID}`, { name: 'x' }), 404, 'tag_not_found');
  });
});

describe('topics', () => {
  it('a new account has exactly one default topic, Newsletter; CRUD with the exact Topic shape', async () => {
    const a = await env.account('topics');
    const first = expectStatus(await a.get('/topics'), 200);
    expect(first).toEqual({ items: [{ id, label: 'Newsletter', description: null, active: true, isDefault: true, subscriberCount: 0, createdAt: instant }] });
    expect(schemaErrors('TopicList', first)).toEqual([]);
    const newsletter = first.items[0];

    // new topics are not default
    const res = await a.post('/topics', { label: 'News', description: 'Weekly' });
    const news = expectStatus(res, 201);
    expect(news).toEqual({ id, label: 'News', description: 'Weekly', active: true, isDefault: false, subscriberCount: 0, createdAt: instant });
    expect(res.headers.get('location')).toBe(`/topics/${news.id}`);
    expect(schemaErrors('Topic', news)).toEqual([]);
    const deals = expectStatus(await a.post('/topics', { label: 'Deals' }), 201);
    expect(deals).toMatchObject({ description: null, isDefault: false });
    const list = expectStatus(await a.get('/topics'), 200);
    expect(list.items.map((t: { label: string; isDefault: boolean }) => [t.label, t.isDefault])).toEqual([['Newsletter', true], ['News', false], ['Deals', false]]); // creation order

    // PATCH: only given members change; description null clears it
    expect(expectStatus(await a.patch(`/topics/${news.id}`, { label: 'Weekly news' }), 200)).toEqual({ ...news, label: 'Weekly news' });
    expect(expectStatus(await a.patch(`/topics/${news.id}`, { description: null }), 200)).toMatchObject({ label: 'Weekly news', description: null });
    expect(expectStatus(await a.patch(`/topics/${news.id}`, {}), 200)).toMatchObject({ label: 'Weekly news', description: null, isDefault: false });

    // the default cannot be deactivated, un-defaulted or deleted
    expectError(await a.patch(`/topics/${newsletter.id}`, { active: false }), 409, 'topic_is_default');
    expectError(await a.patch(`/topics/${newsletter.id}`, { isDefault: false }), 409, 'topic_is_default');
    expectError(await a.delete(`/topics/${newsletter.id}`), 409, 'topic_is_default');

    // PATCH isDefault moves the flag
    expect(expectStatus(await a.patch(`/topics/${news.id}`, { isDefault: true }), 200)).toMatchObject({ isDefault: true });
    expect(expectStatus(await a.get(`/topics/${newsletter.id}`), 200)).toMatchObject({ isDefault: false });
    // a subscriber added without topicIds joins the default
    const s = expectStatus(await a.post('/subscribers', { email: 'joins@example.org' }), 201);
    expect(expectStatus(await a.get(`/subscribers/${s.id}/topics`), 200).topics.filter((t: { subscribed: boolean }) => t.subscribed).map((t: { topicId: string }) => t.topicId)).toEqual([news.id]);
    // the former default is an ordinary topic now
    expect(expectStatus(await a.patch(`/topics/${newsletter.id}`, { active: false }), 200)).toMatchObject({ active: false });
    expectError(await a.patch(`/topics/${newsletter.id}`, { isDefault: true }), 400, 'topic_inactive');
    expect((await a.delete(`/topics/${newsletter.id}`)).status).toBe(204);
    expectError(await a.get(`/topics/${newsletter.id}`), 404, 'topic_not_found');

    // isDefault on create makes the new topic the default
    const weekly = expectStatus(await a.post('/topics', { label: 'Weekly', isDefault: true }), 201);
    expect(weekly).toMatchObject({ label: 'Weekly', isDefault: true });
    const after = expectStatus(await a.get('/topics'), 200).items;
    expect(after.filter((t: { isDefault: boolean }) => t.isDefault).map((t: { id: string }) => t.id)).toEqual([weekly.id]);
    expectError(await a.delete(`/topics/${weekly.id}`), 409, 'topic_is_default');
    expect((await a.delete(`/topics/${news.id}`)).status).toBe(204);
    expect((await a.delete(`/topics/${deals.id}`)).status).toBe(204);
    // never without a default: the last topic is the default and stays
    expect(expectStatus(await a.get('/topics'), 200).items.map((t: { id: string; isDefault: boolean }) => [t.id, t.isDefault])).toEqual([[weekly.id, true]]);
  });

  it('concurrent first uses of an account create one default topic', async () => {
    const a = await env.account('concurrent default');
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, () => a.get('/topics')),
      ...Array.from({ length: 4 }, (_, i) => a.post('/subscribers', { email: `first${i}@example.org` })),
      a.post('/topics', { label: 'Other' }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 201, 201, 201, 201, 201]);
    const topics = expectStatus(await a.get('/topics'), 200).items;
    const defaults = topics.filter((t: { isDefault: boolean }) => t.isDefault);
    expect(defaults).toHaveLength(1);
    expect(defaults[0]).toMatchObject({ label: 'Newsletter', active: true });
    expect(topics.filter((t: { label: string }) => t.label === 'Newsletter')).toHaveLength(1);
    // every subscriber added in the race joined that one default topic
    expect(expectStatus(await a.get(`/subscribers?topicId=${defaults[0].id}`), 200).totalItems).toBe(4);
  });

  it('enrollExistingSubscribers subscribes every existing subscriber; subscriberCount follows', async () => {
    const a = await env.account('enrol');
    for (const email of ['e1@example.org', 'e2@example.org']) expectStatus(await a.post('/subscribers', { email }), 201);
    const quiet = expectStatus(await a.post('/topics', { label: 'Quiet' }), 201); // not default: nobody joins it
    expect(quiet.subscriberCount).toBe(0);
    const all = expectStatus(await a.post('/topics', { label: 'All', enrollExistingSubscribers: true }), 201);
    expect(all.subscriberCount).toBe(2);
    expect(expectStatus(await a.get(`/subscribers?topicId=${all.id}`), 200).totalItems).toBe(2);
  });

  it('errors', async () => {
    const a = await env.account('topic errors');
    expectError(await a.post('/topics', {}), 400, 'validation_failed');
    expectError(await a.post('/topics', { label: 'x'.repeat(256) }), 400, 'validation_failed');
    expectError(await a.post('/topics', { label: 'L', description: 'x'.repeat(2001) }), 400, 'validation_failed');
    expectError(await a.post('/topics', { label: 'L', isDefault: 'yes' }), 400, 'validation_failed');
    expectError(await a.post('/topics', { label: 'L', isSomething: true }), 400, 'unknown_property');
    expectError(await a.patch(`/topics/${UNKNOWN_ID}`, { label: 'x' }), 404, 'topic_not_found');
    expectError(await a.delete(`/topics/${UNKNOWN_ID}`), 404, 'topic_not_found');
    expectError(await a.get('/topics/123'), 400, 'invalid_uuid');
  });
});

describe('fields', () => {
  it('the catalogue starts with the built-ins; AddField derives personalization tag names', async () => {
    const a = await env.account('fields');
    const catalog = expectStatus(await a.get('/fields'), 200);
    expect(catalog).toEqual({ fields: [EMAIL_FIELD, FIRST_NAME_FIELD] });
    expect(schemaErrors('FieldCatalog', catalog)).toEqual([]);
    expect(expectStatus(await a.get('/fields/EMAIL'), 200)).toEqual(EMAIL_FIELD);
    expect(expectStatus(await a.get('/fields/FIRST_NAME'), 200)).toEqual(FIRST_NAME_FIELD);

    const age = await addField(a, { label: 'Âge (years)', fieldType: 'NUMBER' });
    expect(age).toEqual({ type: 'CUSTOM', fieldId: id, personalizationTagName: 'age_years', label: 'Âge (years)', fieldType: 'NUMBER', required: false, internal: false, active: true, position: 2, options: [] });
    const again = await addField(a, { label: 'Age years', fieldType: 'TEXT', required: true, internal: true });
    expect(again).toMatchObject({ personalizationTagName: 'age_years_2', fieldType: 'TEXT', required: true, internal: true, position: 3 });
    const explicit = await addField(a, { personalizationTagName: 'work_email', label: 'Work', fieldType: 'EMAIL' });
    expect(explicit.personalizationTagName).toBe('work_email');
    const colour = await addField(a, { label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Red', 'Green'] });
    expect(colour.options).toEqual([
      { id, label: 'Red', position: 1, active: true },
      { id, label: 'Green', position: 2, active: true },
    ]);

    expectError(await a.post('/fields', { personalizationTagName: 'work_email', label: 'W2', fieldType: 'TEXT' }), 409, 'personalization_tag_name_exists');
    expectError(await a.post('/fields', { personalizationTagName: 'email', label: 'E', fieldType: 'TEXT' }), 409, 'personalization_tag_name_exists');
    expectError(await a.post('/fields', { personalizationTagName: 'Work-Email', label: 'W', fieldType: 'TEXT' }), 400, 'invalid_personalization_tag_name');
    expectError(await a.post('/fields', { label: 'C', fieldType: 'MULTI_CHOICE' }), 400, 'field_options_required');
    expectError(await a.post('/fields', { label: 'C', fieldType: 'MULTI_CHOICE', options: [] }), 400, 'field_options_required');
    expectError(await a.post('/fields', { label: 'C', fieldType: 'TEXT', options: ['a'] }), 400, 'field_options_not_allowed');
    expectError(await a.post('/fields', { label: 'C', fieldType: 'SINGLE_CHOICE', options: ['a', 'A'] }), 400, 'validation_failed');
    expectError(await a.post('/fields', { label: 'C', fieldType: 'URL' }), 400, 'validation_failed');
    expectError(await a.post('/fields', { label: '   ', fieldType: 'TEXT' }), 400, 'validation_failed');

    const all = expectStatus(await a.get('/fields'), 200);
    expect(all.fields.map((f: { personalizationTagName: string }) => f.personalizationTagName)).toEqual(['email', 'first_name', 'age_years', 'age_years_2', 'work_email', 'colour']);
    expect(expectStatus(await a.get(`/fields/${colour.fieldId}`), 200)).toEqual(colour);
    expectError(await a.get(`/fields/${UNKNOWN_ID}`), 404, 'field_not_found');
    expectError(await a.get('/fields/email'), 400, 'invalid_uuid');
  });

  it('PATCH: label, flags, position; options added (id null), relabelled, omitted ones deactivated', async () => {
    const a = await env.account('patch');
    const first = await addField(a, { label: 'First', fieldType: 'TEXT' });
    const colour = await addField(a, { label: 'Colour', fieldType: 'MULTI_CHOICE', options: ['Red', 'Green', 'Blue'] });
    const [red, green, blue] = colour.options;

    const relabelled = expectStatus(await a.patch(`/fields/${colour.fieldId}`, { label: 'Colours', required: true, internal: true }), 200);
    expect(relabelled).toEqual({ ...colour, label: 'Colours', required: true, internal: true });

    const moved = expectStatus(await a.patch(`/fields/${colour.fieldId}`, { position: 2 }), 200);
    expect(moved.position).toBe(2);
    expect(expectStatus(await a.get(`/fields/${first.fieldId}`), 200).position).toBe(3);
    expectError(await a.patch(`/fields/${colour.fieldId}`, { position: 1 }), 400, 'validation_failed'); // built-ins hold 0 and 1

    const patched = expectStatus(
      await a.patch(`/fields/${colour.fieldId}`, { options: [{ id: blue.id, label: 'Navy' }, { id: red.id, label: 'Red' }, { id: null, label: 'Yellow' }] }),
      200,
    );
    expect(patched.options).toEqual([
      { id: blue.id, label: 'Navy', position: 1, active: true },
      { id: red.id, label: 'Red', position: 2, active: true },
      { id, label: 'Yellow', position: 3, active: true },
      { id: green.id, label: 'Green', position: 4, active: false }, // omitted: deactivated, never deleted
    ]);
    expect(schemaErrors('Field', patched)).toEqual([]);

    expectError(await a.patch(`/fields/${colour.fieldId}`, { options: [{ id: UNKNOWN_ID, label: 'X' }] }), 404, 'option_not_found');
    expectError(await a.patch(`/fields/${colour.fieldId}`, { options: [] }), 400, 'field_options_required');
    expectError(await a.patch(`/fields/${first.fieldId}`, { options: [{ label: 'X' }] }), 400, 'field_options_not_allowed');
    expectError(await a.patch(`/fields/${colour.fieldId}`, { options: [{ id: red.id, label: 'A' }, { id: red.id, label: 'B' }] }), 400, 'duplicate_ids');
    expectError(await a.patch(`/fields/${colour.fieldId}`, { fieldType: 'TEXT' }), 400, 'unknown_property');
    expectError(await a.patch(`/fields/${colour.fieldId}`, { personalizationTagName: 'x' }), 400, 'unknown_property');
    expectError(await a.patch(`/fields/${UNKNOWN_ID}`, { label: 'x' }), 404, 'field_not_found');
    expectError(await a.patch('/fields/EMAIL', { label: 'Mail' }), 409, 'built_in_field_immutable');
    // nothing of the refused requests was applied
    expect(expectStatus(await a.get(`/fields/${colour.fieldId}`), 200)).toEqual(patched);
  });

  it('PATCH: an option sent back with active:false stays deactivated (FieldOption round trip)', async () => {
    const a = await env.account('option active');
    const colour = await addField(a, { label: 'Colour', fieldType: 'SINGLE_CHOICE', options: ['Red', 'Green'] });
    const [red, green] = colour.options;
    const patched = expectStatus(await a.patch(`/fields/${colour.fieldId}`, { options: [{ ...red }, { ...green, active: false }] }), 200);
    expect(patched.options).toEqual([
      { id: red.id, label: 'Red', position: 1, active: true },
      { id: green.id, label: 'Green', position: 2, active: false },
    ]);
  });

  it('archive / restore / delete with the 409 rules; usage report with sources', async () => {
    const a = await env.account('lifecycle');
    const field = await addField(a, { label: 'Score', fieldType: 'NUMBER' });
    const s = expectStatus(await a.post('/subscribers', { email: 'scored@example.org', fields: [{ fieldId: field.fieldId, value: { kind: 'NUMBER', number: 7 } }] }), 201);

    const report = expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200);
    expect(report).toEqual({
      fieldId: field.fieldId,
      fieldLabel: 'Score',
      personalizationTagName: 'score',
      fieldType: 'NUMBER',
      subscriberValueCount: 1,
      archiveBlocked: false,
      permanentDeleteBlocked: false,
      blockingUsages: [],
      warningUsages: [],
      contentMergeTagUsages: [],
      permanentDeleteBlockingUsages: [],
      externalHints: [],
      sources: expect.arrayContaining(['segment', 'form', 'rss', 'messaging'].map((service) => ({ service, answered: true }))),
    });
    expect(report.sources).toHaveLength(4);
    expect(schemaErrors('FieldUsageReport', report)).toEqual([]);
    expect(env.faulty.form!.calls.at(-1)).toMatchObject({ accountId: a.accountId, fieldId: field.fieldId, personalizationTagName: 'score' });

    // an active form writing the field blocks archival (and deletion); a segment reading it blocks deletion
    const form = expectStatus(await a.post('/forms', { name: 'Signup', type: 'DEFAULT', inputFields: [{ fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' }, isRequired: true }, { fieldRef: { type: 'CUSTOM', fieldId: field.fieldId }, isRequired: false }] }), 201);
    const expression = { conditionGroups: [{ conditions: [{ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM', fieldId: field.fieldId }, operator: 'NUMBER_GREATER_THAN', operand: { kind: 'NUMBER', number: 5 } }] }] };
    const segment = expectStatus(await a.post('/segments', { name: 'High scorers', expression }), 201);
    const blocked = expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200);
    expect(blocked).toMatchObject({ archiveBlocked: true, permanentDeleteBlocked: true });
    const formUsage = {
      category: 'FORM', area: 'inputFields[1]', artifactId: form.id, artifactName: 'Signup', status: 'ACTIVE',
      reason: 'the active form writes the field with every submission', link: `/forms/${form.id}`, permanentDeleteBlocking: true,
    };
    expect(blocked.blockingUsages).toEqual([formUsage]);
    expect(blocked.warningUsages).toEqual([expect.objectContaining({ category: 'SEGMENT', artifactId: segment.id, artifactName: 'High scorers', permanentDeleteBlocking: true })]);
    expect(blocked.permanentDeleteBlockingUsages).toEqual(expect.arrayContaining([formUsage, expect.objectContaining({ category: 'SEGMENT', artifactId: segment.id })]));
    expect(blocked.permanentDeleteBlockingUsages).toHaveLength(2);
    expect(schemaErrors('FieldUsageReport', blocked)).toEqual([]);
    expect(expectStatus(await a.get(`/fields/${field.fieldId}/forms`), 200)).toEqual([{ id: form.id, name: 'Signup' }]);

    const refused = await a.post(`/fields/${field.fieldId}/archive`);
    expectError(refused, 409, 'field_archive_blocked');
    expect(refused.json.details).toEqual([{ path: 'blockingUsages[0]', problem: expect.stringContaining('Signup') }]);

    // a source that does not answer: nothing can be proven
    env.faulty.rss!.fail(field.fieldId);
    const unknown = expectStatus(await a.get(`/fields/${field.fieldId}/usage`), 200);
    expect(unknown).toMatchObject({ archiveBlocked: true, permanentDeleteBlocked: true });
    // a fixed text: the peer's own words (and any address in them) stay in the service's log
    expect(unknown.sources).toContainEqual({ service: 'rss', answered: false, error: 'the rss service is unavailable' });
    expectError(await a.post(`/fields/${field.fieldId}/archive`), 409, 'field_usage_unknown');
    expect(expectStatus(await a.get(`/fields/${field.fieldId}`), 200).active).toBe(true); // nothing written
    env.faulty.form!.fail(field.fieldId);
    expectError(await a.get(`/fields/${field.fieldId}/forms`), 409, 'field_usage_unknown');
    env.faulty.rss!.heal();
    env.faulty.form!.heal();

    // the form deactivated, the field can be archived
    expectStatus(await a.post(`/forms/${form.id}/deactivate`), 200);
    expectError(await a.delete(`/fields/${field.fieldId}`), 409, 'field_not_archived');
    const archived = expectStatus(await a.post(`/fields/${field.fieldId}/archive`), 200);
    expect(archived).toEqual({ ...field, active: false });
    expect(expectStatus(await a.post(`/fields/${field.fieldId}/archive`), 200)).toEqual(archived); // idempotent
    expect(expectStatus(await a.get('/fields'), 200).fields.map((f: { label: string }) => f.label)).toEqual(['Email', 'First name']);
    expect(expectStatus(await a.get('/fields?includeArchived=true'), 200).fields.map((f: { label: string }) => f.label)).toEqual(['Email', 'First name', 'Score']);
    // archived fields take no new values, but keep the stored ones
    expectError(await a.put(`/subscribers/${s.id}/field-values/${field.fieldId}`, { kind: 'NUMBER', number: 8 }), 409, 'field_archived');
    expect(expectStatus(await a.get(`/subscribers/${s.id}/field-values`), 200).values).toEqual([{ fieldId: field.fieldId, personalizationTagName: 'score', value: { kind: 'NUMBER', number: 7 } }]);

    expect(expectStatus(await a.post(`/fields/${field.fieldId}/restore`), 200)).toEqual({ ...field, active: true });
    expect(expectStatus(await a.post(`/fields/${field.fieldId}/restore`), 200).active).toBe(true);
    expectStatus(await a.post(`/fields/${field.fieldId}/archive`), 200);

    // permanent delete: blocked by the segment (the form gone), unknown when a source is down, then done
    expect((await a.delete(`/forms/${form.id}`)).status).toBe(204);
    const deleteBlocked = await a.delete(`/fields/${field.fieldId}`);
    expectError(deleteBlocked, 409, 'field_delete_blocked');
    expect(deleteBlocked.json.details).toEqual([{ path: 'permanentDeleteBlockingUsages[0]', problem: expect.stringContaining('High scorers') }]);
    expect(await a.delete(`/segments/${segment.id}`)).toMatchObject({ status: 204 });
    env.faulty.segment!.fail(field.fieldId);
    expectError(await a.delete(`/fields/${field.fieldId}`), 409, 'field_usage_unknown');
    env.faulty.segment!.heal();
    expect((await a.delete(`/fields/${field.fieldId}`)).status).toBe(204);
    expectError(await a.get(`/fields/${field.fieldId}`), 404, 'field_not_found');
    expect(expectStatus(await a.get(`/subscribers/${s.id}/field-values`), 200).values).toEqual([]);
  });

  it('built-in fields cannot be changed, archived, restored or deleted', async () => {
    const a = await env.account('built-ins');
    for (const name of ['EMAIL', 'FIRST_NAME']) {
      expectError(await a.patch(`/fields/${name}`, { required: true }), 409, 'built_in_field_immutable');
      expectError(await a.post(`/fields/${name}/archive`), 409, 'built_in_field_immutable');
      expectError(await a.post(`/fields/${name}/restore`), 409, 'built_in_field_immutable');
      expectError(await a.delete(`/fields/${name}`), 409, 'built_in_field_immutable');
    }
    expectError(await a.get('/fields/EMAIL/usage'), 400, 'invalid_uuid');
    expectError(await a.get('/fields/EMAIL/forms'), 400, 'invalid_uuid');
    // a field no form uses
    const unused = await addField(a, { label: 'Unused', fieldType: 'TEXT' });
    expect(expectStatus(await a.get(`/fields/${unused.fieldId}/forms`), 200)).toEqual([]);
    expectError(await a.get(`/fields/${UNKNOWN_ID}/forms`), 404, 'field_not_found');
  });
});
