import { FORM_DECISIONS } from '@mailer/nats/facts';
import { ok, ref, schemaRef } from '../common';
import { object, responses } from '../operations';
import { int32, int64 } from '../subscriber/shared';

/** A form's submissions log and its double opt-in decisions (form service, the API contract "Forms"). */

const DECISIONS = `Decisions (docs/integrators.md "Signup forms"), checked in this order:
- \`SUPPRESSED_SUBSCRIBER_POLICY\`: the address is on the account's suppression list (no subscriber is created), or its subscriber is BLOCKED, BOUNCED, COMPLAINED or UNSUBSCRIBED (nothing changes).
- \`SUPPRESSED_SUBSCRIBER_LIMIT\`: a new address, and the account's subscriber quota (operator setting FORM_ACCOUNT_SUBSCRIBER_LIMIT) is reached.
- null once decided (\`processedAt\` set) for a single opt-in form: the subscriber is ACTIVE.
- \`SUPPRESSED_ALREADY_SUBSCRIBED\`: the subscriber is ACTIVE; the form's topics are added, no mail.
- \`CONFIRMATION_MAIL_ALREADY_SENT\`: this form sent the address a confirmation in the last 10 minutes.
- \`SUPPRESSED_COOLDOWN\`: 3 confirmation mails went to the address (any form of the account) in the last 24 h.
- \`SUPPRESSED_CUSTOMER_LIMIT\`: the account's forms sent FORM_ACCOUNT_DAILY_CONFIRMATIONS confirmation mails today (UTC).
- \`QUEUED\`: a new or UNCONFIRMED address; the subscriber is UNCONFIRMED and the confirmation mail is queued.
Each decision is also the \`form.submitted\` fact. A submission is decided shortly after its \`202\` (\`decision\` and \`processedAt\` null until then).`;

export const submissionPaths = {
  '/forms/{formId}/submissions': {
    get: {
      tags: ['Forms'],
      operationId: 'listFormSubmissions',
      summary: "The form's submissions and their decisions (paginated)",
      description: `Every accepted public submission of the form, newest first; \`decision\` filters. Honeypot (bot) submissions are never stored. A form of another account is unknown here (\`404 form_not_found\`).\n\n${DECISIONS}`,
      parameters: [
        ref('parameters', 'FormId'),
        ref('parameters', 'PageNumber'),
        ref('parameters', 'PageSize'),
        { name: 'decision', in: 'query', required: false, schema: schemaRef('FormDecision') },
      ],
      responses: responses('get', { '200': ok('One page of submissions.', schemaRef('PaginatedFormSubmissions')) }, { 400: ['invalid_uuid'], 404: ['form_not_found'] }),
    },
  },
};

export const submissionSchemas = {
  FormDecision: { type: 'string', enum: [...FORM_DECISIONS] },
  FormSubmission: object(['submissionId', 'email', 'subscriberId', 'decision', 'submittedAt', 'processedAt', 'consent', 'values'], {
    submissionId: { type: 'string', format: 'uuid' },
    email: { type: 'string', description: 'Canonical (lowercase).' },
    subscriberId: { type: ['string', 'null'], format: 'uuid', description: 'The subscriber the submission created or found; null when none (suppressed address, subscriber quota) or not decided yet.' },
    decision: { oneOf: [schemaRef('FormDecision'), { type: 'null' }], description: 'null until decided, and for a single opt-in form.' },
    submittedAt: { type: 'string', format: 'date-time' },
    processedAt: { type: ['string', 'null'], format: 'date-time', description: 'When the decision was taken; null until then.' },
    consent: {
      oneOf: [object(['text', 'givenAt'], { text: { type: 'string' }, givenAt: { type: 'string', format: 'date-time' } }), { type: 'null' }],
    },
    values: { type: 'object', additionalProperties: true, description: 'The submitted values by personalizationTagName, as validated. Customer text: escape it before showing it in a page.' },
  }),
  PaginatedFormSubmissions: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('FormSubmission') },
    pageNumber: { ...int32, minimum: 1 },
    pageSize: { ...int32, minimum: 1 },
    totalItems: int64,
    totalPages: { ...int32, minimum: 0 },
  }),
};
