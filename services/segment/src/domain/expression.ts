/**
 * The segment expression as the customer API carries it (spec "Segments", the API contract "Segment semantics").
 * Plain data: validate.ts checks it against the catalog, evaluate.ts is the reference meaning,
 * compile.ts turns it into MongoDB filters. Properties that JSON may send as null are typed `| null`.
 */

export const SUBJECT_TYPES = ['FIELD', 'TAGS', 'TOPICS', 'SEGMENT', 'PURCHASES'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

export const BUILT_IN_FIELDS = ['EMAIL', 'FIRST_NAME'] as const;
export type BuiltInField = (typeof BUILT_IN_FIELDS)[number];

export const FIELD_TYPES = ['TEXT', 'LONG_TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_CHOICE', 'MULTI_CHOICE'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** The specification's operator table, group by group (the groups drive which subject may use what). */
export const OPERATOR_GROUPS = {
  RESPONSE: ['RESPONDED_WITHIN_DAYS', 'NO_RESPONSE_FOR_DAYS', 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST'],
  TEXT: ['TEXT_EQUALS', 'TEXT_NOT_EQUALS', 'TEXT_EQUALS_IGNORE_CASE', 'TEXT_STARTS_WITH', 'TEXT_ENDS_WITH', 'TEXT_CONTAINS'],
  NUMBER: ['NUMBER_EQUALS', 'NUMBER_NOT_EQUALS', 'NUMBER_GREATER_THAN', 'NUMBER_LESS_THAN', 'NUMBER_GREATER_OR_EQUAL', 'NUMBER_LESS_OR_EQUAL'],
  DATE: ['DATE_EQUALS', 'DATE_NOT_EQUALS', 'DATE_BEFORE', 'DATE_AFTER', 'DATE_BEFORE_OR_EQUAL', 'DATE_EQUAL_OR_AFTER'],
  BOOLEAN: ['BOOLEAN_IS_TRUE', 'BOOLEAN_IS_FALSE'],
  OPTION: ['OPTION_IS_ANY_OF', 'OPTION_IS_NONE_OF', 'OPTION_CONTAINS_ANY', 'OPTION_CONTAINS_NONE'],
  TOPIC_AND_MEMBERSHIP: ['TOPIC_OPTED_OUT', 'CONTAINED_IN', 'NOT_CONTAINED_IN'],
  EMPTINESS: ['IS_EMPTY', 'IS_NOT_EMPTY'],
  PURCHASE: [
    'PURCHASED',
    'NOT_PURCHASED',
    'PURCHASE_COUNT_AT_LEAST',
    'PURCHASE_COUNT_AT_MOST',
    'PURCHASE_COUNT_EQUALS',
    'FIRST_PURCHASE_IN_PERIOD',
    'LAST_PURCHASE_IN_PERIOD',
    'LAST_PURCHASE_BEFORE_PERIOD',
    'ORDER_VALUE_AT_LEAST',
    'ORDER_VALUE_AT_MOST',
    'COUPON_USED',
  ],
} as const;
export type OperatorGroup = keyof typeof OPERATOR_GROUPS;
export type SegmentOperator = (typeof OPERATOR_GROUPS)[OperatorGroup][number];
export const SEGMENT_OPERATORS: readonly SegmentOperator[] = Object.values(OPERATOR_GROUPS).flat();

export type ResponseOperator = (typeof OPERATOR_GROUPS.RESPONSE)[number];
export type TextOperator = (typeof OPERATOR_GROUPS.TEXT)[number];
export type NumberOperator = (typeof OPERATOR_GROUPS.NUMBER)[number];
export type DateOperator = (typeof OPERATOR_GROUPS.DATE)[number];
export type PurchaseOperator = (typeof OPERATOR_GROUPS.PURCHASE)[number];

export const OPERAND_KINDS = ['NONE', 'TEXT', 'NUMBER', 'DATE', 'OPTIONS', 'SEGMENT', 'PURCHASE'] as const;
export type OperandKind = (typeof OPERAND_KINDS)[number];

export type FieldRef = { type: 'BUILT_IN'; builtInField: BuiltInField } | { type: 'CUSTOM'; fieldId: string };

export const PURCHASE_SCOPE_KINDS = ['ALL_PRODUCTS', 'PRODUCTS', 'VARIANTS', 'GROUP'] as const;
export type PurchaseScopeKind = (typeof PURCHASE_SCOPE_KINDS)[number];

export const PURCHASE_PERIOD_KINDS = ['LAST_DAYS', 'DATE_RANGE'] as const;
export type PurchasePeriodKind = (typeof PURCHASE_PERIOD_KINDS)[number];

/** LAST_DAYS: the `days` local calendar days ending today (today included); DATE_RANGE: `from`..`to`, both included. */
export interface PurchasePeriod {
  kind: PurchasePeriodKind;
  days?: number | null;
  /** LocalDate (YYYY-MM-DD). */
  from?: string | null;
  /** LocalDate (YYYY-MM-DD), inclusive. */
  to?: string | null;
}

export interface PurchaseProductRef {
  productId: string;
  variantId?: string | null;
}

/** The spec's PurchaseSegmentCondition. Which members are required depends on the operator (validate.ts). */
export interface PurchaseSegmentCondition {
  /** null: every purchase source of the account. */
  sourceId?: string | null;
  scopeKind: PurchaseScopeKind;
  products?: PurchaseProductRef[] | null;
  groupId?: string | null;
  /** null: all time (only for operators that do not need a period). */
  period?: PurchasePeriod | null;
  count?: number | null;
  currency?: string | null;
  amount?: number | null;
  couponCode?: string | null;
  /** IANA zone used to read the period for sources that have no zone of their own. */
  timeZoneId?: string | null;
}

export interface SegmentOperand {
  kind: OperandKind;
  text?: string | null;
  number?: number | null;
  /** LocalDate (YYYY-MM-DD). */
  date?: string | null;
  optionIds?: string[] | null;
  segmentId?: string | null;
  purchase?: PurchaseSegmentCondition | null;
}

export interface SegmentCondition {
  subjectType: SubjectType;
  fieldRef?: FieldRef | null;
  operator: SegmentOperator;
  operand: SegmentOperand;
}

/** Conditions of a group are combined with AND. */
export interface SegmentConditionGroup {
  conditions: SegmentCondition[];
}

/** Groups are combined with OR. */
export interface SegmentExpression {
  conditionGroups: SegmentConditionGroup[];
}

/** SQL three-valued logic: proven facts are TRUE or FALSE, missing facts stay UNKNOWN. */
export type Truth = 'TRUE' | 'FALSE' | 'UNKNOWN';
