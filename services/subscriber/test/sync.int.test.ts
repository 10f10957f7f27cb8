// SyncSubscribers and bulk tagging over real gRPC: per-row outcomes, idempotent repeats, modes,
// limits, exact counts; and that a refused request writes nothing.
import { status } from '@grpc/grpc-js';
import type { subscriberV1 } from '@mailer/proto';
import { add, addField, addReq, addTag, addTopic, data, type Env, errorOf, eventsOf, FT, fieldId, list, newAccount, num, O, P, S, startEnv, text } from './support';
import { outboxOf, waitForSettled } from '@mailer/testing';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env?.stop());
const c = () => env.client;

const row = (email: string, extra: Partial<subscriberV1.AddSubscriberRequest> = {}) => addReq('', email, extra);
const sync = (accountId: string, rows: subscriberV1.AddSubscriberRequest[], mode = P.SyncMode.SYNC_MODE_UNSPECIFIED) => c().syncSubscribers({ accountId, subscribers: rows, mode });
const outcomes = (r: subscriberV1.SyncSubscribersResponse) => r.results.map((x) => [x.index, x.outcome, x.errorId]);

describe('SyncSubscribers', () => {
  it('mixed good and bad rows: one result per row in order, bad rows fail alone, good ones all land', async () => {
    const a = newAccount();
    const company = await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT);
    const vip = await addTag(c(), a, 'VIP');
    const news = await addTopic(c(), a, 'News', { isDefault: true });
    const existing = await add(c(), a, 'old@example.org', { firstName: 'Old' });
    const res = await sync(a, [
      row('new1@example.org', { firstName: 'New', tags: [vip.id], fields: [{ fieldId: fieldId(company), value: text('ACME') }] }),
      row('not-an-email'),
      row('OLD@example.org', { firstName: 'Renamed', subscriberStatus: S.SUBSCRIBER_STATUS_BLOCKED }),
      row('new2@example.org', { tags: ['00000000-0000-4000-8000-000000000000'] }),
      row('new3@example.org', { fields: [{ fieldId: fieldId(company), value: num(1) }] }),
      row('New1@example.org'),
      row('new4@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_BOUNCED }),
      row('new5@example.org', { subscriberStatus: 99 as subscriberV1.SubscriberStatus }),
      row('old@example.org'),
    ]);
    expect(outcomes(res)).toEqual([
      [0, O.SYNC_OUTCOME_CREATED, undefined],
      [1, O.SYNC_OUTCOME_FAILED, 'invalid_email'],
      [2, O.SYNC_OUTCOME_UPDATED, undefined],
      [3, O.SYNC_OUTCOME_FAILED, 'tag_not_found'],
      [4, O.SYNC_OUTCOME_FAILED, 'field_value_kind_mismatch'],
      [5, O.SYNC_OUTCOME_FAILED, 'duplicate_email_in_request'],
      [6, O.SYNC_OUTCOME_FAILED, 'subscriber_status_not_manual'],
      [7, O.SYNC_OUTCOME_FAILED, 'validation_failed'],
      [8, O.SYNC_OUTCOME_FAILED, 'duplicate_email_in_request'],
    ]);
    expect(res.results[0]).toMatchObject({ email: 'new1@example.org', subscriberId: expect.any(String) });
    expect(res.results[1]).toMatchObject({ email: 'not-an-email', message: expect.any(String) });
    expect(res.results[2]).toMatchObject({ email: 'old@example.org', subscriberId: existing.id });
    const created = await data(c(), a, res.results[0].subscriberId!);
    expect(created).toMatchObject({ email: 'new1@example.org', firstName: 'New', tags: [vip.id], fields: [{ fieldId: fieldId(company), value: text('ACME') }] });
    expect((await c().getSubscriberTopics({ accountId: a, subscriberId: created.subscriberId })).topics.filter((t) => t.subscribed).map((t) => t.topicId)).toEqual([news.id]);
    expect(await data(c(), a, existing.id)).toMatchObject({ firstName: 'Renamed', subscriberStatus: S.SUBSCRIBER_STATUS_BLOCKED });
    expect((await list(c(), a)).totalItems).toBe('2');
  });

  it('repeating a sync is idempotent: every row UNCHANGED, nothing written, no event', async () => {
    const a = newAccount();
    const company = await addField(c(), a, 'Company', FT.FIELD_TYPE_TEXT);
    const [t1, t2] = [await addTag(c(), a, 't1'), await addTag(c(), a, 't2')];
    const topic = await addTopic(c(), a, 'News');
    const rows = Array.from({ length: 50 }, (_, i) =>
      row(`u${i}@example.org`, { firstName: `U${i}`, tags: [t1.id, t2.id], topicIds: [topic.id], topicIdsGiven: true, fields: [{ fieldId: fieldId(company), value: text(`C${i}`) }] }),
    );
    const first = await sync(a, rows);
    expect(first.results.every((r) => r.outcome === O.SYNC_OUTCOME_CREATED)).toBe(true);
    const events = await eventsOf(env.nc, a, (es) => es.filter((e) => e.type === 'subscriber.created').length === 50);
    const second = await sync(a, rows);
    expect(second.results.map((r) => r.outcome)).toEqual(rows.map(() => O.SYNC_OUTCOME_UNCHANGED));
    expect(second.results.map((r) => r.subscriberId)).toEqual(first.results.map((r) => r.subscriberId));
    // nothing new on the stream once the outbox is empty (the barrier: every fact recorded is published)
    await waitForSettled(env.nc, { outboxes: [outboxOf(env.svc)] });
    expect((await eventsOf(env.nc, a, () => true)).length).toBe(events.length);
    // a change in one row updates only that row
    const third = await sync(a, [rows[0], { ...rows[1], firstName: 'Changed' }]);
    expect(third.results.map((r) => r.outcome)).toEqual([O.SYNC_OUTCOME_UNCHANGED, O.SYNC_OUTCOME_UPDATED]);
  });

  it('updates carry only what the row holds: values replace per field, tags are added, topics joined (opt-outs respected)', async () => {
    const a = newAccount();
    const [f1, f2] = [await addField(c(), a, 'One', FT.FIELD_TYPE_TEXT), await addField(c(), a, 'Two', FT.FIELD_TYPE_NUMBER)];
    const [t1, t2] = [await addTag(c(), a, 't1'), await addTag(c(), a, 't2')];
    const [news, deals] = [await addTopic(c(), a, 'News'), await addTopic(c(), a, 'Deals')];
    const s = await add(c(), a, 'm@example.org', { firstName: 'Keep', tags: [t1.id], topicIds: [], topicIdsGiven: true, fields: [{ fieldId: fieldId(f1), value: text('a') }, { fieldId: fieldId(f2), value: num(1) }] });
    await c().optOutOfTopic({ accountId: a, subscriberId: s.id, topicId: deals.id });
    const res = await sync(a, [row('m@example.org', { tags: [t2.id], topicIds: [news.id, deals.id], topicIdsGiven: true, fields: [{ fieldId: fieldId(f2), value: num(2) }] })]);
    expect(res.results[0].outcome).toBe(O.SYNC_OUTCOME_UPDATED);
    const d = await data(c(), a, s.id);
    expect(d).toMatchObject({ firstName: 'Keep', tags: [t1.id, t2.id].sort() });
    expect(Object.fromEntries(d.fields.map((x) => [x.fieldId, x.value]))).toEqual({ [fieldId(f1)]: text('a'), [fieldId(f2)]: num(2) });
    expect((await c().getSubscriberTopics({ accountId: a, subscriberId: s.id })).topics.map((t) => [t.label, t.subscribed, t.optedOut])).toEqual([
      ['Newsletter', false, false],
      ['News', true, false],
      ['Deals', false, true],
    ]);
  });

  it('modes: CREATE_ONLY fails existing emails, UPDATE_ONLY fails unknown ones, required fields only for rows that create', async () => {
    const a = newAccount();
    await add(c(), a, 'have@example.org');
    const required = await addField(c(), a, 'Customer no', FT.FIELD_TYPE_NUMBER, { required: true });
    const create = await sync(a, [row('have@example.org'), row('fresh@example.org', { fields: [{ fieldId: fieldId(required), value: num(1) }] }), row('bare@example.org')], P.SyncMode.SYNC_MODE_CREATE_ONLY);
    expect(outcomes(create)).toEqual([
      [0, O.SYNC_OUTCOME_FAILED, 'subscriber_email_exists'],
      [1, O.SYNC_OUTCOME_CREATED, undefined],
      [2, O.SYNC_OUTCOME_FAILED, 'required_field_missing'],
    ]);
    const update = await sync(a, [row('have@example.org', { firstName: 'Has' }), row('missing@example.org', { firstName: 'X' })], P.SyncMode.SYNC_MODE_UPDATE_ONLY);
    expect(outcomes(update)).toEqual([
      [0, O.SYNC_OUTCOME_UPDATED, undefined],
      [1, O.SYNC_OUTCOME_FAILED, 'subscriber_not_found'],
    ]);
    expect(await errorOf(sync(a, [], 9 as subscriberV1.SyncMode))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'validation_failed' });
  });

  it('takes exactly 1,000 rows in one request and refuses 1,001 as a whole (sync_too_many_rows, nothing written)', async () => {
    const a = newAccount();
    const rows = Array.from({ length: 1001 }, (_, i) => row(`bulk${i}@example.org`));
    expect(await errorOf(sync(a, rows))).toMatchObject({ code: status.INVALID_ARGUMENT, errorId: 'sync_too_many_rows' });
    expect((await list(c(), a)).totalItems).toBe('0');
    const res = await sync(a, rows.slice(0, 1000));
    expect(res.results).toHaveLength(1000);
    expect(res.results.every((r, i) => r.index === i && r.outcome === O.SYNC_OUTCOME_CREATED)).toBe(true);
    expect((await list(c(), a)).statusCounts?.active).toBe('1000');
  });
});

describe('bulk tagging', () => {
  async function fixture() {
    const a = newAccount();
    const [t1, t2] = [await addTag(c(), a, 't1'), await addTag(c(), a, 't2')];
    const none = await add(c(), a, 'none@example.org');
    const one = await add(c(), a, 'one@example.org', { tags: [t1.id] });
    const both = await add(c(), a, 'both@example.org', { tags: [t1.id, t2.id] });
    const blocked = await add(c(), a, 'blocked@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_BLOCKED });
    const unsub = await add(c(), a, 'unsub@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED, tags: [t2.id] });
    const foreign = await add(c(), newAccount(), 'foreign@example.org');
    return { a, t1, t2, none, one, both, blocked, unsub, foreign };
  }

  it('add: exact counts, NOT_FOUND (incl. other accounts) and BLOCKED skipped, tags land', async () => {
    const f = await fixture();
    const res = await c().addTagsToSubscribers({
      accountId: f.a,
      subscriberIds: [f.none.id, f.one.id, f.both.id, f.blocked.id, f.unsub.id, f.foreign.id, '00000000-0000-4000-8000-000000000000'],
      tagIds: [f.t1.id, f.t2.id],
    });
    expect(res).toEqual({
      selectedSubscriberCount: 7,
      taggedSubscriberCount: 3,
      alreadyTaggedSubscriberCount: 1,
      skippedSubscriberCount: 3,
      skippedByStatus: { NOT_FOUND: 2, BLOCKED: 1 },
    });
    const both = [f.t1.id, f.t2.id].sort();
    for (const s of [f.none, f.one, f.both, f.unsub]) expect((await data(c(), f.a, s.id)).tags).toEqual(both);
    expect((await data(c(), f.a, f.blocked.id)).tags).toEqual([]);
    // repeating: all already tagged
    const again = await c().addTagsToSubscribers({ accountId: f.a, subscriberIds: [f.none.id, f.one.id], tagIds: [f.t1.id] });
    expect(again).toMatchObject({ taggedSubscriberCount: 0, alreadyTaggedSubscriberCount: 2, skippedSubscriberCount: 0, skippedByStatus: {} });
  });

  it('remove: updated vs withoutSelectedTags, same skip rules', async () => {
    const f = await fixture();
    const res = await c().removeTagsFromSubscribers({ accountId: f.a, subscriberIds: [f.none.id, f.one.id, f.both.id, f.blocked.id, f.unsub.id, f.foreign.id], tagIds: [f.t2.id] });
    expect(res).toEqual({
      selectedSubscriberCount: 6,
      updatedSubscriberCount: 2,
      withoutSelectedTagsSubscriberCount: 2,
      skippedSubscriberCount: 2,
      skippedByStatus: { NOT_FOUND: 1, BLOCKED: 1 },
    });
    expect((await data(c(), f.a, f.both.id)).tags).toEqual([f.t1.id]);
    expect((await data(c(), f.a, f.unsub.id)).tags).toEqual([]);
    expect((await data(c(), f.a, f.one.id)).tags).toEqual([f.t1.id]);
  });

  it('refuses bad requests as a whole, tagging nobody', async () => {
    const f = await fixture();
    const req = (over: Partial<subscriberV1.AddTagsToSubscribersRequest>) => ({ accountId: f.a, subscriberIds: [f.none.id], tagIds: [f.t1.id], ...over });
    const cases: Array<[Partial<subscriberV1.AddTagsToSubscribersRequest>, number, string]> = [
      [{ tagIds: [f.t1.id, '00000000-0000-4000-8000-000000000000'] }, status.NOT_FOUND, 'tag_not_found'],
      [{ tagIds: [f.t1.id, f.t1.id] }, status.INVALID_ARGUMENT, 'duplicate_ids'],
      [{ subscriberIds: [f.none.id, f.none.id] }, status.INVALID_ARGUMENT, 'duplicate_ids'],
      [{ subscriberIds: ['x'] }, status.INVALID_ARGUMENT, 'invalid_uuid'],
      [{ tagIds: [] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ subscriberIds: [] }, status.INVALID_ARGUMENT, 'validation_failed'],
      [{ subscriberIds: Array.from({ length: 10_001 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`) }, status.INVALID_ARGUMENT, 'validation_failed'],
    ];
    for (const [over, code, errorId] of cases) {
      expect(await errorOf(c().addTagsToSubscribers(req(over)))).toMatchObject({ code, errorId });
      expect(await errorOf(c().removeTagsFromSubscribers(req(over)))).toMatchObject({ code, errorId });
    }
    expect((await data(c(), f.a, f.none.id)).tags).toEqual([]);
  });

  it('tags 10,000 subscribers in one request', async () => {
    const a = newAccount();
    const tag = await addTag(c(), a, 'many');
    const ids: string[] = [];
    for (let b = 0; b < 10; b++) {
      const res = await sync(a, Array.from({ length: 1000 }, (_, i) => row(`many${b * 1000 + i}@example.org`)));
      ids.push(...res.results.map((r) => r.subscriberId!));
    }
    const res = await c().addTagsToSubscribers({ accountId: a, subscriberIds: ids, tagIds: [tag.id] });
    expect(res).toMatchObject({ selectedSubscriberCount: 10_000, taggedSubscriberCount: 10_000, skippedSubscriberCount: 0 });
    expect((await c().getTag({ accountId: a, tagId: tag.id })).tag?.subscriberCount).toBe('10000');
  });
});
