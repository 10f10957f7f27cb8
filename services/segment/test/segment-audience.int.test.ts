/**
 * SegmentService.ListSegmentAudience against real processes (nats-server, subscriber service, segment
 * service): a saved segment's ACTIVE members (TRUE only) in id order after a keyset cursor, with an
 * exact last_page, narrowed to a topic, one account at a time.
 */
import { segmentV1 } from '@mailer/proto';
import { add, addField, addTopic, errorOf, FT, fieldId, newAccount, S, text } from '@mailer/testing/subscriber';
import { BIF, expr, FR, OK, OP, operand, ST, useSegmentStack } from './support/stack';

const stack = useSegmentStack();
const c = () => stack.env.client;

const cityIsNot = (id: string, value: string): segmentV1.SegmentCondition => ({
  subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD,
  fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: id },
  operator: OP.SEGMENT_OPERATOR_TEXT_NOT_EQUALS,
  operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: value }),
});
const audience = (req: Partial<segmentV1.ListSegmentAudienceRequest>) => stack.client.listSegmentAudience(segmentV1.ListSegmentAudienceRequest.fromPartial(req));

describe('ListSegmentAudience', () => {
  const a = newAccount();
  let segmentId: string;
  let topic: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const city = fieldId(await addField(c(), a, 'City', FT.FIELD_TYPE_TEXT));
    topic = (await addTopic(c(), a, 'News')).id;
    const person = async (name: string, cityName: string | undefined, topicIds: string[], status = S.SUBSCRIBER_STATUS_ACTIVE) => {
      const fields = cityName === undefined ? [] : [{ fieldId: city, value: text(cityName) }];
      ids[name] = (await add(c(), a, `${name}@example.org`, { fields, topicIds, topicIdsGiven: true, subscriberStatus: status })).id;
    };
    await person('ann', 'Berlin', [topic]);
    await person('bob', 'Paris', [topic]); // FALSE
    await person('cid', undefined, [topic]); // UNKNOWN: never a member
    await person('dan', 'Berlin', []);
    await person('eve', 'Hamburg', [topic], S.SUBSCRIBER_STATUS_UNCONFIRMED); // member, not ACTIVE
    await person('fay', 'Munich', [topic]);
    await person('gus', 'Rome', []);
    segmentId = (await stack.client.createSegment({ accountId: a, name: 'Not Paris', expression: expr([cityIsNot(city, 'Paris')]) })).segment!.id;
  }, 60_000);

  const active = () => ['ann', 'dan', 'fay', 'gus'].map((n) => ids[n]).sort();

  it('pages the ACTIVE TRUE members in id order after the cursor, last_page exact', async () => {
    const seen: string[] = [];
    const pages: boolean[] = [];
    let after = '';
    for (let i = 0; i < 5; i++) {
      const page = await audience({ accountId: a, segmentId, afterSubscriberId: after, pageSize: 2 });
      seen.push(...page.subscriberIds);
      pages.push(page.lastPage);
      if (page.lastPage) break;
      after = page.subscriberIds[page.subscriberIds.length - 1];
    }
    expect(seen).toEqual(active());
    // four members in pages of two: the second page is full and known to be the last (page_size + 1 read)
    expect(pages).toEqual([false, true]);
    const all = await audience({ accountId: a, segmentId, pageSize: 0 });
    expect(all).toEqual({ subscriberIds: active(), lastPage: true });
  });

  it('takes the cursor as an id bound, not a position, and lowercases it', async () => {
    const [first, second, ...rest] = active();
    const page = await audience({ accountId: a, segmentId, afterSubscriberId: first.toUpperCase(), pageSize: 10 });
    expect(page.subscriberIds).toEqual([second, ...rest]);
  });

  it('narrows to the topic', async () => {
    const page = await audience({ accountId: a, segmentId, topicId: topic.toUpperCase(), pageSize: 10 });
    expect(page).toEqual({ subscriberIds: [ids.ann, ids.fay].sort(), lastPage: true });
  });

  it("isolates accounts: another account's segment is segment_not_found, its own holds only its contacts", async () => {
    const b = newAccount();
    const mine = (await add(c(), b, 'ann@example.org', { subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE })).id;
    const e = await errorOf(audience({ accountId: b, segmentId, pageSize: 10 }));
    expect([e.code, e.errorId]).toEqual([5, 'segment_not_found']);
    const emailAny = expr([{ subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_BUILT_IN, builtInField: BIF.BUILT_IN_FIELD_EMAIL }, operator: OP.SEGMENT_OPERATOR_TEXT_CONTAINS, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: '@' }) }]);
    const own = (await stack.client.createSegment({ accountId: b, name: 'Everyone', expression: emailAny })).segment!.id;
    expect(await audience({ accountId: b, segmentId: own, pageSize: 10 })).toEqual({ subscriberIds: [mine], lastPage: true });
  });

  it('refuses a page size out of range and an unknown segment', async () => {
    const big = await errorOf(audience({ accountId: a, segmentId, pageSize: 5000 }));
    expect([big.code, big.errorId]).toEqual([3, 'validation_failed']);
    const none = await errorOf(audience({ accountId: a, segmentId: newAccount(), pageSize: 10 }));
    expect([none.code, none.errorId]).toEqual([5, 'segment_not_found']);
  });
});
