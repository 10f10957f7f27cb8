/**
 * Which operator a condition may use, and which operand kind each operator takes.
 * One table, read by validation (and by whoever documents the API), so the rules live in one place.
 */
import { BuiltInField, FieldType, OPERATOR_GROUPS, OperandKind, OperatorGroup, SegmentOperator, SubjectType } from './expression';

const { RESPONSE, TEXT, NUMBER, DATE, BOOLEAN, EMPTINESS, PURCHASE } = OPERATOR_GROUPS;

const OPTION_SINGLE = ['OPTION_IS_ANY_OF', 'OPTION_IS_NONE_OF'] as const;
const OPTION_MULTI = ['OPTION_CONTAINS_ANY', 'OPTION_CONTAINS_NONE'] as const;

/** Operators of a FIELD condition by the field's type. Emptiness applies to every type. */
export const FIELD_OPERATORS: Readonly<Record<FieldType, readonly SegmentOperator[]>> = {
  TEXT: [...TEXT, ...EMPTINESS],
  LONG_TEXT: [...TEXT, ...EMPTINESS],
  EMAIL: [...TEXT, ...EMPTINESS],
  NUMBER: [...NUMBER, ...EMPTINESS],
  DATE: [...DATE, ...EMPTINESS],
  BOOLEAN: [...BOOLEAN, ...EMPTINESS],
  SINGLE_CHOICE: [...OPTION_SINGLE, ...EMPTINESS],
  MULTI_CHOICE: [...OPTION_MULTI, ...EMPTINESS],
};

/**
 * Response operators (delivery and engagement facts) belong to the subscriber's own email address, so
 * they are FIELD conditions on the built-in EMAIL field: `{subjectType: FIELD, fieldRef: {type: BUILT_IN,
 * builtInField: EMAIL}, operator: RESPONDED_WITHIN_DAYS, operand: {kind: NUMBER, number: days}}`.
 * Chosen over "FIELD with fieldRef null" because it keeps the API contract's shape rule intact (fieldRef is set for
 * every FIELD condition and null for every other subject) and reads naturally ("Email: responded within
 * 30 days"). Custom EMAIL-type fields are not delivered to, so they do not get these operators.
 */
export const BUILT_IN_EXTRA_OPERATORS: Readonly<Record<BuiltInField, readonly SegmentOperator[]>> = {
  EMAIL: RESPONSE,
  FIRST_NAME: [],
};

/** The built-in fields' types (the catalog lists them too; these are the fallback). */
export const BUILT_IN_FIELD_TYPES: Readonly<Record<BuiltInField, FieldType>> = { EMAIL: 'EMAIL', FIRST_NAME: 'TEXT' };

const SUBJECT_OPERATORS: Readonly<Record<Exclude<SubjectType, 'FIELD'>, readonly SegmentOperator[]>> = {
  TAGS: OPTION_MULTI,
  TOPICS: [...OPTION_MULTI, 'TOPIC_OPTED_OUT'],
  SEGMENT: ['CONTAINED_IN', 'NOT_CONTAINED_IN'],
  PURCHASES: PURCHASE,
};

export interface FieldTyping {
  fieldType: FieldType;
  /** Set for built-in fields (they may carry extra operators). */
  builtInField?: BuiltInField;
}

/** Operators allowed for a subject; FIELD needs the resolved field. */
export function allowedOperators(subject: SubjectType, field?: FieldTyping): readonly SegmentOperator[] {
  if (subject !== 'FIELD') return SUBJECT_OPERATORS[subject];
  if (!field) return [];
  const extra = field.builtInField ? BUILT_IN_EXTRA_OPERATORS[field.builtInField] : [];
  return [...FIELD_OPERATORS[field.fieldType], ...extra];
}

const GROUP_OF = new Map<SegmentOperator, OperatorGroup>();
for (const [group, operators] of Object.entries(OPERATOR_GROUPS) as [OperatorGroup, readonly SegmentOperator[]][]) {
  for (const op of operators) GROUP_OF.set(op, group);
}

export function operatorGroup(op: SegmentOperator): OperatorGroup {
  const group = GROUP_OF.get(op);
  if (!group) throw new Error(`unknown segment operator ${String(op)}`);
  return group;
}

/** The operand kind each operator takes (the API contract "Segment semantics", condition shape). */
export function operandKindOf(op: SegmentOperator): OperandKind {
  switch (operatorGroup(op)) {
    case 'RESPONSE':
    case 'NUMBER':
      return 'NUMBER';
    case 'TEXT':
      return 'TEXT';
    case 'DATE':
      return 'DATE';
    case 'BOOLEAN':
    case 'EMPTINESS':
      return 'NONE';
    case 'OPTION':
      return 'OPTIONS';
    case 'TOPIC_AND_MEMBERSHIP':
      // TOPIC_OPTED_OUT carries the selected topics; the membership operators a segment reference.
      return op === 'TOPIC_OPTED_OUT' ? 'OPTIONS' : 'SEGMENT';
    case 'PURCHASE':
      return 'PURCHASE';
  }
}

/** The operand property that holds the value of each kind (NONE has none). */
export const OPERAND_VALUE_PROPERTY: Readonly<Record<OperandKind, 'text' | 'number' | 'date' | 'optionIds' | 'segmentId' | 'purchase' | null>> = {
  NONE: null,
  TEXT: 'text',
  NUMBER: 'number',
  DATE: 'date',
  OPTIONS: 'optionIds',
  SEGMENT: 'segmentId',
  PURCHASE: 'purchase',
};
