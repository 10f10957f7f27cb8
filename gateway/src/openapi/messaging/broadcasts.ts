import { errorResponse, instant, ok, rateLimitHeaders, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, posted, responses } from '../operations';
import { int32, nullable } from '../subscriber/shared';

/** Broadcasts (messaging service; docs/integrators.md "Broadcasts and batch sending"). Rules: services/messaging/src/audiences/app/broadcasts.ts, broadcast-send.ts, domain/broadcast.ts. */

export const BROADCAST_STATUSES = ['DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED', 'FAILED'] as const;
export const EXCLUSION_REASONS = ['NOT_ACTIVE', 'NOT_IN_TOPIC', 'OPTED_OUT', 'NOT_IN_SEGMENT', 'SEGMENT_UNKNOWN', 'SUPPRESSED'] as const;
export const RECIPIENT_STATUSES = ['PENDING', 'SENT', 'DELIVERED', 'DEFERRED', 'FAILED', 'BOUNCED', 'SUPPRESSED', 'EXCLUDED'] as const;

const byId = [ref('parameters', 'BroadcastId')];
const NOT_FOUND = 'A broadcast of another account is unknown here (`404 broadcast_not_found`).';
const subject = { type: 'string', minLength: 1, maxLength: 998 };
const REFERENCES_404 = ['template_not_found', 'sender_profile_not_found', 'segment_not_found', 'topic_not_found'];

const RULES = `Rules of the body:
- \`name\` 1-200 characters; \`templateName\` an email template of the account, whose html and text are the mail (its tracking settings apply).
- \`senderProfileId\` (default: the template's profile, else the account's default), \`segmentId\` and \`topicId\` must exist in the account (\`404\` with their errorIds). The ids are checked again when the broadcast is scheduled.
- \`subject\` (a Liquid template like the template's subject, 1-998 characters) replaces the template's subject. With \`abTest\`, its \`subjects\` (2-4) replace it instead; \`subject\` and \`abTest\` together are \`400 validation_failed\`. A subject that does not parse is \`400 validation_failed\` naming it.
- \`sendWindow\`: \`startHour\` 0-23, \`endHour\` 1-24 and after \`startHour\`, \`defaultTimeZone\` an IANA zone; \`timeZoneField\` (optional) the personalizationTagName of an active TEXT field of the account (else \`400 validation_failed\`) that holds each reader's IANA zone.`;

const SENDING = `How a broadcast is sent:
- **Audience**, decided page by page when sending starts: every subscriber of the account is a reader, and each reader is either a recipient or counted under the first rule that leaves it out, in this order: \`NOT_ACTIVE\` (status other than ACTIVE, BLOCKED included), \`OPTED_OUT\` (opted out of the topic), \`NOT_IN_TOPIC\` (not subscribed to the topic), \`NOT_IN_SEGMENT\` (the segment is FALSE), \`SEGMENT_UNKNOWN\` (the segment is UNKNOWN: a value it reads is missing), \`SUPPRESSED\` (the address is on the suppression list). Without topic or segment those rules do not apply. A resend to non-openers has as readers the original's DELIVERED recipients that no human opened.
- **At most once**: a reader gets a broadcast at most once, through restarts and crashes (every page is recorded in one transaction; each mail is keyed by broadcast and reader).
- **Marketing mail** of the broadcast's topic (kind \`BROADCAST\`, \`broadcastId\` on the message): \`List-Unsubscribe\` and one-click \`List-Unsubscribe-Post\` headers, and an unsubscribe footer when the template has no link to \`links.unsubscribe\`. The template renders with \`subscriber\` (\`email\`, \`firstName\`, \`fields\`) and \`links\`.
- **Send window**: a recipient's mail is queued only between \`startHour\` and \`endHour\` of the reader's local time: the zone is the reader's value of the \`timeZoneField\` field when it is a valid IANA zone, else \`defaultTimeZone\`. Outside the window the recipient is \`PENDING\` until the window opens. Daylight-saving changes follow the zone: when the clocks skip \`startHour\` the window opens at the first instant after the jump; a repeated hour is inside the window both times.
- **A/B subjects**: about \`testPercent\` % of the recipients (a hash of broadcast and subscriber decides: the same reader always lands in the same place, and over a large audience the share is within a fraction of a percent) are split evenly across the subjects (\`variant\` = the subject's index) and get their variant first; the rest are \`PENDING\` with no variant. \`decideAfterMinutes\` after the send started, the winner is the variant with the most human clicks (\`HUMAN_CLICKS\`) or human opens (\`HUMAN_OPENS\`) per delivered mail; a variant with no delivered mail scores 0; ties go to the lower index. Machine opens and clicks (mail-privacy proxies, link scanners, HEAD probes, events within 2 s of delivery) never count. The rest then get the winner's subject (\`winner: true\`). When the test group is everyone (a tiny audience), no decision is needed and none is made.
- **Checked again**: a recipient whose mail waits (a window, the winner) is checked against the rules once more when it is queued; a reader who meanwhile unsubscribed, left the topic or segment, or was suppressed moves from recipients to \`excluded\` (the reconciliation still adds up).
- **Statuses**: \`SCHEDULED\` until \`sendAt\`; \`SENDING\` from the first page on (\`startedAt\`); \`SENT\` once every recipient's mail is queued (\`finishedAt\`; then the \`broadcast.sent\` webhook event \`{broadcastId, recipientCount}\`); mail keeps being delivered after that. A broadcast that fell due while the service was down starts within seconds of its restart. A step of the send that fails is retried a minute later (operator setting \`BROADCAST_SEND_RETRY_SECONDS\`) with the reason in \`lastError\`; a service of ours that does not answer is retried until it does; any other failure (the template, segment or topic gone, the sender unable to send, every reader's mail failing to render) counts, and after 5 failed tries in a row (\`BROADCAST_SEND_MAX_ATTEMPTS\`) the broadcast is \`FAILED\`. A reader whose own mail cannot be rendered (a render limit hit by their values) gets a \`FAILED\` message and the send goes on. \`CANCELLED\` and \`FAILED\` are final: recipients whose mail was not queued yet get nothing and leave the reconciliation; mail already queued is still delivered.`;

const RECONCILIATION = `\`reconciliation\` says where every reader went, and adds up exactly at every moment, during the send too: \`audience = recipients + sum(excluded)\` and \`recipients = pending + sent + delivered + deferred + failed + bounced + suppressed\`. \`audience\` counts the readers decided so far (it grows page by page while \`SENDING\`); a recipient counts under its mail's current status (\`pending\`: not queued yet, or queued and not sent; \`suppressed\`: suppressed between queueing and sending). The counts move in the same transaction as the mail's status, so a read never sees a reader twice or not at all. \`variants\` (A/B only): per subject its recipients, delivered mails, and mails with a human open / click.`;

export const broadcastPaths = {
  '/broadcasts': {
    get: {
      tags: ['Broadcasts'],
      operationId: 'listBroadcasts',
      summary: 'List broadcasts (paginated)',
      description: 'Newest first (then by id), optionally by status, each with its reconciliation.',
      parameters: [ref('parameters', 'PageNumber'), ref('parameters', 'PageSize'), { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: [...BROADCAST_STATUSES] } }],
      responses: responses('get', { '200': ok('One page of broadcasts.', schemaRef('PaginatedBroadcasts')) }, {}),
    },
    post: {
      tags: ['Broadcasts'],
      operationId: 'createBroadcast',
      summary: 'Create a broadcast',
      description: `A new broadcast is \`DRAFT\`: nothing is sent until it is scheduled. Try it first with \`POST /broadcasts/{id}/test\`.\n\n${RULES}`,
      parameters: [idempotencyKey],
      requestBody: body('BroadcastRequest'),
      responses: responses('post', { '201': created('Created (DRAFT).', 'Broadcast') }, { 404: REFERENCES_404 }),
    },
  },
  '/broadcasts/{broadcastId}': {
    get: {
      tags: ['Broadcasts'],
      operationId: 'getBroadcast',
      summary: 'Get a broadcast',
      description: `${RECONCILIATION}\n\n${NOT_FOUND}`,
      parameters: byId,
      responses: responses('get', { '200': ok('The broadcast.', schemaRef('Broadcast')) }, { 400: ['invalid_uuid'], 404: ['broadcast_not_found'] }),
    },
    put: {
      tags: ['Broadcasts'],
      operationId: 'updateBroadcast',
      summary: 'Replace a broadcast',
      description: `Only while \`DRAFT\` or \`SCHEDULED\` (else \`409 broadcast_not_editable\`); a SCHEDULED broadcast keeps its \`sendAt\`. Omitted optional members are cleared. ${NOT_FOUND}\n\n${RULES}`,
      parameters: byId,
      requestBody: body('BroadcastRequest'),
      responses: responses('put', { '200': ok('The updated broadcast.', schemaRef('Broadcast')) }, { 400: ['invalid_uuid'], 404: ['broadcast_not_found', ...REFERENCES_404], 409: ['broadcast_not_editable'] }),
    },
    delete: {
      tags: ['Broadcasts'],
      operationId: 'deleteBroadcast',
      summary: 'Delete a broadcast',
      description: `Only while \`DRAFT\` or \`SCHEDULED\` (else \`409 broadcast_not_editable\`: cancel a sending one). ${NOT_FOUND}`,
      parameters: byId,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['broadcast_not_found'], 409: ['broadcast_not_editable'] }),
    },
  },
  '/broadcasts/{broadcastId}/schedule': {
    post: {
      tags: ['Broadcasts'],
      operationId: 'scheduleBroadcast',
      summary: 'Schedule a broadcast',
      description: `\`DRAFT\` -> \`SCHEDULED\` with \`sendAt\` in the future (at most a year ahead), or -> \`SENDING\` now when \`sendAt\` is absent or not in the future. Only from \`DRAFT\` (\`409 broadcast_not_draft\`). The template, sender, segment and topic are checked again now (\`404\`), and the sender must be able to send (\`409 sender_profile_required\`, \`sender_domain_not_verified\`). An account without any subscriber still schedules: its broadcast sends to 0 readers. While \`SCHEDULED\` or \`SENDING\`, deleting its template, sender profile, segment or topic is refused (\`409 template_in_use\`, \`sender_profile_in_use\`, \`segment_in_use\`, \`topic_in_use\`).\n\n${SENDING}\n\n${NOT_FOUND}`,
      parameters: [...byId, idempotencyKey],
      requestBody: body('ScheduleBroadcastRequest', false),
      responses: responses('post', { '200': posted('The broadcast, SCHEDULED or SENDING.', 'Broadcast') }, { 400: ['invalid_uuid'], 404: ['broadcast_not_found', ...REFERENCES_404], 409: ['broadcast_not_draft', 'sender_profile_required', 'sender_domain_not_verified'] }),
    },
  },
  '/broadcasts/{broadcastId}/cancel': {
    post: {
      tags: ['Broadcasts'],
      operationId: 'cancelBroadcast',
      summary: 'Cancel a broadcast',
      description: `\`SCHEDULED\` or \`SENDING\` -> \`CANCELLED\` (else \`409 broadcast_not_cancellable\`): readers whose mail is not queued yet get nothing (they leave the reconciliation within seconds); mail already queued is still delivered. ${NOT_FOUND}`,
      parameters: [...byId, idempotencyKey],
      responses: responses('post', { '200': posted('The cancelled broadcast.', 'Broadcast') }, { 400: ['invalid_uuid'], 404: ['broadcast_not_found'], 409: ['broadcast_not_cancellable'] }, { body: false }),
    },
  },
  '/broadcasts/{broadcastId}/test': {
    post: {
      tags: ['Broadcasts'],
      operationId: 'sendBroadcastTest',
      summary: 'Send test mail of a broadcast',
      description: `The mail as the first variant renders it, subject prefixed \`[Test] \`, to 1-5 addresses only (in any status of the broadcast). An address that is a subscriber of the account renders with its values; a suppressed or BLOCKED address gets a message recorded \`SUPPRESSED\`, never sent. Test mail is kind \`BROADCAST\` with the broadcast's id, and is counted nowhere (not in the reconciliation, not in variants). \`202\` once the mail is queued. ${NOT_FOUND}`,
      parameters: [...byId, idempotencyKey],
      requestBody: body('BroadcastTestRequest'),
      responses: {
        ...responses('post', { '202': posted('Queued (or recorded SUPPRESSED): one message per address, in request order.', 'BroadcastTestAccepted') }, { 400: ['invalid_uuid', 'invalid_email'], 404: ['broadcast_not_found', 'template_not_found', 'sender_profile_not_found'], 409: ['sender_profile_required', 'sender_domain_not_verified'] }),
        '422': errorResponse('The mail could not be rendered for an address (`template_render_failed`), or the Idempotency-Key was used for a different request.', ['template_render_failed', 'idempotency_key_reused'], rateLimitHeaders),
      },
    },
  },
  '/broadcasts/{broadcastId}/recipients': {
    get: {
      tags: ['Broadcasts'],
      operationId: 'listBroadcastRecipients',
      summary: 'List where each reader went (paginated)',
      description: `Every reader of the audience decided so far, by subscriber id: recipients with their mail's status (\`PENDING\`, \`SENT\`, \`DELIVERED\`, \`DEFERRED\`, \`FAILED\`, \`BOUNCED\`, \`SUPPRESSED\`), \`variant\` and \`messageId\` (null while not queued), and excluded readers with \`status: EXCLUDED\` and their \`reason\`. The counts of each status are the reconciliation's. ${NOT_FOUND}`,
      parameters: [
        ...byId,
        ref('parameters', 'PageNumber'),
        ref('parameters', 'PageSize'),
        { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: [...RECIPIENT_STATUSES] } },
        { name: 'variant', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 3 }, description: 'Only readers of this A/B variant.' },
      ],
      responses: responses('get', { '200': ok('One page of readers.', schemaRef('PaginatedBroadcastRecipients')) }, { 400: ['invalid_uuid'], 404: ['broadcast_not_found'] }),
    },
  },
  '/broadcasts/{broadcastId}/resend-to-non-openers': {
    post: {
      tags: ['Broadcasts'],
      operationId: 'resendToNonOpeners',
      summary: 'Resend to the readers who did not open',
      description: `Only once the broadcast is \`SENT\` (else \`409 broadcast_not_sent\`). Creates a new broadcast (\`resendOf\` names this one) with the same template, sender, segment, topic and send window, \`DRAFT\`, or scheduled as by \`/schedule\` when \`sendAt\` is given. Its readers are this broadcast's recipients whose mail is \`DELIVERED\` when the resend sends and that no human opened (machine opens do not count as opened); they are checked against the audience rules then, like any audience. \`subject\` replaces the subject; without it the original's subject (an A/B test's winning subject) is used, else the template's. ${NOT_FOUND}`,
      parameters: [...byId, idempotencyKey],
      requestBody: body('ResendToNonOpenersRequest', false),
      responses: responses('post', { '201': created('The new broadcast.', 'Broadcast') }, { 400: ['invalid_uuid'], 404: ['broadcast_not_found', ...REFERENCES_404], 409: ['broadcast_not_sent', 'sender_profile_required', 'sender_domain_not_verified'] }),
    },
  },
};

export const broadcastParameters = {
  BroadcastId: { name: 'broadcastId', in: 'path', required: true, schema: uuid },
};

const count = { ...int32, minimum: 0 };
const nullableInstant = { ...instant, type: ['string', 'null'] };
const nullableUuid = { ...uuid, type: ['string', 'null'] };
const abTest = object(['subjects', 'testPercent', 'decideAfterMinutes', 'metric'], {
  subjects: { type: 'array', minItems: 2, maxItems: 4, items: subject, description: 'Liquid subjects; the variant is the index.' },
  testPercent: { ...int32, minimum: 10, maximum: 50, description: 'Share of the recipients in the test group.' },
  decideAfterMinutes: { ...int32, minimum: 15, maximum: 1440, description: 'After the send starts, the winner is decided.' },
  metric: { type: 'string', enum: ['HUMAN_CLICKS', 'HUMAN_OPENS'] },
});
const sendWindow = object(['startHour', 'endHour', 'defaultTimeZone'], {
  startHour: { ...int32, minimum: 0, maximum: 23 },
  endHour: { ...int32, minimum: 1, maximum: 24, description: 'After startHour; 24 is midnight.' },
  timeZoneField: { type: ['string', 'null'], pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'personalizationTagName of a TEXT field holding the reader\'s IANA zone.' },
  defaultTimeZone: { type: 'string', minLength: 1, maxLength: 100, examples: ['Europe/Berlin'], description: 'IANA zone of readers without a valid zone in the field.' },
});
const requestMembers = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  templateName: { type: 'string', minLength: 1, maxLength: 100, examples: ['spring-newsletter'] },
  senderProfileId: nullableUuid,
  segmentId: nullableUuid,
  topicId: nullableUuid,
  subject: nullable(subject),
  abTest: { ...abTest, type: ['object', 'null'] },
  sendWindow: { ...sendWindow, type: ['object', 'null'] },
};

export const broadcastSchemas = {
  BroadcastRequest: object(['name', 'templateName'], requestMembers),
  ScheduleBroadcastRequest: object([], { sendAt: { ...instant, description: 'When to send; absent or not in the future: now.' } }),
  BroadcastTestRequest: object(['emails'], { emails: { type: 'array', minItems: 1, maxItems: 5, items: { type: 'string', minLength: 1, maxLength: 254 } } }),
  BroadcastTestAccepted: object(['messageIds'], { messageIds: { type: 'array', items: uuid } }),
  ResendToNonOpenersRequest: object([], { subject, sendAt: { ...instant, description: 'Schedule the resend at once (as POST /schedule would); absent: DRAFT.' } }),
  BroadcastReconciliation: object(['audience', 'excluded', 'recipients', 'pending', 'sent', 'delivered', 'deferred', 'failed', 'bounced', 'suppressed'], {
    audience: count,
    excluded: object([...EXCLUSION_REASONS], Object.fromEntries(EXCLUSION_REASONS.map((r) => [r, count]))),
    recipients: count,
    pending: count,
    sent: count,
    delivered: count,
    deferred: count,
    failed: count,
    bounced: count,
    suppressed: count,
  }),
  BroadcastVariant: object(['subject', 'recipients', 'delivered', 'humanOpens', 'humanClicks', 'winner'], {
    subject,
    recipients: count,
    delivered: count,
    humanOpens: { ...count, description: 'Mails of the variant with at least one human open.' },
    humanClicks: { ...count, description: 'Mails of the variant with at least one human click.' },
    winner: { type: 'boolean' },
  }),
  Broadcast: object(
    [...Object.keys(requestMembers), 'id', 'status', 'sendAt', 'startedAt', 'finishedAt', 'lastError', 'reconciliation', 'variants', 'resendOf', 'createdAt', 'updatedAt'],
    {
      id: uuid,
      ...requestMembers,
      status: { type: 'string', enum: [...BROADCAST_STATUSES] },
      sendAt: nullableInstant,
      startedAt: nullableInstant,
      finishedAt: nullableInstant,
      lastError: { type: ['string', 'null'], description: 'Why the last step of the send failed (`<errorId>: <text>`): set while it is retried and on FAILED.', examples: ['template_not_found: no email template named "spring" exists in the account'] },
      reconciliation: schemaRef('BroadcastReconciliation'),
      variants: { type: 'array', items: schemaRef('BroadcastVariant'), description: 'One per A/B subject; empty without an A/B test.' },
      resendOf: { ...nullableUuid, description: 'The broadcast whose non-openers this one is sent to.' },
      createdAt: instant,
      updatedAt: instant,
    },
  ),
  PaginatedBroadcasts: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('Broadcast') },
    pageNumber: int32,
    pageSize: int32,
    totalItems: { type: 'integer', format: 'int64' },
    totalPages: int32,
  }),
  BroadcastRecipient: object(['subscriberId', 'email', 'status', 'variant', 'messageId', 'reason'], {
    subscriberId: uuid,
    email: { type: 'string' },
    status: { type: 'string', enum: [...RECIPIENT_STATUSES] },
    variant: { ...int32, type: ['integer', 'null'] },
    messageId: nullableUuid,
    reason: { type: ['string', 'null'], enum: [...EXCLUSION_REASONS, null], description: 'EXCLUDED readers only.' },
  }),
  PaginatedBroadcastRecipients: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('BroadcastRecipient') },
    pageNumber: int32,
    pageSize: int32,
    totalItems: { type: 'integer', format: 'int64' },
    totalPages: int32,
  }),
};

export const broadcastTags = [{ name: 'Broadcasts', description: 'One-off newsletters to an audience, now or later: A/B subjects decided by human engagement, send windows in the reader\'s zone, a reconciliation of where every reader went, resend to non-openers.' }];
