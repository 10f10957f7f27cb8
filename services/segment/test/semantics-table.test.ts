/**
 * Hand-written cases per operator, TRUE, FALSE and UNKNOWN rows each (the API contract "Segment semantics").
 * Every row is checked twice: by the reference evaluator, and by the compiled filters executed by a
 * real embedded store (each row's contact sits in its own account; a twin in another account must
 * never match, which checks the accountId pinning too).
 */
import type { Contact } from '../src/domain/contact';
import { textValue } from '../src/domain/contact';
import type { EvaluationFacts } from '../src/domain/evaluation-facts';
import { SEGMENT_OPERATORS, SegmentCondition, SegmentExpression, Truth } from '../src/domain/expression';
import { ContactStore, openContactStore } from './support/store';
import { builtIn, classify, cond, contact, custom, date, expr, fieldCond, num, options, order, purchase, segment, text } from './support/builders';

const NOW = new Date('2025-03-10T12:00:00Z');
const daysAgo = (d: number, extraMs = 0) => new Date(NOW.getTime() - d * 86_400_000 + extraMs);

const TEXT = custom('f-text');
const NUMBER = custom('f-number');
const DATE = custom('f-date');
const BOOL = custom('f-bool');
const SINGLE = custom('f-single');
const MULTI = custom('f-multi');

/** Segments the SEGMENT rows refer to. */
const SEGMENTS: Record<string, SegmentExpression> = {
  // TRUE / FALSE / UNKNOWN depending on f-number (10 / 5 / missing).
  'seg-big': expr([fieldCond(NUMBER, 'NUMBER_GREATER_THAN', num(7))]),
  'seg-not-big': expr([cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-big'))]),
  'seg-nested': expr([cond('SEGMENT', 'CONTAINED_IN', segment('seg-not-big'))], [cond('TAGS', 'OPTION_CONTAINS_ANY', options('t-vip'))]),
};

const CONTEXT: EvaluationFacts = {
  now: NOW,
  segments: SEGMENTS,
  activeTopicIds: ['p1', 'p2', 'p3'], // p4 is inactive
  purchaseSources: [
    { id: 's-tokyo', timeZone: 'Asia/Tokyo', capturedOrdersFromUtc: new Date('2024-01-01T00:00:00Z'), capturedOrdersToUtc: null, baselineOpen: false },
    { id: 's-ny', timeZone: 'America/New_York', capturedOrdersFromUtc: new Date('2024-01-01T00:00:00Z'), capturedOrdersToUtc: null, baselineOpen: true },
    { id: 's-stopped', timeZone: 'UTC', capturedOrdersFromUtc: new Date('2024-06-01T00:00:00Z'), capturedOrdersToUtc: new Date('2025-01-31T00:00:00Z'), baselineOpen: false },
    { id: 's-nozone', timeZone: null, capturedOrdersFromUtc: new Date('2024-01-01T00:00:00Z'), capturedOrdersToUtc: null, baselineOpen: false },
  ],
};

interface Row {
  name: string;
  when: SegmentCondition | SegmentExpression;
  contact?: Partial<Contact>;
  context?: Partial<EvaluationFacts>;
  expect: Truth;
}

const withText = (t: string): Partial<Contact> => ({ fields: { 'f-text': textValue(t) } });
const withValue = (key: string, value: object): Partial<Contact> => ({ fields: { [key]: value as never } });
const nothing: Partial<Contact> = { fields: {} };

const ROWS: Row[] = [
  // ---- Text: EQUALS / NOT_EQUALS exact, the rest ignore case
  { name: 'TEXT_EQUALS exact match', when: fieldCond(TEXT, 'TEXT_EQUALS', text('Anna Lee')), contact: withText('Anna Lee'), expect: 'TRUE' },
  { name: 'TEXT_EQUALS is case-sensitive', when: fieldCond(TEXT, 'TEXT_EQUALS', text('anna lee')), contact: withText('Anna Lee'), expect: 'FALSE' },
  { name: 'TEXT_EQUALS on a missing value', when: fieldCond(TEXT, 'TEXT_EQUALS', text('Anna Lee')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'TEXT_NOT_EQUALS different', when: fieldCond(TEXT, 'TEXT_NOT_EQUALS', text('Bob')), contact: withText('Anna Lee'), expect: 'TRUE' },
  { name: 'TEXT_NOT_EQUALS same', when: fieldCond(TEXT, 'TEXT_NOT_EQUALS', text('Anna Lee')), contact: withText('Anna Lee'), expect: 'FALSE' },
  { name: 'TEXT_NOT_EQUALS on a missing value is UNKNOWN, not TRUE', when: fieldCond(TEXT, 'TEXT_NOT_EQUALS', text('Bob')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'TEXT_EQUALS_IGNORE_CASE', when: fieldCond(TEXT, 'TEXT_EQUALS_IGNORE_CASE', text('ANNA lee')), contact: withText('Anna Lee'), expect: 'TRUE' },
  { name: 'TEXT_EQUALS_IGNORE_CASE non-ASCII', when: fieldCond(TEXT, 'TEXT_EQUALS_IGNORE_CASE', text('ÄRGER')), contact: withText('ärger'), expect: 'TRUE' },
  { name: 'TEXT_EQUALS_IGNORE_CASE different', when: fieldCond(TEXT, 'TEXT_EQUALS_IGNORE_CASE', text('Anna')), contact: withText('Anna Lee'), expect: 'FALSE' },
  { name: 'TEXT_EQUALS_IGNORE_CASE missing', when: fieldCond(TEXT, 'TEXT_EQUALS_IGNORE_CASE', text('Anna')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'TEXT_STARTS_WITH ignores case', when: fieldCond(TEXT, 'TEXT_STARTS_WITH', text('aNN')), contact: withText('Anna Lee'), expect: 'TRUE' },
  { name: 'TEXT_STARTS_WITH no', when: fieldCond(TEXT, 'TEXT_STARTS_WITH', text('Lee')), contact: withText('Anna Lee'), expect: 'FALSE' },
  { name: 'TEXT_STARTS_WITH missing', when: fieldCond(TEXT, 'TEXT_STARTS_WITH', text('A')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'TEXT_ENDS_WITH ignores case', when: fieldCond(TEXT, 'TEXT_ENDS_WITH', text('LEE')), contact: withText('Anna Lee'), expect: 'TRUE' },
  { name: 'TEXT_ENDS_WITH no', when: fieldCond(TEXT, 'TEXT_ENDS_WITH', text('Anna')), contact: withText('Anna Lee'), expect: 'FALSE' },
  { name: 'TEXT_ENDS_WITH is not fooled by a final newline', when: fieldCond(TEXT, 'TEXT_ENDS_WITH', text('lee')), contact: withText('Anna Lee\n'), expect: 'FALSE' },
  { name: 'TEXT_ENDS_WITH missing', when: fieldCond(TEXT, 'TEXT_ENDS_WITH', text('lee')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'TEXT_CONTAINS ignores case', when: fieldCond(TEXT, 'TEXT_CONTAINS', text('A L')), contact: withText('Anna Lee'), expect: 'TRUE' },
  { name: 'TEXT_CONTAINS treats regex characters literally (no)', when: fieldCond(TEXT, 'TEXT_CONTAINS', text('a.l')), contact: withText('Anna Lee'), expect: 'FALSE' },
  { name: 'TEXT_CONTAINS treats regex characters literally (yes)', when: fieldCond(TEXT, 'TEXT_CONTAINS', text('(a.l*')), contact: withText('x(A.L*y'), expect: 'TRUE' },
  { name: 'TEXT_CONTAINS missing', when: fieldCond(TEXT, 'TEXT_CONTAINS', text('a')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'built-in EMAIL ends with a domain', when: fieldCond(builtIn('EMAIL'), 'TEXT_ENDS_WITH', text('@EXAMPLE.org')), expect: 'TRUE' },
  { name: 'built-in FIRST_NAME without a first name', when: fieldCond(builtIn('FIRST_NAME'), 'TEXT_STARTS_WITH', text('A')), expect: 'UNKNOWN' },
  {
    name: 'built-in FIRST_NAME set',
    when: fieldCond(builtIn('FIRST_NAME'), 'TEXT_EQUALS', text('Ann')),
    contact: { firstName: 'Ann', fields: { FIRST_NAME: textValue('Ann') } },
    expect: 'TRUE',
  },

  // ---- Number
  ...(
    [
      ['NUMBER_EQUALS', 10, 'TRUE'],
      ['NUMBER_EQUALS', 11, 'FALSE'],
      ['NUMBER_NOT_EQUALS', 11, 'TRUE'],
      ['NUMBER_NOT_EQUALS', 10, 'FALSE'],
      ['NUMBER_GREATER_THAN', 9.5, 'TRUE'],
      ['NUMBER_GREATER_THAN', 10, 'FALSE'],
      ['NUMBER_LESS_THAN', 10.5, 'TRUE'],
      ['NUMBER_LESS_THAN', 10, 'FALSE'],
      ['NUMBER_GREATER_OR_EQUAL', 10, 'TRUE'],
      ['NUMBER_GREATER_OR_EQUAL', 10.01, 'FALSE'],
      ['NUMBER_LESS_OR_EQUAL', 10, 'TRUE'],
      ['NUMBER_LESS_OR_EQUAL', -3, 'FALSE'],
    ] as const
  ).flatMap(([op, operand, expect]): Row[] => [
    { name: `${op} ${operand} on 10`, when: fieldCond(NUMBER, op, num(operand)), contact: withValue('f-number', { number: 10 }), expect },
    { name: `${op} ${operand} on a missing value`, when: fieldCond(NUMBER, op, num(operand)), contact: nothing, expect: 'UNKNOWN' },
  ]),
  { name: 'NUMBER_EQUALS 0 on 0 (zero is a value)', when: fieldCond(NUMBER, 'NUMBER_EQUALS', num(0)), contact: withValue('f-number', { number: 0 }), expect: 'TRUE' },

  // ---- Date (LocalDates)
  ...(
    [
      ['DATE_EQUALS', '2024-02-29', 'TRUE'],
      ['DATE_EQUALS', '2024-03-01', 'FALSE'],
      ['DATE_NOT_EQUALS', '2024-03-01', 'TRUE'],
      ['DATE_NOT_EQUALS', '2024-02-29', 'FALSE'],
      ['DATE_BEFORE', '2024-03-01', 'TRUE'],
      ['DATE_BEFORE', '2024-02-29', 'FALSE'],
      ['DATE_AFTER', '2024-02-28', 'TRUE'],
      ['DATE_AFTER', '2024-02-29', 'FALSE'],
      ['DATE_BEFORE_OR_EQUAL', '2024-02-29', 'TRUE'],
      ['DATE_BEFORE_OR_EQUAL', '2023-12-31', 'FALSE'],
      ['DATE_EQUAL_OR_AFTER', '2024-02-29', 'TRUE'],
      ['DATE_EQUAL_OR_AFTER', '2024-03-01', 'FALSE'],
    ] as const
  ).flatMap(([op, operand, expect]): Row[] => [
    { name: `${op} ${operand} on 2024-02-29`, when: fieldCond(DATE, op, date(operand)), contact: withValue('f-date', { date: '2024-02-29' }), expect },
    { name: `${op} ${operand} on a missing value`, when: fieldCond(DATE, op, date(operand)), contact: nothing, expect: 'UNKNOWN' },
  ]),

  // ---- Boolean
  { name: 'BOOLEAN_IS_TRUE on true', when: fieldCond(BOOL, 'BOOLEAN_IS_TRUE'), contact: withValue('f-bool', { boolean: true }), expect: 'TRUE' },
  { name: 'BOOLEAN_IS_TRUE on false', when: fieldCond(BOOL, 'BOOLEAN_IS_TRUE'), contact: withValue('f-bool', { boolean: false }), expect: 'FALSE' },
  { name: 'BOOLEAN_IS_TRUE missing', when: fieldCond(BOOL, 'BOOLEAN_IS_TRUE'), contact: nothing, expect: 'UNKNOWN' },
  { name: 'BOOLEAN_IS_FALSE on false', when: fieldCond(BOOL, 'BOOLEAN_IS_FALSE'), contact: withValue('f-bool', { boolean: false }), expect: 'TRUE' },
  { name: 'BOOLEAN_IS_FALSE on true', when: fieldCond(BOOL, 'BOOLEAN_IS_FALSE'), contact: withValue('f-bool', { boolean: true }), expect: 'FALSE' },
  { name: 'BOOLEAN_IS_FALSE missing', when: fieldCond(BOOL, 'BOOLEAN_IS_FALSE'), contact: nothing, expect: 'UNKNOWN' },

  // ---- Options
  { name: 'OPTION_IS_ANY_OF hit', when: fieldCond(SINGLE, 'OPTION_IS_ANY_OF', options('o1', 'o3')), contact: withValue('f-single', { optionId: 'o1' }), expect: 'TRUE' },
  { name: 'OPTION_IS_ANY_OF miss', when: fieldCond(SINGLE, 'OPTION_IS_ANY_OF', options('o1', 'o3')), contact: withValue('f-single', { optionId: 'o2' }), expect: 'FALSE' },
  { name: 'OPTION_IS_ANY_OF missing', when: fieldCond(SINGLE, 'OPTION_IS_ANY_OF', options('o1')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'OPTION_IS_NONE_OF miss', when: fieldCond(SINGLE, 'OPTION_IS_NONE_OF', options('o1')), contact: withValue('f-single', { optionId: 'o2' }), expect: 'TRUE' },
  { name: 'OPTION_IS_NONE_OF hit', when: fieldCond(SINGLE, 'OPTION_IS_NONE_OF', options('o1')), contact: withValue('f-single', { optionId: 'o1' }), expect: 'FALSE' },
  { name: 'OPTION_IS_NONE_OF missing is UNKNOWN', when: fieldCond(SINGLE, 'OPTION_IS_NONE_OF', options('o1')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'OPTION_CONTAINS_ANY hit', when: fieldCond(MULTI, 'OPTION_CONTAINS_ANY', options('m2')), contact: withValue('f-multi', { optionIds: ['m1', 'm2'] }), expect: 'TRUE' },
  { name: 'OPTION_CONTAINS_ANY miss', when: fieldCond(MULTI, 'OPTION_CONTAINS_ANY', options('m3')), contact: withValue('f-multi', { optionIds: ['m1', 'm2'] }), expect: 'FALSE' },
  { name: 'OPTION_CONTAINS_ANY missing', when: fieldCond(MULTI, 'OPTION_CONTAINS_ANY', options('m3')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'OPTION_CONTAINS_NONE miss', when: fieldCond(MULTI, 'OPTION_CONTAINS_NONE', options('m3')), contact: withValue('f-multi', { optionIds: ['m1'] }), expect: 'TRUE' },
  { name: 'OPTION_CONTAINS_NONE hit', when: fieldCond(MULTI, 'OPTION_CONTAINS_NONE', options('m1', 'm3')), contact: withValue('f-multi', { optionIds: ['m1'] }), expect: 'FALSE' },
  { name: 'OPTION_CONTAINS_NONE missing is UNKNOWN', when: fieldCond(MULTI, 'OPTION_CONTAINS_NONE', options('m1')), contact: nothing, expect: 'UNKNOWN' },

  // ---- Emptiness (never UNKNOWN)
  { name: 'IS_EMPTY missing', when: fieldCond(TEXT, 'IS_EMPTY'), contact: nothing, expect: 'TRUE' },
  { name: 'IS_EMPTY present', when: fieldCond(TEXT, 'IS_EMPTY'), contact: withText('x'), expect: 'FALSE' },
  { name: 'IS_NOT_EMPTY present (boolean false is a value)', when: fieldCond(BOOL, 'IS_NOT_EMPTY'), contact: withValue('f-bool', { boolean: false }), expect: 'TRUE' },
  { name: 'IS_NOT_EMPTY missing', when: fieldCond(MULTI, 'IS_NOT_EMPTY'), contact: nothing, expect: 'FALSE' },
  { name: 'IS_EMPTY on the built-in EMAIL', when: fieldCond(builtIn('EMAIL'), 'IS_EMPTY'), expect: 'FALSE' },

  // ---- Tags (never UNKNOWN)
  { name: 'TAGS OPTION_CONTAINS_ANY hit', when: cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1', 't2')), contact: { tags: ['t2'] }, expect: 'TRUE' },
  { name: 'TAGS OPTION_CONTAINS_ANY on no tags', when: cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1')), contact: { tags: [] }, expect: 'FALSE' },
  { name: 'TAGS OPTION_CONTAINS_NONE on no tags', when: cond('TAGS', 'OPTION_CONTAINS_NONE', options('t1')), contact: { tags: [] }, expect: 'TRUE' },
  { name: 'TAGS OPTION_CONTAINS_NONE hit', when: cond('TAGS', 'OPTION_CONTAINS_NONE', options('t1')), contact: { tags: ['t3', 't1'] }, expect: 'FALSE' },

  // ---- Topics
  { name: 'TOPICS OPTION_CONTAINS_ANY subscribed', when: cond('TOPICS', 'OPTION_CONTAINS_ANY', options('p1')), contact: { topics: ['p1'] }, expect: 'TRUE' },
  { name: 'TOPICS OPTION_CONTAINS_ANY none', when: cond('TOPICS', 'OPTION_CONTAINS_ANY', options('p1')), contact: { topics: [] }, expect: 'FALSE' },
  { name: 'TOPICS OPTION_CONTAINS_NONE none', when: cond('TOPICS', 'OPTION_CONTAINS_NONE', options('p1')), contact: { topics: ['p2'] }, expect: 'TRUE' },
  { name: 'TOPICS OPTION_CONTAINS_NONE subscribed', when: cond('TOPICS', 'OPTION_CONTAINS_NONE', options('p1', 'p2')), contact: { topics: ['p2'] }, expect: 'FALSE' },
  {
    name: 'TOPIC_OPTED_OUT from a selected active topic',
    when: cond('TOPICS', 'TOPIC_OPTED_OUT', options('p1', 'p2')),
    contact: { optOuts: [{ topicId: 'p2', at: daysAgo(3) }] },
    expect: 'TRUE',
  },
  {
    name: 'TOPIC_OPTED_OUT from a topic not selected',
    when: cond('TOPICS', 'TOPIC_OPTED_OUT', options('p1')),
    contact: { optOuts: [{ topicId: 'p2', at: daysAgo(3) }] },
    expect: 'FALSE',
  },
  {
    name: 'TOPIC_OPTED_OUT from an inactive topic does not count',
    when: cond('TOPICS', 'TOPIC_OPTED_OUT', options('p4')),
    contact: { optOuts: [{ topicId: 'p4', at: daysAgo(3) }] },
    expect: 'FALSE',
  },
  { name: 'TOPIC_OPTED_OUT without opt-outs (a plain unsubscribe is no opt-out)', when: cond('TOPICS', 'TOPIC_OPTED_OUT', options('p1')), contact: { topics: [] }, expect: 'FALSE' },

  // ---- Segment membership (the referenced segment's three-valued result; NOT UNKNOWN = UNKNOWN)
  { name: 'CONTAINED_IN a TRUE segment', when: cond('SEGMENT', 'CONTAINED_IN', segment('seg-big')), contact: withValue('f-number', { number: 10 }), expect: 'TRUE' },
  { name: 'CONTAINED_IN a FALSE segment', when: cond('SEGMENT', 'CONTAINED_IN', segment('seg-big')), contact: withValue('f-number', { number: 5 }), expect: 'FALSE' },
  { name: 'CONTAINED_IN an UNKNOWN segment', when: cond('SEGMENT', 'CONTAINED_IN', segment('seg-big')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'NOT_CONTAINED_IN a TRUE segment', when: cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-big')), contact: withValue('f-number', { number: 10 }), expect: 'FALSE' },
  { name: 'NOT_CONTAINED_IN a FALSE segment', when: cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-big')), contact: withValue('f-number', { number: 5 }), expect: 'TRUE' },
  { name: 'NOT_CONTAINED_IN an UNKNOWN segment stays UNKNOWN', when: cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-big')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'nested NOT of NOT of UNKNOWN stays UNKNOWN', when: cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-not-big')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'nested: UNKNOWN OR TRUE (tag) is TRUE', when: cond('SEGMENT', 'CONTAINED_IN', segment('seg-nested')), contact: { fields: {}, tags: ['t-vip'] }, expect: 'TRUE' },
  { name: 'nested: UNKNOWN OR FALSE is UNKNOWN', when: cond('SEGMENT', 'CONTAINED_IN', segment('seg-nested')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'nested: NOT of a nested UNKNOWN stays UNKNOWN', when: cond('SEGMENT', 'NOT_CONTAINED_IN', segment('seg-nested')), contact: nothing, expect: 'UNKNOWN' },
  { name: 'nested: TRUE through two NOTs', when: cond('SEGMENT', 'CONTAINED_IN', segment('seg-nested')), contact: withValue('f-number', { number: 5 }), expect: 'TRUE' },
  { name: 'nested: FALSE through two NOTs and a FALSE tag', when: cond('SEGMENT', 'CONTAINED_IN', segment('seg-nested')), contact: withValue('f-number', { number: 10 }), expect: 'FALSE' },

  // ---- Logic
  {
    name: 'AND: FALSE beats UNKNOWN',
    when: expr([fieldCond(TEXT, 'TEXT_EQUALS', text('x')), cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'))]),
    contact: { fields: {}, tags: [] },
    expect: 'FALSE',
  },
  {
    name: 'AND: TRUE and UNKNOWN is UNKNOWN',
    when: expr([fieldCond(TEXT, 'TEXT_EQUALS', text('x')), cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'))]),
    contact: { fields: {}, tags: ['t1'] },
    expect: 'UNKNOWN',
  },
  {
    name: 'OR: TRUE beats UNKNOWN',
    when: expr([fieldCond(TEXT, 'TEXT_EQUALS', text('x'))], [cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'))]),
    contact: { fields: {}, tags: ['t1'] },
    expect: 'TRUE',
  },
  {
    name: 'OR: FALSE or UNKNOWN is UNKNOWN',
    when: expr([fieldCond(TEXT, 'TEXT_EQUALS', text('x'))], [cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'))]),
    contact: { fields: {}, tags: [] },
    expect: 'UNKNOWN',
  },
  {
    name: 'OR: all FALSE is FALSE',
    when: expr([fieldCond(TEXT, 'IS_NOT_EMPTY')], [cond('TAGS', 'OPTION_CONTAINS_ANY', options('t1'))]),
    contact: { fields: {}, tags: [] },
    expect: 'FALSE',
  },

  // ---- Response (NUMBER operand = days, rolling 24-hour days before now)
  { name: 'RESPONDED_WITHIN_DAYS recent response', when: fieldCond(builtIn('EMAIL'), 'RESPONDED_WITHIN_DAYS', num(30)), contact: { lastDeliveredAt: daysAgo(12), lastResponseAt: daysAgo(10) }, expect: 'TRUE' },
  { name: 'RESPONDED_WITHIN_DAYS exactly at the cutoff', when: fieldCond(builtIn('EMAIL'), 'RESPONDED_WITHIN_DAYS', num(30)), contact: { lastDeliveredAt: daysAgo(31), lastResponseAt: daysAgo(30) }, expect: 'TRUE' },
  { name: 'RESPONDED_WITHIN_DAYS old response', when: fieldCond(builtIn('EMAIL'), 'RESPONDED_WITHIN_DAYS', num(30)), contact: { lastDeliveredAt: daysAgo(41), lastResponseAt: daysAgo(30, -1) }, expect: 'FALSE' },
  { name: 'RESPONDED_WITHIN_DAYS never delivered: no response is a fact', when: fieldCond(builtIn('EMAIL'), 'RESPONDED_WITHIN_DAYS', num(30)), expect: 'FALSE' },
  { name: 'NO_RESPONSE_FOR_DAYS never delivered', when: fieldCond(builtIn('EMAIL'), 'NO_RESPONSE_FOR_DAYS', num(30)), expect: 'UNKNOWN' },
  { name: 'NO_RESPONSE_FOR_DAYS delivered, never responded', when: fieldCond(builtIn('EMAIL'), 'NO_RESPONSE_FOR_DAYS', num(30)), contact: { lastDeliveredAt: daysAgo(2) }, expect: 'TRUE' },
  { name: 'NO_RESPONSE_FOR_DAYS old response', when: fieldCond(builtIn('EMAIL'), 'NO_RESPONSE_FOR_DAYS', num(30)), contact: { lastDeliveredAt: daysAgo(2), lastResponseAt: daysAgo(40) }, expect: 'TRUE' },
  { name: 'NO_RESPONSE_FOR_DAYS recent response', when: fieldCond(builtIn('EMAIL'), 'NO_RESPONSE_FOR_DAYS', num(30)), contact: { lastDeliveredAt: daysAgo(12), lastResponseAt: daysAgo(10) }, expect: 'FALSE' },
  { name: 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST never delivered', when: fieldCond(builtIn('EMAIL'), 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST', num(14)), expect: 'UNKNOWN' },
  {
    name: 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST silent long enough',
    when: fieldCond(builtIn('EMAIL'), 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST', num(14)),
    contact: { lastDeliveredAt: daysAgo(1), firstUnansweredDeliveryAt: daysAgo(20) },
    expect: 'TRUE',
  },
  {
    name: 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST silent too briefly',
    when: fieldCond(builtIn('EMAIL'), 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST', num(14)),
    contact: { lastDeliveredAt: daysAgo(1), firstUnansweredDeliveryAt: daysAgo(3) },
    expect: 'FALSE',
  },
  {
    name: 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST every delivery answered',
    when: fieldCond(builtIn('EMAIL'), 'DELIVERED_WITHOUT_RESPONSE_AT_LEAST', num(14)),
    contact: { lastDeliveredAt: daysAgo(30), lastResponseAt: daysAgo(29) },
    expect: 'FALSE',
  },

  // ---- Purchases: positive facts prove TRUE; absence proves FALSE only inside a complete captured window
  { name: 'PURCHASED last 7 days, complete source, order', when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(7) }), contact: orders(order('s-tokyo', daysAgo(3))), expect: 'TRUE' },
  { name: 'PURCHASED last 7 days, complete source, none', when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(7) }), contact: orders(), expect: 'FALSE' },
  { name: 'PURCHASED last 7 days, order 8 days ago', when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(7) }), contact: orders(order('s-tokyo', daysAgo(8))), expect: 'FALSE' },
  { name: 'PURCHASED, open baseline, none: UNKNOWN', when: pc('PURCHASED', { sourceId: 's-ny', period: last(7) }), contact: orders(), expect: 'UNKNOWN' },
  { name: 'PURCHASED, open baseline, order: a fact proves TRUE', when: pc('PURCHASED', { sourceId: 's-ny', period: last(7) }), contact: orders(order('s-ny', daysAgo(1))), expect: 'TRUE' },
  { name: 'PURCHASED, all sources, one open: UNKNOWN', when: pc('PURCHASED', { period: last(7) }), contact: orders(), expect: 'UNKNOWN' },
  { name: 'PURCHASED, all sources, order in any', when: pc('PURCHASED', { period: last(7) }), contact: orders(order('s-nozone', daysAgo(1))), expect: 'TRUE' },
  { name: 'PURCHASED, order of another source does not count', when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(7) }), contact: orders(order('s-nozone', daysAgo(1))), expect: 'FALSE' },
  { name: 'PURCHASED, period before the capture start: UNKNOWN', when: pc('PURCHASED', { sourceId: 's-tokyo', period: range('2023-12-01', '2023-12-31') }), contact: orders(), expect: 'UNKNOWN' },
  { name: 'PURCHASED, capture stopped before now: UNKNOWN', when: pc('PURCHASED', { sourceId: 's-stopped', period: last(7) }), contact: orders(), expect: 'UNKNOWN' },
  { name: 'PURCHASED, period inside a stopped capture: FALSE', when: pc('PURCHASED', { sourceId: 's-stopped', period: range('2024-07-01', '2024-07-31') }), contact: orders(), expect: 'FALSE' },
  { name: 'PURCHASED all time: absence never proven', when: pc('PURCHASED', { sourceId: 's-tokyo' }), contact: orders(), expect: 'UNKNOWN' },
  { name: 'PURCHASED all time: an order', when: pc('PURCHASED', { sourceId: 's-tokyo' }), contact: orders(order('s-tokyo', '2020-05-05T00:00:00Z')), expect: 'TRUE' },
  // time zones: 23:30 UTC is already the next day in Tokyo
  {
    name: 'Tokyo: an order at 23:30 UTC on 02-28 is on 03-01 local (in)',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: range('2025-03-01', '2025-03-01') }),
    contact: orders(order('s-tokyo', '2025-02-28T23:30:00Z')),
    expect: 'TRUE',
  },
  {
    name: 'Tokyo: the same order is not on 02-28 local',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: range('2025-02-28', '2025-02-28') }),
    contact: orders(order('s-tokyo', '2025-02-28T23:30:00Z')),
    expect: 'FALSE',
  },
  {
    name: 'Tokyo: last millisecond of 03-01 local is in',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: range('2025-03-01', '2025-03-01') }),
    contact: orders(order('s-tokyo', '2025-03-01T14:59:59.999Z')),
    expect: 'TRUE',
  },
  {
    name: 'Tokyo: local midnight of 03-02 is out',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: range('2025-03-01', '2025-03-01') }),
    contact: orders(order('s-tokyo', '2025-03-01T15:00:00Z')),
    expect: 'FALSE',
  },
  {
    name: 'source without zone: read in the condition timeZoneId (Tokyo: not 02-28)',
    when: pc('PURCHASED', { sourceId: 's-nozone', timeZoneId: 'Asia/Tokyo', period: range('2025-02-28', '2025-02-28') }),
    contact: orders(order('s-nozone', '2025-02-28T23:30:00Z')),
    expect: 'FALSE',
  },
  {
    name: 'source without zone and no timeZoneId: UTC (02-28)',
    when: pc('PURCHASED', { sourceId: 's-nozone', period: range('2025-02-28', '2025-02-28') }),
    contact: orders(order('s-nozone', '2025-02-28T23:30:00Z')),
    expect: 'TRUE',
  },
  {
    name: 'source zone wins over timeZoneId',
    when: pc('PURCHASED', { sourceId: 's-tokyo', timeZoneId: 'UTC', period: range('2025-03-01', '2025-03-01') }),
    contact: orders(order('s-tokyo', '2025-02-28T23:30:00Z')),
    expect: 'TRUE',
  },
  {
    name: 'New York on the DST day: 04:59 UTC is still the day before',
    when: pc('PURCHASED', { sourceId: 's-ny', period: range('2025-03-09', '2025-03-09') }),
    contact: orders(order('s-ny', '2025-03-09T04:59:59Z')),
    expect: 'UNKNOWN',
  },
  {
    name: 'New York on the DST day: 05:00 UTC is local midnight',
    when: pc('PURCHASED', { sourceId: 's-ny', period: range('2025-03-09', '2025-03-09') }),
    contact: orders(order('s-ny', '2025-03-09T05:00:00Z')),
    expect: 'TRUE',
  },
  {
    name: 'LAST_DAYS reads "today" in the source zone (Tokyo is already 03-10 21:00; 7 days = 03-04..03-10)',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(7) }),
    contact: orders(order('s-tokyo', '2025-03-03T15:00:00Z')), // 03-04 00:00 JST
    expect: 'TRUE',
  },
  {
    name: 'LAST_DAYS lower edge: one millisecond earlier is out',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(7) }),
    contact: orders(order('s-tokyo', '2025-03-03T14:59:59.999Z')),
    expect: 'FALSE',
  },
  // NOT_PURCHASED
  { name: 'NOT_PURCHASED with an order', when: pc('NOT_PURCHASED', { sourceId: 's-ny', period: last(30) }), contact: orders(order('s-ny', daysAgo(2))), expect: 'FALSE' },
  { name: 'NOT_PURCHASED none, complete', when: pc('NOT_PURCHASED', { sourceId: 's-tokyo', period: last(30) }), contact: orders(), expect: 'TRUE' },
  { name: 'NOT_PURCHASED none, open baseline', when: pc('NOT_PURCHASED', { sourceId: 's-ny', period: last(30) }), contact: orders(), expect: 'UNKNOWN' },
  // counts
  { name: 'COUNT_AT_LEAST 2 with 2', when: pc('PURCHASE_COUNT_AT_LEAST', { sourceId: 's-ny', period: last(30), count: 2 }), contact: orders(order('s-ny', daysAgo(2)), order('s-ny', daysAgo(3))), expect: 'TRUE' },
  { name: 'COUNT_AT_LEAST 2 with 1, complete', when: pc('PURCHASE_COUNT_AT_LEAST', { sourceId: 's-tokyo', period: last(30), count: 2 }), contact: orders(order('s-tokyo', daysAgo(2)), order('s-tokyo', daysAgo(40))), expect: 'FALSE' },
  { name: 'COUNT_AT_LEAST 2 with 1, open', when: pc('PURCHASE_COUNT_AT_LEAST', { sourceId: 's-ny', period: last(30), count: 2 }), contact: orders(order('s-ny', daysAgo(2))), expect: 'UNKNOWN' },
  { name: 'COUNT_AT_LEAST 3 across two zones', when: pc('PURCHASE_COUNT_AT_LEAST', { period: last(30), count: 3 }), contact: orders(order('s-ny', daysAgo(2)), order('s-tokyo', daysAgo(3)), order('s-nozone', daysAgo(4))), expect: 'TRUE' },
  { name: 'COUNT_AT_MOST 1 with 2: FALSE even with an open baseline', when: pc('PURCHASE_COUNT_AT_MOST', { sourceId: 's-ny', period: last(30), count: 1 }), contact: orders(order('s-ny', daysAgo(2)), order('s-ny', daysAgo(3))), expect: 'FALSE' },
  { name: 'COUNT_AT_MOST 1 with 1, complete', when: pc('PURCHASE_COUNT_AT_MOST', { sourceId: 's-tokyo', period: last(30), count: 1 }), contact: orders(order('s-tokyo', daysAgo(2))), expect: 'TRUE' },
  { name: 'COUNT_AT_MOST 1 with 1, open', when: pc('PURCHASE_COUNT_AT_MOST', { sourceId: 's-ny', period: last(30), count: 1 }), contact: orders(order('s-ny', daysAgo(2))), expect: 'UNKNOWN' },
  { name: 'COUNT_EQUALS 1 with 1, complete', when: pc('PURCHASE_COUNT_EQUALS', { sourceId: 's-tokyo', period: last(30), count: 1 }), contact: orders(order('s-tokyo', daysAgo(2))), expect: 'TRUE' },
  { name: 'COUNT_EQUALS 1 with 2', when: pc('PURCHASE_COUNT_EQUALS', { sourceId: 's-ny', period: last(30), count: 1 }), contact: orders(order('s-ny', daysAgo(2)), order('s-ny', daysAgo(3))), expect: 'FALSE' },
  { name: 'COUNT_EQUALS 1 with 0, complete', when: pc('PURCHASE_COUNT_EQUALS', { sourceId: 's-tokyo', period: last(30), count: 1 }), contact: orders(), expect: 'FALSE' },
  { name: 'COUNT_EQUALS 1 with 1, open', when: pc('PURCHASE_COUNT_EQUALS', { sourceId: 's-ny', period: last(30), count: 1 }), contact: orders(order('s-ny', daysAgo(2))), expect: 'UNKNOWN' },
  { name: 'COUNT_EQUALS 0 with 0, complete', when: pc('PURCHASE_COUNT_EQUALS', { sourceId: 's-tokyo', period: last(30), count: 0 }), contact: orders(), expect: 'TRUE' },
  // product scopes
  {
    name: 'PRODUCTS scope hit',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(30), scopeKind: 'PRODUCTS', products: [{ productId: 'p2' }, { productId: '$weird' }] }),
    contact: orders(order('s-tokyo', daysAgo(2), { items: [{ productId: 'p9' }, { productId: '$weird' }] })),
    expect: 'TRUE',
  },
  {
    name: 'PRODUCTS scope miss',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(30), scopeKind: 'PRODUCTS', products: [{ productId: 'p2' }] }),
    contact: orders(order('s-tokyo', daysAgo(2), { items: [{ productId: 'p1' }] })),
    expect: 'FALSE',
  },
  {
    name: 'VARIANTS scope needs the pair on one item',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(30), scopeKind: 'VARIANTS', products: [{ productId: 'p1', variantId: 'v2' }] }),
    contact: orders(order('s-tokyo', daysAgo(2), { items: [{ productId: 'p1', variantId: 'v1' }, { productId: 'p2', variantId: 'v2' }] })),
    expect: 'FALSE',
  },
  {
    name: 'VARIANTS scope hit',
    when: pc('PURCHASED', { sourceId: 's-tokyo', period: last(30), scopeKind: 'VARIANTS', products: [{ productId: 'p1', variantId: 'v2' }] }),
    contact: orders(order('s-tokyo', daysAgo(2), { items: [{ productId: 'p1', variantId: 'v2' }] })),
    expect: 'TRUE',
  },
  {
    name: 'GROUP scope hit',
    when: pc('PURCHASED', { sourceId: 's-ny', period: last(30), scopeKind: 'GROUP', groupId: 'shoes' }),
    contact: orders(order('s-ny', daysAgo(2), { items: [{ productId: 'p1', groupId: 'shoes' }] })),
    expect: 'TRUE',
  },
  {
    name: 'GROUP scope miss, open baseline',
    when: pc('PURCHASED', { sourceId: 's-ny', period: last(30), scopeKind: 'GROUP', groupId: 'shoes' }),
    contact: orders(order('s-ny', daysAgo(2), { items: [{ productId: 'p1', groupId: 'hats' }] })),
    expect: 'UNKNOWN',
  },
  {
    name: 'COUNT_AT_LEAST 2 in a product scope counts matching orders only',
    when: pc('PURCHASE_COUNT_AT_LEAST', { sourceId: 's-tokyo', period: last(30), count: 2, scopeKind: 'PRODUCTS', products: [{ productId: 'p2' }] }),
    contact: orders(order('s-tokyo', daysAgo(2), { items: [{ productId: 'p2' }] }), order('s-tokyo', daysAgo(3), { items: [{ productId: 'p1' }] })),
    expect: 'FALSE',
  },
  // first / last purchase
  {
    name: 'FIRST_PURCHASE_IN_PERIOD: history before the period is never proven, so UNKNOWN',
    when: pc('FIRST_PURCHASE_IN_PERIOD', { sourceId: 's-tokyo', period: last(30) }),
    contact: orders(order('s-tokyo', daysAgo(5))),
    expect: 'UNKNOWN',
  },
  {
    name: 'FIRST_PURCHASE_IN_PERIOD: an earlier order proves FALSE',
    when: pc('FIRST_PURCHASE_IN_PERIOD', { sourceId: 's-ny', period: last(30) }),
    contact: orders(order('s-ny', daysAgo(5)), order('s-ny', daysAgo(60))),
    expect: 'FALSE',
  },
  { name: 'FIRST_PURCHASE_IN_PERIOD: none in the period, complete', when: pc('FIRST_PURCHASE_IN_PERIOD', { sourceId: 's-tokyo', period: last(30) }), contact: orders(), expect: 'FALSE' },
  {
    name: 'LAST_PURCHASE_IN_PERIOD: in the period, nothing after, complete',
    when: pc('LAST_PURCHASE_IN_PERIOD', { sourceId: 's-tokyo', period: range('2025-02-01', '2025-02-28') }),
    contact: orders(order('s-tokyo', '2025-02-10T00:00:00Z')),
    expect: 'TRUE',
  },
  {
    name: 'LAST_PURCHASE_IN_PERIOD: a later order',
    when: pc('LAST_PURCHASE_IN_PERIOD', { sourceId: 's-ny', period: range('2025-02-01', '2025-02-28') }),
    contact: orders(order('s-ny', '2025-02-10T00:00:00Z'), order('s-ny', '2025-03-05T00:00:00Z')),
    expect: 'FALSE',
  },
  {
    name: 'LAST_PURCHASE_IN_PERIOD: later orders may be missing (open)',
    when: pc('LAST_PURCHASE_IN_PERIOD', { sourceId: 's-ny', period: range('2025-02-01', '2025-02-28') }),
    contact: orders(order('s-ny', '2025-02-10T00:00:00Z')),
    expect: 'UNKNOWN',
  },
  {
    name: 'LAST_PURCHASE_IN_PERIOD: LAST_DAYS reaches now, so nothing can come after (open is fine)',
    when: pc('LAST_PURCHASE_IN_PERIOD', { sourceId: 's-ny', period: last(30) }),
    contact: orders(order('s-ny', daysAgo(3))),
    expect: 'TRUE',
  },
  {
    name: 'LAST_PURCHASE_BEFORE_PERIOD: only before, complete since',
    when: pc('LAST_PURCHASE_BEFORE_PERIOD', { sourceId: 's-tokyo', period: last(30) }),
    contact: orders(order('s-tokyo', daysAgo(60))),
    expect: 'TRUE',
  },
  {
    name: 'LAST_PURCHASE_BEFORE_PERIOD: also one since',
    when: pc('LAST_PURCHASE_BEFORE_PERIOD', { sourceId: 's-ny', period: last(30) }),
    contact: orders(order('s-ny', daysAgo(60)), order('s-ny', daysAgo(5))),
    expect: 'FALSE',
  },
  { name: 'LAST_PURCHASE_BEFORE_PERIOD: none at all', when: pc('LAST_PURCHASE_BEFORE_PERIOD', { sourceId: 's-tokyo', period: last(30) }), contact: orders(), expect: 'UNKNOWN' },
  // value and coupon
  { name: 'ORDER_VALUE_AT_LEAST exactly', when: pc('ORDER_VALUE_AT_LEAST', { sourceId: 's-tokyo', period: last(30), currency: 'EUR', amount: 50 }), contact: orders(order('s-tokyo', daysAgo(1), { amount: 50 })), expect: 'TRUE' },
  { name: 'ORDER_VALUE_AT_LEAST below, complete', when: pc('ORDER_VALUE_AT_LEAST', { sourceId: 's-tokyo', period: last(30), currency: 'EUR', amount: 50 }), contact: orders(order('s-tokyo', daysAgo(1), { amount: 49.99 })), expect: 'FALSE' },
  {
    name: 'ORDER_VALUE_AT_LEAST other currency does not count',
    when: pc('ORDER_VALUE_AT_LEAST', { sourceId: 's-tokyo', period: last(30), currency: 'EUR', amount: 50 }),
    contact: orders(order('s-tokyo', daysAgo(1), { amount: 500, currency: 'usd' })),
    expect: 'FALSE',
  },
  { name: 'ORDER_VALUE_AT_LEAST below, open', when: pc('ORDER_VALUE_AT_LEAST', { sourceId: 's-ny', period: last(30), currency: 'EUR', amount: 50 }), contact: orders(order('s-ny', daysAgo(1), { amount: 5 })), expect: 'UNKNOWN' },
  { name: 'ORDER_VALUE_AT_MOST exactly', when: pc('ORDER_VALUE_AT_MOST', { sourceId: 's-tokyo', period: last(30), currency: 'EUR', amount: 20 }), contact: orders(order('s-tokyo', daysAgo(1), { amount: 20 })), expect: 'TRUE' },
  { name: 'ORDER_VALUE_AT_MOST above, complete', when: pc('ORDER_VALUE_AT_MOST', { sourceId: 's-tokyo', period: last(30), currency: 'EUR', amount: 20 }), contact: orders(order('s-tokyo', daysAgo(1), { amount: 30 })), expect: 'FALSE' },
  { name: 'ORDER_VALUE_AT_MOST none, open', when: pc('ORDER_VALUE_AT_MOST', { sourceId: 's-ny', period: last(30), currency: 'EUR', amount: 20 }), contact: orders(), expect: 'UNKNOWN' },
  { name: 'COUPON_USED ignores case and blanks', when: pc('COUPON_USED', { sourceId: 's-tokyo', period: last(30), couponCode: 'SAVE10' }), contact: orders(order('s-tokyo', daysAgo(1), { couponCode: ' save10 ' })), expect: 'TRUE' },
  { name: 'COUPON_USED other coupon, complete', when: pc('COUPON_USED', { sourceId: 's-tokyo', period: last(30), couponCode: 'SAVE10' }), contact: orders(order('s-tokyo', daysAgo(1), { couponCode: 'VIP' })), expect: 'FALSE' },
  { name: 'COUPON_USED none, open', when: pc('COUPON_USED', { sourceId: 's-ny', period: last(30), couponCode: 'SAVE10' }), contact: orders(order('s-ny', daysAgo(1))), expect: 'UNKNOWN' },
  { name: 'PURCHASED with no sources at all: nothing can be missing', when: pc('PURCHASED', { period: last(30) }), context: { purchaseSources: [] }, contact: orders(), expect: 'FALSE' },
];

function pc(operator: Parameters<typeof cond>[1], p: Parameters<typeof purchase>[0]): SegmentCondition {
  return cond('PURCHASES', operator, purchase(p));
}
function last(days: number) {
  return { kind: 'LAST_DAYS' as const, days };
}
function range(from: string, to: string) {
  return { kind: 'DATE_RANGE' as const, from, to };
}
function orders(...list: Contact['orders']): Partial<Contact> {
  return { orders: list };
}

describe('segment semantics, row by row (reference evaluator and compiled filters on the embedded store)', () => {
  let db: ContactStore;
  const rowContacts = ROWS.map((row, i) => contact(`row-${i}`, `acc-row-${i}`, row.contact));

  beforeAll(async () => {
    db = await openContactStore();
    // Each row's contact in its own account, and a twin of it in an account no filter names.
    await db.contacts.insertMany([...rowContacts, ...rowContacts.map((c) => ({ ...c, _id: `twin-${c._id}`, accountId: 'acc-twin' }))]);
  });
  afterAll(() => db.close());

  it.each(ROWS.map((row, i) => [row.name, i] as const))('%s', async (_name, i) => {
    const row = ROWS[i];
    const expression = 'conditionGroups' in row.when ? row.when : expr([row.when]);
    const context = { ...CONTEXT, ...row.context };
    const c = rowContacts[i];
    const result = await classify(db.contacts, expression, [c], context, c.accountId);
    expect(Object.fromEntries(result)).toEqual({ [c._id]: { evaluated: row.expect, compiled: row.expect } });
  });

  it('covers every operator of the specification with TRUE, FALSE and UNKNOWN rows where the operator can yield them', () => {
    const seen = new Map<string, Set<Truth>>();
    for (const row of ROWS) {
      const conditions = 'conditionGroups' in row.when ? [] : [row.when];
      for (const c of conditions) seen.set(c.operator, (seen.get(c.operator) ?? new Set()).add(row.expect));
    }
    const neverUnknown = new Set(['IS_EMPTY', 'IS_NOT_EMPTY', 'OPTION_CONTAINS_ANY', 'OPTION_CONTAINS_NONE', 'TOPIC_OPTED_OUT', 'RESPONDED_WITHIN_DAYS']);
    const neverTrue = new Set(['FIRST_PURCHASE_IN_PERIOD']); // see purchase-scope.ts
    const missing: string[] = [];
    for (const op of SEGMENT_OPERATORS) {
      const want: Truth[] = ['TRUE', 'FALSE', 'UNKNOWN'].filter((t) => !(t === 'UNKNOWN' && neverUnknown.has(op)) && !(t === 'TRUE' && neverTrue.has(op))) as Truth[];
      for (const t of want) if (!seen.get(op)?.has(t)) missing.push(`${op}:${t}`);
    }
    expect(missing).toEqual([]);
  });
});
