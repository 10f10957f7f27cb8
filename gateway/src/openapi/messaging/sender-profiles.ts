import { instant, ok, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, responses } from '../operations';

/** Sender profiles (messaging service, the API contract "Sender profiles"). Limits: services/messaging/src/templates/domain/sender-profile.ts. */

export const SENDER_LIMITS = { name: 100, fromName: 100, email: 254 } as const;

const profilePath = [ref('parameters', 'SenderProfileId')];
const NOT_FOUND = 'A profile of another account is unknown here (`404 sender_profile_not_found`).';
const DEFAULT_RULES = `Default: an account has exactly one default profile once it has any. Its first profile becomes the default whatever \`isDefault\` says; \`isDefault: true\` on create or PUT moves the flag to that profile (the previous default loses it in the same transaction); absent or \`null\` on PUT keeps the flag where it is; \`isDefault: false\` on the current default is refused (\`409 sender_profile_is_default\`: move the flag instead). A send that names no profile uses the default; with no profile at all it is refused (\`409 sender_profile_required\`).`;
const VALUES = `\`name\` (a label for people): 1-${SENDER_LIMITS.name} characters after trimming; names need not be unique. \`fromName\` (the display name of From): 1-${SENDER_LIMITS.fromName} characters after trimming, no line breaks or control characters (it becomes a mail header). \`fromEmail\` and \`replyTo\`: valid addresses of at most ${SENDER_LIMITS.email} characters (\`400 invalid_email\`), stored canonical (trimmed, lowercased). When the operator sets \`MAIL_ALLOWED_FROM_DOMAINS\`, a \`fromEmail\` of another domain is refused with \`400 sender_domain_not_allowed\` (\`replyTo\` may be any address); the setting is checked when a profile is saved, so profiles saved before it changed keep their address until they are saved again. Where the installation requires verified domains, the \`fromEmail\` domain must be a VERIFIED sending domain of the account (exactly that domain; see Sending domains), on create, on PUT and at every send (\`409 sender_domain_not_verified\`): a profile saved before, or whose domain lost its verification, cannot send. Mail is DKIM-signed with the account's own key of its verified domain.`;
const WRITE_400 = ['invalid_email', 'sender_domain_not_allowed'];
const WRITE_409 = ['sender_domain_not_verified'];

export const senderProfilePaths = {
  '/sender-profiles': {
    get: {
      tags: ['Sender profiles'],
      operationId: 'listSenderProfiles',
      summary: 'List sender profiles',
      description: 'Every sender profile of the account, oldest first.',
      responses: responses('get', { '200': ok('The sender profiles.', schemaRef('SenderProfileList')) }, {}),
    },
    post: {
      tags: ['Sender profiles'],
      operationId: 'createSenderProfile',
      summary: 'Create a sender profile',
      description: `${VALUES}\n\n${DEFAULT_RULES}`,
      parameters: [idempotencyKey],
      requestBody: body('SenderProfileRequest'),
      responses: responses('post', { '201': created('Created.', 'SenderProfile') }, { 400: WRITE_400, 409: WRITE_409 }),
    },
  },
  '/sender-profiles/{senderProfileId}': {
    get: {
      tags: ['Sender profiles'],
      operationId: 'getSenderProfile',
      summary: 'Get a sender profile',
      description: NOT_FOUND,
      parameters: profilePath,
      responses: responses('get', { '200': ok('The sender profile.', schemaRef('SenderProfile')) }, { 400: ['invalid_uuid'], 404: ['sender_profile_not_found'] }),
    },
    put: {
      tags: ['Sender profiles'],
      operationId: 'updateSenderProfile',
      summary: 'Replace a sender profile',
      description: `The same body as on create; every member is replaced (an absent \`replyTo\` clears it). Messages already accepted keep the sender they were accepted with. ${NOT_FOUND}\n\n${VALUES}\n\n${DEFAULT_RULES}`,
      parameters: profilePath,
      requestBody: body('SenderProfileRequest'),
      responses: responses('put', { '200': ok('The updated sender profile.', schemaRef('SenderProfile')) }, {
        400: ['invalid_uuid', ...WRITE_400],
        404: ['sender_profile_not_found'],
        409: ['sender_profile_is_default', ...WRITE_409],
      }),
    },
    delete: {
      tags: ['Sender profiles'],
      operationId: 'deleteSenderProfile',
      summary: 'Delete a sender profile',
      description: `Refused with \`409 sender_profile_in_use\` while an email template, a signup form or an RSS newsletter names the profile (\`details\` lists them as \`emailTemplates.<name>\`, \`forms.<formId>\` and \`rssNewsletters.<newsletterId>\`; when the form or rss service does not answer, \`503 service_unavailable\`: the delete cannot be proven safe). Deleting the default profile makes the oldest remaining profile the default (in the same transaction); deleting the last profile leaves the account without one (sends then answer \`409 sender_profile_required\`). Messages already accepted keep their sender. ${NOT_FOUND}`,
      parameters: profilePath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['sender_profile_not_found'], 409: ['sender_profile_in_use'] }),
    },
  },
};

export const senderProfileParameters = {
  SenderProfileId: { name: 'senderProfileId', in: 'path', required: true, schema: uuid },
};

// Syntax is checked by the service (`400 invalid_email`), after trimming: ` News@Example.com ` is accepted as `news@example.com`.
const email = { type: 'string', minLength: 1, maxLength: SENDER_LIMITS.email + 100 };

export const senderProfileSchemas = {
  SenderProfileRequest: object(['name', 'fromEmail', 'fromName'], {
    name: { type: 'string', minLength: 1, maxLength: SENDER_LIMITS.name, examples: ['Newsletter'] },
    fromEmail: { ...email, description: 'Trimmed and lowercased; invalid syntax answers `400 invalid_email`.', examples: ['news@example.com'] },
    fromName: { type: 'string', minLength: 1, maxLength: SENDER_LIMITS.fromName, examples: ['Example News'] },
    replyTo: { type: ['string', 'null'], maxLength: SENDER_LIMITS.email + 100, description: 'Trimmed and lowercased (invalid syntax: `400 invalid_email`). Absent or null: replies go to fromEmail.' },
    isDefault: { type: ['boolean', 'null'], description: '`true` moves the default flag to this profile; see the operation.' },
  }),
  SenderProfile: object(['id', 'name', 'fromEmail', 'fromName', 'replyTo', 'isDefault', 'createdAt', 'updatedAt'], {
    id: uuid,
    name: { type: 'string' },
    fromEmail: { type: 'string' },
    fromName: { type: 'string' },
    replyTo: { type: ['string', 'null'] },
    isDefault: { type: 'boolean' },
    createdAt: instant,
    updatedAt: instant,
  }),
  SenderProfileList: object(['items'], { items: { type: 'array', items: schemaRef('SenderProfile') } }),
};
