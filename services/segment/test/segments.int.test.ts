/**
 * SegmentService against real processes: nats-server, the subscriber service (writes, catalog) and
 * the segment service (its projection consumes the subscriber service's DOMAIN events; validation
 * asks the subscriber service for the catalog over gRPC). Counts and previews are polled until the
 * projection has caught up (bounded wait).
 */
import { segmentV1, subscriberV1 } from '@mailer/proto';
import { BIF, type Cond, expr, FR, OK, OP, operand, ST, useSegmentStack } from './support/stack';
import { add, addField, addTag, addTopic, errorOf, FT, fieldId, list, newAccount, S, text } from '@mailer/testing/subscriber';

const stack = useSegmentStack({}, ['rss', 'messaging']); // asked before a segment is deleted
const c = () => stack.env.client;

const custom = (id: string, operator: 'TEXT_EQUALS' | 'TEXT_NOT_EQUALS', value: string): Cond => ({
  subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD,
  fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: id },
  operator: OP[`SEGMENT_OPERATOR_${operator}`],
  operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: value }),
});
const contained = (segmentId: string): Cond => ({ subjectType: ST.SEGMENT_SUBJECT_TYPE_SEGMENT, operator: OP.SEGMENT_OPERATOR_CONTAINED_IN, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_SEGMENT, segmentId }) });
const emailContains = (t: string): Cond => ({ subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_BUILT_IN, builtInField: BIF.BUILT_IN_FIELD_EMAIL }, operator: OP.SEGMENT_OPERATOR_TEXT_CONTAINS, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: t }) });

const create = (accountId: string, name: string, expression: segmentV1.SegmentExpression) => stack.client.createSegment({ accountId, name, expression }).then((r) => r.segment!);

/** Polls CountSegment until it reports `want` (the projection catches up asynchronously). */
async function countEventually(accountId: string, segmentId: string, want: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let have = '';
  while (Date.now() < deadline) {
    have = (await stack.client.countSegment({ accountId, segmentId })).count!.subscriberCount;
    if (have === String(want)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`count of ${segmentId} stayed ${have}, expected ${want}`);
}

describe('segments over the projection', () => {
  const a = newAccount();
  let city: string;
  let topic: string;
  let tag: string;
  let notParis: segmentV1.Segment;

  beforeAll(async () => {
    city = fieldId(await addField(c(), a, 'City', FT.FIELD_TYPE_TEXT));
    topic = (await addTopic(c(), a, 'News')).id;
    tag = (await addTag(c(), a, 'vip')).id;
    const f = (v: string) => [{ fieldId: city, value: text(v) }];
    await add(c(), a, 'ann@example.org', { fields: f('Berlin'), topicIds: [topic], topicIdsGiven: true, tags: [tag] });
    await add(c(), a, 'bob@example.org', { fields: f('Paris'), topicIds: [topic], topicIdsGiven: true });
    await add(c(), a, 'cid@example.org', { topicIds: [topic], topicIdsGiven: true }); // no city: UNKNOWN
    await add(c(), a, 'dan@example.org', { fields: f('Berlin'), topicIds: [], topicIdsGiven: true });
    await add(c(), a, 'eve@example.org', { fields: f('Hamburg'), topicIds: [topic], topicIdsGiven: true, subscriberStatus: S.SUBSCRIBER_STATUS_UNCONFIRMED });
    notParis = await create(a, 'Not Paris', expr([custom(city, 'TEXT_NOT_EQUALS', 'Paris')]));
    await countEventually(a, notParis.id, 3);
  }, 60_000);

  it('stores, gets and lists the segment with its expression', async () => {
    expect(notParis.name).toBe('Not Paris');
    expect(notParis.expression!.conditionGroups[0].conditions[0]).toMatchObject({ subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: city }, operator: OP.SEGMENT_OPERATOR_TEXT_NOT_EQUALS, operand: { kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: 'Paris' } });
    expect((await stack.client.getSegment({ accountId: a, segmentId: notParis.id })).segment).toEqual(notParis);
    expect((await stack.client.listSegments({ accountId: a })).items.map((s) => s.id)).toContain(notParis.id);
  });

  it('counts TRUE only; a missing value is UNKNOWN for TEXT_NOT_EQUALS', async () => {
    const p = (await stack.client.previewSegment({ accountId: a, segmentId: notParis.id })).preview!;
    expect(p.matchingCount).toBe('3'); // ann, dan, eve
    expect(p.unknownCount).toBe('1'); // cid has no city
    expect(p.reachableCount).toBe('2'); // eve is UNCONFIRMED
    expect(p.contacts.map((x) => x.email)).toEqual(['ann@example.org', 'dan@example.org', 'eve@example.org']);
    expect(p.contacts[2].subscriberStatus).toBe(S.SUBSCRIBER_STATUS_UNCONFIRMED);
    expect(p.captureScopes).toEqual([]);
  });

  it('reachable with a topic: ACTIVE, subscribed to it and not opted out', async () => {
    const p = (await stack.client.previewSegment({ accountId: a, segmentId: notParis.id, topicId: topic })).preview!;
    expect(p.reachableCount).toBe('1'); // ann (dan is not subscribed, eve unconfirmed)
    await c().optOutOfTopic({ accountId: a, subscriberId: p.contacts[0].id, topicId: topic });
    const deadline = Date.now() + 20_000;
    let reach = '1';
    while (reach !== '0' && Date.now() < deadline) {
      reach = (await stack.client.previewSegment({ accountId: a, segmentId: notParis.id, topicId: topic })).preview!.reachableCount;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(reach).toBe('0');
  });

  it('previews an unsaved expression (OR of groups, tags)', async () => {
    const p = (
      await stack.client.previewExpression({
        accountId: a,
        expression: expr([custom(city, 'TEXT_EQUALS', 'Paris')], [{ subjectType: ST.SEGMENT_SUBJECT_TYPE_TAGS, operator: OP.SEGMENT_OPERATOR_OPTION_CONTAINS_ANY, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_OPTIONS, optionIds: [tag] }) }]),
      })
    ).preview!;
    expect(p.matchingCount).toBe('2');
    expect(p.contacts.map((x) => x.email)).toEqual(['ann@example.org', 'bob@example.org']);
  });

  it('refuses an unknown field (segment_field_not_found) with details', async () => {
    const e = await errorOf(create(a, 'Bad', expr([custom('00000000-0000-4000-8000-000000000099', 'TEXT_EQUALS', 'x')])));
    expect(e.code).toBe(3);
    expect(e.errorId).toBe('segment_field_not_found');
    expect(e.details?.[0].path).toBe('expression.conditionGroups[0].conditions[0].fieldRef.fieldId');
    const p = await errorOf(stack.client.previewExpression({ accountId: a, expression: expr([custom('nope', 'TEXT_EQUALS', 'x')]) }));
    expect(p.errorId).toBe('segment_field_not_found');
  });

  it('answers UNSPECIFIED and unknown enum values with the expression errorIds, not a crash', async () => {
    const path = 'expression.conditionGroups[0].conditions[0]';
    const refused = async (cond: Cond) => {
      const e = await errorOf(stack.client.previewExpression({ accountId: a, expression: expr([cond]) }));
      expect(e.code).toBe(3);
      return { errorId: e.errorId, path: e.details?.[0].path };
    };
    const good = custom(city, 'TEXT_EQUALS', 'x');
    for (const operator of [OP.SEGMENT_OPERATOR_UNSPECIFIED, 999 as segmentV1.SegmentOperator]) {
      expect(await refused({ ...good, operator })).toEqual({ errorId: 'segment_expression_invalid', path: `${path}.operator` });
    }
    expect(await refused({ ...good, subjectType: 77 as segmentV1.SegmentSubjectType })).toEqual({ errorId: 'segment_expression_invalid', path: `${path}.subjectType` });
    expect(await refused({ ...good, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_UNSPECIFIED, text: 'x' }) })).toEqual({ errorId: 'segment_operand_mismatch', path: `${path}.operand.kind` });
    expect(await refused({ ...good, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_UNSPECIFIED, builtInField: BIF.BUILT_IN_FIELD_UNSPECIFIED, fieldId: city } })).toEqual({
      errorId: 'segment_expression_invalid',
      path: `${path}.fieldRef`,
    });
    expect(await refused({ ...good, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_BUILT_IN, builtInField: 9 as subscriberV1.BuiltInField } })).toEqual({
      errorId: 'segment_field_not_found',
      path: `${path}.fieldRef.builtInField`,
    });
  });

  it('refuses cycles, refuses deleting a referenced segment, deletes otherwise', async () => {
    const base = await create(a, 'Berlin', expr([custom(city, 'TEXT_EQUALS', 'Berlin')]));
    const outer = await create(a, 'In Berlin', expr([contained(base.id)]));
    await countEventually(a, outer.id, 2);
    const cyc = await errorOf(stack.client.updateSegment({ accountId: a, segmentId: base.id, name: 'Berlin', expression: expr([contained(outer.id)]) }));
    expect(cyc.errorId).toBe('segment_cycle');
    const self = await errorOf(stack.client.updateSegment({ accountId: a, segmentId: base.id, name: 'Berlin', expression: expr([contained(base.id)]) }));
    expect(self.errorId).toBe('segment_cycle');
    const inUse = await errorOf(stack.client.deleteSegment({ accountId: a, segmentId: base.id }));
    expect(inUse.code).toBe(9);
    expect(inUse.errorId).toBe('segment_in_use');
    await stack.client.deleteSegment({ accountId: a, segmentId: outer.id });
    await stack.client.deleteSegment({ accountId: a, segmentId: base.id });
    expect((await errorOf(stack.client.getSegment({ accountId: a, segmentId: base.id }))).errorId).toBe('segment_not_found');
  });

  it('updates name and expression; refuses a duplicate name', async () => {
    const s = await create(a, 'Temp', expr([custom(city, 'TEXT_EQUALS', 'Paris')]));
    const u = (await stack.client.updateSegment({ accountId: a, segmentId: s.id, name: 'Temp 2', expression: expr([custom(city, 'TEXT_EQUALS', 'Hamburg')]) })).segment!;
    expect(u.name).toBe('Temp 2');
    expect(u.createdAt).toBe(s.createdAt);
    await countEventually(a, s.id, 1);
    expect((await errorOf(create(a, 'Temp 2', expr([custom(city, 'TEXT_EQUALS', 'x')])))).errorId).toBe('segment_name_taken');
  });

  it('lists members by status enum; an unknown status is validation_failed', async () => {
    const members = (status: subscriberV1.SubscriberStatus) =>
      stack.client.listSegmentMembers(segmentV1.ListSegmentMembersRequest.fromPartial({ accountId: a, segmentId: notParis.id, pageSize: 10, pageNumber: 1, status }));
    const any = await members(S.SUBSCRIBER_STATUS_UNSPECIFIED);
    const unconfirmed = await members(S.SUBSCRIBER_STATUS_UNCONFIRMED);
    expect(Number(any.total)).toBe(Number(any.statusCounts!.active) + Number(any.statusCounts!.unconfirmed));
    expect(unconfirmed.total).toBe(any.statusCounts!.unconfirmed);
    expect(Number(unconfirmed.total)).toBeGreaterThan(0);
    const e = await errorOf(members(42 as subscriberV1.SubscriberStatus));
    expect(e.code).toBe(3);
    expect(e.errorId).toBe('validation_failed');
  });

  it("isolates accounts: another account's segment id is segment_not_found", async () => {
    const other = newAccount();
    for (const call of [
      stack.client.getSegment({ accountId: other, segmentId: notParis.id }),
      stack.client.countSegment({ accountId: other, segmentId: notParis.id }),
      stack.client.previewSegment({ accountId: other, segmentId: notParis.id }),
      stack.client.deleteSegment({ accountId: other, segmentId: notParis.id }),
    ]) {
      const e = await errorOf(call);
      expect(e.code).toBe(5);
      expect(e.errorId).toBe('segment_not_found');
    }
    expect((await stack.client.listSegments({ accountId: other })).items).toEqual([]);
    // Another account's contacts never count.
    const b = await create(other, 'All', expr([emailContains('@')]));
    expect((await stack.client.countSegment({ accountId: other, segmentId: b.id })).count!.subscriberCount).toBe('0');
  });

  it('refuses a request without an account (a caller bug) on every kind of RPC', async () => {
    for (const call of [
      stack.client.listSegments({ accountId: '' }),
      stack.client.countSegment({ accountId: '', segmentId: notParis.id }),
      stack.client.listSegmentMembers(segmentV1.ListSegmentMembersRequest.fromPartial({ accountId: '', segmentId: notParis.id, pageSize: 10, pageNumber: 1 })),
      stack.client.listPurchaseSources({ accountId: '' }),
      stack.client.createPurchaseSource({ accountId: 'x'.repeat(101), name: 'Shop', timeZone: 'UTC' }),
    ]) {
      const e = await errorOf(call);
      expect(e.code).toBe(3); // INVALID_ARGUMENT
      expect(e.errorId).toBe('validation_failed');
    }
  });
});

describe('preview contacts: the first 25 by registeredAt, then id', () => {
  it('returns 25 of 30 in order', async () => {
    const b = newAccount();
    for (let i = 0; i < 30; i++) await add(c(), b, `p${String(i).padStart(2, '0')}@example.org`);
    const s = await create(b, 'Everyone', expr([emailContains('@example.org')]));
    await countEventually(b, s.id, 30);
    const p = (await stack.client.previewSegment({ accountId: b, segmentId: s.id })).preview!;
    expect(p.matchingCount).toBe('30');
    expect(p.contacts).toHaveLength(25);
    const items = (await list(c(), b)).items;
    const want = [...items]
      .sort((x, y) => new Date(x.registeredAt).getTime() - new Date(y.registeredAt).getTime() || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
      .slice(0, 25)
      .map((x) => x.id);
    expect(p.contacts.map((x) => x.id)).toEqual(want);
  }, 60_000);
});
