/**
 * Delivery and engagement facts through the real DOMAIN stream: until the messaging service emits
 * them, this test publishes email.delivered / email.opened / email.clicked as it will, and the
 * segment service's Response operators answer from them (nats-server, subscriber and segment services).
 */
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { BIF, expr, FR, OK, OP, operand, ST, useSegmentStack } from './support/stack';
import { add, newAccount } from '@mailer/testing/subscriber';

const stack = useSegmentStack();
let nc: NatsConnection;
beforeAll(async () => {
  nc = await connect({ servers: stack.env.nats.url, ...stack.env.nats.auth });
});
afterAll(async () => {
  await nc?.close();
});

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();
const codec = JSONCodec();
async function fact(type: 'email.delivered' | 'email.opened' | 'email.clicked', accountId: string, subscriberId: string, occurredAt: string) {
  await nc.jetstream().publish(`domain.${type}`, codec.encode({ type, accountId, subscriberId, occurredAt, messageId: `m-${Math.random()}` }));
}
type ResponseOperator = 'RESPONDED_WITHIN_DAYS' | 'NO_RESPONSE_FOR_DAYS' | 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST';
const response = (operator: ResponseOperator, days: number) =>
  expr([
    {
      subjectType: ST.SEGMENT_SUBJECT_TYPE_FIELD,
      fieldRef: { type: FR.SEGMENT_FIELD_REF_TYPE_BUILT_IN, builtInField: BIF.BUILT_IN_FIELD_EMAIL },
      operator: OP[`SEGMENT_OPERATOR_${operator}`],
      operand: operand({ kind: OK.SEGMENT_OPERAND_KIND_NUMBER, number: days }),
    },
  ]);

it('Response operators answer from the published facts, at once (read-after-write)', async () => {
  const a = newAccount();
  const c = stack.env.client;
  const never = await add(c, a, 'never@example.org');
  const opener = await add(c, a, 'opener@example.org');
  const silent = await add(c, a, 'silent@example.org');
  const clicker = await add(c, a, 'clicker@example.org');

  await fact('email.delivered', a, opener.id, daysAgo(12));
  await fact('email.opened', a, opener.id, daysAgo(10));
  await fact('email.delivered', a, silent.id, daysAgo(45));
  await fact('email.delivered', a, silent.id, daysAgo(20));
  await fact('email.delivered', a, clicker.id, daysAgo(50));
  await fact('email.clicked', a, clicker.id, daysAgo(40));
  // A fact about another account's subscriber id changes nothing here.
  await fact('email.opened', newAccount(), silent.id, daysAgo(1));

  const preview = async (operator: ResponseOperator, days: number) => {
    const p = (await stack.client.previewExpression({ accountId: a, expression: response(operator, days) })).preview!;
    return { matching: p.contacts.map((x) => x.email).sort(), unknown: Number(p.unknownCount) };
  };
  expect(await preview('RESPONDED_WITHIN_DAYS', 30)).toEqual({ matching: ['opener@example.org'], unknown: 0 });
  // never delivered: UNKNOWN; clicker answered 40 days ago; silent never answered.
  expect(await preview('NO_RESPONSE_FOR_DAYS', 30)).toEqual({ matching: ['clicker@example.org', 'silent@example.org'], unknown: 1 });
  expect(await preview('DELIVERED_WITHOUT_RESPONSE_AT_LEAST', 30)).toEqual({ matching: ['silent@example.org'], unknown: 1 });
  expect(await preview('DELIVERED_WITHOUT_RESPONSE_AT_LEAST', 50)).toEqual({ matching: [], unknown: 1 });

  // A response ends the silence; a redelivered (duplicate) fact changes nothing.
  await fact('email.opened', a, silent.id, daysAgo(2));
  await fact('email.opened', a, silent.id, daysAgo(2));
  expect(await preview('DELIVERED_WITHOUT_RESPONSE_AT_LEAST', 30)).toEqual({ matching: [], unknown: 1 });
  expect(await preview('RESPONDED_WITHIN_DAYS', 30)).toEqual({ matching: ['opener@example.org', 'silent@example.org'], unknown: 0 });
  expect(never.email).toBe('never@example.org');
});

it('malformed facts are dropped without stopping the projection', async () => {
  const a = newAccount();
  const s = await add(stack.env.client, a, 'later@example.org');
  await nc.jetstream().publish('domain.email.opened', codec.encode({ type: 'email.opened', accountId: a, subscriberId: s.id, occurredAt: 'yesterday' }));
  await fact('email.opened', a, s.id, daysAgo(1));
  const p = (await stack.client.previewExpression({ accountId: a, expression: response('RESPONDED_WITHIN_DAYS', 7) })).preview!;
  expect(p.matchingCount).toBe('1');
});
