/** Small constructors that keep the test tables readable. */
import type { Contact, ContactFieldValue, ContactOrder, ContactOrderItem } from '../../src/domain/contact';
import { textValue, toContactOrder } from '../../src/domain/contact';
import type { CompileFacts, EvaluationFacts } from '../../src/domain/evaluation-facts';
import type {
  FieldRef,
  PurchaseSegmentCondition,
  SegmentCondition,
  SegmentExpression,
  SegmentOperand,
  SegmentOperator,
  SubjectType,
} from '../../src/domain/expression';
import { evaluate } from '../../src/domain/evaluate';
import { compileSegment } from '../../src/domain/compile';
import type { Collection } from '@mailer/store';

export const custom = (fieldId: string): FieldRef => ({ type: 'CUSTOM', fieldId });
export const builtIn = (builtInField: 'EMAIL' | 'FIRST_NAME'): FieldRef => ({ type: 'BUILT_IN', builtInField });

export const NONE: SegmentOperand = { kind: 'NONE' };
export const text = (t: string): SegmentOperand => ({ kind: 'TEXT', text: t });
export const num = (n: number): SegmentOperand => ({ kind: 'NUMBER', number: n });
export const date = (d: string): SegmentOperand => ({ kind: 'DATE', date: d });
export const options = (...ids: string[]): SegmentOperand => ({ kind: 'OPTIONS', optionIds: ids });
export const segment = (id: string): SegmentOperand => ({ kind: 'SEGMENT', segmentId: id });
export const purchase = (p: Partial<PurchaseSegmentCondition>): SegmentOperand => ({ kind: 'PURCHASE', purchase: { scopeKind: 'ALL_PRODUCTS', ...p } });

export function cond(subjectType: SubjectType, operator: SegmentOperator, operand: SegmentOperand, fieldRef: FieldRef | null = null): SegmentCondition {
  return { subjectType, fieldRef, operator, operand };
}
export const fieldCond = (ref: FieldRef, operator: SegmentOperator, operand: SegmentOperand = NONE) => cond('FIELD', operator, operand, ref);

/** Groups OR-ed, conditions of a group AND-ed. */
export const expr = (...groups: SegmentCondition[][]): SegmentExpression => ({ conditionGroups: groups.map((conditions) => ({ conditions })) });

export function contact(id: string, accountId: string, patch: Partial<Contact> = {}): Contact {
  return {
    _id: id,
    accountId,
    email: `${id}@example.org`,
    firstName: null,
    subscriberStatus: 'ACTIVE',
    registeredAt: new Date('2024-01-01T00:00:00Z'),
    tags: [],
    topics: [],
    optOuts: [],
    fields: { EMAIL: textValue(`${id}@example.org`) },
    orders: [],
    ...patch,
  };
}

export const fields = (values: Record<string, ContactFieldValue>) => values;

let orderSeq = 0;
export function order(sourceId: string, orderedAt: string | Date, patch: Partial<Omit<ContactOrder, 'items'>> & { items?: ContactOrderItem[] } = {}): ContactOrder {
  return toContactOrder({
    orderId: `o${++orderSeq}`,
    sourceId,
    orderedAt,
    currency: 'EUR',
    amount: 10,
    items: [{ productId: 'p1' }],
    ...patch,
  });
}

export interface Classified {
  evaluated: string;
  compiled: string;
}

/**
 * Runs one expression both ways for the given contacts (already stored): the reference evaluator, and
 * the compiled filters executed by the store. Returns per contact id the two classifications.
 */
export async function classify(
  collection: Collection<Contact>,
  expression: SegmentExpression,
  contacts: readonly Contact[],
  context: EvaluationFacts,
  accountId: string,
): Promise<Map<string, Classified>> {
  const compiled = compileSegment(expression, { ...context, accountId } as CompileFacts);
  const [t, f, u] = await Promise.all([
    collection.find(compiled.trueFilter, { projection: { _id: 1 } }),
    collection.find(compiled.falseFilter, { projection: { _id: 1 } }),
    collection.find(compiled.unknownFilter, { projection: { _id: 1 } }),
  ]);
  const seen = new Map<string, string[]>();
  for (const [label, docs] of [['TRUE', t], ['FALSE', f], ['UNKNOWN', u]] as const) {
    for (const d of docs) seen.set(d._id, [...(seen.get(d._id) ?? []), label]);
  }
  const out = new Map<string, Classified>();
  for (const c of contacts) {
    out.set(c._id, { evaluated: evaluate(expression, c, context), compiled: (seen.get(c._id) ?? ['NONE']).join('+') });
    seen.delete(c._id);
  }
  // Anything left matched a filter without being one of the account's contacts (another account's).
  for (const [id, labels] of seen) out.set(id, { evaluated: 'NOT_IN_ACCOUNT', compiled: labels.join('+') });
  return out;
}
