import { errorResponse, freeFormObject, instant, ok, rateLimitHeaders, ref, schemaRef } from '../common';
import { body, created, idempotencyKey, noContent, object, responses } from '../operations';

/**
 * Email templates (messaging service, the API contract "Email templates"). Limits: the platform's Liquid engine
 * (packages/templates/src/template.ts).
 */

export const TEMPLATE_LIMITS = { name: 100, subject: 2_000, part: 256 * 1024, renderMs: 500, outputChars: 1024 * 1024 } as const;
export const TEMPLATE_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,99}$';

const namePath = [ref('parameters', 'EmailTemplateName')];
const NOT_FOUND = 'A template of another account is unknown here (`404 template_not_found`).';
const LIQUID = `\`subject\`, \`html\` and \`text\` are Liquid templates (Shopify Liquid as implemented by liquidjs). A syntax error refuses the save: \`400 template_syntax_error\` with one \`details\` entry per broken part, \`{path: "html", problem: "line 3, col 7: ..."}\`. There are no file includes (\`include\`, \`render\`, \`layout\` and \`block\` are not available: using them is a syntax error), and only a value's own members can be read (\`{{ x.constructor }}\`, \`__proto__\` and the like render empty). Limits: each part at most ${TEMPLATE_LIMITS.part} characters (\`400 validation_failed\`); at render, each part at most ${TEMPLATE_LIMITS.renderMs} ms of rendering and ${TEMPLATE_LIMITS.outputChars} characters of output, and a bounded memory budget for ranges, filters and assigns: a render past one of them fails (\`422 template_render_failed\` on render and send). Every save (create, PUT) test-renders the template once, with those limits, for a sample reader (\`subscriber\` \`{email: "reader@example.com", firstName: "Reader", fields: {}}\`, \`links\` set) and no \`substitutionData\`, as RSS newsletters' templates are: a template that passes a limit with no data at all (a range of millions, a string doubled in a loop, loops nested too deep) is \`422 template_render_failed\` at save, \`details\` naming the part, and nothing is saved. A template that passes a limit only with the values a caller gives (\`{% for i in (1..n) %}\` with a huge \`n\`) is saved, and refused when it is rendered with them.

Variables at render time: the members of \`substitutionData\` at the top level; \`subscriber\` (\`{email, firstName, fields: {<personalizationTagName>: display value}}\` when the address is a subscriber of the account, else \`{email}\`); \`event\` (automation mail: \`{eventKey, occurredAt, properties}\`); \`links.unsubscribe\` and \`links.preferences\` (marketing mail: automation mail; the same preference page). Marketing mail whose rendered html has no link to either gets a short footer with both (\`Unsubscribe · Manage your preferences\`) before \`</body>\`, and its text part a line with the URL when it does not contain it: place \`links.unsubscribe\` yourself to control where and how it appears. Transactional mail never gets one. A missing variable renders empty. Values inserted into \`html\` are HTML-escaped unless the template says \`| raw\`; \`subject\` and \`text\` get plain values, and line breaks in the rendered subject become spaces (no header injection). \`text\` absent or null: the text part is derived from the rendered html at each send (it is answered as \`null\`). The HTML's \`<style>\` rules are inlined at render.`;
const SAVE = `\`name\`: \`${TEMPLATE_NAME_PATTERN}\`, unique per account (\`409 template_name_exists\`). \`version\` counts saves: 1 on create, +1 on every PUT. \`variables\` lists the top-level names the template reads (loop variables and assigns excluded), sorted. \`tracking\` defaults to \`{opens: true, clicks: true}\` (a member left out is \`true\`). \`senderProfileId\` (optional) names the profile its mail is from (else the account's default at send); it must be a profile of the account (\`404 sender_profile_not_found\`).`;

const saveRenderFailed = errorResponse(
  'The template fails its test render at save (a render limit was passed with no data; `details` names the part), or the Idempotency-Key was used for a different request.',
  ['template_render_failed', 'idempotency_key_reused'],
  rateLimitHeaders,
);

const renderFailed = errorResponse(
  'The template could not be rendered with these values (a render limit was passed or a filter failed; the message says which), or the Idempotency-Key was used for a different request.',
  ['template_render_failed', 'idempotency_key_reused'],
  rateLimitHeaders,
);

export const emailTemplatePaths = {
  '/email-templates': {
    get: {
      tags: ['Email templates'],
      operationId: 'listEmailTemplates',
      summary: 'List email templates',
      description: 'Every email template of the account, by name.',
      responses: responses('get', { '200': ok('The templates.', schemaRef('EmailTemplateList')) }, {}),
    },
    post: {
      tags: ['Email templates'],
      operationId: 'createEmailTemplate',
      summary: 'Create an email template',
      description: `${SAVE}\n\n${LIQUID}`,
      parameters: [idempotencyKey],
      requestBody: body('EmailTemplateRequest'),
      responses: {
        ...responses('post', { '201': created('Created.', 'EmailTemplate') }, {
          400: ['invalid_uuid', 'template_syntax_error'],
          404: ['sender_profile_not_found'],
          409: ['template_name_exists'],
        }),
        '422': saveRenderFailed,
      },
    },
  },
  '/email-templates/{name}': {
    get: {
      tags: ['Email templates'],
      operationId: 'getEmailTemplate',
      summary: 'Get an email template',
      description: `A name that does not match the pattern answers \`400 validation_failed\`. ${NOT_FOUND}`,
      parameters: namePath,
      responses: responses('get', { '200': ok('The template.', schemaRef('EmailTemplate')) }, { 404: ['template_not_found'] }),
    },
    put: {
      tags: ['Email templates'],
      operationId: 'updateEmailTemplate',
      summary: 'Save a new version of an email template',
      description: `The same body as on create; every member is replaced and \`version\` goes up by one. \`name\` may not change: a body naming another template answers \`400 template_name_immutable\` (create a new template instead). Messages already accepted keep what they were rendered with. ${NOT_FOUND}\n\n${SAVE}\n\n${LIQUID}`,
      parameters: namePath,
      requestBody: body('EmailTemplateRequest'),
      responses: {
        ...responses('put', { '200': ok('The saved template.', schemaRef('EmailTemplate')) }, {
          400: ['invalid_uuid', 'template_syntax_error', 'template_name_immutable'],
          404: ['template_not_found', 'sender_profile_not_found'],
        }),
        '422': errorResponse('The template fails its test render (a render limit was passed with no data; `details` names the part); the stored version is kept.', ['template_render_failed'], rateLimitHeaders),
      },
    },
    delete: {
      tags: ['Email templates'],
      operationId: 'deleteEmailTemplate',
      summary: 'Delete an email template',
      description: `Refused with \`409 template_in_use\` while a \`SEND_EMAIL\` step of an automation names the template or a signup form sends it as its confirmation mail (\`details\` lists them as \`automations.<id>\` and \`forms.<formId>\`; when the form service does not answer, \`503 service_unavailable\`). Messages already accepted are still delivered. ${NOT_FOUND}`,
      parameters: namePath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 404: ['template_not_found'], 409: ['template_in_use'] }),
    },
  },
  '/email-templates/{name}/render': {
    post: {
      tags: ['Email templates'],
      operationId: 'renderEmailTemplate',
      summary: 'Render a template (preview; nothing is sent)',
      description: `Renders the stored template as a send would, with \`substitutionData\` and, when \`email\` is given, \`subscriber\` filled from the account's subscriber with that address (else \`{email}\`; without \`email\`, \`subscriber\` is empty). \`event\` and \`links\` are not set in a preview (they render empty). Nothing is sent or stored. \`substitutionData\` may not use the names \`subscriber\`, \`event\` or \`links\` (\`400 reserved_substitution_key\`). A render that passes a limit answers \`422 template_render_failed\`. With \`email\`, the subscriber service is asked for the subscriber: when it does not answer, \`503 service_unavailable\` (retry later). ${NOT_FOUND}\n\n${LIQUID}`,
      parameters: [...namePath, idempotencyKey],
      requestBody: body('RenderEmailTemplateRequest', false),
      responses: {
        ...responses('post', { '200': ok('The rendered parts.', schemaRef('RenderedEmail'), { 'Idempotency-Replay': ref('headers', 'IdempotencyReplay') }) }, {
          400: ['invalid_email', 'reserved_substitution_key'],
          404: ['template_not_found'],
        }),
        '422': renderFailed,
      },
    },
  },
};

export const emailTemplateParameters = {
  EmailTemplateName: { name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: TEMPLATE_NAME_PATTERN }, description: 'The template\'s name.' },
};

const tracking = (required: string[]) =>
  object(required, {
    opens: { type: required.length ? 'boolean' : ['boolean', 'null'], description: 'Add an open pixel to the html.' },
    clicks: { type: required.length ? 'boolean' : ['boolean', 'null'], description: 'Rewrite the html\'s links to count clicks.' },
  });

export const emailTemplateSchemas = {
  EmailTemplateRequest: object(['name', 'subject', 'html'], {
    name: { type: 'string', pattern: TEMPLATE_NAME_PATTERN, examples: ['order-confirmation'] },
    subject: { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.subject, examples: ['Your order {{ orderId }}'] },
    html: { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.part, examples: ['<p>Hello {{ subscriber.firstName }}, thank you for order {{ orderId }}.</p>'] },
    text: { type: ['string', 'null'], maxLength: TEMPLATE_LIMITS.part, description: 'Absent or null: derived from the rendered html.' },
    senderProfileId: { type: ['string', 'null'], format: 'uuid', description: 'Absent or null: the account\'s default profile at send.' },
    tracking: { ...tracking([]), type: ['object', 'null'], description: 'Default `{opens: true, clicks: true}`.' },
  }),
  EmailTemplateTracking: tracking(['opens', 'clicks']),
  EmailTemplate: object(['name', 'subject', 'html', 'text', 'senderProfileId', 'tracking', 'variables', 'version', 'createdAt', 'updatedAt'], {
    name: { type: 'string' },
    subject: { type: 'string' },
    html: { type: 'string' },
    text: { type: ['string', 'null'], description: 'null: derived from the rendered html.' },
    senderProfileId: { type: ['string', 'null'], format: 'uuid' },
    tracking: schemaRef('EmailTemplateTracking'),
    variables: { type: 'array', items: { type: 'string' } },
    version: { type: 'integer', format: 'int32', minimum: 1 },
    createdAt: instant,
    updatedAt: instant,
  }),
  EmailTemplateList: object(['items'], { items: { type: 'array', items: schemaRef('EmailTemplate') } }),
  RenderEmailTemplateRequest: object([], {
    email: { type: ['string', 'null'], maxLength: 354, description: 'Trimmed and lowercased (invalid syntax: `400 invalid_email`). Fills `subscriber` from the account\'s subscriber with this address.' },
    substitutionData: freeFormObject('Free-form: its members become top-level variables.'),
  }),
  RenderedEmail: object(['subject', 'html', 'text'], {
    subject: { type: 'string' },
    html: { type: 'string' },
    text: { type: 'string' },
  }),
};

