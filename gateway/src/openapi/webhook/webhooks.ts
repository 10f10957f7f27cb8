import { instant, ok, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, posted, responses } from '../operations';
import { int32, int64 } from '../subscriber/shared';

/** Webhooks (webhook service, the API contract "Webhooks"). Rules: services/webhook/src/app/subscriptions.ts. */

export const WEBHOOK_TARGET_URL_MAX = 2048;
export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'RETRYING'] as const;

const subPath = [ref('parameters', 'WebhookSubscriptionId')];
const NOT_FOUND = 'A subscription of another account is unknown here (`404 webhook_subscription_not_found`).';

const RULES = `Rules of the body:
- \`targetUrl\` (at most ${WEBHOOK_TARGET_URL_MAX} characters) must be an absolute \`https\` URL without credentials whose host is not a loopback, private, link-local, unique-local, multicast or metadata address, neither literally nor as a name that resolves only to such addresses when saved: else \`400 webhook_target_not_allowed\` (a name that does not resolve yet is accepted). The operator may allow \`http\` (\`OUTBOUND_ALLOW_HTTP\`) and address ranges (\`OUTBOUND_ALLOWED_CIDRS\`). A host name is resolved at delivery time and the address actually connected to is checked again, so a name that resolves (or later re-resolves) to a refused address makes the attempts fail (DNS rebinding does not pass). The URL is stored and answered in its normalized form (\`https://Hooks.Example.com\` -> \`https://hooks.example.com/\`).
- \`event\`: \`*\` (every webhook event) or one name of GET /webhook-events; anything else is \`400 unknown_webhook_event\`.
- \`deliveryContentType\`: \`application/json\` or \`text/plain\` (the same bytes, sent with \`Content-Type: text/plain; charset=utf-8\`); omitted means \`application/json\`; an explicit \`null\` is invalid (\`400 validation_failed\`).`;

const DELIVERY = `Deliveries: \`POST targetUrl\` with body \`{id, type, createdAt, data}\` and the Standard Webhooks headers \`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\` (\`v1,<base64 HMAC-SHA256(secret, id.timestamp.body)>\`; during the 24 h after a rotation two signatures, separated by a space). A delivery succeeds on a 2xx answer within 15 s; redirects are not followed (a 3xx is a failure). Failed deliveries are retried with jitter after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 14 h, 20 h and 24 h (about 3 days); \`429\` and \`503\` answers honour \`Retry-After\`. \`410 Gone\` disables the subscription at once (\`disabledReason: TARGET_GONE\`); otherwise it is disabled only after 5 days in which every delivery failed (\`FAILING_FOR_5_DAYS\`). A disabled subscription queues nothing. At-least-once, no ordering promise.`;

const SECRET = 'The signing secret (`whsec_` + base64 of 32 random bytes) is answered on create, on GET of one subscription and by rotate-secret only; lists and PUT leave `secret` out.';

export const webhookPaths = {
  '/webhook-events': {
    get: {
      tags: ['Webhooks'],
      operationId: 'listWebhookEvents',
      summary: 'List webhook events',
      description: 'The event names a subscription may name besides `*`.',
      responses: responses('get', { '200': ok('The events.', schemaRef('WebhookEventList')) }, {}),
    },
  },
  '/webhook-subscriptions': {
    get: {
      tags: ['Webhooks'],
      operationId: 'listWebhookSubscriptions',
      summary: 'List webhook subscriptions',
      description: `Every subscription of the account, oldest first, without \`secret\`. ${SECRET}`,
      responses: responses('get', { '200': ok('The subscriptions.', schemaRef('WebhookSubscriptionList')) }, {}),
    },
    post: {
      tags: ['Webhooks'],
      operationId: 'createWebhookSubscription',
      summary: 'Create a webhook subscription',
      description: `New subscriptions are active and get a fresh secret, answered here. ${SECRET}\n\n${RULES}\n\n${DELIVERY}`,
      parameters: [idempotencyKey],
      requestBody: body('AccountWebhookSubscriptionRequestDto'),
      responses: responses('post', { '201': created('Created, with its secret.', 'WebhookSubscription') }, { 400: ['unknown_webhook_event', 'webhook_target_not_allowed'] }),
    },
  },
  '/webhook-subscriptions/{subscriptionId}': {
    get: {
      tags: ['Webhooks'],
      operationId: 'getWebhookSubscription',
      summary: 'Get a webhook subscription',
      description: `With its secret. ${NOT_FOUND}`,
      parameters: subPath,
      responses: responses('get', { '200': ok('The subscription, with its secret.', schemaRef('WebhookSubscription')) }, { 400: ['invalid_uuid'], 404: ['webhook_subscription_not_found'] }),
    },
    put: {
      tags: ['Webhooks'],
      operationId: 'updateWebhookSubscription',
      summary: 'Replace a webhook subscription',
      description: `The create body plus \`active\`: \`targetUrl\`, \`event\` and \`deliveryContentType\` are replaced (omitted \`deliveryContentType\`: \`application/json\`). \`active: true\` on a disabled subscription re-enables it fresh: \`disabledReason\` is cleared and earlier failures no longer count towards the 5 days. \`active: false\` disables it (\`disabledReason\` null: you did). Omitted \`active\` keeps the state. The answer has no \`secret\`. ${NOT_FOUND}\n\n${RULES}`,
      parameters: subPath,
      requestBody: body('UpdateWebhookSubscriptionRequest'),
      responses: responses('put', { '200': ok('The updated subscription (without secret).', schemaRef('WebhookSubscription')) }, {
        400: ['invalid_uuid', 'unknown_webhook_event', 'webhook_target_not_allowed'],
        404: ['webhook_subscription_not_found'],
      }),
    },
    delete: {
      tags: ['Webhooks'],
      operationId: 'deleteWebhookSubscription',
      summary: 'Delete a webhook subscription',
      description: `Nothing more is queued for it. ${NOT_FOUND}`,
      parameters: subPath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['webhook_subscription_not_found'] }),
    },
  },
  '/webhook-subscriptions/{subscriptionId}/rotate-secret': {
    post: {
      tags: ['Webhooks'],
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret',
      description: `A new secret signs every delivery from now on; the previous one keeps signing for 24 h, so each delivery meanwhile carries both signatures and receivers can switch without losing any. Rotating again within the 24 h drops the oldest secret at once. ${NOT_FOUND}`,
      parameters: [...subPath, idempotencyKey],
      responses: responses('post', { '200': posted('The new secret.', 'WebhookSecret') }, { 400: ['invalid_uuid'], 404: ['webhook_subscription_not_found'] }, { body: false }),
    },
  },
  '/webhook-subscriptions/{subscriptionId}/deliveries': {
    get: {
      tags: ['Webhooks'],
      operationId: 'listWebhookDeliveries',
      summary: 'List deliveries (paginated)',
      description: `Newest first, each with every attempt (\`statusCode\` null when no answer came; \`responseBody\`: the first 2 KiB). \`status\` filters. ${NOT_FOUND}`,
      parameters: [...subPath, ref('parameters', 'PageNumber'), ref('parameters', 'PageSize'), { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: [...DELIVERY_STATUSES] } }],
      responses: responses('get', { '200': ok('One page of deliveries.', schemaRef('PaginatedWebhookDeliveries')) }, { 400: ['invalid_uuid'], 404: ['webhook_subscription_not_found'] }),
    },
  },
  '/webhook-subscriptions/{subscriptionId}/deliveries/{deliveryId}/redeliver': {
    post: {
      tags: ['Webhooks'],
      operationId: 'redeliverWebhookDelivery',
      summary: 'Redeliver a delivery',
      description: `Queues a new attempt of the delivery at once, whatever its status (same \`webhook-id\`, so receivers can deduplicate). ${NOT_FOUND} An unknown delivery is \`404 webhook_delivery_not_found\`.`,
      parameters: [...subPath, ref('parameters', 'WebhookDeliveryId'), idempotencyKey],
      responses: responses('post', { '202': posted('Queued.', 'WebhookDeliveryAccepted') }, { 400: ['invalid_uuid'], 404: ['webhook_subscription_not_found', 'webhook_delivery_not_found'] }, { body: false }),
    },
  },
  '/webhook-subscriptions/{subscriptionId}/test': {
    post: {
      tags: ['Webhooks'],
      operationId: 'sendWebhookTestEvent',
      summary: 'Send a test event',
      description: `Queues a \`webhook.test\` delivery to this subscription only (also when it is disabled), signed and retried like every delivery; follow it in the deliveries list. ${NOT_FOUND}`,
      parameters: [...subPath, idempotencyKey],
      responses: responses('post', { '202': posted('Queued.', 'WebhookDeliveryAccepted') }, { 400: ['invalid_uuid'], 404: ['webhook_subscription_not_found'] }, { body: false }),
    },
  },
};

export const webhookParameters = {
  WebhookSubscriptionId: { name: 'subscriptionId', in: 'path', required: true, schema: uuid },
  WebhookDeliveryId: { name: 'deliveryId', in: 'path', required: true, schema: uuid },
};

const requestMembers = {
  targetUrl: { type: 'string', minLength: 1, maxLength: WEBHOOK_TARGET_URL_MAX, description: 'Delivery address.', examples: ['https://hooks.example.com/mailer'] },
  event: { type: 'string', minLength: 1, maxLength: 100, description: '`*` or a name of GET /webhook-events.', examples: ['subscriber.created'] },
  deliveryContentType: { type: 'string', enum: ['application/json', 'text/plain'], description: 'Omitted: application/json. Null is invalid.' },
};

export const webhookSchemas = {
  AccountWebhookSubscriptionRequestDto: object(['targetUrl', 'event'], requestMembers),
  UpdateWebhookSubscriptionRequest: object(['targetUrl', 'event'], {
    ...requestMembers,
    active: { type: 'boolean', description: 'true re-enables a disabled subscription fresh; false disables it; omitted keeps the state.' },
  }),
  WebhookSubscription: object(['id', 'targetUrl', 'event', 'deliveryContentType', 'active', 'createdAt', 'updatedAt', 'disabledReason'], {
    id: uuid,
    targetUrl: { type: 'string' },
    event: { type: 'string' },
    deliveryContentType: { type: 'string', enum: ['application/json', 'text/plain'] },
    active: { type: 'boolean' },
    secret: { type: 'string', pattern: '^whsec_', description: 'Only on create and GET of one subscription.' },
    createdAt: instant,
    updatedAt: instant,
    disabledReason: { type: ['string', 'null'], enum: ['TARGET_GONE', 'FAILING_FOR_5_DAYS', null], description: 'Why the service disabled the subscription; null while active or when disabled with `active: false`.' },
  }),
  WebhookSubscriptionList: object(['items'], { items: { type: 'array', items: schemaRef('WebhookSubscription') } }),
  WebhookEventList: object(['events'], { events: { type: 'array', items: { type: 'string' } } }),
  WebhookSecret: object(['secret'], { secret: { type: 'string', pattern: '^whsec_' } }),
  WebhookDeliveryAccepted: object(['deliveryId'], { deliveryId: uuid }),
  WebhookDeliveryAttempt: object(['at', 'statusCode', 'durationMs', 'error', 'responseBody'], {
    at: instant,
    statusCode: { type: ['integer', 'null'], description: 'Null when no answer came (timeout, refused connection, address not allowed).' },
    durationMs: { ...int32, minimum: 0 },
    error: { type: ['string', 'null'], description: 'Why the attempt failed; null on success.' },
    responseBody: { type: ['string', 'null'], description: 'The first 2 KiB of the answer.' },
  }),
  WebhookDelivery: object(['deliveryId', 'eventId', 'type', 'status', 'attempts', 'nextAttemptAt', 'createdAt'], {
    deliveryId: uuid,
    eventId: { type: 'string', description: 'The body\'s `id` and the `webhook-id` header.' },
    type: { type: 'string', description: 'The webhook event, or `webhook.test`.' },
    status: { type: 'string', enum: [...DELIVERY_STATUSES] },
    attempts: { type: 'array', items: schemaRef('WebhookDeliveryAttempt') },
    nextAttemptAt: { ...instant, type: ['string', 'null'], description: 'When the next attempt is due (PENDING, RETRYING); null otherwise.' },
    createdAt: instant,
  }),
  PaginatedWebhookDeliveries: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('WebhookDelivery') },
    pageNumber: { ...int32, minimum: 1 },
    pageSize: { ...int32, minimum: 1 },
    totalItems: int64,
    totalPages: { ...int32, minimum: 0 },
  }),
};

export const webhookTags = [{ name: 'Webhooks', description: 'Signed, retried HTTP deliveries of webhook events to your endpoints (Standard Webhooks), with a delivery log, redelivery and secret rotation.' }];
