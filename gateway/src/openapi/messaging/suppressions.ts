import { SuppressionReasons } from '../../mapping/suppressions';
import { ok, ref, schemaRef } from '../common';
import { ERROR_IDS_KEYWORD } from '../keywords';
import { body, idempotencyKey, noContent, object, responses } from '../operations';
import { int32, int64, MAX } from '../subscriber/shared';

/** The suppression list (the API contract "Delivery facts, tracking, bounces, suppressions, unsubscribe"). */

export const suppressionTags = [
  {
    name: 'Suppressions',
    description:
      'Addresses no mail of the account goes to (transactional mail included: such a send is accepted as `SUPPRESSED`). Bounces and complaints add them (`HARD_BOUNCE`: a permanent failure, 5.x.x; `SOFT_BOUNCES`: the third temporary failure, 4.x.x, of one address within 7 days; `COMPLAINT`: the reader reported a mail as spam); customers add `MANUAL` ones and remove any.',
  },
];

const emailSchema = { type: 'string', minLength: 1, maxLength: MAX.email, [ERROR_IDS_KEYWORD]: { minLength: 'invalid_email', maxLength: 'invalid_email' } };
const canonical = 'The address is canonicalised (trimmed, lowercased) like subscriber addresses; one that is not a valid address answers `400 invalid_email`.';

export const suppressionPaths = {
  '/suppressions': {
    get: {
      tags: ['Suppressions'],
      operationId: 'listSuppressions',
      summary: 'List suppressed addresses (paginated)',
      description: `Newest first (then by id). \`email\` finds one address (exact match after canonicalisation; an invalid address answers \`400 invalid_email\`); \`reason\` filters by reason.`,
      parameters: [
        ref('parameters', 'PageNumber'),
        ref('parameters', 'PageSize'),
        { name: 'email', in: 'query', required: false, schema: emailSchema, description: 'Only this address.' },
        { name: 'reason', in: 'query', required: false, schema: schemaRef('SuppressionReason') },
      ],
      responses: responses('get', { '200': ok('One page of suppressions.', schemaRef('PaginatedSuppressions')) }, { 400: ['invalid_email'] }),
    },
    post: {
      tags: ['Suppressions'],
      operationId: 'addSuppression',
      summary: 'Suppress an address by hand',
      description: `Adds the address with reason \`MANUAL\`: \`201\`. An address already on the list keeps its entry and its first reason (a bounce or complaint entry is not turned into \`MANUAL\`): \`200\` with that entry, so a retry is harmless. ${canonical} The subscriber's status is not changed.`,
      parameters: [idempotencyKey],
      requestBody: body('AddSuppressionRequest'),
      responses: responses(
        'post',
        {
          '201': ok('Added.', schemaRef('Suppression'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }),
          '200': ok('The address was suppressed already: its entry, unchanged.', schemaRef('Suppression'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }),
        },
        { 400: ['invalid_email'] },
      ),
    },
  },
  '/suppressions/{email}': {
    delete: {
      tags: ['Suppressions'],
      operationId: 'deleteSuppression',
      summary: 'Remove an address from the suppression list',
      description: `The address can receive mail again. Its subscriber status is not changed (a \`BOUNCED\` or \`COMPLAINED\` subscriber stays so until set otherwise with PUT /subscribers/{subscriberId}/status). The address is percent-decoded from the path (encode \`/\`, \`?\`, \`#\`, \`%\` and spaces). ${canonical} An address that is not on the list answers \`404 suppression_not_found\`.`,
      parameters: [ref('parameters', 'SuppressedEmail')],
      responses: responses('delete', { '204': noContent('Removed.') }, { 400: ['invalid_email'], 404: ['suppression_not_found'] }),
    },
  },
};

export const suppressionParameters = {
  SuppressedEmail: {
    name: 'email',
    in: 'path',
    required: true,
    schema: emailSchema,
    description: 'The email address, percent-encoded in the URL (`ann%40example.org`; Swagger UI encodes what is typed, so type it plain).',
    examples: { plain: { value: 'ann@example.org' } },
  },
};

export const suppressionSchemas = {
  SuppressionReason: { type: 'string', enum: [...SuppressionReasons.names] },
  Suppression: object(['email', 'reason', 'createdAt', 'messageId'], {
    email: { type: 'string', description: 'Canonical (lowercase).', examples: ['ann@example.org'] },
    reason: schemaRef('SuppressionReason'),
    createdAt: { type: 'string', format: 'date-time', description: 'UTC instant, ISO 8601 with `Z`.' },
    messageId: { type: ['string', 'null'], format: 'uuid', description: 'The message whose bounce or complaint added the address; null for `MANUAL`.' },
  }),
  PaginatedSuppressions: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('Suppression') },
    pageNumber: { ...int32, minimum: 1 },
    pageSize: { ...int32, minimum: 1 },
    totalItems: int64,
    totalPages: { ...int32, minimum: 0 },
  }),
  AddSuppressionRequest: object(['email'], { email: emailSchema }),
};
