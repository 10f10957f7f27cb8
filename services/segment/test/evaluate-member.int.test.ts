/**
 * SegmentService.EvaluateSegmentMember against real processes (nats-server, subscriber service,
 * segment service): one subscriber's three-valued result for a saved segment, TRUE / FALSE / UNKNOWN
 * as the preview counts them; read-after-write (no polling: an acknowledged write is seen by the very
 * next call); an unknown subscriber is FALSE with contactFound false; another account's segment is
 * segment_not_found and another account's subscriber is not found there.
 */
import { segmentV1 } from '@mailer/proto';
import { add, addField, errorOf, FT, fieldId, newAccount, text } from '@mailer/testing/subscriber';
import { type Cond, expr, FR, OK, OP, operand, ST, useSegmentStack } from './support/stack';

const stack = useSegmentStack();
const c = () => stack.env.client;
const M = segmentV1.SegmentMembership;

const cityIs = (id: string, operator: 'TEXT_EQUALS' | 'TEXT_NOT_EQUALS', value: string): Cond => ({
  subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD,
  fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: id },
  operator: OP[`SEGMENT_OPERATOR_${operator}`],
  operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: value }),
});
const notContainedIn = (segmentId: string): Cond => ({ subjectType: ST.SEGMENT_SUBJECT_TYPE_SEGMENT, operator: OP.SEGMENT_OPERATOR_NOT_CONTAINED_IN, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_SEGMENT, segmentId }) });

const evaluate = (accountId: string, segmentId: string, subscriberId: string) => stack.client.evaluateSegmentMember({ accountId, segmentId, subscriberId });

describe('EvaluateSegmentMember', () => {
  const a = newAccount();
  let city: string;
  let berlin: segmentV1.Segment;
  const ids: Record<'berlin' | 'paris' | 'none', string> = { berlin: '', paris: '', none: '' };

  beforeAll(async () => {
    city = fieldId(await addField(c(), a, 'City', FT.FIELD_TYPE_TEXT));
    ids.berlin = (await add(c(), a, 'ber@example.org', { fields: [{ fieldId: city, value: text('Berlin') }] })).id;
    ids.paris = (await add(c(), a, 'par@example.org', { fields: [{ fieldId: city, value: text('Paris') }] })).id;
    ids.none = (await add(c(), a, 'none@example.org')).id; // no city: a comparison on it is UNKNOWN
    berlin = (await stack.client.createSegment({ accountId: a, name: 'Berlin', expression: expr([cityIs(city, 'TEXT_EQUALS', 'Berlin')]) })).segment!;
  }, 60_000);

  it('answers TRUE, FALSE and UNKNOWN as the preview counts them, right after the writes (read-after-write)', async () => {
    expect(await evaluate(a, berlin.id, ids.berlin)).toEqual({ result: M.SEGMENT_MEMBERSHIP_TRUE, contactFound: true });
    expect(await evaluate(a, berlin.id, ids.paris)).toEqual({ result: M.SEGMENT_MEMBERSHIP_FALSE, contactFound: true });
    expect(await evaluate(a, berlin.id, ids.none)).toEqual({ result: M.SEGMENT_MEMBERSHIP_UNKNOWN, contactFound: true });
    // the ids are case-insensitive, like every id the service takes
    expect((await evaluate(a, berlin.id.toUpperCase(), ids.berlin.toUpperCase())).result).toBe(M.SEGMENT_MEMBERSHIP_TRUE);
    const p = (await stack.client.previewSegment({ accountId: a, segmentId: berlin.id })).preview!;
    expect([p.matchingCount, p.unknownCount]).toEqual(['1', '1']);
  });

  it('NOT of UNKNOWN stays UNKNOWN, NOT of FALSE is TRUE (the compiled filters, not a second evaluator)', async () => {
    const notBerlin = (await stack.client.createSegment({ accountId: a, name: 'Not in Berlin', expression: expr([notContainedIn(berlin.id)]) })).segment!;
    expect((await evaluate(a, notBerlin.id, ids.berlin)).result).toBe(M.SEGMENT_MEMBERSHIP_FALSE);
    expect((await evaluate(a, notBerlin.id, ids.paris)).result).toBe(M.SEGMENT_MEMBERSHIP_TRUE);
    expect((await evaluate(a, notBerlin.id, ids.none)).result).toBe(M.SEGMENT_MEMBERSHIP_UNKNOWN);
    // TEXT_NOT_EQUALS on a missing value is UNKNOWN too (the API contract), not TRUE
    const notParis = (await stack.client.createSegment({ accountId: a, name: 'Not Paris', expression: expr([cityIs(city, 'TEXT_NOT_EQUALS', 'Paris')]) })).segment!;
    expect((await evaluate(a, notParis.id, ids.none)).result).toBe(M.SEGMENT_MEMBERSHIP_UNKNOWN);
    expect((await evaluate(a, notParis.id, ids.berlin)).result).toBe(M.SEGMENT_MEMBERSHIP_TRUE);
  });

  it('sees a field written just before the call: UNKNOWN -> TRUE -> FALSE without polling', async () => {
    const s = (await add(c(), a, 'moves@example.org')).id;
    expect((await evaluate(a, berlin.id, s)).result).toBe(M.SEGMENT_MEMBERSHIP_UNKNOWN);
    await c().setFieldValue({ accountId: a, subscriberId: s, fieldId: city, value: text('Berlin') });
    expect((await evaluate(a, berlin.id, s)).result).toBe(M.SEGMENT_MEMBERSHIP_TRUE);
    await c().setFieldValue({ accountId: a, subscriberId: s, fieldId: city, value: text('Rome') });
    expect((await evaluate(a, berlin.id, s)).result).toBe(M.SEGMENT_MEMBERSHIP_FALSE);
    // deleted: no contact any more, so in no segment
    await c().deleteSubscriber({ accountId: a, subscriberId: s });
    expect(await evaluate(a, berlin.id, s)).toEqual({ result: M.SEGMENT_MEMBERSHIP_FALSE, contactFound: false });
  });

  it('an unknown subscriber is FALSE with contactFound false; an empty one is validation_failed; an unknown segment is segment_not_found', async () => {
    expect(await evaluate(a, berlin.id, '00000000-0000-4000-8000-000000000001')).toEqual({ result: M.SEGMENT_MEMBERSHIP_FALSE, contactFound: false });
    const empty = await errorOf(evaluate(a, berlin.id, ''));
    expect([empty.code, empty.errorId]).toEqual([3, 'validation_failed']);
    for (const segmentId of ['00000000-0000-4000-8000-000000000002', '', 'x'.repeat(101)]) {
      const e = await errorOf(evaluate(a, segmentId, ids.berlin));
      expect([e.code, e.errorId]).toEqual([5, 'segment_not_found']);
    }
  });

  it("isolates accounts: another account's segment is segment_not_found, another account's subscriber is not its contact", async () => {
    const other = newAccount();
    const e = await errorOf(evaluate(other, berlin.id, ids.berlin));
    expect([e.code, e.errorId]).toEqual([5, 'segment_not_found']);
    // the other account's own segment, same condition shape, asked about this account's Berlin contact
    const otherCity = fieldId(await addField(c(), other, 'City', FT.FIELD_TYPE_TEXT));
    const theirs = (await stack.client.createSegment({ accountId: other, name: 'Berlin', expression: expr([cityIs(otherCity, 'TEXT_NOT_EQUALS', 'x')]) })).segment!;
    expect(await evaluate(other, theirs.id, ids.berlin)).toEqual({ result: M.SEGMENT_MEMBERSHIP_FALSE, contactFound: false });
    const noAccount = await errorOf(evaluate('', berlin.id, ids.berlin));
    expect([noAccount.code, noAccount.errorId]).toEqual([3, 'validation_failed']);
  });
});

describe('EvaluateSegmentMembers (a broadcast page of readers at once)', () => {
  const a = newAccount();
  let city: string;
  let segmentId: string;
  const id: Record<string, string> = {};

  beforeAll(async () => {
    city = fieldId(await addField(c(), a, 'City', FT.FIELD_TYPE_TEXT));
    for (const [name, value] of [['ber', 'Berlin'], ['par', 'Paris'], ['none', undefined]] as const) {
      id[name] = (await add(c(), a, `${name}@example.org`, { fields: value ? [{ fieldId: city, value: text(value) }] : [] })).id;
    }
    segmentId = (await stack.client.createSegment({ accountId: a, name: 'Berlin', expression: expr([cityIs(city, 'TEXT_EQUALS', 'Berlin')]) })).segment!.id;
  }, 60_000);

  it('answers each subscriber in request order, as EvaluateSegmentMember would one by one; unknown ids are FALSE', async () => {
    const unknown = '00000000-0000-4000-8000-0000000000ff';
    const ids = [id.none, unknown, id.ber.toUpperCase(), id.par, id.ber];
    const { results } = await stack.client.evaluateSegmentMembers({ accountId: a, segmentId, subscriberIds: ids });
    expect(results).toEqual([M.SEGMENT_MEMBERSHIP_UNKNOWN, M.SEGMENT_MEMBERSHIP_FALSE, M.SEGMENT_MEMBERSHIP_TRUE, M.SEGMENT_MEMBERSHIP_FALSE, M.SEGMENT_MEMBERSHIP_TRUE]);
    for (const [i, subscriberId] of ids.entries()) expect((await evaluate(a, segmentId, subscriberId)).result).toBe(results[i]);
    // another account knows neither the segment nor these contacts
    const e = await errorOf(stack.client.evaluateSegmentMembers({ accountId: newAccount(), segmentId, subscriberIds: [id.ber] }));
    expect([e.code, e.errorId]).toEqual([5, 'segment_not_found']);
  });

  it('refuses an empty list and more than 1,000 ids', async () => {
    for (const subscriberIds of [[], Array.from({ length: 1001 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)]) {
      const e = await errorOf(stack.client.evaluateSegmentMembers({ accountId: a, segmentId, subscriberIds }));
      expect([e.code, e.errorId]).toEqual([3, 'validation_failed']);
    }
  });
});
