/**
 * The REFERENCE meaning of a segment expression for one contact, in plain TypeScript: what the API contract
 * "Segment semantics" says, written as directly as possible. The compiler (compile.ts) must agree with
 * it on every contact; the property test holds it to that. Written independently of the compiler on
 * purpose: it reads raw values (folds case itself, reads order dates as local dates in the source's
 * zone) where the compiler relies on stored copies and instant ranges.
 * Only the contact-independent purchase-window rules (purchase-scope.ts) are shared.
 */
import type { Contact, ContactOrder } from './contact';
import { fieldKey, foldCase, foldCouponCode } from './contact';
import type { EvaluationFacts } from './evaluation-facts';
import type { PurchaseOperator, PurchaseSegmentCondition, SegmentCondition, SegmentExpression, SegmentOperator, Truth } from './expression';
import { OrderInterval, ScopedSource, absenceProvenForAll, localBounds, purchaseOperatorIn, scopedSources } from './purchase-scope';
import { localDateOf } from './time';

const DAY_MS = 86_400_000;

// ---- three-valued logic (SQL): AND: FALSE beats UNKNOWN; OR: TRUE beats UNKNOWN; NOT UNKNOWN = UNKNOWN.

export function and3(values: Iterable<Truth>): Truth {
  let result: Truth = 'TRUE';
  for (const v of values) {
    if (v === 'FALSE') return 'FALSE';
    if (v === 'UNKNOWN') result = 'UNKNOWN';
  }
  return result;
}

export function or3(values: Iterable<Truth>): Truth {
  let result: Truth = 'FALSE';
  for (const v of values) {
    if (v === 'TRUE') return 'TRUE';
    if (v === 'UNKNOWN') result = 'UNKNOWN';
  }
  return result;
}

export function not3(v: Truth): Truth {
  return v === 'TRUE' ? 'FALSE' : v === 'FALSE' ? 'TRUE' : 'UNKNOWN';
}

const truth = (b: boolean): Truth => (b ? 'TRUE' : 'FALSE');

/** A comparison on a missing value is UNKNOWN. */
const compare = <V>(value: V | undefined, test: (v: V) => boolean): Truth => (value === undefined ? 'UNKNOWN' : truth(test(value)));

// ---- the expression

/** Groups are OR-ed, conditions of a group AND-ed. A contact matches the segment only when TRUE. */
export function evaluate(expression: SegmentExpression, contact: Contact, context: EvaluationFacts): Truth {
  return evaluateIn(expression, contact, context, []);
}

function evaluateIn(expression: SegmentExpression, contact: Contact, context: EvaluationFacts, stack: string[]): Truth {
  return or3(
    expression.conditionGroups.map((group) => and3(group.conditions.map((c) => evaluateCondition(c, contact, context, stack)))),
  );
}

export function evaluateCondition(condition: SegmentCondition, contact: Contact, context: EvaluationFacts, stack: string[] = []): Truth {
  const { operator, operand } = condition;
  switch (condition.subjectType) {
    case 'FIELD':
      if (!condition.fieldRef) throw new Error('FIELD condition without fieldRef');
      if (isResponseOperator(operator)) return responseTruth(operator, operand.number as number, contact, context.now);
      return fieldTruth(operator, contact.fields?.[fieldKey(condition.fieldRef)], condition);
    case 'TAGS':
      return listTruth(operator, contact.tags ?? [], operand.optionIds ?? []);
    case 'TOPICS':
      if (operator === 'TOPIC_OPTED_OUT') {
        // Only a current explicit opt-out from a selected topic that is still active counts.
        const selected = new Set((operand.optionIds ?? []).filter((id) => context.activeTopicIds.includes(id)));
        return truth((contact.optOuts ?? []).some((o) => selected.has(o.topicId)));
      }
      return listTruth(operator, contact.topics ?? [], operand.optionIds ?? []);
    case 'SEGMENT': {
      const id = operand.segmentId as string;
      const referenced = context.segments[id];
      if (!referenced) throw new Error(`referenced segment ${id} is not in the context`);
      if (stack.includes(id)) throw new Error(`segment reference cycle through ${id}`);
      const result = evaluateIn(referenced, contact, context, [...stack, id]);
      return operator === 'NOT_CONTAINED_IN' ? not3(result) : result;
    }
    case 'PURCHASES':
      return purchaseTruth(operator as PurchaseOperator, operand.purchase as PurchaseSegmentCondition, contact.orders ?? [], context);
  }
}

/** TAGS and TOPICS lists are always known (no entry = empty list), so never UNKNOWN. */
function listTruth(operator: SegmentOperator, list: readonly string[], ids: readonly string[]): Truth {
  const any = list.some((x) => ids.includes(x));
  if (operator === 'OPTION_CONTAINS_ANY') return truth(any);
  if (operator === 'OPTION_CONTAINS_NONE') return truth(!any);
  throw new Error(`operator ${operator} on a list subject`);
}

// ---- field values

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function fieldTruth(operator: SegmentOperator, stored: unknown, condition: SegmentCondition): Truth {
  const value = isObject(stored) ? stored : undefined;
  const { operand } = condition;
  const text = typeof value?.text === 'string' ? value.text : undefined;
  const num = typeof value?.number === 'number' && !Number.isNaN(value.number) ? value.number : undefined;
  const date = typeof value?.date === 'string' ? value.date : undefined;
  const bool = typeof value?.boolean === 'boolean' ? value.boolean : undefined;
  const optionId = typeof value?.optionId === 'string' ? value.optionId : undefined;
  const optionIds = Array.isArray(value?.optionIds) && value.optionIds.length > 0 ? (value.optionIds as string[]) : undefined;
  const t = operand.text as string;
  const n = operand.number as number;
  const d = operand.date as string;
  const ids = operand.optionIds ?? [];
  switch (operator) {
    case 'IS_EMPTY':
      return truth(value === undefined);
    case 'IS_NOT_EMPTY':
      return truth(value !== undefined);
    // Text: EQUALS / NOT_EQUALS exact, the others ignore case.
    case 'TEXT_EQUALS':
      return compare(text, (v) => v === t);
    case 'TEXT_NOT_EQUALS':
      return compare(text, (v) => v !== t);
    case 'TEXT_EQUALS_IGNORE_CASE':
      return compare(text, (v) => foldCase(v) === foldCase(t));
    case 'TEXT_STARTS_WITH':
      return compare(text, (v) => foldCase(v).startsWith(foldCase(t)));
    case 'TEXT_ENDS_WITH':
      return compare(text, (v) => foldCase(v).endsWith(foldCase(t)));
    case 'TEXT_CONTAINS':
      return compare(text, (v) => foldCase(v).includes(foldCase(t)));
    case 'NUMBER_EQUALS':
      return compare(num, (v) => v === n);
    case 'NUMBER_NOT_EQUALS':
      return compare(num, (v) => v !== n);
    case 'NUMBER_GREATER_THAN':
      return compare(num, (v) => v > n);
    case 'NUMBER_LESS_THAN':
      return compare(num, (v) => v < n);
    case 'NUMBER_GREATER_OR_EQUAL':
      return compare(num, (v) => v >= n);
    case 'NUMBER_LESS_OR_EQUAL':
      return compare(num, (v) => v <= n);
    // LocalDates compare as strings.
    case 'DATE_EQUALS':
      return compare(date, (v) => v === d);
    case 'DATE_NOT_EQUALS':
      return compare(date, (v) => v !== d);
    case 'DATE_BEFORE':
      return compare(date, (v) => v < d);
    case 'DATE_AFTER':
      return compare(date, (v) => v > d);
    case 'DATE_BEFORE_OR_EQUAL':
      return compare(date, (v) => v <= d);
    case 'DATE_EQUAL_OR_AFTER':
      return compare(date, (v) => v >= d);
    case 'BOOLEAN_IS_TRUE':
      return compare(bool, (v) => v === true);
    case 'BOOLEAN_IS_FALSE':
      return compare(bool, (v) => v === false);
    case 'OPTION_IS_ANY_OF':
      return compare(optionId, (v) => ids.includes(v));
    case 'OPTION_IS_NONE_OF':
      return compare(optionId, (v) => !ids.includes(v));
    case 'OPTION_CONTAINS_ANY':
      return compare(optionIds, (v) => v.some((x) => ids.includes(x)));
    case 'OPTION_CONTAINS_NONE':
      return compare(optionIds, (v) => !v.some((x) => ids.includes(x)));
    default:
      throw new Error(`operator ${operator} on a field`);
  }
}

// ---- response (delivery and engagement facts; windows are rolling 24-hour days before now)

function isResponseOperator(op: SegmentOperator): op is 'RESPONDED_WITHIN_DAYS' | 'NO_RESPONSE_FOR_DAYS' | 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST' {
  return op === 'RESPONDED_WITHIN_DAYS' || op === 'NO_RESPONSE_FOR_DAYS' || op === 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST';
}

const time = (d: Date | null | undefined): number | undefined => (d instanceof Date ? d.getTime() : undefined);

function responseTruth(operator: SegmentOperator, days: number, contact: Contact, now: Date): Truth {
  const cutoff = now.getTime() - days * DAY_MS;
  const lastResponse = time(contact.lastResponseAt);
  const respondedSinceCutoff = lastResponse !== undefined && lastResponse >= cutoff;
  // A response implies a delivery, even if the delivery fact has not arrived.
  const everDelivered = time(contact.lastDeliveredAt) !== undefined || lastResponse !== undefined;
  switch (operator) {
    case 'RESPONDED_WITHIN_DAYS':
      // Our own engagement data is complete: no recorded response is a proven "no".
      return truth(respondedSinceCutoff);
    case 'NO_RESPONSE_FOR_DAYS':
      if (respondedSinceCutoff) return 'FALSE';
      return everDelivered ? 'TRUE' : 'UNKNOWN';
    case 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST': {
      // TRUE when a delivery has waited at least `days` without any response since.
      if (!everDelivered) return 'UNKNOWN';
      const silenceStart = time(contact.firstUnansweredDeliveryAt);
      return truth(silenceStart !== undefined && silenceStart <= cutoff);
    }
    default:
      throw new Error(`operator ${operator} is not a response operator`);
  }
}

// ---- purchases

function orderMatchesScope(order: ContactOrder, purchase: PurchaseSegmentCondition): boolean {
  const items = order.items ?? [];
  const products = purchase.products ?? [];
  switch (purchase.scopeKind) {
    case 'ALL_PRODUCTS':
      return true;
    case 'PRODUCTS':
      return items.some((i) => products.some((p) => p.productId === i.productId));
    case 'VARIANTS':
      return items.some((i) => products.some((p) => p.productId === i.productId && p.variantId === i.variantId));
    case 'GROUP':
      return items.some((i) => i.groupId === purchase.groupId);
  }
}

/** Extra per-order tests of the value and coupon operators. */
function orderMatchesOperator(order: ContactOrder, operator: PurchaseOperator, purchase: PurchaseSegmentCondition): boolean {
  switch (operator) {
    case 'ORDER_VALUE_AT_LEAST':
      return order.currency === purchase.currency && order.amount >= (purchase.amount as number);
    case 'ORDER_VALUE_AT_MOST':
      return order.currency === purchase.currency && order.amount <= (purchase.amount as number);
    case 'COUPON_USED':
      return order.couponCode != null && foldCouponCode(order.couponCode) === foldCouponCode(purchase.couponCode as string);
    default:
      return true;
  }
}

/** Reads the order's date in its source's zone and checks it against the interval's local dates. */
function orderInInterval(order: ContactOrder, source: ScopedSource, interval: OrderInterval): boolean {
  const { from, to } = localBounds(interval, source.period);
  const local = localDateOf(order.orderedAt, source.zone);
  return (from === undefined || local >= from) && (to === undefined || local <= to);
}

function purchaseTruth(operator: PurchaseOperator, purchase: PurchaseSegmentCondition, orders: readonly ContactOrder[], context: EvaluationFacts): Truth {
  const sources = scopedSources(purchase, context);
  const sourceById = new Map(sources.map((s) => [s.id, s]));
  const candidates = orders.filter((o) => sourceById.has(o.sourceId) && orderMatchesScope(o, purchase) && orderMatchesOperator(o, operator, purchase));
  const count = (interval: OrderInterval) => candidates.filter((o) => orderInInterval(o, sourceById.get(o.sourceId)!, interval)).length;
  const proven = (interval: OrderInterval) => absenceProvenForAll(interval, sources, context.now);
  /** "At least k matching orders in the interval": found ones prove TRUE; too few prove FALSE only with a known window. */
  const atLeast = (k: number, interval: OrderInterval): Truth => (k <= 0 || count(interval) >= k ? 'TRUE' : proven(interval) ? 'FALSE' : 'UNKNOWN');
  return purchaseOperatorIn(operator, purchase, { atLeast, not: not3, and: and3 });
}
