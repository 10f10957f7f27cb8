/**
 * Seeded random worlds for the property test: a catalog, purchase sources with zones and capture
 * windows, stored segments, contacts (missing values, empty lists, opt-outs, orders at local-day edges
 * in several zones) and valid expressions over them. A small generator instead of fast-check: the
 * shapes are domain-specific anyway, and a seed printed on failure reproduces a run exactly.
 */
import type { Contact, ContactOrder } from '../../src/domain/contact';
import { textValue, toContactFieldValue, toContactOrder } from '../../src/domain/contact';
import type { PurchaseSourceFacts, EvaluationFacts } from '../../src/domain/evaluation-facts';
import {
  FieldRef,
  FieldType,
  OPERATOR_GROUPS,
  PurchaseOperator,
  PurchasePeriod,
  PurchaseSegmentCondition,
  SEGMENT_OPERATORS,
  SegmentCondition,
  SegmentExpression,
  SegmentOperand,
  SegmentOperator,
} from '../../src/domain/expression';
import { operandKindOf, operatorGroup } from '../../src/domain/operators';
import { addDays, localDateOf, startOfLocalDay } from '../../src/domain/time';
import type { ValidationCatalog } from '../../src/domain/validate';

const DAY = 86_400_000;

/** mulberry32: tiny, fast, good enough for test data. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  subset<T>(items: readonly T[], min = 0): T[] {
    const out = items.filter(() => this.chance(0.4));
    while (out.length < min) {
      const x = this.pick(items);
      if (!out.includes(x)) out.push(x);
    }
    return out;
  }
}

interface WorldField {
  ref: FieldRef;
  key: string;
  fieldType: FieldType;
  options: string[];
}

const FIELDS: WorldField[] = [
  { ref: { type: 'BUILT_IN', builtInField: 'EMAIL' }, key: 'EMAIL', fieldType: 'EMAIL', options: [] },
  { ref: { type: 'BUILT_IN', builtInField: 'FIRST_NAME' }, key: 'FIRST_NAME', fieldType: 'TEXT', options: [] },
  { ref: { type: 'CUSTOM', fieldId: 'f-text' }, key: 'f-text', fieldType: 'TEXT', options: [] },
  { ref: { type: 'CUSTOM', fieldId: 'f-long' }, key: 'f-long', fieldType: 'LONG_TEXT', options: [] },
  { ref: { type: 'CUSTOM', fieldId: 'f-email' }, key: 'f-email', fieldType: 'EMAIL', options: [] },
  { ref: { type: 'CUSTOM', fieldId: 'f-num' }, key: 'f-num', fieldType: 'NUMBER', options: [] },
  { ref: { type: 'CUSTOM', fieldId: 'f-date' }, key: 'f-date', fieldType: 'DATE', options: [] },
  { ref: { type: 'CUSTOM', fieldId: 'f-bool' }, key: 'f-bool', fieldType: 'BOOLEAN', options: [] },
  { ref: { type: 'CUSTOM', fieldId: 'f-single' }, key: 'f-single', fieldType: 'SINGLE_CHOICE', options: ['o1', 'o2', 'o3'] },
  { ref: { type: 'CUSTOM', fieldId: 'f-multi' }, key: 'f-multi', fieldType: 'MULTI_CHOICE', options: ['m1', 'm2', 'm3', 'm4'] },
];
const TEXT_TYPES: FieldType[] = ['TEXT', 'LONG_TEXT', 'EMAIL'];
const TAGS = ['t1', 't2', 't3', 't4'];
const TOPICS = ['p1', 'p2', 'p3', 'p4'];
const ACTIVE_TOPICS = ['p1', 'p2', 'p3'];
const ZONES = ['Asia/Tokyo', 'America/New_York', 'UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Europe/Berlin'];
/** Instants near DST changes, year ends and local midnights in the zones above. */
const NOWS = [
  '2025-03-10T12:00:00Z',
  '2025-03-09T06:59:59Z',
  '2025-04-06T03:30:00Z',
  '2024-09-08T04:00:00Z',
  '2024-12-31T23:30:00Z',
  '2025-10-26T00:59:00Z',
  '2024-02-29T15:00:00Z',
  '2025-06-30T10:00:00Z',
];
const TEXTS = ['Anna', 'anna', 'ANNA LEE', 'Anna Lee', 'Bob', 'bobby', 'Ärger', 'ärger', 'a.b*c', 'x(y)', 'Lee\n', 'straße', 'İstanbul', 'ΟΔΟΣ', '$set', 'a^b|c'];
const TEXT_OPERANDS = ['Anna', 'ann', 'ANNA LEE', 'lee', 'LEE', 'bob', 'Ärger', 'ÄR', 'a.b', '*c', '(y', 'e', 'ß', 'İ', 'ος', '$', 'b|c', 'n\n', 'zzz'];
const NUMBERS = [-1, 0, 1, 2.5, 10, 1e6];
const DATES = ['1999-12-31', '2024-02-29', '2024-03-01', '2025-01-01', '2025-03-10'];
const PRODUCTS = [
  { productId: 'p-a', variantId: 'v1', groupId: 'shoes' },
  { productId: 'p-a', variantId: 'v2', groupId: 'shoes' },
  { productId: 'p-b', variantId: null, groupId: 'hats' },
  { productId: '$p-c', variantId: 'v1', groupId: null },
];
const COUPONS = [null, 'SAVE10', ' save10', 'VIP'];
const AMOUNTS = [0, 9.99, 10, 50, 100];
const DAY_COUNTS = [1, 2, 7, 14, 30, 60];

export interface World {
  accountId: string;
  context: EvaluationFacts;
  catalog: ValidationCatalog;
  contacts: Contact[];
}

export function makeWorld(rng: Rng, index: number, contactCount: number): World {
  const now = rng.chance(0.8) ? new Date(rng.pick(NOWS)) : new Date(Date.parse('2024-06-01T00:00:00Z') + rng.int(0, 400) * DAY + rng.int(0, DAY - 1));
  const sources: PurchaseSourceFacts[] = Array.from({ length: rng.int(1, 3) }, (_, i) => ({
    id: `src-${i}`,
    timeZone: rng.chance(0.85) ? rng.pick(ZONES) : null,
    baselineOpen: rng.chance(0.3),
    capturedOrdersFromUtc: rng.chance(0.9) ? new Date(now.getTime() - rng.int(0, 120) * DAY - rng.pick([0, 1, rng.int(0, DAY)])) : null,
    capturedOrdersToUtc: rng.chance(0.25) ? new Date(now.getTime() - rng.int(0, 20) * DAY) : null,
  }));
  const context: EvaluationFacts = { now, segments: {}, purchaseSources: sources, activeTopicIds: ACTIVE_TOPICS };
  const storedSegments: { id: string; expression: SegmentExpression }[] = [];
  const catalog: ValidationCatalog = {
    fields: FIELDS.map((f) => ({
      fieldId: f.ref.type === 'CUSTOM' ? f.ref.fieldId : null,
      builtInField: f.ref.type === 'BUILT_IN' ? f.ref.builtInField : null,
      fieldType: f.fieldType,
      active: true,
      options: f.options.map((id) => ({ id, active: id !== 'o3' })),
    })),
    topics: TOPICS.map((id) => ({ id, active: ACTIVE_TOPICS.includes(id) })),
    tagIds: TAGS,
    segments: storedSegments,
    purchaseSourceIds: sources.map((s) => s.id),
  };
  const world: World = { accountId: `world-${index}`, context, catalog, contacts: [] };
  // Stored segments: each may refer to the ones before it (never a cycle).
  const segments: Record<string, SegmentExpression> = {};
  for (let i = 0; i < 3; i++) {
    const expression = makeExpression(rng, world, Object.keys(segments));
    segments[`seg-${i}`] = expression;
    storedSegments.push({ id: `seg-${i}`, expression });
  }
  world.context = { ...context, segments };
  world.contacts = Array.from({ length: contactCount }, (_, i) => makeContact(rng, world, `${world.accountId}-c${i}`));
  return world;
}

/** An instant near something interesting: local midnights in a zone, cutoffs of "n days ago", or anywhere. */
function instantNear(rng: Rng, world: World, zones: string[]): Date {
  const now = world.context.now.getTime();
  const edge = rng.pick([0, 1, -1, 1800_000, -1800_000, rng.int(-DAY, DAY)]);
  switch (rng.int(0, 2)) {
    case 0: {
      const zone = rng.pick(zones);
      const day = addDays(localDateOf(now, zone), rng.int(-70, 1));
      return new Date(startOfLocalDay(day, zone).getTime() + edge);
    }
    case 1:
      return new Date(now - rng.pick(DAY_COUNTS) * DAY + edge);
    default: {
      const from = rng.pick(world.context.purchaseSources).capturedOrdersFromUtc;
      return new Date((from ? from.getTime() : now) + edge + rng.int(-3, 3) * DAY);
    }
  }
}

function makeContact(rng: Rng, world: World, id: string): Contact {
  const fields: Contact['fields'] = {};
  const email = `${id}@Example.org`.toLowerCase();
  fields.EMAIL = textValue(email);
  const firstName = rng.chance(0.5) ? rng.pick(TEXTS) : null;
  if (firstName) fields.FIRST_NAME = textValue(firstName);
  const maybe = (key: string, value: Parameters<typeof toContactFieldValue>[0]) => {
    const v = rng.chance(0.65) ? toContactFieldValue(value) : undefined;
    if (v) fields[key] = v;
  };
  maybe('f-text', { kind: 'TEXT', text: rng.pick([...TEXTS, '']) });
  maybe('f-long', { kind: 'TEXT', text: rng.pick(TEXTS) });
  maybe('f-email', { kind: 'EMAIL', text: rng.pick(['a@x.org', 'anna@example.org', 'bob@x.org']) });
  maybe('f-num', { kind: 'NUMBER', number: rng.pick(NUMBERS) });
  maybe('f-date', { kind: 'DATE', date: rng.pick(DATES) });
  maybe('f-bool', { kind: 'BOOLEAN', booleanValue: rng.chance(0.5) });
  maybe('f-single', { kind: 'SINGLE_OPTION', optionId: rng.pick(['o1', 'o2', 'o3']) });
  maybe('f-multi', { kind: 'MULTI_OPTION', optionIds: rng.subset(['m1', 'm2', 'm3', 'm4']) });

  const zones = [...new Set([...world.context.purchaseSources.map((s) => s.timeZone ?? 'UTC'), 'UTC', rng.pick(ZONES)])];
  const sourceIds = [...world.context.purchaseSources.map((s) => s.id), 'src-gone'];
  const orders: ContactOrder[] = Array.from({ length: rng.pick([0, 0, 1, 1, 2, 3, 5]) }, (_, i) =>
    toContactOrder({
      orderId: `${id}-o${i}`,
      sourceId: rng.pick(sourceIds),
      orderedAt: instantNear(rng, world, zones),
      currency: rng.pick(['EUR', 'eur', 'USD']),
      amount: rng.pick(AMOUNTS),
      couponCode: rng.pick(COUPONS),
      items: rng.subset(PRODUCTS, 1),
    }),
  );
  const topics = rng.subset(TOPICS);
  const delivered = rng.chance(0.7) ? instantNear(rng, world, ['UTC']) : null;
  return {
    _id: id,
    accountId: world.accountId,
    email,
    firstName,
    subscriberStatus: rng.pick(['ACTIVE', 'UNCONFIRMED', 'UNSUBSCRIBED']),
    registeredAt: new Date(world.context.now.getTime() - rng.int(1, 900) * DAY),
    tags: rng.subset(TAGS),
    topics,
    optOuts: rng.subset(TOPICS.filter((t) => !topics.includes(t))).map((topicId) => ({ topicId, at: instantNear(rng, world, ['UTC']) })),
    fields,
    orders,
    ...(delivered ? { lastDeliveredAt: delivered } : {}),
    ...(rng.chance(0.5) ? { lastResponseAt: instantNear(rng, world, ['UTC']) } : {}),
    ...(delivered && rng.chance(0.6) ? { firstUnansweredDeliveryAt: instantNear(rng, world, ['UTC']) } : {}),
  };
}

export function makeExpression(rng: Rng, world: World, segmentIds: string[], shape?: { groups: number; conditions: number; operator?: SegmentOperator }): SegmentExpression {
  const groups = shape?.groups ?? rng.int(1, 3);
  return {
    conditionGroups: Array.from({ length: groups }, () => ({
      conditions: Array.from({ length: shape?.conditions ?? rng.int(1, 3) }, () => makeCondition(rng, world, segmentIds, shape?.operator)),
    })),
  };
}

function makeCondition(rng: Rng, world: World, segmentIds: string[], wanted?: SegmentOperator): SegmentCondition {
  let operator = wanted ?? rng.pick(SEGMENT_OPERATORS);
  if ((operator === 'CONTAINED_IN' || operator === 'NOT_CONTAINED_IN') && segmentIds.length === 0) operator = 'IS_EMPTY';
  const group = operatorGroup(operator);
  const operand = (o: Partial<SegmentOperand>): SegmentOperand => ({ kind: operandKindOf(operator), ...o });
  const onField = (field: WorldField, o: Partial<SegmentOperand>): SegmentCondition => ({ subjectType: 'FIELD', fieldRef: field.ref, operator, operand: operand(o) });
  const fieldOf = (types: FieldType[]) => rng.pick(FIELDS.filter((f) => types.includes(f.fieldType)));
  switch (group) {
    case 'RESPONSE':
      return onField(FIELDS[0], { number: rng.pick(DAY_COUNTS) });
    case 'TEXT':
      return onField(fieldOf(TEXT_TYPES), { text: rng.pick(TEXT_OPERANDS) });
    case 'NUMBER':
      return onField(fieldOf(['NUMBER']), { number: rng.pick([...NUMBERS, 5, -0.5]) });
    case 'DATE':
      return onField(fieldOf(['DATE']), { date: rng.pick([...DATES, '2024-02-28']) });
    case 'BOOLEAN':
      return onField(fieldOf(['BOOLEAN']), {});
    case 'EMPTINESS':
      return onField(rng.pick(FIELDS), {});
    case 'OPTION': {
      if (operator === 'OPTION_IS_ANY_OF' || operator === 'OPTION_IS_NONE_OF') {
        const f = fieldOf(['SINGLE_CHOICE']);
        return onField(f, { optionIds: rng.subset(f.options, 1) });
      }
      const subject = rng.pick(['FIELD', 'TAGS', 'TOPICS'] as const);
      if (subject === 'FIELD') {
        const f = fieldOf(['MULTI_CHOICE']);
        return onField(f, { optionIds: rng.subset(f.options, 1) });
      }
      return { subjectType: subject, fieldRef: null, operator, operand: operand({ optionIds: rng.subset(subject === 'TAGS' ? TAGS : TOPICS, 1) }) };
    }
    case 'TOPIC_AND_MEMBERSHIP':
      if (operator === 'TOPIC_OPTED_OUT') return { subjectType: 'TOPICS', fieldRef: null, operator, operand: operand({ optionIds: rng.subset(TOPICS, 1) }) };
      return { subjectType: 'SEGMENT', fieldRef: null, operator, operand: operand({ segmentId: rng.pick(segmentIds) }) };
    case 'PURCHASE':
      return { subjectType: 'PURCHASES', fieldRef: null, operator, operand: operand({ purchase: makePurchase(rng, world, operator as PurchaseOperator) }) };
  }
}

function makePurchase(rng: Rng, world: World, operator: PurchaseOperator): PurchaseSegmentCondition {
  const needsPeriod = operator === 'FIRST_PURCHASE_IN_PERIOD' || operator === 'LAST_PURCHASE_IN_PERIOD' || operator === 'LAST_PURCHASE_BEFORE_PERIOD';
  const scopeKind = rng.pick(['ALL_PRODUCTS', 'ALL_PRODUCTS', 'PRODUCTS', 'VARIANTS', 'GROUP'] as const);
  const picked = rng.subset(PRODUCTS, 1);
  const p: PurchaseSegmentCondition = {
    sourceId: rng.chance(0.4) ? null : rng.pick(world.context.purchaseSources).id,
    scopeKind,
    products:
      scopeKind === 'PRODUCTS'
        ? [...new Set(picked.map((x) => x.productId))].map((productId) => ({ productId }))
        : scopeKind === 'VARIANTS'
          ? picked.filter((x) => x.variantId).map((x) => ({ productId: x.productId, variantId: x.variantId }))
          : [],
    groupId: scopeKind === 'GROUP' ? rng.pick(['shoes', 'hats']) : null,
    period: needsPeriod || rng.chance(0.8) ? makePeriod(rng, world) : null,
    timeZoneId: rng.chance(0.5) ? rng.pick(ZONES) : null,
  };
  if (scopeKind === 'VARIANTS' && p.products!.length === 0) p.products = [{ productId: 'p-a', variantId: 'v2' }];
  if (operator.startsWith('PURCHASE_COUNT_')) p.count = rng.pick([0, 1, 1, 2, 2, 3]);
  if (operator === 'ORDER_VALUE_AT_LEAST' || operator === 'ORDER_VALUE_AT_MOST') {
    p.currency = rng.pick(['EUR', 'USD']);
    p.amount = rng.pick(AMOUNTS);
  }
  if (operator === 'COUPON_USED') p.couponCode = rng.pick(['save10', 'SAVE10 ', 'vip', 'NONE']);
  return p;
}

function makePeriod(rng: Rng, world: World): PurchasePeriod {
  if (rng.chance(0.5)) return { kind: 'LAST_DAYS', days: rng.pick(DAY_COUNTS) };
  const today = localDateOf(world.context.now, rng.pick(ZONES));
  const from = addDays(today, -rng.int(0, 90));
  return { kind: 'DATE_RANGE', from, to: addDays(from, rng.pick([0, 0, 1, 6, 30, 120])) };
}

/** The operators in a fixed order, so single-condition rounds can cycle through all of them. */
export const ALL_OPERATORS: readonly SegmentOperator[] = Object.values(OPERATOR_GROUPS).flat();
