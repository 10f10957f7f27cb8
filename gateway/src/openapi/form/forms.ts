import { instant, ok, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, posted, responses } from '../operations';
import { ids } from '../subscriber/shared';

/** Signup forms (form service, the API contract "Forms"). Limits: services/form/src/domain/form-request.ts. */

export const FORM_LIMITS = { name: 200, inputFields: 50, label: 200, placeholder: 200, topicIds: 100, allowedOrigins: 20, origin: 253, domain: 253 } as const;
export const FORM_TYPES = ['DEFAULT', 'SLIDER', 'INLINE', 'POPUP', 'PAGE'] as const;
export const FORM_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export const LANDING_PAGE_STATUSES = ['DRAFT', 'PUBLISHED', 'UNPUBLISHED'] as const;
export const FORM_INPUT_CONTROLS = ['TEXT_INPUT', 'TEXTAREA', 'EMAIL_INPUT', 'NUMBER_INPUT', 'DATE_INPUT', 'CHECKBOX', 'SELECT', 'RADIO_GROUP', 'CHECKBOX_GROUP', 'SELECT_MULTIPLE'] as const;

const formPath = [ref('parameters', 'FormId')];
const NOT_FOUND = 'A form of another account is unknown here (`404 form_not_found`).';

const CONTROLS = `\`inputControl\` must fit the field type (\`400 form_input_control_invalid\`); absent or null takes the first of: TEXT: TEXT_INPUT, TEXTAREA; LONG_TEXT: TEXTAREA, TEXT_INPUT; EMAIL: EMAIL_INPUT; NUMBER: NUMBER_INPUT, TEXT_INPUT; DATE: DATE_INPUT, TEXT_INPUT; BOOLEAN: CHECKBOX; SINGLE_CHOICE: SELECT, RADIO_GROUP; MULTI_CHOICE: CHECKBOX_GROUP, SELECT_MULTIPLE.`;

const RULES = `Rules of the body:
- \`inputFields\` (1-${FORM_LIMITS.inputFields}, in display order; \`position\` is the index) are resolved against the account's field catalog when the form is saved: \`fieldType\`, \`personalizationTagName\` and \`optionValues\` (the labels of the field's active options, in option order) come from the field; \`label\` defaults to the field's label, \`placeholder\` to "". Whenever the form is read afterwards (GET, the embedding) and wherever readers meet it (its landing page, public submissions), \`personalizationTagName\` and \`optionValues\` are the field's as they are at that moment: an option added to the field is offered and accepted at once and a deactivated one disappears, without saving the form again; the form's \`label\`, \`placeholder\`, order, \`isRequired\` and \`inputControl\` stay as saved (the subscriber service unreachable: \`503 service_unavailable\` here; readers then get the form as saved, and their choices are matched against the active options again when a submission is decided). A field of another account or none at all is \`404 field_not_found\`; an archived field \`409 field_archived\` (an INACTIVE form may keep one it already had; activating it is then refused the same way); an internal field \`400 form_field_internal\` (internal fields are hidden from subscriber-facing forms); the same field twice \`400 form_field_duplicate\`.
- The built-in EMAIL field must be an input with \`isRequired: true\` (\`400 form_email_field_required\`), and every active field the catalog marks \`required\` must be an input with \`isRequired: true\` (\`400 form_required_field_missing\`, each in \`details\`).
- ${CONTROLS}
- \`topicIds\`: topics of the account a subscriber joins through the form (\`404 topic_not_found\`; inactive: \`400 topic_inactive\`).
- \`doubleOptIn\` defaults to true. \`senderProfileId\` (null: the account's default profile) and \`confirmationTemplateName\` (null: the built-in confirmation mail) must exist in the account (\`404 sender_profile_not_found\`, \`404 template_not_found\`); while a form names them they cannot be deleted (\`409 sender_profile_in_use\`, \`409 template_in_use\`). The confirmation mail (double opt-in) is transactional (no List-Unsubscribe) and, with the built-in template, untracked; a template of the account used as \`confirmationTemplateName\` gets these values besides \`subscriber\`: \`confirmUrl\` (the signed confirm link, \`<public address>/public/confirm/<token>\`; put it in an \`href\`), \`form.id\`, \`form.name\`, \`expiresAt\` (ISO 8601), \`expiresOn\` (e.g. "1 December 2026, 10:36 UTC") and \`expiryDays\` (how long the link works, 7 unless the operator changed it). Its own tracking flags apply: with click tracking the link goes through the click redirect to the same page.
- \`routePath\` and \`domain\` are for \`PAGE\` forms only (\`400 form_route_not_allowed\`). \`routePath\` matches \`^[a-z0-9-]{1,64}$\` and is unique per domain across the whole installation (\`409 route_path_taken\`, whatever account holds it). \`domain\` is a host name (lowercased; an optional port is kept) serving the page instead of the host of the API's public address; null, or that very host, means the default host (answered as null). Point the domain's DNS at the API's public address. Where the installation requires verified domains, \`domain\` must be a VERIFIED sending domain of the form's own account (see Sending domains; the exact host, without the port), checked on create, PUT and publish (\`409 page_domain_not_verified\`): nobody can hold routes on a domain they have not proven to control. The page is served only while the account has the domain VERIFIED: once a verify finds its ownership record gone (the domain is PENDING again), the page answers 404 within a minute, though it stays PUBLISHED, until the domain is verified again.
- \`allowedOrigins\`: up to ${FORM_LIMITS.allowedOrigins} origins (\`scheme://host[:port]\`, no path) of websites that embed the form: a browser posting from one (a plain HTML form or \`fetch\`; both send \`Origin\`) is accepted, with CORS headers. Stored canonical (lowercase, no trailing slash, no default port); a repeated origin, in any spelling, is stored once. The form's own landing page (on the public address or its \`domain\`) needs no entry. A browser post from any other origin, \`null\` included (a sandboxed frame, a page sending \`Referrer-Policy: no-referrer\`), is refused with \`403 origin_not_allowed\` (a plain page for a browser); posts without \`Origin\` (servers) are not browser posts and are accepted.
- Unknown ids of other accounts (fields, topics, sender profiles) are \`404\` exactly as ids that exist nowhere.`;

const STATES = `States: new forms are \`ACTIVE\` with the landing page \`DRAFT\`. activate/deactivate switch \`status\` (the same transition twice answers the form unchanged; activating a form whose fields were archived meanwhile is \`409 field_archived\`). Only an ACTIVE form accepts submissions and can be embedded. publish moves the landing page DRAFT or UNPUBLISHED -> PUBLISHED and sets \`lastPublishedAt\`; unpublish PUBLISHED -> UNPUBLISHED (a page that is not PUBLISHED is answered unchanged); a PUBLISHED page again is answered unchanged. Only \`PAGE\` forms with a \`routePath\` can be published: anything else is \`409 form_not_publishable\`. While PUBLISHED, \`publicUrl\` is \`https://<domain>/public/pages/<routePath>\`, or \`<public address>/public/pages/<routePath>\` for the default host, and a PUT cannot change the type or remove the routePath (\`409 landing_page_published\`: unpublish first); moving it to another routePath is allowed.`;

const WRITE_400 = ['duplicate_ids', 'form_email_field_required', 'form_required_field_missing', 'form_field_duplicate', 'form_field_internal', 'form_input_control_invalid', 'form_route_not_allowed', 'topic_inactive'];
const WRITE_404 = ['field_not_found', 'topic_not_found', 'sender_profile_not_found', 'template_not_found'];

const stateOperation = (operationId: string, summary: string, description: string, conflicts: string[]) => ({
  post: {
    tags: ['Forms'],
    operationId,
    summary,
    description: `${description} ${NOT_FOUND}\n\n${STATES}`,
    parameters: [...formPath, idempotencyKey],
    responses: responses('post', { '200': posted('The form\'s overview after the change.', 'FormOverviewDto') }, { 400: ['invalid_uuid'], 404: ['form_not_found'], 409: conflicts }, { body: false }),
  },
});

export const formPaths = {
  '/forms': {
    get: {
      tags: ['Forms'],
      operationId: 'listForms',
      summary: 'List signup forms',
      description: 'Every form of the account, oldest first, as overviews.',
      responses: responses('get', { '200': ok('The forms.', schemaRef('FormOverviewList')) }, {}),
    },
    post: {
      tags: ['Forms'],
      operationId: 'createForm',
      summary: 'Create a signup form',
      description: `${RULES}\n\n${STATES}`,
      parameters: [idempotencyKey],
      requestBody: body('FormRequest'),
      responses: responses('post', { '201': created('Created (ACTIVE, landing page DRAFT).', 'Form') }, { 400: ['invalid_uuid', ...WRITE_400], 404: WRITE_404, 409: ['field_archived', 'route_path_taken', 'page_domain_not_verified'] }),
    },
  },
  '/forms/{formId}': {
    get: {
      tags: ['Forms'],
      operationId: 'getForm',
      summary: 'Get a signup form',
      description: NOT_FOUND,
      parameters: formPath,
      responses: responses('get', { '200': ok('The form.', schemaRef('Form')) }, { 400: ['invalid_uuid'], 404: ['form_not_found'] }),
    },
    put: {
      tags: ['Forms'],
      operationId: 'updateForm',
      summary: 'Replace a signup form',
      description: `The same body as on create; every member is replaced (absent optional members are cleared). \`status\`, the landing page state and \`lastPublishedAt\` are kept. ${NOT_FOUND}\n\n${RULES}\n\n${STATES}`,
      parameters: formPath,
      requestBody: body('FormRequest'),
      responses: responses('put', { '200': ok('The updated form.', schemaRef('Form')) }, {
        400: ['invalid_uuid', ...WRITE_400],
        404: ['form_not_found', ...WRITE_404],
        409: ['field_archived', 'route_path_taken', 'landing_page_published', 'page_domain_not_verified'],
      }),
    },
    delete: {
      tags: ['Forms'],
      operationId: 'deleteForm',
      summary: 'Delete a signup form',
      description: `The form stops accepting submissions at once and its landing page (if any) disappears; its routePath becomes free. ${NOT_FOUND}`,
      parameters: formPath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['form_not_found'] }),
    },
  },
  '/forms/{formId}/activate': stateOperation('activateForm', 'Activate a signup form', 'The form accepts submissions again.', ['field_archived']),
  '/forms/{formId}/deactivate': stateOperation('deactivateForm', 'Deactivate a signup form', 'The form stops accepting submissions (`404 form_inactive`) and cannot be embedded.', []),
  '/forms/{formId}/publish': stateOperation('publishForm', 'Publish the landing page', 'The landing page of a `PAGE` form goes live at `publicUrl` (its custom `domain`, if any, must be verified where the installation requires it).', ['form_not_publishable', 'page_domain_not_verified']),
  '/forms/{formId}/unpublish': stateOperation('unpublishForm', 'Unpublish the landing page', 'The landing page answers 404 until it is published again.', []),
  '/forms/{formId}/embedding': {
    get: {
      tags: ['Forms'],
      operationId: 'getFormEmbedding',
      summary: 'The form as a website embeds it',
      description: `The active form's definition for a trusted website integration: its type and its input fields in display order. \`404 form_inactive\` while the form is INACTIVE. ${NOT_FOUND}`,
      parameters: formPath,
      responses: responses('get', { '200': ok('The embedding.', schemaRef('FormEmbedding')) }, { 400: ['invalid_uuid'], 404: ['form_not_found', 'form_inactive'] }),
    },
  },
};

export const formParameters = {
  FormId: { name: 'formId', in: 'path', required: true, schema: uuid },
};

const nullableText = (max: number, description: string) => ({ type: ['string', 'null'], maxLength: max, description });
const localDateTime = {
  type: ['string', 'null'],
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$',
  description: 'LocalDateTime (as the specification types it): UTC, without zone, to the second. Null until the page was first published.',
  examples: ['2026-11-24T06:00:00'],
};

const overviewMembers = {
  id: uuid,
  name: { type: 'string' },
  type: { type: 'string', enum: [...FORM_TYPES] },
  status: { type: 'string', enum: [...FORM_STATUSES] },
  publishedStatus: { type: 'string', enum: [...LANDING_PAGE_STATUSES], description: 'The landing page\'s state (LandingPageStatus).' },
  publicUrl: { type: ['string', 'null'], description: 'Address of the landing page while PUBLISHED; null otherwise.' },
  lastPublishedAt: localDateTime,
  routePath: { type: ['string', 'null'] },
  domain: { type: ['string', 'null'], description: 'Custom host of the landing page; null: the default host.' },
};
const OVERVIEW = Object.keys(overviewMembers);

const formFieldMembers = {
  fieldRef: schemaRef('FieldRef'),
  personalizationTagName: { type: 'string', description: 'The name a submission\'s `values` use for this input.' },
  label: { type: 'string' },
  placeholder: { type: 'string' },
  isRequired: { type: 'boolean' },
  position: { type: 'integer', format: 'int32', minimum: 0 },
  fieldType: { type: 'string', enum: ['TEXT', 'LONG_TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_CHOICE', 'MULTI_CHOICE'], description: 'Resolved from the field catalog.' },
  inputControl: { type: 'string', enum: [...FORM_INPUT_CONTROLS] },
  optionValues: { type: 'array', items: { type: 'string' }, description: 'Read-only: labels of the field\'s active options as they are now, in option order (choice fields); empty otherwise.' },
};

export const formSchemas = {
  FormFieldRequest: object(['fieldRef', 'isRequired'], {
    fieldRef: schemaRef('FieldRef'),
    label: nullableText(FORM_LIMITS.label, 'Absent or null: the field\'s label.'),
    placeholder: nullableText(FORM_LIMITS.placeholder, 'Absent or null: none.'),
    isRequired: { type: 'boolean' },
    inputControl: { type: ['string', 'null'], enum: [...FORM_INPUT_CONTROLS, null], description: 'Absent or null: the default of the field type.' },
  }),
  FormRequest: object(['name', 'type', 'inputFields'], {
    name: { type: 'string', minLength: 1, maxLength: FORM_LIMITS.name, examples: ['Newsletter signup'] },
    type: { type: 'string', enum: [...FORM_TYPES] },
    inputFields: { type: 'array', minItems: 1, maxItems: FORM_LIMITS.inputFields, items: schemaRef('FormFieldRequest') },
    topicIds: { ...ids(FORM_LIMITS.topicIds, 'Topics a subscriber joins through the form; absent: none.') },
    doubleOptIn: { type: ['boolean', 'null'], description: 'Absent or null: true.' },
    senderProfileId: { ...uuid, type: ['string', 'null'], description: 'Sender of the confirmation mail; absent or null: the account\'s default profile.' },
    confirmationTemplateName: { type: ['string', 'null'], pattern: '^[a-z0-9][a-z0-9._-]{0,99}$', description: 'Email template of the confirmation mail; absent or null: the built-in one.' },
    routePath: { type: ['string', 'null'], pattern: '^[a-z0-9-]{1,64}$', description: 'PAGE forms only.', examples: ['join'] },
    domain: { type: ['string', 'null'], minLength: 1, maxLength: FORM_LIMITS.domain, description: 'PAGE forms only: a host name serving the landing page.' },
    allowedOrigins: { type: 'array', maxItems: FORM_LIMITS.allowedOrigins, items: { type: 'string', minLength: 1, maxLength: FORM_LIMITS.origin }, examples: [['https://shop.example.com']] },
  }),
  FormField: object(Object.keys(formFieldMembers), formFieldMembers),
  FormOverviewDto: object(OVERVIEW, overviewMembers),
  FormOverviewList: object(['items'], { items: { type: 'array', items: schemaRef('FormOverviewDto') } }),
  Form: object([...OVERVIEW, 'inputFields', 'topicIds', 'doubleOptIn', 'senderProfileId', 'confirmationTemplateName', 'allowedOrigins', 'createdAt', 'updatedAt'], {
    ...overviewMembers,
    inputFields: { type: 'array', items: schemaRef('FormField') },
    topicIds: { type: 'array', items: uuid },
    doubleOptIn: { type: 'boolean' },
    senderProfileId: { type: ['string', 'null'] },
    confirmationTemplateName: { type: ['string', 'null'] },
    allowedOrigins: { type: 'array', items: { type: 'string' } },
    createdAt: instant,
    updatedAt: instant,
  }),
  FormEmbedding: object(['id', 'type', 'inputFields'], {
    id: uuid,
    type: { type: 'string', enum: [...FORM_TYPES] },
    inputFields: { type: 'array', items: schemaRef('FormField'), description: 'In display order.' },
  }),
};

export const formTags = [{ name: 'Forms', description: 'Signup forms: their input fields, topics, double opt-in, embedding and hosted landing pages.' }];
