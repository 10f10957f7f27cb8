import { ERROR_CATALOGUE } from '../errors';
import { MAX_JSON_DEPTH } from '../middleware/json-scan';
import { DEFAULT_RATE_LIMITS } from '../ratelimit/policies';
import { authenticatedErrors, bodyErrors, errorResponse, instant, json, keyInUrlError, ok, rateLimitHeaders, ref, schemaRef, uuid } from './common';
import { EXAMPLE_FEED_URL, withRequestExamples } from './examples';
import { formParameters, formPaths, formSchemas, formTags } from './form/forms';
import { webhookParameters, webhookPaths, webhookSchemas, webhookTags } from './webhook/webhooks';
import { rssParameters, rssPaths, rssSchemas, rssTags } from './rss/newsletters';
import { submissionPaths, submissionSchemas } from './form/submissions';
import { publicWebPaths, publicWebTags } from './messaging/public-web';
import { confirmPaths } from './form/confirm';
import { messagingDomainParameters, messagingDomainPaths, messagingDomainSchemas, messagingDomainTags } from './messaging';
import { eventLogOperation, eventReportPaths, eventReportSchemas } from './messaging/events';
import { emailReportSchemas, reportPaths, reportPeriodSchemas, reportTags, subscriberReportSchemas } from './messaging/reports';
import { segmentDomainParameters, segmentDomainPaths, segmentDomainSchemas, segmentDomainTags } from './segment';
import { subscriberDomainParameters, subscriberDomainPaths, subscriberDomainSchemas, subscriberDomainTags } from './subscriber';

/**
 * The published OpenAPI 3.1 document, and the one source of request and response schemas: the
 * request validator compiles its schemas from here (src/openapi/validator.ts), so what is
 * documented is what is enforced. Where the API contract and the specification are silent, the decision
 * taken is written into the descriptions below.
 */
const keyManagement = (summary: string, operationId: string) => ({
  tags: ['Account'],
  summary,
  operationId,
  description:
    'App-only: obtaining, rotating and deleting the key is done by an account user in the application (and by the operator through the admin listener), never with the key itself. Any call with a valid API key is answered `403 operation_not_allowed_for_api_key`; without one, `401`.',
  responses: {
    '400': keyInUrlError(),
    '401': ref('responses', 'Unauthorized'),
    '403': ref('responses', 'Forbidden'),
    '429': ref('responses', 'TooManyRequests'),
  },
});

/** Public operations take no input, but a key in their URL is refused as on every path. */
const publicErrors = { '400': keyInUrlError() };

const catalogueTable = [
  '| status | errorId | meaning |',
  '|---|---|---|',
  ...ERROR_CATALOGUE.map((e) => `| ${e.status} | \`${e.errorId}\` | ${e.meaning} |`),
].join('\n');

const d = DEFAULT_RATE_LIMITS;

const description = `Customer API of the email-marketing service (beta). Server-to-server only: never call it from a browser, a mobile app or a public page.

## Authentication
Every operation except the public ones (\`/healthz\`, \`/readyz\`, \`/openapi.json\`, \`/docs\`) needs the account's full API key in the \`X-API-Key\` header.
\`Authorization: Bearer\` is not accepted (\`401 api_key_missing\`). A key in the URL (query parameters \`apiKey\`, \`api_key\`, \`api-key\`, \`key\`, \`x-api-key\`, any case) is refused with \`400 api_key_in_url\` before anything else, on every path, and the URL is never logged (logs carry the path only, with anything shaped like a key, \`mk_\` and 40 letters or digits, redacted: a key sent as a path segment is not written either); rotate a key that was sent that way.
The masked form (\`abcde*****\`) is not a key. Rotation and deletion take effect at once on every gateway replica.

## Errors
Every error answers \`ErrorMessageDto\` (\`errorId\`, \`message\`, optional \`details\` of \`{path, problem}\`; \`path\` is \`body.<member>\`, \`query.<name>\` or \`path.<name>\`). Unknown routes answer \`404 route_not_found\`; a known path with another method \`405 method_not_allowed\` with \`Allow\`. Authentication is checked before routing, so unauthenticated requests get \`401\` whatever the path. 5xx responses never carry internals; quote \`X-Request-Id\` when reporting one.

${catalogueTable}

## Request ids
Every response carries \`X-Request-Id\`: the client's value when it is 1-128 characters of \`[A-Za-z0-9._:-]\`, otherwise a generated UUID. Server logs carry it.

## Rate limits
Per account, shared by all replicas: ${d.perMinute} requests per minute **and** ${d.perHour} per hour on the default API; \`/events\` has its own budget of ${d.eventsPerSecond} requests per second with a burst of ${d.eventsBurst} (token bucket). The default API limits are exact sliding windows: in any span of 60 s at most ${d.perMinute} requests are accepted, and in any span of 3,600 s at most ${d.perHour}. Requests are counted in slots (1 s for the minute, 60 s for the hour) and a request stays counted until its whole slot has left the window, so a refusal may come up to one slot early, never late.
Every authenticated response carries \`RateLimit-Limit\` (capacity of the tightest limit: the one with the fewest requests remaining), \`RateLimit-Remaining\` (requests left in it; counts down by exactly one per accepted request until requests leave the window), \`RateLimit-Reset\` (seconds until that limit frees capacity: its oldest counted requests leave the window, or for /events the bucket is full again; on a 429 the seconds until a request is admitted again) and \`RateLimit-Policy\` (\`${d.perMinute};w=60, ${d.perHour};w=3600\`, or \`${d.eventsPerSecond};w=1;burst=${d.eventsBurst}\` on /events). \`429 rate_limited\` carries \`Retry-After\` (whole seconds, at least 1): a retry after that long is admitted unless other requests of the account spend the freed capacity first. Rejected requests do not consume budget. Limits may differ per account (operator setting).
Requests that fail authentication are limited per client address (60 failures per minute by default, token bucket); once an address has used that up, its missing or wrong keys are answered \`429\` instead of \`401\`. A valid key is always authenticated and only spends its account's budget, even from an address over its failure budget (many customers may share one address behind a proxy). Public operations and \`400 api_key_in_url\` carry no rate-limit headers.

## Idempotency
Any \`POST\` may carry \`Idempotency-Key\` (1-255 printable ASCII characters, no leading or trailing space; else \`400 invalid_idempotency_key\`). The same key with the same request (method, path and JSON body, member order ignored) within 24 h replays the first response (status and body) with \`Idempotency-Replay: true\`; with a different request \`422 idempotency_key_reused\`; while the first is still being processed \`409 idempotency_in_progress\` with \`Retry-After: 1\`. Keys are per account. 5xx responses are not stored, so a retry runs again; an attempt whose gateway died is taken over after 60 s.

## Bodies
JSON only (\`Content-Type: application/json\`, UTF-8); a body with another type answers \`415\`. Bodies over 1 MiB (10 MiB for \`/subscribers/sync\` and \`/email-messages/batch\`) answer \`413\`. Objects and arrays may nest at most ${MAX_JSON_DEPTH} levels (the top-level value is level 1, free-form \`properties\` included), else \`400 json_too_deep\`. A number beyond the range of a double (\`1e400\`, 400 digits) anywhere in the body answers \`400 validation_failed\` naming it: it could not be stored as sent. Text must be valid Unicode: invalid UTF-8 answers \`400 malformed_json\`, an unpaired surrogate escape (\`"\\ud800"\`) \`400 validation_failed\` naming the member. A member named \`__proto__\`, anywhere (free-form values included), is \`400 validation_failed\` naming it: it could not be stored as sent. Unknown members are rejected (\`400 unknown_property\`) except inside free-form values.

## Identifiers and time
UUIDs are lowercase (v4; v7 allowed for new ids); UUIDs in paths and bodies are accepted in any case. Lists of ids may not hold an id twice (\`400 duplicate_ids\`). int64 counts are JSON numbers. Integer query and path parameters (\`pageNumber\`, \`pageSize\`) are plain decimal digits within their documented range (no \`+\`, exponent, fraction, hex or spaces; given once); anything else answers \`400 validation_failed\` naming the parameter. Body integers are checked against their range too (int32: -2147483648 to 2147483647). Instants are UTC ISO 8601 with \`Z\`.

## Examples
Every request body has an example, which "Try it out" starts from, and together they work in a fresh account. An id of another resource in an example is a placeholder, \`00000000-0000-4000-8000-0000000000NN\`: the operation's description lists each one under **Example ids** with the call whose own example creates that resource in a fresh account and answers its real id; put that id in its place. Path parameters are filled the same way (a \`tagId\` is the \`id\` that \`POST /tags\` answered). Optional ids are left out of examples that make their point without them. Names refer to each other too: the sending, rendering and automation examples use the template that the \`POST /email-templates\` example creates (\`order-confirmation\`). \`${EXAMPLE_FEED_URL}\` stands for your feed (the RSS operations read it while you wait, so it must answer) and \`https://hooks.example.com/mailer\` for your webhook receiver.`;

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Mailer customer API',
    version: '0.1.0-beta',
    description,
  },
  servers: [{ url: '/', description: 'This gateway' }],
  security: [{ ApiKey: [] }],
  tags: [
    ...subscriberDomainTags,
    ...segmentDomainTags,
    ...messagingDomainTags,
    ...formTags,
    ...webhookTags,
    ...rssTags,
    ...reportTags,
    { name: 'Events', description: 'Custom events that start automations (API-request triggers).' },
    { name: 'Account', description: 'The account\'s API key: managed in the application, never with the key itself.' },
    { name: 'Operations', description: 'Public endpoints: no key, no rate limit.' },
    ...publicWebTags,
  ],
  'x-error-catalogue': ERROR_CATALOGUE,
  paths: withRequestExamples({
    ...subscriberDomainPaths,
    ...segmentDomainPaths,
    ...messagingDomainPaths,
    ...formPaths,
    ...webhookPaths,
    ...rssPaths,
    ...submissionPaths,
    ...reportPaths,
    ...eventReportPaths,
    '/events': {
      get: eventLogOperation,
      post: {
        tags: ['Events'],
        operationId: 'sendCustomEvent',
        summary: 'Send a custom event',
        description: `Accepted with \`202\` only after the event is durably stored (JetStream acknowledgement); automations with an API-request trigger on \`eventKey\` then start asynchronously.
- \`occurredAt\` defaults to the time of receipt and may not be more than 5 minutes in the future.
- \`idempotencyKey\` makes a retry within 7 days a no-op answered \`202\` with \`duplicate: true\` and the first \`eventId\` (the first request's content wins; a retry with other content is not compared). Without it every request is a new event.
- \`triggerAutomations: false\` records the event without starting automations.
- An unknown \`email\` creates no subscriber unless \`consent\` is present: then it is signed up as through a double opt-in form (suppression list, subscriber quota, the 10-minute rule, the 24-hour cooldown and the account's daily confirmation quota): an \`UNCONFIRMED\` subscriber with the consent recorded (\`gdprAgreement\`: \`<source> (given <givenAt>)\`) and one confirmation mail (built-in template, the account's default sender profile) whose link confirms it. One event, one signup and at most one mail, however often it is delivered. \`GET /events\` shows the outcome (\`SUBSCRIBER_CREATED\`, or \`NO_SUBSCRIBER\`) and the \`consentDecision\`. \`consent\` for an address that is a subscriber already changes nothing. \`consent.givenAt\` may not be more than 5 minutes in the future.
- \`properties\` is stored as sent (default \`{}\`); \`_serviceExampleRequest\` is a documentation aid that is accepted and ignored.
- The stored event (the request without \`_serviceExampleRequest\`, plus about 300 bytes) must fit the event stream's message size limit (1 MiB less 2 KiB with NATS defaults), else \`413 payload_too_large\`.
- Own rate limit: ${d.eventsPerSecond}/s, burst ${d.eventsBurst}, separate from the default budget.`,
        parameters: [ref('parameters', 'IdempotencyKey')],
        requestBody: { required: true, content: json(schemaRef('CustomEventRequestDto')) },
        responses: {
          '202': ok('Stored.', schemaRef('CustomEventAcceptedDto'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }),
          ...authenticatedErrors,
          ...bodyErrors,
        },
      },
    },
    '/account/api-key': {
      get: keyManagement('Show the API key (app-only)', 'showApiKey'),
      post: keyManagement('Create the API key (app-only)', 'createApiKey'),
      delete: keyManagement('Delete the API key (app-only)', 'deleteApiKey'),
    },
    '/account/api-key/rotate': {
      post: keyManagement('Rotate the API key (app-only)', 'rotateApiKey'),
    },
    '/healthz': {
      get: {
        tags: ['Operations'],
        operationId: 'healthz',
        summary: 'Liveness: the process is up',
        security: [],
        responses: { '200': { description: 'Up.', content: json(schemaRef('StatusDto')) }, ...publicErrors },
      },
    },
    '/readyz': {
      get: {
        tags: ['Operations'],
        operationId: 'readyz',
        summary: 'Readiness: NATS reachable and the subscriber service SERVING',
        security: [],
        responses: {
          '200': { description: 'Ready.', content: json(schemaRef('StatusDto')) },
          '503': errorResponse('Not ready (no details on purpose).', ['service_unavailable']),
          ...publicErrors,
        },
      },
    },
    '/openapi.json': {
      get: {
        tags: ['Operations'],
        operationId: 'openApiDocument',
        summary: 'This OpenAPI 3.1 document',
        security: [],
        responses: { '200': { description: 'The document.', content: json({ type: 'object', additionalProperties: true }) }, ...publicErrors },
      },
    },
    '/docs': {
      get: {
        tags: ['Operations'],
        operationId: 'apiDocs',
        summary: 'Interactive documentation (Swagger UI)',
        security: [],
        description: 'Redirects to `/docs/`, the page, which loads its assets relative to itself and the document from `/openapi.json`.',
        responses: {
          '200': { description: 'HTML page (at `/docs/`).', content: { 'text/html': { schema: { type: 'string' } } } },
          '301': { description: 'From `/docs` to `/docs/`.', headers: { Location: ref('headers', 'Location') } },
          ...publicErrors,
        },
      },
    },
    ...publicWebPaths,
    ...confirmPaths,
  }),
  components: {
    securitySchemes: {
      ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The account\'s full API key (one per account, no scopes).' },
    },
    parameters: {
      ...subscriberDomainParameters,
      ...segmentDomainParameters,
      ...messagingDomainParameters,
      ...formParameters,
      ...webhookParameters,
      ...rssParameters,
      PageNumber: { name: 'pageNumber', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 }, description: '1-based.' },
      PageSize: { name: 'pageSize', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 50 } },
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
        description: 'Makes a retried POST safe for 24 h; see "Idempotency" above.',
      },
    },
    headers: {
      XRequestId: { description: 'The request id (echoed when sane, else generated).', schema: { type: 'string' } },
      RateLimitLimit: { description: 'Capacity of the tightest limit, the one with the fewest requests remaining (for /events: the burst).', schema: { type: 'integer' } },
      RateLimitRemaining: { description: 'Requests left in the tightest limit (0 on a 429).', schema: { type: 'integer' } },
      RateLimitReset: { description: 'Seconds until the tightest limit frees capacity (a window: its oldest counted requests leave it; /events: the bucket is full again). On a 429: seconds until a request is admitted again, as Retry-After.', schema: { type: 'integer' } },
      RateLimitPolicy: { description: 'All limits that apply, e.g. `300;w=60, 2000;w=3600`.', schema: { type: 'string' } },
      RetryAfter: { description: 'Whole seconds to wait (at least 1).', schema: { type: 'integer', minimum: 1 } },
      IdempotencyReplay: { description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
      Location: { description: 'Path of the created resource.', schema: { type: 'string' } },
      Allow: { description: 'Methods the path supports.', schema: { type: 'string' } },
    },
    responses: {
      BadRequest: errorResponse('The request does not satisfy the operation contract.', [
        'validation_failed', 'malformed_json', 'json_too_deep', 'unknown_property', 'invalid_uuid', 'invalid_email', 'api_key_in_url', 'invalid_idempotency_key', 'subscriber_status_not_manual',
      ], rateLimitHeaders),
      Unauthorized: errorResponse('No usable API key. One text for unknown, rotated, deleted and masked keys.', ['api_key_missing', 'api_key_invalid'], {
        ...rateLimitHeaders,
        'WWW-Authenticate': { description: '`ApiKey header="X-API-Key"`', schema: { type: 'string' } },
      }),
      Forbidden: errorResponse('The operation cannot be called with an API key.', ['operation_not_allowed_for_api_key'], rateLimitHeaders),
      NotFound: errorResponse('The resource does not exist in the account (or the route does not exist).', ['subscriber_not_found', 'route_not_found'], rateLimitHeaders),
      MethodNotAllowed: errorResponse('The path exists with other methods.', ['method_not_allowed'], { ...rateLimitHeaders, Allow: ref('headers', 'Allow') }),
      Conflict: errorResponse('Conflict with the current state, or the same Idempotency-Key is still in flight (then with Retry-After: 1).', ['subscriber_email_exists', 'idempotency_in_progress'], {
        ...rateLimitHeaders,
        'Retry-After': ref('headers', 'RetryAfter'),
      }),
      PayloadTooLarge: errorResponse('The body is over 1 MiB.', ['payload_too_large'], rateLimitHeaders),
      UnsupportedMediaType: errorResponse('The body is not JSON.', ['unsupported_media_type'], rateLimitHeaders),
      IdempotencyKeyReused: errorResponse('The Idempotency-Key was used for a different request.', ['idempotency_key_reused'], rateLimitHeaders),
      TooManyRequests: errorResponse('A rate limit is reached.', ['rate_limited'], { ...rateLimitHeaders, 'Retry-After': ref('headers', 'RetryAfter') }),
      InternalError: errorResponse('Unexpected failure (no details).', ['internal_error'], rateLimitHeaders),
      ServiceUnavailable: errorResponse('A backing service or the message store is unavailable (`event_backlog_full`: too many domain events wait to be published; nothing was written).', ['service_unavailable', 'event_backlog_full'], rateLimitHeaders),
    },
    schemas: {
      ErrorMessageDto: {
        type: 'object',
        required: ['errorId', 'message'],
        properties: {
          errorId: {
            type: 'string',
            enum: ERROR_CATALOGUE.map((e) => e.errorId),
            description: 'Stable machine-readable code: one of the catalogue above (also in `x-error-catalogue`). Ids may be added in later versions; a client should treat an unknown id by its status.',
            examples: ['validation_failed'],
          },
          message: { type: 'string', description: 'Human-readable text; may change.' },
          details: { type: 'array', items: schemaRef('Problem') },
        },
        additionalProperties: false,
      },
      Problem: {
        type: 'object',
        required: ['path', 'problem'],
        properties: {
          path: { type: 'string', examples: ['body.email', 'query.pageSize', 'path.subscriberId'] },
          problem: { type: 'string' },
        },
        additionalProperties: false,
      },
      StatusDto: {
        type: 'object',
        required: ['status'],
        properties: { status: { type: 'string', enum: ['ok'] } },
        additionalProperties: false,
      },
      ...subscriberDomainSchemas,
      ...segmentDomainSchemas,
      ...messagingDomainSchemas,
      ...formSchemas,
      ...webhookSchemas,
      ...rssSchemas,
      ...submissionSchemas,
      ...reportPeriodSchemas,
      ...emailReportSchemas,
      ...subscriberReportSchemas,
      ...eventReportSchemas,
      CustomEventConsentDto: {
        type: 'object',
        required: ['source', 'givenAt'],
        properties: {
          source: { type: 'string', minLength: 1, maxLength: 500, description: 'Where the consent was given (e.g. a checkout page URL); recorded as the subscriber\'s `gdprAgreement` with `givenAt`.' },
          givenAt: { ...instant, description: 'When the consent was given; at most 5 minutes in the future.' },
        },
        additionalProperties: false,
      },
      CustomEventRequestDto: {
        type: 'object',
        required: ['eventKey', 'email'],
        properties: {
          eventKey: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,99}$', examples: ['order.completed'] },
          email: { type: 'string', format: 'email', maxLength: 320, description: 'Invalid syntax answers `400 invalid_email`. Stored lowercased.' },
          occurredAt: { ...instant, description: 'Default: time of receipt. At most 5 minutes in the future.' },
          idempotencyKey: { type: 'string', minLength: 1, maxLength: 255 },
          triggerAutomations: { type: 'boolean', default: true },
          properties: { description: 'Free-form JSON value, stored as sent (default `{}`).' },
          consent: schemaRef('CustomEventConsentDto'),
          _serviceExampleRequest: { description: 'Free-form documentation aid; accepted and ignored.' },
        },
        additionalProperties: false,
      },
      CustomEventAcceptedDto: {
        type: 'object',
        required: ['eventId', 'duplicate'],
        properties: {
          eventId: { ...uuid, description: 'Derived from the idempotencyKey when one was sent (same id for every retry), else new.' },
          duplicate: { type: 'boolean', description: 'True when an event with this idempotencyKey was already accepted; nothing new was stored.' },
        },
        additionalProperties: false,
      },
    },
  },
} as const;

export type OpenApiDocument = typeof openApiDocument;
