import type { SegmentCondition, SegmentExpression } from '../src/domain/expression';
import { SEGMENT_LIMITS, ValidationCatalog, referencedFieldIds, referencedSegmentIds, validateExpression } from '../src/domain/validate';
import { NONE, builtIn, cond, custom, date, expr, fieldCond, num, options, purchase, segment, text } from './support/builders';

const CATALOG: ValidationCatalog = {
  fields: [
    { builtInField: 'EMAIL', fieldType: 'EMAIL', active: true },
    { builtInField: 'FIRST_NAME', fieldType: 'TEXT', active: true },
    { fieldId: 'f-text', fieldType: 'TEXT', active: true },
    { fieldId: 'f-num', fieldType: 'NUMBER', active: true },
    { fieldId: 'f-date', fieldType: 'DATE', active: true },
    { fieldId: 'f-single', fieldType: 'SINGLE_CHOICE', active: true, options: [{ id: 'o1', active: true }, { id: 'o2', active: false }] },
    { fieldId: 'f-multi', fieldType: 'MULTI_CHOICE', active: true, options: [{ id: 'm1', active: true }] },
    { fieldId: 'f-archived', fieldType: 'TEXT', active: false },
  ],
  topics: [
    { id: 'p1', active: true },
    { id: 'p2', active: false },
  ],
  tagIds: ['t1'],
  segments: [
    { id: 'seg-a', expression: expr([fieldCond(custom('f-text'), 'IS_EMPTY')]) },
    { id: 'seg-b', expression: expr([cond('SEGMENT', 'CONTAINED_IN', segment('seg-a'))]) },
    { id: 'seg-c', expression: expr([cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-b'))]) },
  ],
  purchaseSourceIds: ['src-1'],
};

const C0 = 'expression.conditionGroups[0].conditions[0]';
const one = (c: SegmentCondition | Record<string, unknown>): SegmentExpression => ({ conditionGroups: [{ conditions: [c as SegmentCondition] }] });
const check = (input: unknown, options = {}) => validateExpression(input, CATALOG, options);
/** The first problem (which drives the errorId) as [errorId, path]. */
const first = (input: unknown, options = {}) => {
  const r = check(input, options);
  return r.valid ? ['valid'] : [r.errorId, r.problems[0].path];
};
const pcond = (operator: Parameters<typeof cond>[1], p: Record<string, unknown>) => cond('PURCHASES', operator, { kind: 'PURCHASE', purchase: p as never });
const LAST30 = { kind: 'LAST_DAYS', days: 30 };

describe('validateExpression', () => {
  it('accepts a well-formed expression over every subject', () => {
    const r = check(
      expr(
        [
          fieldCond(custom('f-text'), 'TEXT_CONTAINS', text('ann')),
          fieldCond(custom('f-num'), 'NUMBER_GREATER_THAN', num(3)),
          fieldCond(custom('f-date'), 'DATE_BEFORE', date('2024-02-29')),
          fieldCond(custom('f-single'), 'OPTION_IS_ANY_OF', options('o1', 'o2')), // an inactive option is fine
          fieldCond(custom('f-multi'), 'OPTION_CONTAINS_NONE', options('m1')),
          fieldCond(builtIn('FIRST_NAME'), 'IS_NOT_EMPTY'),
          fieldCond(builtIn('EMAIL'), 'RESPONDED_WITHIN_DAYS', num(30)),
        ],
        [
          cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1')),
          cond('TOPICS', 'TOPIC_OPTED_OUT', options('p1', 'p2')), // an inactive topic is fine
          cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-c')),
          cond('PURCHASES', 'PURCHASE_COUNT_AT_LEAST', purchase({ sourceId: 'src-1', period: { kind: 'LAST_DAYS', days: 90 }, count: 2, timeZoneId: 'Asia/Tokyo' })),
          cond('PURCHASES', 'ORDER_VALUE_AT_LEAST', purchase({ scopeKind: 'VARIANTS', products: [{ productId: 'p', variantId: 'v' }], currency: 'EUR', amount: 50 })),
          cond('PURCHASES', 'COUPON_USED', purchase({ scopeKind: 'GROUP', groupId: 'g', couponCode: 'SAVE10', period: { kind: 'DATE_RANGE', from: '2025-01-01', to: '2025-01-01' } })),
        ],
      ),
    );
    expect(r).toEqual(expect.objectContaining({ valid: true, problems: [] }));
  });

  describe('shape', () => {
    it.each([
      ['not an object', null, 'expression'],
      ['conditionGroups missing', {}, 'expression.conditionGroups'],
      ['a group without conditions array', { conditionGroups: [{}] }, 'expression.conditionGroups[0].conditions'],
      ['a condition that is not an object', one('x' as never), C0],
      ['an unknown subjectType', one({ subjectType: 'SUBSCRIBERS', operator: 'IS_EMPTY', operand: NONE }), `${C0}.subjectType`],
      ['an unknown operator', one({ subjectType: 'TAGS', operator: 'TAG_IS', operand: NONE }), `${C0}.operator`],
      ['a malformed fieldRef', one({ subjectType: 'FIELD', fieldRef: { type: 'CUSTOM' }, operator: 'IS_EMPTY', operand: NONE }), `${C0}.fieldRef`],
    ])('segment_expression_invalid: %s', (_what, input, path) => expect(first(input)).toEqual(['segment_expression_invalid', path]));

    it('segment_legacy_filter_groups: the legacy property is refused even next to conditionGroups', () => {
      expect(first({ filterGroups: [], conditionGroups: [{ conditions: [cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'))] }] })).toEqual([
        'segment_legacy_filter_groups',
        'expression.filterGroups',
      ]);
      const alone = check({ filterGroups: [{ filters: [] }] });
      expect(alone.valid ? [] : alone.problems.map((p) => p.errorId)).toEqual(['segment_legacy_filter_groups', 'segment_expression_invalid']);
    });

    it('segment_expression_empty: no groups, or a group without conditions', () => {
      expect(first({ conditionGroups: [] })).toEqual(['segment_expression_empty', 'expression.conditionGroups']);
      expect(first({ conditionGroups: [{ conditions: [cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'))] }, { conditions: [] }] })).toEqual([
        'segment_expression_empty',
        'expression.conditionGroups[1].conditions',
      ]);
    });

    it('limits: groups, conditions per group, option ids', () => {
      const tagCond = cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'));
      expect(first(expr(...Array.from({ length: SEGMENT_LIMITS.groups }, () => [tagCond])))).toEqual(['valid']);
      expect(first(expr(...Array.from({ length: SEGMENT_LIMITS.groups + 1 }, () => [tagCond])))).toEqual(['segment_too_many_groups', 'expression.conditionGroups']);
      expect(first(expr(Array.from({ length: SEGMENT_LIMITS.conditionsPerGroup }, () => tagCond)))).toEqual(['valid']);
      expect(first(expr(Array.from({ length: SEGMENT_LIMITS.conditionsPerGroup + 1 }, () => tagCond)))).toEqual([
        'segment_too_many_conditions',
        'expression.conditionGroups[0].conditions',
      ]);
      const ids = Array.from({ length: SEGMENT_LIMITS.optionIds + 1 }, () => 't1');
      expect(first(one(cond('TAGS', 'OPTION_CONTAINS_ANY', options(...ids))))).toEqual(['segment_too_many_option_ids', `${C0}.operand.optionIds`]);
    });
  });

  describe('fieldRef and fields', () => {
    it.each([
      ['FIELD without fieldRef', cond('FIELD', 'IS_EMPTY', NONE, null)],
      ['TAGS with a fieldRef', cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'), custom('f-text'))],
      ['TOPICS with a fieldRef', cond('TOPICS', 'OPTION_CONTAINS_ANY', options('p1'), custom('f-text'))],
      ['SEGMENT with a fieldRef', cond('SEGMENT', 'CONTAINED_IN', segment('seg-a'), builtIn('EMAIL'))],
      ['PURCHASES with a fieldRef', cond('PURCHASES', 'PURCHASED', purchase({}), custom('f-text'))],
    ])('segment_field_ref_not_allowed: %s', (_what, c) => expect(first(one(c))).toEqual(['segment_field_ref_not_allowed', `${C0}.fieldRef`]));

    it('segment_field_not_found: unknown custom field or built-in', () => {
      expect(first(one(fieldCond(custom('f-nope'), 'IS_EMPTY')))).toEqual(['segment_field_not_found', `${C0}.fieldRef.fieldId`]);
      expect(first(one({ subjectType: 'FIELD', fieldRef: { type: 'BUILT_IN', builtInField: 'PHONE' }, operator: 'IS_EMPTY', operand: NONE }))).toEqual([
        'segment_field_not_found',
        `${C0}.fieldRef.builtInField`,
      ]);
    });

    it('segment_field_archived: refused in new conditions, kept where the stored segment already used it', () => {
      const e = one(fieldCond(custom('f-archived'), 'TEXT_EQUALS', text('x')));
      expect(first(e)).toEqual(['segment_field_archived', `${C0}.fieldRef.fieldId`]);
      expect(first(e, { segmentId: 'seg-a', storedExpression: one(fieldCond(custom('f-archived'), 'IS_EMPTY')) })).toEqual(['valid']);
      expect(first(e, { segmentId: 'seg-a', storedExpression: one(fieldCond(custom('f-text'), 'IS_EMPTY')) })).toEqual(['segment_field_archived', `${C0}.fieldRef.fieldId`]);
    });
  });

  describe('operators and operands', () => {
    it.each([
      ['a number operator on a text field', fieldCond(custom('f-text'), 'NUMBER_EQUALS', num(1))],
      ['a text operator on a number field', fieldCond(custom('f-num'), 'TEXT_EQUALS', text('1'))],
      ['a multi-choice operator on a single-choice field', fieldCond(custom('f-single'), 'OPTION_CONTAINS_ANY', options('o1'))],
      ['a single-choice operator on a multi-choice field', fieldCond(custom('f-multi'), 'OPTION_IS_ANY_OF', options('m1'))],
      ['a date operator on the built-in EMAIL', fieldCond(builtIn('EMAIL'), 'DATE_BEFORE', date('2024-01-01'))],
      ['a response operator on FIRST_NAME', fieldCond(builtIn('FIRST_NAME'), 'RESPONDED_WITHIN_DAYS', num(3))],
      ['a response operator on a custom field', fieldCond(custom('f-text'), 'NO_RESPONSE_FOR_DAYS', num(3))],
      ['TOPIC_OPTED_OUT on TAGS', cond('TAGS', 'TOPIC_OPTED_OUT', options('t1'))],
      ['OPTION_IS_ANY_OF on TOPICS', cond('TOPICS', 'OPTION_IS_ANY_OF', options('p1'))],
      ['IS_EMPTY on TAGS', cond('TAGS', 'IS_EMPTY', NONE)],
      ['a purchase operator on SEGMENT', cond('SEGMENT', 'PURCHASED', purchase({}))],
      ['CONTAINED_IN on PURCHASES', cond('PURCHASES', 'CONTAINED_IN', segment('seg-a'))],
    ])('segment_operator_not_allowed: %s', (_what, c) => expect(first(one(c))).toEqual(['segment_operator_not_allowed', `${C0}.operator`]));

    it.each([
      ['TEXT_EQUALS with a NUMBER operand', fieldCond(custom('f-text'), 'TEXT_EQUALS', num(1)), `${C0}.operand.kind`],
      ['IS_EMPTY with a TEXT operand', fieldCond(custom('f-text'), 'IS_EMPTY', text('x')), `${C0}.operand.kind`],
      ['TAGS with a SEGMENT operand', cond('TAGS', 'OPTION_CONTAINS_ANY', segment('seg-a')), `${C0}.operand.kind`],
      ['no operand at all', { ...fieldCond(custom('f-text'), 'IS_EMPTY'), operand: null }, `${C0}.operand`],
      ['a value of another kind alongside', fieldCond(custom('f-text'), 'TEXT_EQUALS', { kind: 'TEXT', text: 'x', number: 3 }), `${C0}.operand.number`],
    ])('segment_operand_mismatch: %s', (_what, c, path) => expect(first(one(c))).toEqual(['segment_operand_mismatch', path]));

    it.each([
      ['a blank text', fieldCond(custom('f-text'), 'TEXT_EQUALS', text('  ')), `${C0}.operand.text`],
      ['a non-finite number', fieldCond(custom('f-num'), 'NUMBER_EQUALS', num(Infinity)), `${C0}.operand.number`],
      ['zero days for a response operator', fieldCond(builtIn('EMAIL'), 'NO_RESPONSE_FOR_DAYS', num(0)), `${C0}.operand.number`],
      ['fractional days for a response operator', fieldCond(builtIn('EMAIL'), 'NO_RESPONSE_FOR_DAYS', num(1.5)), `${C0}.operand.number`],
      ['an impossible date', fieldCond(custom('f-date'), 'DATE_EQUALS', date('2023-02-29')), `${C0}.operand.date`],
      ['empty option ids', cond('TAGS', 'OPTION_CONTAINS_ANY', options()), `${C0}.operand.optionIds`],
      ['an empty segment id', cond('SEGMENT', 'CONTAINED_IN', segment('')), `${C0}.operand.segmentId`],
    ])('segment_operand_invalid: %s', (_what, c, path) => expect(first(one(c))).toEqual(['segment_operand_invalid', path]));

    it('segment_option_not_found: an option of another field', () => {
      expect(first(one(fieldCond(custom('f-single'), 'OPTION_IS_ANY_OF', options('o1', 'm1'))))).toEqual(['segment_option_not_found', `${C0}.operand.optionIds[1]`]);
    });
    it('segment_tag_not_found', () => expect(first(one(cond('TAGS', 'OPTION_CONTAINS_NONE', options('t9'))))).toEqual(['segment_tag_not_found', `${C0}.operand.optionIds[0]`]));
    it('segment_topic_not_found', () =>
      expect(first(one(cond('TOPICS', 'TOPIC_OPTED_OUT', options('p1', 'p9'))))).toEqual(['segment_topic_not_found', `${C0}.operand.optionIds[1]`]));
  });

  describe('segment references', () => {
    it('segment_not_found', () => expect(first(one(cond('SEGMENT', 'CONTAINED_IN', segment('seg-zz'))))).toEqual(['segment_not_found', `${C0}.operand.segmentId`]));

    it('segment_cycle: a segment referring to itself', () => {
      const r = check(one(cond('SEGMENT', 'CONTAINED_IN', segment('seg-a'))), { segmentId: 'seg-a' });
      expect(r.valid ? [] : [r.errorId, r.problems[0].path, r.problems[0].problem]).toEqual(['segment_cycle', `${C0}.operand.segmentId`, expect.stringContaining('seg-a -> seg-a')]);
    });

    it('segment_cycle: an indirect cycle (a -> c -> b -> a)', () => {
      const r = check(expr([fieldCond(custom('f-text'), 'IS_EMPTY')], [cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-c'))]), { segmentId: 'seg-a' });
      expect(r.valid ? [] : [r.errorId, r.problems[0].path, r.problems[0].problem]).toEqual([
        'segment_cycle',
        'expression.conditionGroups[1].conditions[0].operand.segmentId',
        expect.stringContaining('seg-a -> seg-c -> seg-b -> seg-a'),
      ]);
    });

    it('no cycle: a new segment, or an update of a segment nobody refers to', () => {
      expect(first(one(cond('SEGMENT', 'CONTAINED_IN', segment('seg-c'))))).toEqual(['valid']);
      expect(first(one(cond('SEGMENT', 'CONTAINED_IN', segment('seg-b'))), { segmentId: 'seg-c' })).toEqual(['valid']);
    });

    it('segment_cycle: a cycle already among stored segments is refused when referenced', () => {
      const broken: ValidationCatalog = {
        ...CATALOG,
        segments: [
          { id: 'x', expression: expr([cond('SEGMENT', 'CONTAINED_IN', segment('y'))]) },
          { id: 'y', expression: expr([cond('SEGMENT', 'CONTAINED_IN', segment('x'))]) },
        ],
      };
      const r = validateExpression(one(cond('SEGMENT', 'CONTAINED_IN', segment('x'))), broken);
      expect(r.valid ? [] : r.errorId).toBe('segment_cycle');
    });
  });

  describe('purchase operands', () => {
    const P = `${C0}.operand.purchase`;
    it.each([
      ['scopeKind missing', pcond('PURCHASED', {}), `${P}.scopeKind`],
      ['PRODUCTS without products', pcond('PURCHASED', { scopeKind: 'PRODUCTS' }), `${P}.products`],
      ['PRODUCTS with a variant', pcond('PURCHASED', { scopeKind: 'PRODUCTS', products: [{ productId: 'p', variantId: 'v' }] }), `${P}.products[0].variantId`],
      ['VARIANTS without a variantId', pcond('PURCHASED', { scopeKind: 'VARIANTS', products: [{ productId: 'p' }] }), `${P}.products[0].variantId`],
      ['GROUP without groupId', pcond('PURCHASED', { scopeKind: 'GROUP' }), `${P}.groupId`],
      ['ALL_PRODUCTS with products', pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', products: [{ productId: 'p' }] }), `${P}.products`],
      ['a count operator without count', pcond('PURCHASE_COUNT_AT_MOST', { scopeKind: 'ALL_PRODUCTS' }), `${P}.count`],
      ['a negative count', pcond('PURCHASE_COUNT_EQUALS', { scopeKind: 'ALL_PRODUCTS', count: -1 }), `${P}.count`],
      ['count on PURCHASED', pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', count: 2 }), `${P}.count`],
      ['ORDER_VALUE without currency', pcond('ORDER_VALUE_AT_LEAST', { scopeKind: 'ALL_PRODUCTS', amount: 5 }), `${P}.currency`],
      ['ORDER_VALUE with a lower-case currency', pcond('ORDER_VALUE_AT_MOST', { scopeKind: 'ALL_PRODUCTS', currency: 'eur', amount: 5 }), `${P}.currency`],
      ['ORDER_VALUE without amount', pcond('ORDER_VALUE_AT_LEAST', { scopeKind: 'ALL_PRODUCTS', currency: 'EUR' }), `${P}.amount`],
      ['COUPON_USED without couponCode', pcond('COUPON_USED', { scopeKind: 'ALL_PRODUCTS' }), `${P}.couponCode`],
      ['couponCode on another operator', pcond('NOT_PURCHASED', { scopeKind: 'ALL_PRODUCTS', couponCode: 'X' }), `${P}.couponCode`],
      ['an unknown time zone', pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', timeZoneId: 'Mars/Olympus' }), `${P}.timeZoneId`],
      ['FIRST_PURCHASE_IN_PERIOD without a period', pcond('FIRST_PURCHASE_IN_PERIOD', { scopeKind: 'ALL_PRODUCTS' }), `${P}.period`],
      ['a period without kind', pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', period: { days: 3 } }), `${P}.period.kind`],
      ['LAST_DAYS without days', pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', period: { kind: 'LAST_DAYS' } }), `${P}.period.days`],
      ['DATE_RANGE without to', pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', period: { kind: 'DATE_RANGE', from: '2025-01-01' } }), `${P}.period.to`],
      ['not an object', cond('PURCHASES', 'PURCHASED', { kind: 'PURCHASE', purchase: null }), `${P}`],
    ])('segment_purchase_operand_invalid: %s', (_what, c, path) => expect(first(one(c))).toEqual(['segment_purchase_operand_invalid', path]));

    it('segment_purchase_source_not_found', () =>
      expect(first(one(pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', sourceId: 'src-9', period: LAST30 })))).toEqual(['segment_purchase_source_not_found', `${P}.sourceId`]));

    it.each([
      ['zero days', { kind: 'LAST_DAYS', days: 0 }, 'days'],
      ['fractional days', { kind: 'LAST_DAYS', days: 1.5 }, 'days'],
      ['from with LAST_DAYS', { kind: 'LAST_DAYS', days: 3, from: '2025-01-01' }, 'from'],
      ['days with DATE_RANGE', { kind: 'DATE_RANGE', days: 3, from: '2025-01-01', to: '2025-01-02' }, 'days'],
      ['an impossible date', { kind: 'DATE_RANGE', from: '2025-02-30', to: '2025-03-02' }, 'from'],
      ['to before from', { kind: 'DATE_RANGE', from: '2025-03-02', to: '2025-03-01' }, 'to'],
    ])('segment_period_invalid: %s', (_what, period, prop) =>
      expect(first(one(pcond('PURCHASED', { scopeKind: 'ALL_PRODUCTS', period })))).toEqual(['segment_period_invalid', `${P}.period.${prop}`]));
  });

  it('reports every problem in document order; the first drives the errorId', () => {
    const r = check(
      expr(
        [fieldCond(custom('f-nope'), 'IS_EMPTY'), cond('TAGS', 'OPTION_CONTAINS_ANY', options('t9'))],
        [cond('SEGMENT', 'CONTAINED_IN', segment('seg-zz')), fieldCond(custom('f-text'), 'NUMBER_EQUALS', num(1))],
      ),
      { pathPrefix: 'body.expression' },
    );
    expect(r.valid ? [] : r.problems.map((p) => [p.errorId, p.path])).toEqual([
      ['segment_field_not_found', 'body.expression.conditionGroups[0].conditions[0].fieldRef.fieldId'],
      ['segment_tag_not_found', 'body.expression.conditionGroups[0].conditions[1].operand.optionIds[0]'],
      ['segment_not_found', 'body.expression.conditionGroups[1].conditions[0].operand.segmentId'],
      ['segment_operator_not_allowed', 'body.expression.conditionGroups[1].conditions[1].operator'],
    ]);
    expect(r.valid ? undefined : r.errorId).toBe('segment_field_not_found');
    expect(r.valid ? undefined : r.problems.every((p) => p.problem.length > 0)).toBe(true);
  });

  it('lists the fields and segments an expression refers to (for usage reports and reference checks)', () => {
    const e = expr([fieldCond(custom('f-text'), 'IS_EMPTY'), fieldCond(builtIn('EMAIL'), 'IS_EMPTY')], [fieldCond(custom('f-text'), 'IS_NOT_EMPTY'), cond('SEGMENT', 'CONTAINED_IN', segment('seg-a'))]);
    expect(referencedFieldIds(e)).toEqual(['f-text']);
    expect(referencedSegmentIds(e)).toEqual(['seg-a']);
  });
});
