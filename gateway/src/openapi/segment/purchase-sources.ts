import { ok, ref, schemaRef, uuid } from '../common';
import { body, idempotencyKey, object } from '../operations';
import { nullable, PURCHASE_LIMITS, segmentResponses } from './shared';

/** Purchase sources (shops) and their orders, which PURCHASES conditions of segments evaluate. */

const sourcePath = [ref('parameters', 'PurchaseSourceId')];
const SOURCE_404 = 'A purchase source of another account is unknown here (`404 purchase_source_not_found`).';

export const purchaseSourcePaths = {
  '/purchase-sources': {
    get: {
      tags: ['Purchases'],
      operationId: 'listPurchaseSources',
      summary: 'List purchase sources',
      description: 'Every purchase source of the account, oldest first (then by id).',
      responses: segmentResponses('get', { '200': ok('The purchase sources.', schemaRef('PurchaseSourceList')) }, {}, false),
    },
    post: {
      tags: ['Purchases'],
      operationId: 'createPurchaseSource',
      summary: 'Create a purchase source',
      description: `\`name\`: 1-${PURCHASE_LIMITS.name} characters after trimming, unique per account (\`409 purchase_source_name_taken\`). \`timeZone\`: an IANA time zone id such as \`Europe/Berlin\` (\`400 purchase_source_invalid_time_zone\` otherwise); purchase periods of conditions on this source are read in it. A new source captures live from its creation: \`capturedOrdersFromUtc\` and \`attributionStartedAtUtc\` are the creation instant, \`capturedOrdersToUtc\` is null, \`baselineOpen\` is true until a complete baseline is set.`,
      parameters: [idempotencyKey],
      requestBody: body('PurchaseSourceRequest'),
      responses: segmentResponses(
        'post',
        { '201': ok('Created.', schemaRef('PurchaseSource'), { Location: ref('headers', 'Location'), 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) },
        { 400: ['purchase_source_invalid_time_zone'], 409: ['purchase_source_name_taken'] },
        false,
      ),
    },
  },
  '/purchase-sources/{sourceId}/orders': {
    post: {
      tags: ['Purchases'],
      operationId: 'ingestPurchaseOrders',
      summary: 'Ingest orders of a purchase source',
      description: `1-${PURCHASE_LIMITS.orders} orders per request. \`orderId\` is idempotent per source: an order whose id the source already has (or that repeats an earlier order of the same request) is not stored again and counts as a duplicate. \`accepted\`: orders stored; \`duplicates\`: orders skipped as already known. \`orderedAt\` is an ISO 8601 instant with offset; \`currency\` an ISO 4217 code; \`amount\` ≥ 0. Orders are attributed to the subscriber with the same email address (ignoring case), also when that subscriber is created later. Invalid orders refuse the whole request (\`400 validation_failed\`, \`details\` pathed \`orders[i].member\`). ${SOURCE_404}`,
      parameters: [...sourcePath, idempotencyKey],
      requestBody: body('IngestOrdersRequest'),
      responses: segmentResponses(
        'post',
        { '200': ok('The ingest result.', schemaRef('IngestOrdersResult'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) },
        { 400: ['invalid_uuid'], 404: ['purchase_source_not_found'] },
        false,
      ),
    },
  },
  '/purchase-sources/{sourceId}/baseline': {
    post: {
      tags: ['Purchases'],
      operationId: 'setPurchaseBaseline',
      summary: 'Set the capture baseline of a purchase source',
      description: `Declares that the source's orders are captured from \`capturedOrdersFromUtc\` on (historic orders imported back to that instant); it must not be after \`attributionStartedAtUtc\` (\`400 validation_failed\`). \`complete: true\` closes the baseline (\`baselineOpen\` false); \`false\` keeps it open. Answers the updated source. ${SOURCE_404}`,
      parameters: [...sourcePath, idempotencyKey],
      requestBody: body('PurchaseBaselineRequest'),
      responses: segmentResponses(
        'post',
        { '200': ok('The updated purchase source.', schemaRef('PurchaseSource'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) },
        { 400: ['invalid_uuid'], 404: ['purchase_source_not_found'] },
        false,
      ),
    },
  },
};

export const purchaseSourceParameters = {
  PurchaseSourceId: { name: 'sourceId', in: 'path', required: true, schema: uuid },
};

export const purchaseSourceSchemas = {
  PurchaseSourceRequest: object(['name', 'timeZone'], {
    name: { type: 'string', minLength: 1, maxLength: PURCHASE_LIMITS.name },
    timeZone: { type: 'string', minLength: 1, maxLength: PURCHASE_LIMITS.timeZone, description: 'IANA time zone id, e.g. `Europe/Berlin`.' },
  }),
  PurchaseSource: object(['id', 'name', 'timeZone', 'capturedOrdersFromUtc', 'capturedOrdersToUtc', 'baselineOpen', 'attributionStartedAtUtc'], {
    id: uuid,
    name: { type: 'string' },
    timeZone: { type: 'string' },
    capturedOrdersFromUtc: { type: 'string', format: 'date-time' },
    capturedOrdersToUtc: { ...nullable('string', { format: 'date-time' }), description: 'null while the source captures live.' },
    baselineOpen: { type: 'boolean' },
    attributionStartedAtUtc: { type: 'string', format: 'date-time' },
  }),
  PurchaseSourceList: object(['items'], { items: { type: 'array', items: schemaRef('PurchaseSource') } }),
  PurchaseOrderItem: object(['productId'], {
    productId: { type: 'string', minLength: 1, maxLength: PURCHASE_LIMITS.id },
    variantId: nullable('string', { minLength: 1, maxLength: PURCHASE_LIMITS.id }),
    groupId: nullable('string', { minLength: 1, maxLength: PURCHASE_LIMITS.id }),
  }),
  PurchaseOrder: object(['orderId', 'email', 'orderedAt', 'currency', 'amount', 'items'], {
    orderId: { type: 'string', minLength: 1, maxLength: PURCHASE_LIMITS.id, description: 'Idempotent per source.' },
    email: { type: 'string', minLength: 1, maxLength: PURCHASE_LIMITS.email },
    orderedAt: { type: 'string', format: 'date-time', description: 'ISO 8601 instant with offset.' },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code.' },
    amount: { type: 'number', minimum: 0 },
    couponCode: nullable('string', { maxLength: PURCHASE_LIMITS.id }),
    items: { type: 'array', minItems: 1, maxItems: PURCHASE_LIMITS.items, items: schemaRef('PurchaseOrderItem') },
  }),
  IngestOrdersRequest: object(['orders'], {
    orders: { type: 'array', minItems: 1, maxItems: PURCHASE_LIMITS.orders, items: schemaRef('PurchaseOrder'), description: `1-${PURCHASE_LIMITS.orders} orders.` },
  }),
  IngestOrdersResult: object(['accepted', 'duplicates'], {
    accepted: { type: 'integer', format: 'int32', minimum: 0 },
    duplicates: { type: 'integer', format: 'int32', minimum: 0 },
  }),
  PurchaseBaselineRequest: object(['capturedOrdersFromUtc', 'complete'], {
    capturedOrdersFromUtc: { type: 'string', format: 'date-time' },
    complete: { type: 'boolean' },
  }),
};
