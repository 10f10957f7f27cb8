import { ERROR_IDS_KEYWORD } from '../keywords';
import { ok, ref, schemaRef, uuid, type Json } from '../common';
import { body, idempotencyKey, object, responses } from '../operations';
import { SEGMENT_MEMBERS, SEGMENT_MEMBERS_503 } from './members';
import {
  BUILT_IN_FIELDS,
  count,
  LIMITS,
  nullable,
  PURCHASE_PERIOD_KINDS,
  PURCHASE_SCOPE_KINDS,
  SEGMENT_OPERAND_KINDS,
  SEGMENT_OPERATORS,
  SEGMENT_SUBJECT_TYPES,
  SEGMENT_VALIDATION_ERROR_IDS,
  segmentResponses,
} from './shared';

/** Saved segments: the expression, counts, previews and members. */

const segmentPath = [ref('parameters', 'SegmentId')];
const WRITE_400 = ['invalid_uuid', ...SEGMENT_VALIDATION_ERROR_IDS];
const SEMANTICS = `Semantics (three-valued): each condition is TRUE, FALSE or UNKNOWN per contact; conditions of a group are combined with AND, groups with OR (FALSE beats UNKNOWN in AND, TRUE beats UNKNOWN in OR). A contact matches only when the expression is TRUE. A comparison on a field without a value is UNKNOWN (\`IS_EMPTY\` is TRUE, \`IS_NOT_EMPTY\` FALSE there); \`*_NOT_EQUALS\`, \`OPTION_IS_NONE_OF\` and \`OPTION_CONTAINS_NONE\` are UNKNOWN, not TRUE, on a missing value. \`CONTAINED_IN\` / \`NOT_CONTAINED_IN\` take the referenced segment's three-valued result. Response operators (\`RESPONDED_WITHIN_DAYS\`, \`NO_RESPONSE_FOR_DAYS\`, \`DELIVERED_WITHOUT_RESPONSE_AT_LEAST\`; a \`FIELD\` condition on the built-in \`EMAIL\` field, days counted as rolling 24-hour days before now) read the delivery and engagement facts (email delivered, opened, clicked): without any delivery the last two are UNKNOWN, while \`RESPONDED_WITHIN_DAYS\` is FALSE (no recorded response is a proven "no"). \`PURCHASES\`: an order proves TRUE; absence proves FALSE only when every source in scope has a complete baseline and captured the whole period, otherwise UNKNOWN. Orders before a source's capture start are never known, so "no order before the period" is never proven: \`FIRST_PURCHASE_IN_PERIOD\` is FALSE or UNKNOWN, never TRUE. Results reflect every write acknowledged before the request was received.`;
const PREVIEW = `\`matchingCount\`: contacts for which the expression is TRUE; \`unknownCount\`: contacts for which it is UNKNOWN (neither counted as matching nor as not matching). \`reachableCount\`: matching contacts with status \`ACTIVE\` (with \`topicId\`: also subscribed to that topic and not opted out of it). \`contacts\`: the first 25 matching contacts, ordered by \`registeredAt\`, then id. \`captureScopes\`: the purchase sources in scope of the expression's PURCHASES conditions (all of the account's for a condition without \`sourceId\`), with their capture window, so a reader can tell which orders the result rests on.`;
const EXPRESSION_RULES = `Expression shape: \`fieldRef\` is set only for \`FIELD\` conditions (\`{type: "BUILT_IN", builtInField}\` or \`{type: "CUSTOM", fieldId}\`) and null (or absent) for \`TAGS\`, \`TOPICS\`, \`SEGMENT\` and \`PURCHASES\`. Operators without a value take \`{kind: "NONE"}\`; \`TAGS\` / \`TOPICS\` take an \`OPTIONS\` operand of tag / topic ids; \`CONTAINED_IN\` / \`NOT_CONTAINED_IN\` a \`SEGMENT\` operand; response operators a \`NUMBER\` operand (days). At most ${LIMITS.groups} groups of at most ${LIMITS.conditionsPerGroup} conditions, at most ${LIMITS.optionIds} ids per operand; empty groups are refused (\`segment_expression_empty\`). The legacy member \`filterGroups\` is refused with \`400 segment_legacy_filter_groups\`. Meaning errors (an operator that does not fit the subject or field type, an operand of the wrong kind, ids that are not the account's, reference cycles) answer the \`segment_*\` errorIds below; the first problem's errorId is the response's, \`details\` lists all. A \`SEGMENT\` operand naming a segment the account does not have answers \`404 segment_not_found\`.`;

export const segmentPaths = {
  '/segments': {
    get: {
      tags: ['Segments'],
      operationId: 'listSegments',
      summary: 'List segments',
      description: 'Every segment of the account, oldest first (then by id).',
      responses: segmentResponses('get', { '200': ok('The segments.', schemaRef('SegmentList')) }, {}, false),
    },
    post: {
      tags: ['Segments'],
      operationId: 'createSegment',
      summary: 'Create a segment',
      description: `\`name\`: 1-${LIMITS.name} characters after trimming, unique per account (\`409 segment_name_taken\`). Archived custom fields cannot be used in new conditions (\`segment_field_archived\`).\n\n${EXPRESSION_RULES}\n\n${SEMANTICS}`,
      parameters: [idempotencyKey],
      requestBody: body('SegmentRequest'),
      responses: segmentResponses(
        'post',
        { '201': ok('Created.', schemaRef('Segment'), { Location: ref('headers', 'Location'), 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) },
        { 400: WRITE_400, 404: ['segment_not_found'], 409: ['segment_name_taken'] },
        true,
      ),
    },
  },
  '/segments/preview': {
    post: {
      tags: ['Segments'],
      operationId: 'previewSegmentExpression',
      summary: 'Preview an unsaved expression',
      description: `Evaluates \`expression\` without saving it; it is validated as on create. ${PREVIEW}\n\n${EXPRESSION_RULES}\n\n${SEMANTICS}`,
      parameters: [idempotencyKey],
      requestBody: body('SegmentPreviewRequest'),
      responses: segmentResponses(
        'post',
        { '200': ok('The preview.', schemaRef('SegmentPreview'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) },
        { 400: WRITE_400, 404: ['segment_not_found', 'topic_not_found'] },
        true,
      ),
    },
  },
  '/segments/{segmentId}': {
    get: {
      tags: ['Segments'],
      operationId: 'getSegment',
      summary: 'Get a segment',
      description: 'A segment of another account is unknown here (`404 segment_not_found`).',
      parameters: segmentPath,
      responses: segmentResponses('get', { '200': ok('The segment.', schemaRef('Segment')) }, { 400: ['invalid_uuid'], 404: ['segment_not_found'] }, false),
    },
    put: {
      tags: ['Segments'],
      operationId: 'updateSegment',
      summary: 'Replace a segment\'s name and expression',
      description: `Validated as on create; a reference that would make a cycle answers \`400 segment_cycle\`. Conditions on an archived field that the stored version already used stay allowed.\n\n${EXPRESSION_RULES}`,
      parameters: segmentPath,
      requestBody: body('SegmentRequest'),
      responses: segmentResponses(
        'put',
        { '200': ok('The updated segment.', schemaRef('Segment')) },
        { 400: WRITE_400, 404: ['segment_not_found'], 409: ['segment_name_taken'] },
        true,
      ),
    },
    delete: {
      tags: ['Segments'],
      operationId: 'deleteSegment',
      summary: 'Delete a segment',
      description:
        'Refused with `409 segment_in_use` while another segment references it, an RSS newsletter sends to it or an automation\'s `IF_IN_SEGMENT` step checks it (`details` names them: `segments[<id>]`, `rssNewsletters.<id>`, `automations.<id>`); change or delete them first. When the rss or messaging service does not answer, `503 service_unavailable`: the delete cannot be proven safe and nothing is deleted.',
      parameters: segmentPath,
      responses: segmentResponses('delete', { '204': ok('Deleted.', undefined) }, { 400: ['invalid_uuid'], 404: ['segment_not_found'], 409: ['segment_in_use'] }, false),
    },
  },
  '/segments/{segmentId}/count': {
    get: {
      tags: ['Segments'],
      operationId: 'countSegment',
      summary: 'Count the matching subscribers',
      description: `\`subscriberCount\`: contacts for which the segment is TRUE (UNKNOWN does not count). ${SEMANTICS}`,
      parameters: segmentPath,
      responses: segmentResponses('get', { '200': ok('The count.', schemaRef('SegmentCount')) }, { 400: ['invalid_uuid'], 404: ['segment_not_found'] }, true),
    },
  },
  '/segments/{segmentId}/subscribers': {
    get: {
      tags: ['Segments'],
      operationId: 'listSegmentSubscribers',
      summary: 'List the members of a segment (paginated)',
      description: `The same answer as \`GET /subscribers?segmentId={segmentId}\` with only \`pageNumber\` and \`pageSize\` (a \`PaginatedSubscribersDto\` of \`SubscriberOverview\`s; \`statusCounts\` over all members).\n\n${SEGMENT_MEMBERS}\n\n${SEMANTICS}`,
      parameters: [...segmentPath, ref('parameters', 'PageNumber'), ref('parameters', 'PageSize')],
      responses: {
        ...responses('get', { '200': ok('One page of the segment\'s members.', schemaRef('PaginatedSubscribersDto')) }, { 400: ['invalid_uuid'], 404: ['segment_not_found'] }),
        '503': SEGMENT_MEMBERS_503,
      },
    },
  },
  '/segments/{segmentId}/preview': {
    get: {
      tags: ['Segments'],
      operationId: 'previewSegment',
      summary: 'Preview a saved segment',
      description: `${PREVIEW}\n\n${SEMANTICS}`,
      parameters: [
        ...segmentPath,
        { name: 'topicId', in: 'query', required: false, schema: uuid, description: 'Count as reachable only contacts subscribed to this topic (and not opted out of it). It must be an active topic of the account: an unknown, inactive or other account\'s topic answers `404 topic_not_found`.' },
      ],
      responses: segmentResponses('get', { '200': ok('The preview.', schemaRef('SegmentPreview')) }, { 400: ['invalid_uuid'], 404: ['segment_not_found', 'topic_not_found'] }, true),
    },
  },
};

export const segmentParameters = {
  SegmentId: { name: 'segmentId', in: 'path', required: true, schema: uuid },
};

const orNull = (schema: Json) => ({ anyOf: [schema, { type: 'null' }] });
const localDate = { type: ['string', 'null'], format: 'date', description: 'LocalDate `YYYY-MM-DD`.' };

const expressionSchema = {
  type: 'object',
  required: ['conditionGroups'],
  properties: {
    conditionGroups: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.groups,
      items: schemaRef('SegmentConditionGroup'),
      description: 'Combined with OR.',
      [ERROR_IDS_KEYWORD]: { minItems: 'segment_expression_empty', maxItems: 'segment_too_many_groups' },
    },
    filterGroups: { description: 'Legacy member, not part of the contract: refused with `400 segment_legacy_filter_groups`. Use `conditionGroups`.', deprecated: true },
  },
  additionalProperties: false,
  not: { type: 'object', required: ['filterGroups'], properties: { filterGroups: true } },
  [ERROR_IDS_KEYWORD]: { not: 'segment_legacy_filter_groups' },
};

/**
 * The operand, one variant per kind (discriminated by `kind`, with a `mapping` so generated clients
 * get a tagged union). A variant requires its own member; the members of other kinds may only be
 * absent or null.
 */
function segmentOperandSchemas() {
  const members: Record<string, [string, Json] | undefined> = {
    NONE: undefined,
    TEXT: ['text', { type: 'string' }],
    NUMBER: ['number', { type: 'number' }],
    DATE: ['date', { type: 'string', format: 'date', description: 'LocalDate `YYYY-MM-DD`.' }],
    OPTIONS: ['optionIds', { type: 'array', items: uuid, maxItems: LIMITS.optionIds, [ERROR_IDS_KEYWORD]: { maxItems: 'segment_too_many_option_ids' } }],
    SEGMENT: ['segmentId', uuid],
    PURCHASE: ['purchase', schemaRef('PurchaseSegmentCondition')],
  };
  const name = (kind: string) => `Segment${kind[0]}${kind.slice(1).toLowerCase()}Operand`;
  const others = (kind: string) =>
    Object.fromEntries(Object.entries(members).filter(([k, m]) => k !== kind && m).map(([, m]) => [m![0], { type: 'null' }]));
  const variants = Object.fromEntries(SEGMENT_OPERAND_KINDS.map((kind) => {
    const own = members[kind];
    return [name(kind), object(own ? ['kind', own[0]] : ['kind'], { kind: { const: kind }, ...(own ? { [own[0]]: own[1] } : {}), ...others(kind) }, {
      description: own ? `${kind}: the \`${own[0]}\` member is set.` : `${kind}: no value (e.g. IS_EMPTY).`,
    })];
  }));
  return {
    ...variants,
    SegmentOperand: {
      type: 'object',
      required: ['kind'],
      discriminator: { propertyName: 'kind', mapping: Object.fromEntries(SEGMENT_OPERAND_KINDS.map((k) => [k, `#/components/schemas/${name(k)}`])) },
      oneOf: SEGMENT_OPERAND_KINDS.map((k) => schemaRef(name(k))),
      description: 'Only the member of its `kind` is set (`NONE`: none); the others are absent or null. A missing member, or one of another kind, answers `400 validation_failed` naming it.',
    },
  };
}

export const segmentSchemas = {
  SegmentSubjectType: { type: 'string', enum: [...SEGMENT_SUBJECT_TYPES] },
  SegmentOperator: { type: 'string', enum: [...SEGMENT_OPERATORS] },
  SegmentFieldRef: {
    type: 'object',
    required: ['type'],
    properties: {
      type: { type: 'string', enum: ['BUILT_IN', 'CUSTOM'] },
      builtInField: nullable('string', { enum: [...BUILT_IN_FIELDS, null] }),
      fieldId: orNull(uuid),
    },
    additionalProperties: false,
    description: '`{type: "BUILT_IN", builtInField}` or `{type: "CUSTOM", fieldId}`.',
  },
  PurchasePeriod: object(['kind'], {
    kind: { type: 'string', enum: PURCHASE_PERIOD_KINDS },
    days: nullable('integer', { format: 'int32' }),
    from: localDate,
    to: { ...localDate, description: 'LocalDate, inclusive.' },
  }, { description: 'Dates are read in the source\'s zone, else in `timeZoneId`.' }),
  PurchaseProductRef: object(['productId'], { productId: { type: 'string', minLength: 1 }, variantId: nullable('string') }),
  PurchaseSegmentCondition: object(['scopeKind'], {
    sourceId: { ...orNull(uuid), description: 'null: every purchase source of the account.' },
    scopeKind: { type: 'string', enum: PURCHASE_SCOPE_KINDS },
    products: nullable('array', { items: schemaRef('PurchaseProductRef') }),
    groupId: nullable('string'),
    period: orNull(schemaRef('PurchasePeriod')),
    count: nullable('integer', { format: 'int32' }),
    currency: nullable('string'),
    amount: nullable('number'),
    couponCode: nullable('string'),
    timeZoneId: nullable('string'),
  }),
  ...segmentOperandSchemas(),
  SegmentCondition: object(['subjectType', 'operator', 'operand'], {
    subjectType: schemaRef('SegmentSubjectType'),
    fieldRef: { ...orNull(schemaRef('SegmentFieldRef')), description: 'FIELD conditions only; null otherwise.' },
    operator: schemaRef('SegmentOperator'),
    operand: schemaRef('SegmentOperand'),
  }),
  SegmentConditionGroup: object(['conditions'], {
    conditions: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.conditionsPerGroup,
      items: schemaRef('SegmentCondition'),
      description: 'Combined with AND.',
      [ERROR_IDS_KEYWORD]: { minItems: 'segment_expression_empty', maxItems: 'segment_too_many_conditions' },
    },
  }),
  SegmentExpression: expressionSchema,
  SegmentRequest: object(['name', 'expression'], {
    name: { type: 'string', minLength: 1, maxLength: LIMITS.name },
    expression: schemaRef('SegmentExpression'),
  }),
  SegmentPreviewRequest: object(['expression'], {
    expression: schemaRef('SegmentExpression'),
    topicId: { ...uuid, description: 'Count as reachable only contacts subscribed to this topic (and not opted out of it). It must be an active topic of the account: an unknown, inactive or other account\'s topic answers `404 topic_not_found`.' },
  }),
  Segment: object(['id', 'name', 'expression', 'createdAt', 'updatedAt'], {
    id: uuid,
    name: { type: 'string' },
    expression: schemaRef('SegmentExpression'),
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  }),
  SegmentList: object(['items'], { items: { type: 'array', items: schemaRef('Segment') } }),
  SegmentCount: object(['subscriberCount'], { subscriberCount: count }),
  SegmentPreviewContactDto: object(['id', 'email', 'firstName', 'subscriberStatus'], {
    id: uuid,
    email: { type: 'string' },
    firstName: nullable('string'),
    subscriberStatus: { type: 'string' },
  }),
  PurchaseCaptureScopeDto: object(['sourceId', 'sourceName', 'timeZone', 'capturedOrdersFromUtc', 'capturedOrdersToUtc', 'baselineOpen', 'attributionStartedAtUtc'], {
    sourceId: uuid,
    sourceName: { type: 'string' },
    timeZone: nullable('string'),
    capturedOrdersFromUtc: nullable('string', { format: 'date-time' }),
    capturedOrdersToUtc: nullable('string', { format: 'date-time' }),
    baselineOpen: { type: 'boolean' },
    attributionStartedAtUtc: nullable('string', { format: 'date-time' }),
  }),
  SegmentPreview: object(['matchingCount', 'unknownCount', 'reachableCount', 'contacts', 'captureScopes'], {
    matchingCount: count,
    unknownCount: count,
    reachableCount: count,
    contacts: { type: 'array', maxItems: 25, items: schemaRef('SegmentPreviewContactDto') },
    captureScopes: { type: 'array', items: schemaRef('PurchaseCaptureScopeDto'), description: 'The purchase sources in scope of the expression\'s PURCHASES conditions; empty without them.' },
  }),
};
