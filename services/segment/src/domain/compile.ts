/**
 * The segment COMPILER: expression -> two MongoDB filters over Contact documents (contact.ts),
 * `trueFilter` matching exactly the contacts the reference evaluator (evaluate.ts) finds TRUE and
 * `falseFilter` exactly the FALSE ones; UNKNOWN contacts match neither. Two filters instead of one so
 * that NOT (NOT_CONTAINED_IN, NOT_PURCHASED, ...) stays correct under missing facts: negation swaps
 * them instead of complementing a single filter, which would turn UNKNOWN into TRUE.
 *
 * Built compositionally: each condition yields a pair (T, F); AND = ($and of Ts, $or of Fs),
 * OR = ($or of Ts, $and of Fs), NOT swaps, CONTAINED_IN inlines the referenced segment's pair.
 * Pure: "now" comes from the context.
 *
 * Only standard query operators, so the same documents run on MongoDB and on the embedded engine:
 *   $and $or $nor $in $nin $eq (implicit) $gt $gte $lt $lte $exists $type $regex $elemMatch $expr
 * and, inside $expr (PURCHASE_COUNT_* with a count of 2 or more only):
 *   $gte $size $filter $ifNull $and $or $in $eq $gt $lt $literal
 * Indexable paths for production: accountId first, then tags, topics, optOuts.topicId,
 * fields.<key>.text|folded|number|date|boolean|optionId|optionIds, orders.sourceId + orders.orderedAt,
 * lastResponseAt, lastDeliveredAt, firstUnansweredDeliveryAt.
 */
import { fieldKey, foldCase, foldCouponCode } from './contact';
import type { CompileFacts, EvaluationFacts } from './evaluation-facts';
import type { PurchaseOperator, PurchaseSegmentCondition, SegmentCondition, SegmentExpression, SegmentOperand, SegmentOperator } from './expression';
import { Filter, FilterPair, NEVER, PAIR_FALSE, PAIR_TRUE, and, andPair, knownPair, not, notPair, or, orPair } from './filter';
import { OrderInterval, ScopedSource, absenceProvenForAll, instantBounds, purchaseOperatorIn, scopedSources } from './purchase-scope';

export type { Filter } from './filter';

const DAY_MS = 86_400_000;

export interface CompiledSegment {
  /** Contacts of the account for which the expression is TRUE (the matching contacts). */
  trueFilter: Filter;
  /** Contacts of the account for which it is FALSE. */
  falseFilter: Filter;
  /** Contacts of the account for which it is UNKNOWN (the definition; a preview counts them as the rest of the account). */
  unknownFilter: Filter;
}

export function compileSegment(expression: SegmentExpression, context: CompileFacts): CompiledSegment {
  const pair = compileExpression(expression, context, []);
  // A fresh copy each time: drivers may rewrite filters in place while casting them.
  const scoped = (f: Filter): Filter => structuredClone({ accountId: context.accountId, ...f });
  return { trueFilter: scoped(pair.T), falseFilter: scoped(pair.F), unknownFilter: scoped(not(or(pair.T, pair.F))) };
}

function compileExpression(expression: SegmentExpression, context: EvaluationFacts, stack: string[]): FilterPair {
  return orPair(expression.conditionGroups.map((g) => andPair(g.conditions.map((c) => compileCondition(c, context, stack)))));
}

export function compileCondition(condition: SegmentCondition, context: EvaluationFacts, stack: string[] = []): FilterPair {
  const { operator, operand } = condition;
  switch (condition.subjectType) {
    case 'FIELD':
      if (!condition.fieldRef) throw new Error('FIELD condition without fieldRef');
      if (RESPONSE_OPERATORS.has(operator)) return responsePair(operator, operand.number as number, context.now);
      return fieldPair(operator, fieldKey(condition.fieldRef), operand);
    case 'TAGS':
      return listPair(operator, 'tags', operand.optionIds ?? []);
    case 'TOPICS':
      if (operator === 'TOPIC_OPTED_OUT') {
        const selected = (operand.optionIds ?? []).filter((id) => context.activeTopicIds.includes(id));
        return selected.length === 0 ? PAIR_FALSE : { T: { 'optOuts.topicId': { $in: selected } }, F: { 'optOuts.topicId': { $nin: selected } } };
      }
      return listPair(operator, 'topics', operand.optionIds ?? []);
    case 'SEGMENT': {
      const id = operand.segmentId as string;
      const referenced = context.segments[id];
      if (!referenced) throw new Error(`referenced segment ${id} is not in the context`);
      if (stack.includes(id)) throw new Error(`segment reference cycle through ${id}`);
      const pair = compileExpression(referenced, context, [...stack, id]);
      return operator === 'NOT_CONTAINED_IN' ? notPair(pair) : pair;
    }
    case 'PURCHASES':
      return purchasePair(operator as PurchaseOperator, operand.purchase as PurchaseSegmentCondition, context);
  }
}

/** TAGS / TOPICS: a missing list is an empty list ($nin matches it), so never UNKNOWN. */
function listPair(operator: SegmentOperator, path: string, ids: string[]): FilterPair {
  const any = { [path]: { $in: ids } };
  const none = { [path]: { $nin: ids } };
  if (operator === 'OPTION_CONTAINS_ANY') return { T: any, F: none };
  if (operator === 'OPTION_CONTAINS_NONE') return { T: none, F: any };
  throw new Error(`operator ${operator} on a list subject`);
}

// ---- field values (Contact.fields.<key>.<text|folded|number|date|boolean|optionId|optionIds>)

function escapeRegex(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/**
 * "Ends here": JavaScript's `$` and PCRE's `$` differ (PCRE also matches before a final newline), so the
 * end is written as a negative lookahead both engines read the same way.
 */
const END = '(?![\\s\\S])';

/** Equality on a typed path: T where equal, F where a value of the same type differs (type bracketing skips missing ones). */
function equalsPair(path: string, value: string | number): FilterPair {
  return { T: { [path]: value }, F: or({ [path]: { $lt: value } }, { [path]: { $gt: value } }) };
}

const RANGE_COMPLEMENT = { $gt: '$lte', $lt: '$gte', $gte: '$lt', $lte: '$gt' } as const;

function rangePair(path: string, op: keyof typeof RANGE_COMPLEMENT, value: string | number): FilterPair {
  return { T: { [path]: { [op]: value } }, F: { [path]: { [RANGE_COMPLEMENT[op]]: value } } };
}

/** A pattern on the folded copy; F needs a value (any string, '' included) that does not match. */
function regexPair(path: string, pattern: string): FilterPair {
  const T = { [path]: { $regex: pattern } };
  return { T, F: and({ [path]: { $gte: '' } }, not(T)) };
}

function fieldPath(key: string, prop?: string): string {
  // Keys are field ids (UUIDs) or built-in names; anything that could change the path's meaning is a bug upstream.
  if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new Error(`unsafe field key ${JSON.stringify(key)}`);
  return prop ? `fields.${key}.${prop}` : `fields.${key}`;
}

function fieldPair(operator: SegmentOperator, key: string, operand: SegmentOperand): FilterPair {
  const p = (prop: string) => fieldPath(key, prop);
  // The projection stores an entry only for a value (contact.ts), so presence is "an embedded document is there".
  const hasValue = { [fieldPath(key)]: { $type: 'object' } };
  const text = operand.text as string;
  const n = operand.number as number;
  const d = operand.date as string;
  const ids = operand.optionIds ?? [];
  switch (operator) {
    case 'IS_EMPTY':
      return notPair(knownPair(hasValue));
    case 'IS_NOT_EMPTY':
      return knownPair(hasValue);
    case 'TEXT_EQUALS':
      return equalsPair(p('text'), text);
    case 'TEXT_NOT_EQUALS':
      return notPair(equalsPair(p('text'), text));
    case 'TEXT_EQUALS_IGNORE_CASE':
      return equalsPair(p('folded'), foldCase(text));
    case 'TEXT_STARTS_WITH':
      return regexPair(p('folded'), `^${escapeRegex(foldCase(text))}`);
    case 'TEXT_ENDS_WITH':
      return regexPair(p('folded'), `${escapeRegex(foldCase(text))}${END}`);
    case 'TEXT_CONTAINS':
      return regexPair(p('folded'), escapeRegex(foldCase(text)));
    case 'NUMBER_EQUALS':
      return equalsPair(p('number'), n);
    case 'NUMBER_NOT_EQUALS':
      return notPair(equalsPair(p('number'), n));
    case 'NUMBER_GREATER_THAN':
      return rangePair(p('number'), '$gt', n);
    case 'NUMBER_LESS_THAN':
      return rangePair(p('number'), '$lt', n);
    case 'NUMBER_GREATER_OR_EQUAL':
      return rangePair(p('number'), '$gte', n);
    case 'NUMBER_LESS_OR_EQUAL':
      return rangePair(p('number'), '$lte', n);
    case 'DATE_EQUALS':
      return equalsPair(p('date'), d);
    case 'DATE_NOT_EQUALS':
      return notPair(equalsPair(p('date'), d));
    case 'DATE_BEFORE':
      return rangePair(p('date'), '$lt', d);
    case 'DATE_AFTER':
      return rangePair(p('date'), '$gt', d);
    case 'DATE_BEFORE_OR_EQUAL':
      return rangePair(p('date'), '$lte', d);
    case 'DATE_EQUAL_OR_AFTER':
      return rangePair(p('date'), '$gte', d);
    case 'BOOLEAN_IS_TRUE':
      return { T: { [p('boolean')]: true }, F: { [p('boolean')]: false } };
    case 'BOOLEAN_IS_FALSE':
      return { T: { [p('boolean')]: false }, F: { [p('boolean')]: true } };
    case 'OPTION_IS_ANY_OF':
      return { T: { [p('optionId')]: { $in: ids } }, F: { [p('optionId')]: { $gte: '', $nin: ids } } };
    case 'OPTION_IS_NONE_OF':
      return { T: { [p('optionId')]: { $gte: '', $nin: ids } }, F: { [p('optionId')]: { $in: ids } } };
    case 'OPTION_CONTAINS_ANY':
      return { T: { [p('optionIds')]: { $in: ids } }, F: { [p('optionIds.0')]: { $exists: true }, [p('optionIds')]: { $nin: ids } } };
    case 'OPTION_CONTAINS_NONE':
      return { T: { [p('optionIds.0')]: { $exists: true }, [p('optionIds')]: { $nin: ids } }, F: { [p('optionIds')]: { $in: ids } } };
    default:
      throw new Error(`operator ${operator} on a field`);
  }
}

// ---- response operators (see evaluate.ts for the meaning)

const RESPONSE_OPERATORS = new Set<SegmentOperator>(['RESPONDED_WITHIN_DAYS', 'NO_RESPONSE_FOR_DAYS', 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST']);

function responsePair(operator: SegmentOperator, days: number, now: Date): FilterPair {
  const cutoff = new Date(now.getTime() - days * DAY_MS);
  const respondedSinceCutoff = { lastResponseAt: { $gte: cutoff } };
  const everDelivered = or({ lastDeliveredAt: { $type: 'date' } }, { lastResponseAt: { $type: 'date' } });
  switch (operator) {
    case 'RESPONDED_WITHIN_DAYS':
      return knownPair(respondedSinceCutoff);
    case 'NO_RESPONSE_FOR_DAYS':
      return { T: and(everDelivered, not(respondedSinceCutoff)), F: respondedSinceCutoff };
    case 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST': {
      const silentLongEnough = { firstUnansweredDeliveryAt: { $lte: cutoff } };
      return { T: silentLongEnough, F: and(everDelivered, not(silentLongEnough)) };
    }
    default:
      throw new Error(`operator ${operator} is not a response operator`);
  }
}

// ---- purchases (see purchase-scope.ts for intervals and the capture window)

/** Sources sharing a zone share the period's instants, so they share one $elemMatch. */
function byZone(sources: readonly ScopedSource[]): ScopedSource[][] {
  const groups = new Map<string, ScopedSource[]>();
  for (const s of sources) groups.set(s.zone, [...(groups.get(s.zone) ?? []), s]);
  return [...groups.values()];
}

function productScopeQuery(p: PurchaseSegmentCondition): Filter {
  const products = p.products ?? [];
  switch (p.scopeKind) {
    case 'ALL_PRODUCTS':
      return {};
    case 'PRODUCTS':
      return { items: { $elemMatch: { productId: { $in: products.map((x) => x.productId) } } } };
    case 'VARIANTS':
      return { items: { $elemMatch: { $or: products.map((x) => ({ productId: x.productId, variantId: x.variantId })) } } };
    case 'GROUP':
      return { items: { $elemMatch: { groupId: p.groupId } } };
  }
}

/** The same product scope as an aggregation expression over `$$o` (for counting in $expr). */
function productScopeExpr(p: PurchaseSegmentCondition): unknown[] {
  const products = p.products ?? [];
  const anyItem = (cond: unknown) => [{ $gt: [{ $size: { $filter: { input: { $ifNull: ['$$o.items', []] }, as: 'i', cond } } }, 0] }];
  switch (p.scopeKind) {
    case 'ALL_PRODUCTS':
      return [];
    case 'PRODUCTS':
      // $literal: ids are integrator strings and could start with '$', which an expression reads as a path.
      return anyItem({ $in: ['$$i.productId', { $literal: products.map((x) => x.productId) }] });
    case 'VARIANTS':
      return anyItem({
        $or: products.map((x) => ({ $and: [{ $eq: ['$$i.productId', { $literal: x.productId }] }, { $eq: ['$$i.variantId', { $literal: x.variantId }] }] })),
      });
    case 'GROUP':
      return anyItem({ $eq: ['$$i.groupId', { $literal: p.groupId }] });
  }
}

/** Per-order tests of the value and coupon operators. */
function operatorQuery(operator: PurchaseOperator, p: PurchaseSegmentCondition): Filter {
  switch (operator) {
    case 'ORDER_VALUE_AT_LEAST':
      return { currency: p.currency, amount: { $gte: p.amount } };
    case 'ORDER_VALUE_AT_MOST':
      return { currency: p.currency, amount: { $lte: p.amount } };
    case 'COUPON_USED':
      return { couponCode: foldCouponCode(p.couponCode as string) };
    default:
      return {};
  }
}

function purchasePair(operator: PurchaseOperator, p: PurchaseSegmentCondition, context: EvaluationFacts): FilterPair {
  const sources = scopedSources(p, context);
  // Sources in one zone share the period's instants; without a period the zone does not matter at all.
  const zones = p.period ? byZone(sources) : sources.length > 0 ? [[...sources]] : [];
  const perOrder = { ...productScopeQuery(p), ...operatorQuery(operator, p) };

  /** Contacts with at least one matching order in the interval. */
  const hasQuery = (interval: OrderInterval): Filter =>
    or(
      ...zones.map((group) => {
        const { gte, lt } = instantBounds(interval, group[0]);
        const orderedAt = { ...(gte ? { $gte: gte } : {}), ...(lt ? { $lt: lt } : {}) };
        const when = gte || lt ? { orderedAt } : {};
        return { orders: { $elemMatch: { sourceId: { $in: group.map((s) => s.id) }, ...when, ...perOrder } } };
      }),
    );

  /** Contacts with at least k matching orders (k >= 2 needs counting, which only $expr can do). */
  const countQuery = (k: number, interval: OrderInterval): Filter => {
    const any = hasQuery(interval);
    if (k === 1) return any;
    if (Object.keys(operatorQuery(operator, p)).length > 0) throw new Error(`${operator} does not count orders`);
    const inSourceAndInterval = zones.map((group) => {
      const { gte, lt } = instantBounds(interval, group[0]);
      return {
        $and: [
          { $in: ['$$o.sourceId', { $literal: group.map((s) => s.id) }] },
          ...(gte ? [{ $gte: ['$$o.orderedAt', gte] }] : []),
          ...(lt ? [{ $lt: ['$$o.orderedAt', lt] }] : []),
        ],
      };
    });
    const cond = { $and: [{ $or: inSourceAndInterval }, ...productScopeExpr(p)] };
    const counted = { $expr: { $gte: [{ $size: { $filter: { input: { $ifNull: ['$orders', []] }, as: 'o', cond } } }, k] } };
    return and(any, counted);
  };

  // "At least k" as a filter pair; the operators over it are defined once, in purchaseOperatorIn.
  const atLeast = (k: number, interval: OrderInterval): FilterPair => {
    if (k <= 0) return PAIR_TRUE;
    const T = countQuery(k, interval);
    return { T, F: absenceProvenForAll(interval, sources, context.now) ? not(T) : NEVER };
  };
  return purchaseOperatorIn(operator, p, { atLeast, not: notPair, and: andPair });
}
