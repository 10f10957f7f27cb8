// Subscribers over real gRPC: create, read, delete, list filters, the atomic replacements of
// SubscriberData (and of its single members), field values of one subscriber, error ids.
import { status } from '@grpc/grpc-js';
import type { subscriberV1 } from '@mailer/proto';
import {
  add,
  addField,
  addReq,
  addTag,
  addTopic,
  bool,
  data,
  date,
  email,
  type Env,
  errorOf,
  FT,
  fieldId,
  list,
  newAccount,
  num,
  opt,
  opts,
  S,
  startEnv,
  text,
} from './support';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env?.stop());

const c = () => env.client;

/** An account with one field of every type, two tags and two topics (the first one default). */
async function account() {
  const a = newAccount();
  const [t, lt, em, n, d, b, single, multi] = [
    await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT),
    await addField(c(), a, 'Notes', FT.FIELD_TYPE_LONG_TEXT),
    await addField(c(), a, 'Work email', FT.FIELD_TYPE_EMAIL),
    await addField(c(), a, 'Age', FT.FIELD_TYPE_NUMBER),
    await addField(c(), a, 'Birthday', FT.FIELD_TYPE_DATE),
    await addField(c(), a, 'Consent', FT.FIELD_TYPE_BOOLEAN),
    await addField(c(), a, 'Plan', FT.FIELD_TYPE_SINGLE_CHOICE, { options: ['Free', 'Pro'] }),
    await addField(c(), a, 'Interests', FT.FIELD_TYPE_MULTI_CHOICE, { options: ['Cats', 'Dogs', 'Birds'] }),
  ];
  const tags = [await addTag(c(), a, 'VIP'), await addTag(c(), a, 'Lead')];
  const topics = [await addTopic(c(), a, 'News', { isDefault: true }), await addTopic(c(), a, 'Deals')];
  return { a, f: { t, lt, em, n, d, b, single, multi }, tags, topics };
}

describe('AddSubscriber and reads', () => {
  it('creates a subscriber with typed values of every kind, tags, and the default topic; reads it back in every form', async () => {
    const { a, f, tags, topics } = await account();
    const s = await add(c(), a, ' Ann@Example.ORG ', {
      firstName: ' Ann ',
      tags: [tags[1].id, tags[0].id.toUpperCase()],
      fields: [
        { fieldId: fieldId(f.t), value: text('ACME') },
        { fieldId: fieldId(f.lt), value: text('long '.repeat(100)) },
        { fieldId: fieldId(f.em), value: email(' Work@Example.ORG') },
        { fieldId: fieldId(f.n), value: num(42.5) },
        { fieldId: fieldId(f.d), value: date('1990-02-28') },
        { fieldId: fieldId(f.b), value: bool(false) },
        { fieldId: fieldId(f.single), value: opt(f.single.options[1].id!) },
        { fieldId: fieldId(f.multi), value: opts([f.multi.options[2].id!, f.multi.options[0].id!]) },
      ],
    });
    expect(s).toMatchObject({ email: 'ann@example.org', firstName: 'Ann', subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE, tags: [tags[0].id, tags[1].id].sort() });
    // display values: built-ins first, then the catalog order
    expect(s.values.map((v) => [v.personalizationTagName, v.displayValue])).toEqual([
      ['email', 'ann@example.org'],
      ['first_name', 'Ann'],
      ['company', 'ACME'],
      ['notes', 'long '.repeat(100)],
      ['work_email', 'work@example.org'],
      ['age', '42.5'],
      ['birthday', '1990-02-28'],
      ['consent', 'false'],
      ['plan', 'Pro'],
      ['interests', [f.multi.options[0], f.multi.options[2]].sort((x, y) => (x.id! < y.id! ? -1 : 1)).map((o) => o.label).join(', ')],
    ]);
    expect((await c().getSubscriber({ accountId: a, subscriberId: s.id })).subscriber).toEqual(s);
    expect((await c().getSubscriberByEmail({ accountId: a, email: 'ANN@example.org ' })).subscriber).toEqual(s);

    const d = await data(c(), a, s.id);
    expect(d.fields.map((x) => x.fieldId)).toEqual(d.fields.map((x) => x.fieldId).sort());
    expect(d.tags).toEqual([...d.tags].sort());
    const byId = Object.fromEntries(d.fields.map((x) => [x.fieldId, x.value]));
    expect(byId[fieldId(f.single)]).toEqual({ value: { $case: 'optionId', value: f.single.options[1].id! }, labels: ['Pro'] });
    // multi-option values as a canonical set (sorted ids), labels alongside
    const multiIds = [f.multi.options[0], f.multi.options[2]].sort((x, y) => (x.id! < y.id! ? -1 : 1));
    expect(byId[fieldId(f.multi)]).toEqual({ value: { $case: 'optionIds', value: { ids: multiIds.map((o) => o.id!) } }, labels: multiIds.map((o) => o.label) });
    expect(byId[fieldId(f.em)]).toEqual({ value: { $case: 'email', value: 'work@example.org' }, labels: [] });
    expect(byId[fieldId(f.b)]).toEqual({ value: { $case: 'booleanValue', value: false }, labels: [] });

    const values = (await c().listFieldValues({ accountId: a, subscriberId: s.id })).values;
    expect(values.map((v) => v.personalizationTagName).sort()).toEqual(['age', 'birthday', 'company', 'consent', 'interests', 'notes', 'plan', 'work_email']);

    const topicsOf = (await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics;
    expect(topicsOf.filter((t) => t.label !== 'Newsletter')).toEqual([
      { topicId: topics[0].id, label: 'News', subscribed: true, optedOut: false },
      { topicId: topics[1].id, label: 'Deals', subscribed: false, optedOut: false },
    ]);
  });

  it('joins the given topics, or none for an explicitly empty list', async () => {
    const { a, topics } = await account();
    const s1 = await add(c(), a, 'x1@example.org', { topicIds: [topics[1].id], topicIdsGiven: true });
    const s2 = await add(c(), a, 'x2@example.org', { topicIds: [], topicIdsGiven: true });
    const subscribed = async (id: string) => (await c().getSubscriberTopics({ accountId: a, subscriberId: id })).topics.filter((t) => t.subscribed).map((t) => t.topicId);
    expect(await subscribed(s1.id)).toEqual([topics[1].id]);
    expect(await subscribed(s2.id)).toEqual([]);
  });

  it('refuses bad creates with precise error ids and writes nothing', async () => {
    const { a, f, tags, topics } = await account();
    await c().updateTopic({ accountId: a, topicId: topics[1].id, active: false, descriptionGiven: false });
    const required = await addField(c(), a, 'Customer no', FT.FIELD_TYPE_NUMBER, { required: true });
    const ok = [{ fieldId: fieldId(required), value: num(1) }];
    const cases: Array<[Partial<subscriberV1.AddSubscriberRequest>, number, string]> = [
      [{ email: 'no-at' }, status.INVALID_ARGUMENT, 'invalid_email'],
      [{ email: `${'x'.repeat(250)}@example.org` }, status.INVALID_ARGUMENT, 'invalid_email'],
      [{ firstName: 'x'.repeat(256) }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ subscriberStatus: S.SUBSCRIBER_STATUS_COMPLAINED }, status.INVALID_ARGUMENT, 'subscriber_status_not_manual'],
      [{ subscriberStatus: 77 as subscriberV1.SubscriberStatus }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ tags: ['not-a-uuid'] }, status.INVALID_ARGUMENT, 'invalid_uuid'],
      [{ tags: [tags[0].id, tags[0].id] }, status.INVALID_ARGUMENT, 'duplicate_ids'],
      [{ tags: ['00000000-0000-4000-8000-000000000000'] }, status.NOT_FOUND, 'tag_not_found'],
      [{ topicIds: ['00000000-0000-4000-8000-000000000000'], topicIdsGiven: true }, status.NOT_FOUND, 'topic_not_found'],
      [{ topicIds: [topics[1].id], topicIdsGiven: true }, status.INVALID_ARGUMENT, 'topic_inactive'],
      [{ fields: [...ok, { fieldId: '00000000-0000-4000-8000-000000000000', value: text('x') }] }, status.NOT_FOUND, 'field_not_found'],
      [{ fields: [...ok, { fieldId: fieldId(f.t), value: num(1) }] }, status.INVALID_ARGUMENT, 'field_value_kind_mismatch'],
      [{ fields: [...ok, { fieldId: fieldId(f.t), value: text('x'.repeat(10_001)) }] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fields: [...ok, { fieldId: fieldId(f.lt), value: text('x'.repeat(100_001)) }] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fields: [...ok, { fieldId: fieldId(f.em), value: email('nope') }] }, status.INVALID_ARGUMENT, 'invalid_email'],
      [{ fields: [...ok, { fieldId: fieldId(f.n), value: num(Number.NaN) }] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fields: [...ok, { fieldId: fieldId(f.n), value: num(Number.POSITIVE_INFINITY) }] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fields: [...ok, { fieldId: fieldId(f.d), value: date('2023-02-29') }] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fields: [...ok, { fieldId: fieldId(f.single), value: opt(f.multi.options[0].id!) }] }, status.NOT_FOUND, 'option_not_found'],
      [{ fields: [...ok, { fieldId: fieldId(f.multi), value: opts([]) }] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fields: [...ok, { fieldId: fieldId(f.multi), value: opts([f.multi.options[0].id!, f.multi.options[0].id!]) }] }, status.INVALID_ARGUMENT, 'duplicate_ids'],
      [{ fields: [...ok, { fieldId: fieldId(f.t), value: { value: undefined, labels: [] } }] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ fields: [...ok, ...ok] }, status.INVALID_ARGUMENT, 'duplicate_ids'],
      [{ fields: [] }, status.INVALID_ARGUMENT, 'required_field_missing'],
    ];
    for (const [over, code, errorId] of cases) {
      const req = addReq(a, 'bad@example.org', { fields: ok, ...over });
      expect({ over: Object.keys(over), ...(await errorOf(c().addSubscriber(req))) }).toMatchObject({ code, errorId });
    }
    expect((await list(c(), a)).totalItems).toBe('0');
    const missing = await errorOf(c().addSubscriber(addReq(a, 'r@example.org')));
    expect(missing.details).toEqual([{ path: `fields.${fieldId(required)}`, problem: 'required field customer_no has no value' }]);
  });

  it('answers subscriber_not_found / invalid_uuid / invalid_email on reads and delete', async () => {
    const a = newAccount();
    const unknown = '00000000-0000-4000-8000-000000000001';
    for (const p of [
      c().getSubscriber({ accountId: a, subscriberId: unknown }),
      c().getSubscriberData({ accountId: a, subscriberId: unknown }),
      c().getSubscriberTopics({ accountId: a, subscriberId: unknown }),
      c().listFieldValues({ accountId: a, subscriberId: unknown }),
      c().deleteSubscriber({ accountId: a, subscriberId: unknown }),
      c().getSubscriberByEmail({ accountId: a, email: 'nobody@example.org' }),
    ]) {
      expect(await errorOf(p)).toMatchObject({ code: status.NOT_FOUND, errorId: 'subscriber_not_found' });
    }
    expect(await errorOf(c().getSubscriber({ accountId: a, subscriberId: 'abc' }))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'invalid_uuid' });
    expect(await errorOf(c().getSubscriberByEmail({ accountId: a, email: 'nope' }))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'invalid_email' });
    expect(await errorOf(c().getSubscriber({ accountId: '', subscriberId: unknown }))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'validation_failed' });
  });

  it('deletes a subscriber; its email is free again', async () => {
    const a = newAccount();
    const s = await add(c(), a, 'gone@example.org');
    await c().deleteSubscriber({ accountId: a, subscriberId: s.id });
    expect(await errorOf(c().getSubscriber({ accountId: a, subscriberId: s.id }))).toMatchObject({ errorId: 'subscriber_not_found' });
    expect((await list(c(), a)).statusCounts?.active).toBe('0');
    await expect(add(c(), a, 'gone@example.org')).resolves.toBeDefined();
  });
});

describe('ListSubscribers', () => {
  it('filters by status, tag, topic and search (email or first-name prefix), counts every status over the other filters, pages in registration order', async () => {
    const { a, tags, topics } = await account();
    const ids: string[] = [];
    const statuses = [S.SUBSCRIBER_STATUS_ACTIVE, S.SUBSCRIBER_STATUS_UNCONFIRMED, S.SUBSCRIBER_STATUS_BLOCKED, S.SUBSCRIBER_STATUS_UNSUBSCRIBED, S.SUBSCRIBER_STATUS_ACTIVE];
    for (let i = 0; i < 10; i++) {
      const s = await add(c(), a, `p${i}@example.org`, {
        firstName: i % 2 ? `Zoe ${i}` : `Max ${i}`,
        subscriberStatus: statuses[i % 5],
        tags: i < 4 ? [tags[0].id] : [],
        topicIds: i % 3 === 0 ? [topics[1].id] : [],
        topicIdsGiven: true,
      });
      ids.push(s.id);
    }
    const all = await list(c(), a, { pageSize: 4, pageNumber: 2 });
    expect(all.items.map((i) => i.id)).toEqual(ids.slice(4, 8));
    expect(all).toMatchObject({ totalItems: '10', totalPages: 3, pageNumber: 2, pageSize: 4 });
    expect(all.statusCounts).toEqual({ unconfirmed: '2', active: '4', unsubscribed: '2', bounced: '0', complained: '0', blocked: '2' });
    const last = await list(c(), a, { pageSize: 4, pageNumber: 3 });
    expect(last.items.map((i) => i.id)).toEqual(ids.slice(8));
    expect((await list(c(), a, { pageSize: 4, pageNumber: 4 })).items).toEqual([]);

    const active = await list(c(), a, { status: S.SUBSCRIBER_STATUS_ACTIVE });
    expect(active.items.map((i) => i.id)).toEqual([ids[0], ids[4], ids[5], ids[9]]);
    expect(active.totalItems).toBe('4');
    expect(active.statusCounts).toEqual(all.statusCounts); // the status filter does not change statusCounts

    const tagged = await list(c(), a, { tagId: tags[0].id.toUpperCase() });
    expect(tagged.items.map((i) => i.id)).toEqual(ids.slice(0, 4));
    expect(tagged.statusCounts).toEqual({ unconfirmed: '1', active: '1', unsubscribed: '1', bounced: '0', complained: '0', blocked: '1' });

    const inTopic = await list(c(), a, { topicId: topics[1].id, status: S.SUBSCRIBER_STATUS_ACTIVE });
    expect(inTopic.items.map((i) => i.id)).toEqual([ids[0], ids[9]]);

    expect((await list(c(), a, { search: 'P1' })).items.map((i) => i.email)).toEqual(['p1@example.org']);
    expect((await list(c(), a, { search: 'zoe' })).items.map((i) => i.firstName)).toEqual(['Zoe 1', 'Zoe 3', 'Zoe 5', 'Zoe 7', 'Zoe 9']);
    expect((await list(c(), a, { search: 'zoe', status: S.SUBSCRIBER_STATUS_BLOCKED })).statusCounts).toEqual({
      // Zoe 1, 3, 5, 7, 9: UNCONFIRMED, UNSUBSCRIBED, ACTIVE, BLOCKED, ACTIVE
      unconfirmed: '1',
      active: '2',
      unsubscribed: '1',
      bounced: '0',
      complained: '0',
      blocked: '1',
    });
    expect((await list(c(), a, { search: '.*' })).items).toEqual([]); // regex characters are literal
  });

  it('refuses bad filters and pages', async () => {
    const a = newAccount();
    const unknown = '00000000-0000-4000-8000-000000000009';
    expect(await errorOf(list(c(), a, { tagId: unknown }))).toMatchObject({ code: status.NOT_FOUND, errorId: 'tag_not_found' });
    expect(await errorOf(list(c(), a, { topicId: unknown }))).toMatchObject({ code: status.NOT_FOUND, errorId: 'topic_not_found' });
    expect(await errorOf(list(c(), a, { tagId: 'x' }))).toMatchObject({ errorId: 'invalid_uuid' });
    expect(await errorOf(list(c(), a, { pageSize: 1001 }))).toMatchObject({ errorId: 'validation_failed' });
    expect(await errorOf(list(c(), a, { pageNumber: -1 }))).toMatchObject({ errorId: 'validation_failed' });
    expect(await errorOf(list(c(), a, { status: 99 as subscriberV1.SubscriberStatus }))).toMatchObject({ errorId: 'validation_failed' });
    expect(await errorOf(list(c(), a, { search: 'x'.repeat(255) }))).toMatchObject({ errorId: 'validation_failed' });
  });
});

describe('replacements', () => {
  it('ReplaceSubscriberData replaces email, first name, status, the complete value set and tag set atomically', async () => {
    const { a, f, tags } = await account();
    const s = await add(c(), a, 'r@example.org', { firstName: 'Rob', tags: [tags[0].id], fields: [{ fieldId: fieldId(f.t), value: text('ACME') }, { fieldId: fieldId(f.n), value: num(3) }] });
    const res = await c().replaceSubscriberData({
      accountId: a,
      subscriberId: s.id,
      email: 'Robert@Example.org',
      subscriberStatus: S.SUBSCRIBER_STATUS_BLOCKED,
      fields: [{ fieldId: fieldId(f.n), value: num(4) }, { fieldId: fieldId(f.b), value: bool(true) }],
      tags: [tags[1].id],
    });
    expect(res.data).toEqual({
      subscriberId: s.id,
      email: 'robert@example.org',
      firstName: undefined, // absent = null = cleared
      subscriberStatus: S.SUBSCRIBER_STATUS_BLOCKED,
      fields: [
        { fieldId: fieldId(f.n), value: num(4) },
        { fieldId: fieldId(f.b), value: bool(true) },
      ].sort((x, y) => (x.fieldId < y.fieldId ? -1 : 1)),
      tags: [tags[1].id],
    });
    expect(await data(c(), a, s.id)).toEqual(res.data);
  });

  it('a replacement with one bad part changes nothing (read back)', async () => {
    const { a, f, tags } = await account();
    const other = await add(c(), a, 'taken@example.org');
    const s = await add(c(), a, 'keep@example.org', { firstName: 'Kim', tags: [tags[0].id], fields: [{ fieldId: fieldId(f.t), value: text('ACME') }] });
    const before = await data(c(), a, s.id);
    const good = { accountId: a, subscriberId: s.id, email: 'new@example.org', firstName: 'New', subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED, fields: [{ fieldId: fieldId(f.n), value: num(1) }], tags: [tags[1].id] };
    const bad: Array<[Partial<subscriberV1.ReplaceSubscriberDataRequest>, string]> = [
      [{ email: 'taken@example.org' }, 'subscriber_email_exists'],
      [{ email: 'broken' }, 'invalid_email'],
      [{ subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED }, 'subscriber_status_not_manual'],
      [{ subscriberStatus: S.SUBSCRIBER_STATUS_UNSPECIFIED }, 'validation_failed'],
      [{ tags: [tags[1].id, '00000000-0000-4000-8000-000000000000'] }, 'tag_not_found'],
      [{ fields: [{ fieldId: fieldId(f.n), value: num(1) }, { fieldId: fieldId(f.d), value: date('2024-13-01') }] }, 'validation_failed'],
      [{ fields: [{ fieldId: fieldId(f.n), value: text('1') }] }, 'field_value_kind_mismatch'],
    ];
    for (const [over, errorId] of bad) {
      expect(await errorOf(c().replaceSubscriberData({ ...good, ...over }))).toMatchObject({ errorId });
      expect(await data(c(), a, s.id)).toEqual(before);
    }
    expect((await errorOf(c().replaceSubscriberData({ ...good, email: 'TAKEN@example.org' }))).code).toBe(status.ALREADY_EXISTS);
    expect(await data(c(), a, other.id)).toMatchObject({ email: 'taken@example.org' });
    // and the good one applies
    expect((await c().replaceSubscriberData(good)).data).toMatchObject({ email: 'new@example.org', firstName: 'New', subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED, tags: [tags[1].id] });
  });

  it('enforces required fields on full replacement, not when a required field is archived', async () => {
    const a = newAccount();
    const required = await addField(c(), a, 'Customer no', FT.FIELD_TYPE_NUMBER, { required: true });
    const s = await add(c(), a, 'q@example.org', { fields: [{ fieldId: fieldId(required), value: num(7) }] });
    const req = { accountId: a, subscriberId: s.id, email: 'q@example.org', subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE, fields: [], tags: [] };
    expect(await errorOf(c().replaceSubscriberData(req))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'required_field_missing' });
    expect((await data(c(), a, s.id)).fields).toHaveLength(1);
  });

  it('single-member replacements: email, first name (absent clears), status (manual only)', async () => {
    const a = newAccount();
    const s = await add(c(), a, 'one@example.org', { firstName: 'One', subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED });
    await add(c(), a, 'two@example.org');
    expect((await c().replaceSubscriberEmail({ accountId: a, subscriberId: s.id, email: ' ONE.new@example.org' })).data?.email).toBe('one.new@example.org');
    expect(await errorOf(c().replaceSubscriberEmail({ accountId: a, subscriberId: s.id, email: 'Two@example.org' }))).toMatchObject({ code: status.ALREADY_EXISTS, errorId: 'subscriber_email_exists' });
    expect(await errorOf(c().replaceSubscriberEmail({ accountId: a, subscriberId: s.id, email: '' }))).toMatchObject({ errorId: 'invalid_email' });
    expect((await c().replaceSubscriberFirstName({ accountId: a, subscriberId: s.id, firstName: ' Uno ' })).data?.firstName).toBe('Uno');
    expect((await c().replaceSubscriberFirstName({ accountId: a, subscriberId: s.id })).data?.firstName).toBeUndefined();
    expect(await errorOf(c().replaceSubscriberFirstName({ accountId: a, subscriberId: s.id, firstName: 'x'.repeat(256) }))).toMatchObject({ errorId: 'validation_failed' });
    for (const st of [S.SUBSCRIBER_STATUS_UNCONFIRMED, S.SUBSCRIBER_STATUS_BOUNCED, S.SUBSCRIBER_STATUS_COMPLAINED]) {
      expect(await errorOf(c().replaceSubscriberStatus({ accountId: a, subscriberId: s.id, subscriberStatus: st }))).toMatchObject({ errorId: 'subscriber_status_not_manual' });
    }
    expect((await c().replaceSubscriberStatus({ accountId: a, subscriberId: s.id, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE })).data?.subscriberStatus).toBe(S.SUBSCRIBER_STATUS_ACTIVE);
    expect((await list(c(), a)).statusCounts).toMatchObject({ active: '2', unconfirmed: '0' });
    expect(await data(c(), a, s.id)).toMatchObject({ email: 'one.new@example.org', firstName: undefined, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE });
  });
});

describe('field values of one subscriber', () => {
  it('sets, replaces and deletes one value; the answer carries labels', async () => {
    const { a, f } = await account();
    const s = await add(c(), a, 'v@example.org');
    const set = await c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(f.multi), value: opts([f.multi.options[1].id!]) });
    expect(set.value).toEqual({ fieldId: fieldId(f.multi), personalizationTagName: 'interests', value: { value: { $case: 'optionIds', value: { ids: [f.multi.options[1].id!] } }, labels: ['Dogs'] } });
    await c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(f.t), value: text('One') });
    await c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(f.t), value: text('Two') });
    expect((await c().listFieldValues({ accountId: a, subscriberId: s.id })).values.map((v) => v.value?.value)).toEqual(
      expect.arrayContaining([{ $case: 'text', value: 'Two' }, { $case: 'optionIds', value: { ids: [f.multi.options[1].id!] } }]),
    );
    await c().deleteFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(f.t) });
    await c().deleteFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(f.t) }); // idempotent
    expect((await c().listFieldValues({ accountId: a, subscriberId: s.id })).values.map((v) => v.fieldId)).toEqual([fieldId(f.multi)]);
  });

  it('refuses bad values with precise ids and leaves the value as it was', async () => {
    const { a, f } = await account();
    const s = await add(c(), a, 'w@example.org', { fields: [{ fieldId: fieldId(f.n), value: num(5) }] });
    const set = (field: string, value: subscriberV1.FieldValue) => c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: field, value });
    expect(await errorOf(set(fieldId(f.n), text('5')))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'field_value_kind_mismatch' });
    expect(await errorOf(set('00000000-0000-4000-8000-000000000000', num(1)))).toMatchObject({ code: status.NOT_FOUND, errorId: 'field_not_found' });
    expect(await errorOf(set('EMAIL', email('a@b.org')))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'validation_failed' });
    expect(await errorOf(set('nope', num(1)))).toMatchObject({ errorId: 'invalid_uuid' });
    expect(await errorOf(c().setFieldValue({ accountId: a, subscriberId: '00000000-0000-4000-8000-000000000000', fieldId: fieldId(f.n), value: num(1) }))).toMatchObject({ errorId: 'subscriber_not_found' });
    expect(await errorOf(c().deleteFieldValue({ accountId: a, subscriberId: s.id, fieldId: '00000000-0000-4000-8000-000000000000' }))).toMatchObject({ errorId: 'field_not_found' });
    expect((await data(c(), a, s.id)).fields).toEqual([{ fieldId: fieldId(f.n), value: num(5) }]);
  });

  it('deactivated options and archived fields take no new values; stored ones stay readable and may be re-sent', async () => {
    const { a, f } = await account();
    const [free, pro] = f.single.options;
    const s = await add(c(), a, 'o@example.org', { fields: [{ fieldId: fieldId(f.single), value: opt(pro.id!) }, { fieldId: fieldId(f.t), value: text('kept') }] });
    // deactivate "Pro" by leaving it out of the complete option list
    await c().updateField({ accountId: a, fieldId: fieldId(f.single), options: [{ id: free.id, label: 'Free', position: 1, active: true }], optionsGiven: true });
    const other = await add(c(), a, 'p@example.org');
    expect(await errorOf(c().setFieldValue({ accountId: a, subscriberId: other.id, fieldId: fieldId(f.single), value: opt(pro.id!) }))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'option_inactive' });
    await c().setFieldValue({ accountId: a, subscriberId: s.id, fieldId: fieldId(f.single), value: opt(pro.id!) }); // already held
    expect((await data(c(), a, s.id)).fields.find((x) => x.fieldId === fieldId(f.single))?.value).toEqual({ value: { $case: 'optionId', value: pro.id }, labels: ['Pro'] });
  });
});
