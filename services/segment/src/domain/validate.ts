/**
 * Validation of a segment expression on save and on preview, against a snapshot of the account's
 * catalog (fields, topics, tags, segments, purchase sources) passed in by the caller.
 * Reads untrusted JSON (`unknown`), reports every problem found with a precise errorId and path;
 * the first problem's errorId is the response's errorId (400), all go to `details`.
 *
 * Decisions (the API contract is silent on them):
 * - Archived fields (`active: false`) are refused (`segment_field_archived`) in new saves and in
 *   previews of unsaved expressions: a segment should not start depending on a field nobody can fill any
 *   more. Stored segments keep evaluating on the values the contacts still have (archival only blocks
 *   writes), and an update may keep a condition on an archived field the stored version already used
 *   (pass `storedExpression`), so renaming such a segment does not force an edit of its conditions.
 * - Inactive options of a choice field and inactive topics are accepted: old values and subscriptions
 *   still exist and filtering on them is legitimate (TOPIC_OPTED_OUT ignores inactive topics when it
 *   evaluates, as the API contract says).
 * - An expression without groups, or a group without conditions, is refused (`segment_expression_empty`):
 *   by the rules of logic the first would match nobody and the second everybody, and a send to "everybody"
 *   by accident is the worse mistake; neither is a segment anyone means to save.
 * - Response operators are FIELD conditions on the built-in EMAIL field (operators.ts says why).
 */
import {
  BUILT_IN_FIELDS,
  BuiltInField,
  FieldType,
  OPERAND_KINDS,
  PURCHASE_PERIOD_KINDS,
  PURCHASE_SCOPE_KINDS,
  PurchaseOperator,
  SEGMENT_OPERATORS,
  SUBJECT_TYPES,
  SegmentExpression,
  SegmentOperator,
  SubjectType,
} from './expression';
import { BUILT_IN_FIELD_TYPES, FieldTyping, OPERAND_VALUE_PROPERTY, allowedOperators, operandKindOf, operatorGroup } from './operators';
import { isLocalDate, isTimeZone } from './time';

export const SEGMENT_LIMITS = {
  groups: 20,
  conditionsPerGroup: 50,
  /** Option, tag or topic ids in one operand, and products in one purchase scope. */
  optionIds: 1000,
  /** Days of LAST_DAYS periods and response operators (about 100 years). */
  days: 36_500,
  textLength: 1000,
} as const;

export type SegmentErrorId =
  | 'segment_expression_invalid'
  | 'segment_legacy_filter_groups'
  | 'segment_expression_empty'
  | 'segment_too_many_groups'
  | 'segment_too_many_conditions'
  | 'segment_too_many_option_ids'
  | 'segment_field_ref_not_allowed'
  | 'segment_field_not_found'
  | 'segment_field_archived'
  | 'segment_operator_not_allowed'
  | 'segment_operand_mismatch'
  | 'segment_operand_invalid'
  | 'segment_option_not_found'
  | 'segment_tag_not_found'
  | 'segment_topic_not_found'
  | 'segment_not_found'
  | 'segment_cycle'
  | 'segment_purchase_operand_invalid'
  | 'segment_purchase_source_not_found'
  | 'segment_period_invalid';

export interface SegmentProblem {
  errorId: SegmentErrorId;
  /** Dotted path from the request body, e.g. `expression.conditionGroups[0].conditions[2].operator`. */
  path: string;
  problem: string;
}

export type ValidationResult =
  | { valid: true; expression: SegmentExpression; problems: [] }
  | { valid: false; errorId: SegmentErrorId; problems: SegmentProblem[] };

/** A field of the catalog snapshot (built-ins may be omitted; they always exist). */
export interface CatalogField {
  fieldId?: string | null;
  builtInField?: BuiltInField | null;
  fieldType: FieldType;
  active: boolean;
  options?: readonly { id: string; active: boolean }[] | null;
}

export interface ValidationCatalog {
  fields: readonly CatalogField[];
  topics: readonly { id: string; active: boolean }[];
  tagIds: readonly string[];
  /** Stored segments of the account, for references and cycle detection. */
  segments: readonly { id: string; expression: SegmentExpression }[];
  purchaseSourceIds: readonly string[];
}

export interface ValidateOptions {
  /** The segment being updated: references back to it are cycles. */
  segmentId?: string;
  /** Its stored expression: archived fields it already uses stay allowed. */
  storedExpression?: SegmentExpression;
  /** Prefix of every path (the expression's place in the request body). Default 'expression'. */
  pathPrefix?: string;
}

/** At most this many problems are reported (a 10,000-condition body should not produce a 10,000-line answer). */
const MAX_PROBLEMS = 100;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isBlank = (v: unknown) => v === undefined || v === null;
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const isInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

export function validateExpression(input: unknown, catalog: ValidationCatalog, options: ValidateOptions = {}): ValidationResult {
  const v = new Validator(catalog, options);
  v.expression(input, options.pathPrefix ?? 'expression');
  if (v.problems.length === 0) return { valid: true, expression: input as SegmentExpression, problems: [] };
  return { valid: false, errorId: v.problems[0].errorId, problems: v.problems };
}

/** The conditions of an expression, tolerating malformed input (validation reports that separately). */
function conditionsOf(expression: unknown): Json[] {
  const groups = isObject(expression) && Array.isArray(expression.conditionGroups) ? expression.conditionGroups : [];
  return groups.flatMap((g) => (isObject(g) && Array.isArray(g.conditions) ? g.conditions.filter(isObject) : []));
}

/** Segment ids referenced by an expression (CONTAINED_IN / NOT_CONTAINED_IN), in order. */
export function referencedSegmentIds(expression: unknown): string[] {
  return conditionsOf(expression)
    .filter((c) => c.subjectType === 'SEGMENT' && isObject(c.operand) && typeof c.operand.segmentId === 'string')
    .map((c) => (c.operand as Json).segmentId as string);
}

/** Custom field ids an expression refers to (also what the field usage report lists). */
export function referencedFieldIds(expression: unknown): string[] {
  const ids = conditionsOf(expression)
    .filter((c) => c.subjectType === 'FIELD' && isObject(c.fieldRef) && c.fieldRef.type === 'CUSTOM' && typeof c.fieldRef.fieldId === 'string')
    .map((c) => (c.fieldRef as Json).fieldId as string);
  return [...new Set(ids)];
}

class Validator {
  readonly problems: SegmentProblem[] = [];
  private readonly fields = new Map<string, CatalogField>();
  private readonly topics: Set<string>;
  private readonly tags: Set<string>;
  private readonly sources: Set<string>;
  /** Segment id -> ids it references, with the segment being updated replaced by the new expression. */
  private readonly graph = new Map<string, string[]>();
  private readonly grandfathered: Set<string>;

  constructor(
    catalog: ValidationCatalog,
    private readonly options: ValidateOptions,
  ) {
    for (const f of catalog.fields) {
      const key = f.builtInField ?? f.fieldId;
      if (key) this.fields.set(key, f);
    }
    this.topics = new Set(catalog.topics.map((t) => t.id));
    this.tags = new Set(catalog.tagIds);
    this.sources = new Set(catalog.purchaseSourceIds);
    for (const s of catalog.segments) this.graph.set(s.id, referencedSegmentIds(s.expression));
    this.grandfathered = new Set(options.storedExpression ? referencedFieldIds(options.storedExpression) : []);
  }

  private report(errorId: SegmentErrorId, path: string, problem: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ errorId, path, problem });
  }

  expression(input: unknown, path: string): void {
    if (!isObject(input)) return this.report('segment_expression_invalid', path, 'must be an object with conditionGroups');
    if ('filterGroups' in input) {
      this.report('segment_legacy_filter_groups', `${path}.filterGroups`, 'the legacy property filterGroups is not part of the contract; use conditionGroups');
    }
    const groups = input.conditionGroups;
    if (!Array.isArray(groups)) return this.report('segment_expression_invalid', `${path}.conditionGroups`, 'must be an array of condition groups');
    if (groups.length === 0) return this.report('segment_expression_empty', `${path}.conditionGroups`, 'must hold at least one condition group');
    if (groups.length > SEGMENT_LIMITS.groups) {
      this.report('segment_too_many_groups', `${path}.conditionGroups`, `at most ${SEGMENT_LIMITS.groups} condition groups (got ${groups.length})`);
    }
    // The segment being updated points where its new expression points (that is what may close a cycle).
    if (this.options.segmentId) this.graph.set(this.options.segmentId, referencedSegmentIds(input));
    groups.forEach((g, i) => this.group(g, `${path}.conditionGroups[${i}]`));
  }

  private group(input: unknown, path: string): void {
    if (!isObject(input) || !Array.isArray(input.conditions)) return this.report('segment_expression_invalid', `${path}.conditions`, 'must be an array of conditions');
    const conditions = input.conditions;
    if (conditions.length === 0) return this.report('segment_expression_empty', `${path}.conditions`, 'a condition group must hold at least one condition');
    if (conditions.length > SEGMENT_LIMITS.conditionsPerGroup) {
      this.report('segment_too_many_conditions', `${path}.conditions`, `at most ${SEGMENT_LIMITS.conditionsPerGroup} conditions per group (got ${conditions.length})`);
    }
    conditions.forEach((c, i) => this.condition(c, `${path}.conditions[${i}]`));
  }

  private condition(input: unknown, path: string): void {
    if (!isObject(input)) return this.report('segment_expression_invalid', path, 'must be a condition object');
    const subject = input.subjectType as SubjectType;
    if (!SUBJECT_TYPES.includes(subject)) return this.report('segment_expression_invalid', `${path}.subjectType`, `must be one of ${SUBJECT_TYPES.join(', ')}`);
    const operator = input.operator as SegmentOperator;
    if (!SEGMENT_OPERATORS.includes(operator)) return this.report('segment_expression_invalid', `${path}.operator`, 'is not a segment operator');

    let field: FieldTyping | undefined;
    if (subject === 'FIELD') {
      field = this.fieldRef(input.fieldRef, `${path}.fieldRef`);
      if (!field) return;
    } else if (!isBlank(input.fieldRef)) {
      this.report('segment_field_ref_not_allowed', `${path}.fieldRef`, `must be null for ${subject} conditions`);
    }

    if (!allowedOperators(subject, field).includes(operator)) {
      const what = subject === 'FIELD' ? `a ${field!.builtInField ? `built-in ${field!.builtInField}` : field!.fieldType} field` : `a ${subject} condition`;
      return this.report('segment_operator_not_allowed', `${path}.operator`, `${operator} is not allowed for ${what}`);
    }
    this.operand(subject, operator, input.fieldRef as Json | undefined, input.operand, `${path}.operand`);
  }

  /** Resolves a FIELD condition's fieldRef to its type, or reports why it cannot. */
  private fieldRef(ref: unknown, path: string): FieldTyping | undefined {
    if (isBlank(ref)) {
      this.report('segment_field_ref_not_allowed', path, 'is required for FIELD conditions');
      return undefined;
    }
    if (!isObject(ref)) {
      this.report('segment_expression_invalid', path, 'must be {type: BUILT_IN, builtInField} or {type: CUSTOM, fieldId}');
      return undefined;
    }
    if (ref.type === 'BUILT_IN') {
      const name = ref.builtInField as BuiltInField;
      if (!BUILT_IN_FIELDS.includes(name)) {
        this.report('segment_field_not_found', `${path}.builtInField`, `must be one of ${BUILT_IN_FIELDS.join(', ')}`);
        return undefined;
      }
      return { fieldType: this.fields.get(name)?.fieldType ?? BUILT_IN_FIELD_TYPES[name], builtInField: name };
    }
    if (ref.type !== 'CUSTOM' || !isNonEmptyString(ref.fieldId)) {
      this.report('segment_expression_invalid', path, 'must be {type: BUILT_IN, builtInField} or {type: CUSTOM, fieldId}');
      return undefined;
    }
    const field = this.fields.get(ref.fieldId);
    if (!field || field.builtInField) {
      this.report('segment_field_not_found', `${path}.fieldId`, `no field ${ref.fieldId} in this account`);
      return undefined;
    }
    if (!field.active && !this.grandfathered.has(ref.fieldId)) {
      this.report('segment_field_archived', `${path}.fieldId`, `field ${ref.fieldId} is archived; archived fields cannot be used in new conditions`);
    }
    return { fieldType: field.fieldType };
  }

  private operand(subject: SubjectType, operator: SegmentOperator, fieldRef: Json | undefined, input: unknown, path: string): void {
    const kind = operandKindOf(operator);
    if (!isObject(input) || input.kind !== kind) {
      const got = isObject(input) ? `kind ${String(input.kind)}` : 'no operand';
      return this.report('segment_operand_mismatch', isObject(input) ? `${path}.kind` : path, `${operator} takes an operand of kind ${kind} (got ${got})`);
    }
    // Values of other kinds alongside make the condition ambiguous.
    const own = OPERAND_VALUE_PROPERTY[kind];
    for (const other of OPERAND_KINDS) {
      const prop = OPERAND_VALUE_PROPERTY[other];
      if (prop && prop !== own && !isBlank(input[prop])) this.report('segment_operand_mismatch', `${path}.${prop}`, `must be absent for an operand of kind ${kind}`);
    }
    switch (kind) {
      case 'NONE':
        return;
      case 'TEXT':
        if (!isNonEmptyString(input.text) || input.text.length > SEGMENT_LIMITS.textLength) {
          this.report('segment_operand_invalid', `${path}.text`, `must be a non-blank string of at most ${SEGMENT_LIMITS.textLength} characters`);
        }
        return;
      case 'NUMBER':
        if (operatorGroup(operator) === 'RESPONSE') {
          if (!isInt(input.number, 1, SEGMENT_LIMITS.days)) this.report('segment_operand_invalid', `${path}.number`, `must be a whole number of days, 1 to ${SEGMENT_LIMITS.days}`);
        } else if (typeof input.number !== 'number' || !Number.isFinite(input.number)) {
          this.report('segment_operand_invalid', `${path}.number`, 'must be a finite number');
        }
        return;
      case 'DATE':
        if (!isLocalDate(input.date)) this.report('segment_operand_invalid', `${path}.date`, 'must be a calendar date YYYY-MM-DD');
        return;
      case 'OPTIONS':
        return this.optionIds(subject, fieldRef, input.optionIds, `${path}.optionIds`);
      case 'SEGMENT':
        return this.segmentRef(input.segmentId, `${path}.segmentId`);
      case 'PURCHASE':
        return this.purchase(operator as PurchaseOperator, input.purchase, `${path}.purchase`);
    }
  }

  private optionIds(subject: SubjectType, fieldRef: Json | undefined, ids: unknown, path: string): void {
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every(isNonEmptyString)) {
      return this.report('segment_operand_invalid', path, 'must be a non-empty array of ids');
    }
    if (ids.length > SEGMENT_LIMITS.optionIds) {
      return this.report('segment_too_many_option_ids', path, `at most ${SEGMENT_LIMITS.optionIds} ids (got ${ids.length})`);
    }
    const [known, errorId, what]: [Set<string>, SegmentErrorId, string] =
      subject === 'TAGS'
        ? [this.tags, 'segment_tag_not_found', 'tag']
        : subject === 'TOPICS'
          ? [this.topics, 'segment_topic_not_found', 'topic']
          : [new Set((this.fields.get(String(fieldRef?.fieldId))?.options ?? []).map((o) => o.id)), 'segment_option_not_found', 'option of this field'];
    ids.forEach((id, i) => {
      if (!known.has(id)) this.report(errorId, `${path}[${i}]`, `no ${what} ${id}`);
    });
  }

  private segmentRef(id: unknown, path: string): void {
    if (!isNonEmptyString(id)) return this.report('segment_operand_invalid', path, 'must be a segment id');
    if (!this.graph.has(id)) return this.report('segment_not_found', path, `no segment ${id} in this account`);
    const cycle = this.findCycle(id);
    if (cycle) this.report('segment_cycle', path, `segment references form a cycle: ${cycle.join(' -> ')}`);
  }

  /**
   * A reference cycle reachable from `start` (the segment being updated closes one when it is reached
   * again; a new or previewed expression can only meet cycles already stored, which are refused too).
   */
  private findCycle(start: string): string[] | undefined {
    const self = this.options.segmentId;
    const onPath: string[] = self ? [self] : [];
    const done = new Set<string>();
    const visit = (id: string): string[] | undefined => {
      const at = onPath.indexOf(id);
      if (at >= 0) return [...onPath.slice(at), id];
      if (done.has(id)) return undefined;
      onPath.push(id);
      for (const next of this.graph.get(id) ?? []) {
        const cycle = visit(next);
        if (cycle) return cycle;
      }
      onPath.pop();
      done.add(id);
      return undefined;
    };
    return visit(start);
  }

  private purchase(operator: PurchaseOperator, input: unknown, path: string): void {
    const bad = (prop: string, problem: string) => this.report('segment_purchase_operand_invalid', `${path}.${prop}`, problem);
    if (!isObject(input)) return this.report('segment_purchase_operand_invalid', path, 'must be a PurchaseSegmentCondition');

    if (!isBlank(input.sourceId)) {
      if (!isNonEmptyString(input.sourceId)) bad('sourceId', 'must be a purchase source id or null (all sources)');
      else if (!this.sources.has(input.sourceId)) this.report('segment_purchase_source_not_found', `${path}.sourceId`, `no purchase source ${input.sourceId}`);
    }

    this.productScope(input, path);

    const needsPeriod = operator === 'FIRST_PURCHASE_IN_PERIOD' || operator === 'LAST_PURCHASE_IN_PERIOD' || operator === 'LAST_PURCHASE_BEFORE_PERIOD';
    if (isBlank(input.period)) {
      if (needsPeriod) bad('period', `${operator} needs a period`);
    } else this.period(input.period, `${path}.period`);

    const counts = operator === 'PURCHASE_COUNT_AT_LEAST' || operator === 'PURCHASE_COUNT_AT_MOST' || operator === 'PURCHASE_COUNT_EQUALS';
    if (counts) {
      if (!isInt(input.count, 0, 1_000_000)) bad('count', `${operator} needs count, a whole number from 0`);
    } else if (!isBlank(input.count)) bad('count', `must be absent for ${operator}`);

    const values = operator === 'ORDER_VALUE_AT_LEAST' || operator === 'ORDER_VALUE_AT_MOST';
    if (values) {
      if (typeof input.currency !== 'string' || !/^[A-Z]{3}$/.test(input.currency)) bad('currency', `${operator} needs currency, an ISO 4217 code such as EUR`);
      if (typeof input.amount !== 'number' || !Number.isFinite(input.amount) || input.amount < 0) bad('amount', `${operator} needs amount, a number from 0`);
    } else {
      if (!isBlank(input.currency)) bad('currency', `must be absent for ${operator}`);
      if (!isBlank(input.amount)) bad('amount', `must be absent for ${operator}`);
    }

    if (operator === 'COUPON_USED') {
      if (!isNonEmptyString(input.couponCode)) bad('couponCode', 'COUPON_USED needs couponCode');
    } else if (!isBlank(input.couponCode)) bad('couponCode', `must be absent for ${operator}`);

    if (!isBlank(input.timeZoneId) && !isTimeZone(input.timeZoneId)) bad('timeZoneId', 'must be an IANA time zone such as Europe/Berlin');
  }

  private productScope(input: Json, path: string): void {
    const bad = (prop: string, problem: string) => this.report('segment_purchase_operand_invalid', `${path}.${prop}`, problem);
    const scope = input.scopeKind as (typeof PURCHASE_SCOPE_KINDS)[number];
    if (!PURCHASE_SCOPE_KINDS.includes(scope)) return bad('scopeKind', `must be one of ${PURCHASE_SCOPE_KINDS.join(', ')}`);
    const products = isBlank(input.products) ? [] : input.products;
    if (!Array.isArray(products)) return bad('products', 'must be an array of {productId, variantId}');
    if (scope === 'ALL_PRODUCTS' || scope === 'GROUP') {
      if (products.length > 0) bad('products', `must be empty for ${scope}`);
    } else {
      if (products.length === 0) bad('products', `${scope} needs at least one product`);
      if (products.length > SEGMENT_LIMITS.optionIds) bad('products', `at most ${SEGMENT_LIMITS.optionIds} products`);
      products.forEach((p, i) => {
        if (!isObject(p) || !isNonEmptyString(p.productId)) return bad(`products[${i}].productId`, 'must be a product id');
        if (scope === 'VARIANTS' && !isNonEmptyString(p.variantId)) bad(`products[${i}].variantId`, 'VARIANTS needs a variantId for every product');
        if (scope === 'PRODUCTS' && !isBlank(p.variantId)) bad(`products[${i}].variantId`, 'must be absent for PRODUCTS (use VARIANTS to pick variants)');
      });
    }
    if (scope === 'GROUP') {
      if (!isNonEmptyString(input.groupId)) bad('groupId', 'GROUP needs a groupId');
    } else if (!isBlank(input.groupId)) bad('groupId', `must be absent for ${scope}`);
  }

  /** A missing required part is an incomplete purchase operand; a present but wrong value an invalid period. */
  private period(input: unknown, path: string): void {
    const incomplete = (prop: string, problem: string) => this.report('segment_purchase_operand_invalid', `${path}.${prop}`, problem);
    const invalid = (prop: string, problem: string) => this.report('segment_period_invalid', prop ? `${path}.${prop}` : path, problem);
    if (!isObject(input)) return invalid('', 'must be {kind: LAST_DAYS, days} or {kind: DATE_RANGE, from, to}');
    if (!PURCHASE_PERIOD_KINDS.includes(input.kind as (typeof PURCHASE_PERIOD_KINDS)[number])) {
      return incomplete('kind', `must be one of ${PURCHASE_PERIOD_KINDS.join(', ')}`);
    }
    if (input.kind === 'LAST_DAYS') {
      if (isBlank(input.days)) incomplete('days', 'LAST_DAYS needs days');
      else if (!isInt(input.days, 1, SEGMENT_LIMITS.days)) invalid('days', `must be a whole number of days, 1 to ${SEGMENT_LIMITS.days}`);
      if (!isBlank(input.from)) invalid('from', 'must be absent for LAST_DAYS');
      if (!isBlank(input.to)) invalid('to', 'must be absent for LAST_DAYS');
      return;
    }
    if (!isBlank(input.days)) invalid('days', 'must be absent for DATE_RANGE');
    for (const end of ['from', 'to'] as const) {
      if (isBlank(input[end])) incomplete(end, `DATE_RANGE needs ${end}`);
      else if (!isLocalDate(input[end])) invalid(end, 'must be a calendar date YYYY-MM-DD');
    }
    if (isLocalDate(input.from) && isLocalDate(input.to) && input.from > input.to) invalid('to', 'must not be before from');
  }
}
