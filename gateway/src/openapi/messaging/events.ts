import { EVENT_OUTCOMES, FORM_DECISIONS } from '@mailer/nats/facts';
import { MAX_REPORT_POINTS } from '@mailer/reports';
import { instant, ok, ref, schemaRef, uuid, type Json } from '../common';
import { body, idempotencyKey, object, responses } from '../operations';
import { int32 } from '../subscriber/shared';
import { acceptLanguage, PERIOD_ERROR_IDS, REPORT_DESCRIPTION } from './reports';

/**
 * The event log (the API contract "Events and automations", messaging service): GET /events. POST /events is
 * described in document.ts; both live under the one path item `/events` (`eventLogOperation` is
 * merged there).
 */

export const EVENT_KEY_PATTERN = '^[a-z0-9][a-z0-9._-]{0,99}$';

const OUTCOMES = `\`outcome\` says what the event led to, the first rule that applies winning:
- \`NOT_TRIGGERED\`: sent with \`triggerAutomations: false\` (recorded, no automation started; \`subscriberId\` still tells whether the address is a subscriber).
- \`NO_SUBSCRIBER\`: the address is no subscriber of the account, and none was created (no \`consent\`, or its double opt-in decision created none: \`consentDecision\` says why, e.g. \`SUPPRESSED_SUBSCRIBER_POLICY\` for a suppressed address).
- \`SUBSCRIBER_CREATED\`: an unknown address with \`consent\` became an \`UNCONFIRMED\` subscriber (consent recorded as its \`gdprAgreement\`) and was decided as a form signup would be (\`consentDecision\`: \`QUEUED\` when the confirmation mail went out); no automation runs for it until it confirms (a later event then starts runs).
- \`NO_MATCHING_AUTOMATION\`: no active automation is triggered by the \`eventKey\` (or every one's \`entry\` rule refused a run: \`ONCE\` ran for the subscriber already, \`ONE_AT_A_TIME\` has an unfinished run).
- \`RUNS_STARTED\`: runs started, one per active automation triggered by the \`eventKey\` (its \`entry\` permitting); \`runIds\` names them.`;

export const eventLogOperation = {
  tags: ['Events'],
  operationId: 'listEvents',
  summary: 'List received custom events (paginated)',
  description: `The events the service has recorded, newest first (by \`receivedAt\`, then by id). Each event is recorded once per \`eventId\`, however often it was delivered internally, shortly after \`POST /events\` accepted it (asynchronously: an event accepted a moment ago may not be listed yet). Filters combine with AND; \`email\` is compared in canonical form (trimmed, lowercased). A page whose events hold more than 8 MiB of \`properties\` in all is refused with \`400 events_page_too_large\` (ask for a smaller \`pageSize\`).

${OUTCOMES}`,
  parameters: [
    ref('parameters', 'PageNumber'),
    ref('parameters', 'PageSize'),
    { name: 'eventKey', in: 'query', required: false, schema: { type: 'string', pattern: EVENT_KEY_PATTERN }, description: 'Only events with this key.' },
    { name: 'email', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: 320 }, description: 'Only events for this address.' },
  ],
  responses: responses('get', { '200': ok('One page of events.', schemaRef('PaginatedEvents')) }, { 400: ['events_page_too_large'] }),
};

export const eventLogSchemas = {
  EventOutcome: { type: 'string', enum: [...EVENT_OUTCOMES], description: 'What the event led to (see GET /events).' },
  RecordedEvent: object(['eventId', 'eventKey', 'email', 'occurredAt', 'receivedAt', 'properties', 'triggerAutomations', 'subscriberId', 'outcome', 'runIds', 'consentDecision'], {
    eventId: { ...uuid, description: 'The id `POST /events` answered.' },
    eventKey: { type: 'string', examples: ['order.completed'] },
    email: { type: 'string', description: 'Canonical form (lowercased).' },
    occurredAt: { ...instant, description: 'As sent, else the time of receipt.' },
    receivedAt: { ...instant, description: 'When `POST /events` accepted it.' },
    properties: { description: 'Free-form JSON value, as sent (`{}` when none was sent).' },
    triggerAutomations: { type: 'boolean' },
    subscriberId: { ...uuid, type: ['string', 'null'], description: 'The account\'s subscriber with this address when the event was recorded, else null.' },
    outcome: schemaRef('EventOutcome'),
    runIds: { type: 'array', items: uuid, description: 'The automation runs the event started.' },
    consentDecision: {
      type: ['string', 'null'],
      enum: [...FORM_DECISIONS, null],
      description:
        'The double opt-in decision of the signup an unknown address with `consent` led to, with the meanings of a form submission\'s decision (see `GET /forms/{formId}/submissions`; the 10-minute rule counts the confirmation mails of consent signups to the address): `QUEUED` (subscriber `UNCONFIRMED`, confirmation mail sent), `SUPPRESSED_SUBSCRIBER_POLICY` (the address is on the suppression list: no subscriber, no mail), `SUPPRESSED_SUBSCRIBER_LIMIT`, `SUPPRESSED_COOLDOWN`, `SUPPRESSED_CUSTOMER_LIMIT`, `CONFIRMATION_MAIL_ALREADY_SENT`, `SUPPRESSED_ALREADY_SUBSCRIBED`. Null: no consent signup (no `consent`, or the address was a subscriber already).',
    },
  }),
  PaginatedEvents: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('RecordedEvent') },
    pageNumber: int32,
    pageSize: int32,
    totalItems: { type: 'integer', format: 'int64' },
    totalPages: int32,
  }),
};

// ---- POST /reports/events ------------------------------------------------------------------------

const n = (value: number) => ({ value, formattedValue: value.toLocaleString('en-US') });

export const eventReportPaths = {
  '/reports/events': {
    post: {
      tags: ['Reports'],
      operationId: 'reportEvents',
      summary: 'Event report: custom events received per period, in all and per event key',
      description: `${REPORT_DESCRIPTION}

Counts the account's custom events by the time \`POST /events\` accepted them (\`receivedAt\`, not \`occurredAt\`), once per event (a retry answered \`duplicate: true\` is not counted again), with or without \`triggerAutomations\`. Events are counted once the service has recorded them (GET /events), shortly after they were accepted. \`byEventKey\` holds the keys received in that bucket, each with its count (keys without events in the bucket are left out; an empty bucket has \`{}\`).`,
      parameters: [acceptLanguage, idempotencyKey] as Json[],
      requestBody: body('ReportPeriodDto'),
      responses: responses('post', { '200': ok('The points, one per bucket.', schemaRef('EventReport'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) }, { 400: PERIOD_ERROR_IDS }),
    },
  },
};

export const eventReportSchemas = {
  EventReportPoint: object(['periodStart', 'received', 'byEventKey'], {
    periodStart: { type: 'string', format: 'date', description: 'First day of the bucket inside the period: the later of the bucket\'s calendar start and `fromDate`.', examples: ['2024-03-01'] },
    received: { ...schemaRef('Number'), description: 'Events received in the bucket.' },
    byEventKey: {
      type: 'object',
      propertyNames: { pattern: EVENT_KEY_PATTERN },
      additionalProperties: schemaRef('Number'),
      description: 'Events received in the bucket per `eventKey` (only keys with events in the bucket).',
    },
  }),
  EventReport: object(['points'], { points: { type: 'array', maxItems: MAX_REPORT_POINTS, items: schemaRef('EventReportPoint') } }, {
    examples: [
      {
        points: [
          { periodStart: '2024-03-01', received: n(1530), byEventKey: { 'order.paid': n(1210), 'cart.abandoned': n(320) } },
          { periodStart: '2024-03-04', received: n(0), byEventKey: {} },
        ],
      },
    ],
  }),
};
