/**
 * Read-after-write across services, against real processes (nats-server, subscriber service, segment
 * service): a write acknowledged by the subscriber service is visible to the very next count or
 * preview, without polling. The subscriber service answers once its events are on DOMAIN; the segment
 * service waits until its projection has applied DOMAIN up to the stream's last sequence.
 */
import { segmentV1 } from '@mailer/proto';
import { BIF, type Cond, expr, FR, OK, OP, operand, ST, useSegmentStack } from './support/stack';
import { add, addField, addTag, FT, fieldId, newAccount, S, text } from '@mailer/testing/subscriber';

// Concurrency > 1: events complete out of order, the watermark must still be exact.
const stack = useSegmentStack({ SEGMENT_PROJECTION_CONCURRENCY: '8' });
const c = () => stack.env.client;

const everyone = expr([{ subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_BUILT_IN, builtInField: BIF.BUILT_IN_FIELD_EMAIL }, operator: OP.SEGMENT_OPERATOR_TEXT_CONTAINS, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: '@' }) }]);
const tagged = (tagId: string) => expr([{ subjectType: ST.SEGMENT_SUBJECT_TYPE_TAGS, operator: OP.SEGMENT_OPERATOR_OPTION_CONTAINS_ANY, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_OPTIONS, optionIds: [tagId] }) }]);

it('every acknowledged write is counted by the next count or preview, without polling', async () => {
  const a = newAccount();
  const city = fieldId(await addField(c(), a, 'City', FT.FIELD_TYPE_TEXT));
  const vip = (await addTag(c(), a, 'vip')).id;
  // Created right after the field: validation asks the subscriber service, the count the projection.
  const berlin = (
    await stack.client.createSegment({
      accountId: a,
      name: 'Berlin',
      expression: expr([{ subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD, fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_CUSTOM, fieldId: city }, operator: OP.SEGMENT_OPERATOR_TEXT_EQUALS, operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_TEXT, text: 'Berlin' }) }]),
    })
  ).segment!;
  const count = async (segmentId: string) => Number((await stack.client.countSegment({ accountId: a, segmentId })).count!.subscriberCount);
  const preview = async (e: segmentV1.SegmentExpression) => (await stack.client.previewExpression({ accountId: a, expression: e })).preview!;

  let total = 0;
  let active = 0;
  let inBerlin = 0;
  let vips = 0;
  for (let i = 0; i < 20; i++) {
    // Create (with a field value): counted at once by CountSegment and PreviewExpression.
    const s = await add(c(), a, `s${i}@example.org`, { fields: [{ fieldId: city, value: text('Berlin') }] });
    total++;
    active++;
    inBerlin++;
    expect(await count(berlin.id)).toBe(inBerlin);
    const p = await preview(everyone);
    expect(p.matchingCount).toBe(String(total));
    expect(p.contacts.map((x) => x.id)).toContain(s.id);

    // Tag add.
    await c().addTagsToSubscribers({ accountId: a, subscriberIds: [s.id], tagIds: [vip] });
    vips++;
    expect((await preview(tagged(vip))).matchingCount).toBe(String(vips));

    // Status change: out of the reachable contacts at once.
    if (i % 2 === 0) {
      await c().replaceSubscriberStatus({ accountId: a, subscriberId: s.id, subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED });
      active--;
      expect((await preview(everyone)).reachableCount).toBe(String(active));
    }

    // Delete: gone from counts and previews at once.
    if (i % 3 === 0) {
      await c().deleteSubscriber({ accountId: a, subscriberId: s.id });
      total--;
      inBerlin--;
      vips--;
      if (i % 2 === 0) {
        // it was unsubscribed, so not among the active ones
      } else {
        active--;
      }
      expect(await count(berlin.id)).toBe(inBerlin);
      const after = await preview(everyone);
      expect(after.matchingCount).toBe(String(total));
      expect(after.reachableCount).toBe(String(active));
      expect(after.contacts.map((x) => x.id)).not.toContain(s.id);
      expect((await preview(tagged(vip))).matchingCount).toBe(String(vips));
    }
  }
}, 120_000);
