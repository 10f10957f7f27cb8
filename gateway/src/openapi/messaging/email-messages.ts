import { errorResponse, freeFormObject, instant, ok, rateLimitHeaders, ref, schemaRef, uuid } from '../common';
import { PER_ITEM_KEYWORD } from '../keywords';
import { body, idempotencyKey, object, posted, responses } from '../operations';
import { emailAddress, int32, nullable } from '../subscriber/shared';

/** Transactional email (the API contract "Transactional email", messaging service): accept a message, read messages back. */

export const EMAIL_MESSAGE_STATUSES = ['QUEUED', 'DEFERRED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'SUPPRESSED'];
const SUPPRESSION_REASONS = ['HARD_BOUNCE', 'COMPLAINT', 'MANUAL', 'SOFT_BOUNCES', 'BLOCKED'];
const templateName = { type: 'string', minLength: 1, maxLength: 100, examples: ['order-confirmation'], description: 'The email template\'s name.' };
const freeForm = (what: string) => freeFormObject(`${what} Free-form JSON object (any members, nested values); null or absent: none.`);

const SEND = `Renders the template \`name\` for \`email\` at once and queues it for delivery.
- Rendering happens now, so nothing broken is queued: an unknown template answers \`404 template_not_found\`, a render failure (a render-time, output-size or memory limit, a failing filter) \`422 template_render_failed\` with the engine's message. \`substitutionData\` members are the template's top-level variables; the names \`subscriber\`, \`event\` and \`links\` are reserved (\`400 reserved_substitution_key\`). \`subscriber\` is \`{email, firstName, fields}\` when the address is a subscriber of the account, else \`{email}\`.
- The sender is the template's sender profile, else the account's default; with no profile at all \`409 sender_profile_required\`; where the installation requires verified domains, a sender whose domain is not a VERIFIED sending domain of the account is \`409 sender_domain_not_verified\` (nothing is queued).
- \`202\` is answered only once the rendered message and its delivery job are durably stored (one transaction); the answer also waits (bounded) until the job is on the job stream.
- Transactional mail ignores unsubscribes and topic opt-outs, but it never goes to a suppressed address or to a subscriber whose status is \`BLOCKED\`: such a message is still recorded, with \`status: SUPPRESSED\` and its \`suppressionReason\` (\`HARD_BOUNCE\`, \`COMPLAINT\`, \`MANUAL\`, \`SOFT_BOUNCES\` or \`BLOCKED\`), and is never sent.
- Open and click tracking follow the template's \`tracking\`: an open pixel is added and every http(s) link is rewritten to a tracking link that redirects to the original.
- \`eventProperties\` is stored with the message and travels into its delivery and engagement facts (webhooks); it is never rendered into the mail.
- With \`Idempotency-Key\`, a retry with the same body replays the first answer (same \`messageId\`); only one message is stored.`;

const BATCH = `Up to 500 messages in one request, each accepted or refused on its own exactly as \`POST /email-messages\` would answer it alone (the same template rendering, suppression and BLOCKED rules, the same errorIds), in request order: \`results[i]\` answers \`messages[i]\` with \`{index, messageId, status}\` (\`QUEUED\` or \`SUPPRESSED\`) or \`{index, errorId, message}\`. One refused message never refuses the others, and a message that does not satisfy the schema (a member missing or of the wrong type) is refused alone with \`validation_failed\` (or \`invalid_email\`, \`unknown_property\`).
- An empty list or more than 500 messages is \`400 validation_failed\` for the whole request; so is a body that is no \`{messages: [...]}\`. Bodies may be up to 10 MiB.
- The accepted messages are stored with their delivery jobs in one transaction and \`200\` is answered once they are (and, bounded, once the jobs are on the job stream). When a service the batch needs does not answer, or the messaging service is too busy to render the batch within 8 s, the whole request is \`503\` and nothing is stored. Give messages an \`idempotencyKey\` all the same: a retry is then safe whatever happened to the first request.
- \`idempotencyKey\` (optional, 1-255 characters, per message): the same key again with the same message (template, address, values; member order ignored) answers the first message's \`messageId\` and status and stores nothing; with a different message it is refused with \`idempotency_key_reused\`. A key names its message for as long as the message is kept. Two messages of one request with the same key are one message.
- The whole request counts as one request for the rate limits.`;

const MESSAGE_NOTES = `\`history\` lists every status the message took with its time, oldest first (beyond the API contract: it starts with \`QUEUED\` or \`SUPPRESSED\`). \`attempts\` lists delivery attempts (\`outcome\` \`STARTED\` before a send, then \`SENT\`, \`DEFERRED\`, \`BOUNCED\` or \`FAILED\`). Members without a value are \`null\`.`;

export const emailMessagePaths = {
  '/email-messages': {
    get: {
      tags: ['Email messages'],
      operationId: 'listEmailMessages',
      summary: 'List email messages (paginated)',
      description: `Newest first (then by id). Filters combine with AND; \`email\` is compared in canonical form (trimmed, lowercased). ${MESSAGE_NOTES}`,
      parameters: [
        ref('parameters', 'PageNumber'),
        ref('parameters', 'PageSize'),
        { name: 'email', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: 254 }, description: 'Only messages to this address.' },
        { name: 'templateName', in: 'query', required: false, schema: templateName, description: 'Only messages of this template.' },
        { name: 'status', in: 'query', required: false, schema: schemaRef('EmailMessageStatus') },
      ],
      responses: responses('get', { '200': ok('One page of messages.', schemaRef('PaginatedEmailMessages')) }, {}),
    },
    post: {
      tags: ['Email messages'],
      operationId: 'sendEmailMessage',
      summary: 'Send a transactional email',
      description: SEND,
      parameters: [idempotencyKey],
      requestBody: body('SendEmailMessageRequestDto'),
      responses: {
        ...responses(
          'post',
          { '202': posted('Accepted: stored and queued (`QUEUED`), or recorded and not sent (`SUPPRESSED`).', 'EmailMessageAccepted') },
          { 400: ['invalid_email', 'reserved_substitution_key'], 404: ['template_not_found', 'sender_profile_not_found'], 409: ['sender_profile_required', 'sender_domain_not_verified'] },
        ),
        '422': errorResponse(
          '`template_render_failed`: the template could not be rendered with these values (the message and `details` say where and why); nothing was stored. `idempotency_key_reused`: the Idempotency-Key was used for a different request.',
          ['template_render_failed', 'idempotency_key_reused'],
          rateLimitHeaders,
        ),
      },
    },
  },
  '/email-messages/batch': {
    post: {
      tags: ['Email messages'],
      operationId: 'sendEmailMessages',
      summary: 'Send a batch of transactional email',
      description: BATCH,
      parameters: [idempotencyKey],
      requestBody: { ...body('SendEmailMessagesRequest'), [PER_ITEM_KEYWORD]: 'messages' },
      responses: responses('post', { '200': posted('Each message\'s answer, in request order.', 'SendEmailMessagesResult') }, {}, { maxBody: '10 MiB' }),
    },
  },
  '/email-messages/{messageId}': {
    get: {
      tags: ['Email messages'],
      operationId: 'getEmailMessage',
      summary: 'Get an email message',
      description: `A message of another account is unknown here (\`404 email_message_not_found\`). ${MESSAGE_NOTES}`,
      parameters: [ref('parameters', 'MessageId')],
      responses: responses('get', { '200': ok('The message.', schemaRef('EmailMessage')) }, { 400: ['invalid_uuid'], 404: ['email_message_not_found'] }),
    },
  },
};

export const emailMessageParameters = {
  MessageId: { name: 'messageId', in: 'path', required: true, schema: uuid },
};

const nullableInstant = { ...instant, type: ['string', 'null'] };

export const emailMessageSchemas = {
  EmailMessageStatus: { type: 'string', enum: EMAIL_MESSAGE_STATUSES, description: '`QUEUED` -> `SENT` (the relay accepted it) -> `DELIVERED`, possibly `BOUNCED` later; `DEFERRED` while temporary failures are retried; `FAILED` when retries ran out; `SUPPRESSED` is never left.' },
  SendEmailMessageRequestDto: object(['name', 'email'], {
    name: templateName,
    email: emailAddress,
    substitutionData: freeForm('Values for the template.'),
    eventProperties: freeForm('Stored with the message and carried into its facts; never rendered.'),
  }),
  BatchEmailMessage: object(['name', 'email'], {
    name: templateName,
    email: emailAddress,
    substitutionData: freeForm('Values for the template.'),
    eventProperties: freeForm('Stored with the message and carried into its facts; never rendered.'),
    idempotencyKey: { type: 'string', minLength: 1, maxLength: 255, description: 'Names this message: a retry with the same key and message answers the first one.' },
  }),
  SendEmailMessagesRequest: object(['messages'], { messages: { type: 'array', minItems: 1, maxItems: 500, items: schemaRef('BatchEmailMessage') } }),
  SendEmailMessagesResult: object(['results'], {
    results: {
      type: 'array',
      items: {
        oneOf: [
          object(['index', 'messageId', 'status'], { index: int32, messageId: uuid, status: { type: 'string', enum: ['QUEUED', 'SUPPRESSED'] } }),
          object(['index', 'errorId', 'message'], { index: int32, errorId: { type: 'string', examples: ['template_not_found'] }, message: { type: 'string' } }),
        ],
      },
    },
  }),
  EmailMessageAccepted: object(['messageId', 'status'], {
    messageId: uuid,
    status: { type: 'string', enum: ['QUEUED', 'SUPPRESSED'] },
  }),
  EmailMessage: object(
    ['messageId', 'kind', 'templateName', 'broadcastId', 'email', 'subscriberId', 'subject', 'status', 'suppressionReason', 'createdAt', 'sentAt', 'deliveredAt', 'bouncedAt', 'bounce', 'openCount', 'firstOpenedAt', 'machineOpenCount', 'clickCount', 'firstClickedAt', 'attempts', 'eventProperties', 'history'],
    {
      messageId: uuid,
      kind: { type: 'string', enum: ['TRANSACTIONAL', 'AUTOMATION', 'RSS', 'BROADCAST'] },
      templateName: nullable(templateName),
      email: { type: 'string' },
      subscriberId: { ...uuid, type: ['string', 'null'], description: 'The subscriber with this address when the message was accepted, else null.' },
      subject: { type: 'string' },
      status: schemaRef('EmailMessageStatus'),
      suppressionReason: { type: ['string', 'null'], enum: [...SUPPRESSION_REASONS, null] },
      createdAt: instant,
      sentAt: nullableInstant,
      deliveredAt: nullableInstant,
      bouncedAt: nullableInstant,
      bounce: {
        type: ['object', 'null'],
        required: ['type', 'diagnosticCode'],
        properties: { type: { type: 'string', enum: ['HARD', 'SOFT'] }, diagnosticCode: { type: ['string', 'null'] } },
        additionalProperties: false,
      },
      openCount: int32,
      firstOpenedAt: nullableInstant,
      machineOpenCount: int32,
      clickCount: int32,
      firstClickedAt: nullableInstant,
      attempts: {
        type: 'array',
        items: object(['at', 'outcome', 'smtpCode', 'response'], {
          at: instant,
          outcome: { type: 'string', enum: ['STARTED', 'SENT', 'DEFERRED', 'BOUNCED', 'FAILED'] },
          smtpCode: { ...int32, type: ['integer', 'null'] },
          response: { type: ['string', 'null'] },
        }),
      },
      eventProperties: freeForm('As sent.'),
      history: { type: 'array', items: object(['status', 'at'], { status: schemaRef('EmailMessageStatus'), at: instant }) },
      broadcastId: { ...uuid, type: ['string', 'null'], description: 'The broadcast of a BROADCAST mail (its readers\' mail and its test sends), else null.' },
    },
  ),
  PaginatedEmailMessages: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('EmailMessage') },
    pageNumber: int32,
    pageSize: int32,
    totalItems: { type: 'integer', format: 'int64' },
    totalPages: int32,
  }),
};

export const emailMessageTags = [{ name: 'Email messages', description: 'Transactional email: send a message rendered from a template, read messages and their delivery history.' }];
