import { errorResponse, rateLimitHeaders, type Json } from '../common';
import { responses, type Method } from '../operations';

/** Vocabularies, limits and responses shared by the segment and purchase-source resources. */

// ---- vocabularies and limits (the segment service uses the same) ---------------------------------

export const SEGMENT_SUBJECT_TYPES = ['FIELD', 'TAGS', 'TOPICS', 'SEGMENT', 'PURCHASES'] as const;
export const SEGMENT_OPERATORS = [
  'RESPONDED_WITHIN_DAYS', 'NO_RESPONSE_FOR_DAYS', 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST',
  'TEXT_EQUALS', 'TEXT_NOT_EQUALS', 'TEXT_EQUALS_IGNORE_CASE', 'TEXT_STARTS_WITH', 'TEXT_ENDS_WITH', 'TEXT_CONTAINS',
  'NUMBER_EQUALS', 'NUMBER_NOT_EQUALS', 'NUMBER_GREATER_THAN', 'NUMBER_LESS_THAN', 'NUMBER_GREATER_OR_EQUAL', 'NUMBER_LESS_OR_EQUAL',
  'DATE_EQUALS', 'DATE_NOT_EQUALS', 'DATE_BEFORE', 'DATE_AFTER', 'DATE_BEFORE_OR_EQUAL', 'DATE_EQUAL_OR_AFTER',
  'BOOLEAN_IS_TRUE', 'BOOLEAN_IS_FALSE',
  'OPTION_IS_ANY_OF', 'OPTION_IS_NONE_OF', 'OPTION_CONTAINS_ANY', 'OPTION_CONTAINS_NONE',
  'TOPIC_OPTED_OUT', 'CONTAINED_IN', 'NOT_CONTAINED_IN',
  'IS_EMPTY', 'IS_NOT_EMPTY',
  'PURCHASED', 'NOT_PURCHASED', 'PURCHASE_COUNT_AT_LEAST', 'PURCHASE_COUNT_AT_MOST', 'PURCHASE_COUNT_EQUALS', 'FIRST_PURCHASE_IN_PERIOD',
  'LAST_PURCHASE_IN_PERIOD', 'LAST_PURCHASE_BEFORE_PERIOD', 'ORDER_VALUE_AT_LEAST', 'ORDER_VALUE_AT_MOST', 'COUPON_USED',
] as const;
export const SEGMENT_OPERAND_KINDS = ['NONE', 'TEXT', 'NUMBER', 'DATE', 'OPTIONS', 'SEGMENT', 'PURCHASE'] as const;
export const BUILT_IN_FIELDS = ['EMAIL', 'FIRST_NAME'];
export const PURCHASE_SCOPE_KINDS = ['ALL_PRODUCTS', 'PRODUCTS', 'VARIANTS', 'GROUP'];
export const PURCHASE_PERIOD_KINDS = ['LAST_DAYS', 'DATE_RANGE'];

export const LIMITS = { name: 200, groups: 20, conditionsPerGroup: 50, optionIds: 1000 } as const;
/** Purchase ingest limits (the segment service's MAX_ORDERS_PER_CALL and id lengths). */
export const PURCHASE_LIMITS = { name: 200, timeZone: 100, orders: 1000, items: 100, id: 200, email: 320 } as const;

/** Every errorId of the segment service's expression validation (all 400). */
export const SEGMENT_VALIDATION_ERROR_IDS = [
  'segment_expression_invalid', 'segment_legacy_filter_groups', 'segment_expression_empty', 'segment_too_many_groups',
  'segment_too_many_conditions', 'segment_too_many_option_ids', 'segment_field_ref_not_allowed', 'segment_field_not_found',
  'segment_field_archived', 'segment_operator_not_allowed', 'segment_operand_mismatch', 'segment_operand_invalid',
  'segment_option_not_found', 'segment_tag_not_found', 'segment_topic_not_found', 'segment_cycle',
  'segment_purchase_operand_invalid', 'segment_purchase_source_not_found', 'segment_period_invalid',
];

// ---- responses and value schemas ---------------------------------------------------------------

const unavailable = (catalog: boolean) =>
  errorResponse(
    'A backing service is unavailable' + (catalog ? ' (`catalog_unavailable`: the subscriber service, whose fields, tags and topics validate the expression, did not answer)' : '') + '. Retry later with backoff.',
    catalog ? ['service_unavailable', 'catalog_unavailable'] : ['service_unavailable'],
    rateLimitHeaders,
  );

export function segmentResponses(method: Method, success: Json, errs: { 400?: string[]; 404?: string[]; 409?: string[] }, catalog: boolean) {
  return { ...responses(method, success, errs), '503': unavailable(catalog) };
}

export const nullable = (type: string, extra: Json = {}) => ({ type: [type, 'null'], ...extra });
export const count = { type: 'integer', format: 'int64', minimum: 0 };
