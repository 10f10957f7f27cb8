import { instant, ok, ref, schemaRef, uuid, type Json } from '../common';
import { body, created, idempotencyKey, noContent, object, responses } from '../operations';
import { ids, int32 } from '../subscriber/shared';
import { TEMPLATE_NAME_PATTERN } from './email-templates';
import { EVENT_KEY_PATTERN } from './events';

/**
 * Automations (the API contract "Events and automations", messaging service): an API-request trigger on an
 * event key, an entry rule, 1 to 50 steps, checked when saved; their runs.
 */

export const STEP_TYPES = ['SEND_EMAIL', 'WAIT', 'ADD_TAGS', 'REMOVE_TAGS', 'SET_FIELD', 'IF_IN_SEGMENT'];
export const RUN_STATUSES = ['RUNNING', 'WAITING', 'COMPLETED', 'EXITED', 'FAILED', 'CANCELLED'];
const MAX_STEPS = 50;

const automationPath = [ref('parameters', 'AutomationId')];
const NOT_FOUND = 'An automation of another account is unknown here (`404 automation_not_found`).';

const SAVE = `Saving checks the whole automation and answers \`400\` with every problem in \`details\` (\`path\` names the step member, e.g. \`body.steps[2].tagIds[0]\`) and the errorId of the first:
- \`steps\`: 1 to ${MAX_STEPS} (\`validation_failed\`), each of one type below.
- \`WAIT\` \`duration\`: an ISO 8601 duration in weeks, days, hours, minutes and seconds (\`PT30M\`, \`P3D\`, \`P1DT12H\`, \`P2W\`) from \`PT1S\` to \`P365D\` (\`automation_wait_duration_invalid\`). Years and months are not accepted: their length depends on the calendar.
- Every id a step names must exist in the account when the automation is saved (\`automation_reference_not_found\`): the email template of \`SEND_EMAIL\` (by name) and its \`topicId\`, the tags of \`ADD_TAGS\` / \`REMOVE_TAGS\`, the custom field of \`SET_FIELD\` (and the options its value chooses), the segment of \`IF_IN_SEGMENT\`. Ids are checked at save only: a tag or segment deleted later makes that step fail in the runs that reach it.
- \`SET_FIELD\` takes exactly one of \`value\` (a field value whose \`kind\` matches the field type: \`field_value_kind_mismatch\`; chosen options must be active: \`option_inactive\`) and \`fromProperty\` (a path into the event's \`properties\`, members split at dots, e.g. \`order.total\` or \`items.0.sku\`, converted to the field's kind when a run reaches the step). An archived field takes no new values (\`automation_field_archived\`). A \`SET_FIELD\` step is a write usage of its field: while an automation names a field, the field cannot be archived (\`409 field_archive_blocked\`).
- A template an automation's \`SEND_EMAIL\` names cannot be deleted (\`409 template_in_use\`).
When a service that owns some of these ids (subscribers for tags, topics and fields; segments) does not answer, \`503 service_unavailable\` and nothing is saved.`;

const RUNS_NOTE =
  'Runs: an active automation starts at most one run per matching event (`entry` permitting: `ONCE` never a second run for the subscriber, `ONE_AT_A_TIME` not while one is unfinished). Steps run in order, each outcome recorded before the next; `SEND_EMAIL` is `SKIPPED` when the subscriber may not receive marketing mail (`detail` starts with `SUBSCRIBER_NOT_ACTIVE`, `SUPPRESSED`, `OPTED_OUT` or `SUBSCRIBER_NOT_FOUND`); a step a peer refuses (a missing `fromProperty`, a tag deleted since) is `FAILED` and the run goes on; `IF_IN_SEGMENT` is `DONE` with `detail` starting `IN_SEGMENT` when the subscriber\'s segment result is TRUE (the run goes on), else the run ends `EXITED` with `detail` starting `NOT_IN_SEGMENT` (FALSE, or the subscriber no longer exists) or `SEGMENT_UNKNOWN` (UNKNOWN: a value or fact the segment tests is missing), or `FAILED` with `SEGMENT_NOT_FOUND` (the segment was deleted since); the result reflects the run\'s earlier steps, and a segment service that does not answer delays the step, never decides it; `WAIT` makes the run `WAITING` until `dueAt`. Deleting the automation cancels its unfinished runs; deactivating it only stops new ones.';

export const automationPaths = {
  '/automations': {
    get: {
      tags: ['Automations'],
      operationId: 'listAutomations',
      summary: 'List automations',
      description: 'Every automation of the account, oldest first.',
      responses: responses('get', { '200': ok('The automations.', schemaRef('AutomationList')) }, {}),
    },
    post: {
      tags: ['Automations'],
      operationId: 'createAutomation',
      summary: 'Create an automation',
      description: `\`entry\` defaults to \`EVERY_EVENT\` and \`active\` to \`false\` (a new automation starts nothing until it is activated). \`name\` need not be unique.\n\n${SAVE}\n\n${RUNS_NOTE}`,
      parameters: [idempotencyKey],
      requestBody: body('AutomationRequest'),
      responses: responses('post', { '201': created('Created.', 'Automation') }, {
        400: ['invalid_uuid', 'invalid_email', 'duplicate_ids', 'automation_wait_duration_invalid', 'automation_reference_not_found', 'automation_field_archived', 'field_value_kind_mismatch', 'option_inactive'],
      }),
    },
  },
  '/automations/{automationId}': {
    get: {
      tags: ['Automations'],
      operationId: 'getAutomation',
      summary: 'Get an automation',
      description: NOT_FOUND,
      parameters: automationPath,
      responses: responses('get', { '200': ok('The automation.', schemaRef('Automation')) }, { 400: ['invalid_uuid'], 404: ['automation_not_found'] }),
    },
    put: {
      tags: ['Automations'],
      operationId: 'updateAutomation',
      summary: 'Replace an automation',
      description: `The same body as on create; every member is replaced (absent \`entry\` and \`active\` take their defaults again). \`id\`, \`createdAt\` and \`stats\` are kept. ${NOT_FOUND}\n\n${SAVE}`,
      parameters: automationPath,
      requestBody: body('AutomationRequest'),
      responses: responses('put', { '200': ok('The saved automation.', schemaRef('Automation')) }, {
        400: ['invalid_uuid', 'invalid_email', 'duplicate_ids', 'automation_wait_duration_invalid', 'automation_reference_not_found', 'automation_field_archived', 'field_value_kind_mismatch', 'option_inactive'],
        404: ['automation_not_found'],
      }),
    },
    delete: {
      tags: ['Automations'],
      operationId: 'deleteAutomation',
      summary: 'Delete an automation',
      description: `Deleting an automation cancels its waiting runs (status \`CANCELLED\`; they are no longer listed); its templates and fields are no longer in use by it. ${NOT_FOUND}`,
      parameters: automationPath,
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['automation_not_found'] }),
    },
  },
  '/automations/{automationId}/runs': {
    get: {
      tags: ['Automations'],
      operationId: 'listAutomationRuns',
      summary: 'List the runs of an automation (paginated)',
      description: `Newest first. A finished run is listed for 90 days after it finished (the operator's \`RUN_RETENTION_DAYS\`), then removed; unfinished runs stay, and a subscriber whose \`ONCE\` run was removed still does not enter again. ${RUNS_NOTE} ${NOT_FOUND}`,
      parameters: [
        ...automationPath,
        { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: RUN_STATUSES }, description: 'Only runs with this status.' },
        ref('parameters', 'PageNumber'),
        ref('parameters', 'PageSize'),
      ],
      responses: responses('get', { '200': ok('One page of runs.', schemaRef('PaginatedAutomationRuns')) }, { 400: ['invalid_uuid'], 404: ['automation_not_found'] }),
    },
  },
};

export const automationParameters = {
  AutomationId: { name: 'automationId', in: 'path', required: true, schema: uuid },
};

const step = (name: string, type: string, required: string[], properties: Json, description: string) => [
  name,
  object(['type', ...required], { type: { const: type }, ...properties }, { description }),
];

const stepVariants = Object.fromEntries([
  step('SendEmailStep', 'SEND_EMAIL', ['templateName'], {
    templateName: { type: 'string', pattern: TEMPLATE_NAME_PATTERN, examples: ['welcome'] },
    topicId: { ...uuid, type: ['string', 'null'], description: 'The topic of the mail (opt-outs, List-Unsubscribe); null or absent: none.' },
  }, 'Sends the email template to the subscriber as marketing mail: only to an ACTIVE, unsuppressed subscriber (subscribed to the topic and not opted out of it when `topicId` is set); otherwise the step is skipped with its reason. The template renders with `event` = `{eventKey, occurredAt, properties}`.'),
  step('WaitStep', 'WAIT', ['duration'], {
    duration: { type: 'string', minLength: 1, maxLength: 40, examples: ['P3D'], description: 'ISO 8601, weeks to seconds, `PT1S` .. `P365D`.' },
  }, 'Waits before the next step (survives restarts).'),
  step('AddTagsStep', 'ADD_TAGS', ['tagIds'], { tagIds: { ...ids(1000), minItems: 1 } }, 'Adds the tags to the subscriber.'),
  step('RemoveTagsStep', 'REMOVE_TAGS', ['tagIds'], { tagIds: { ...ids(1000), minItems: 1 } }, 'Removes the tags from the subscriber.'),
  step('SetFieldStep', 'SET_FIELD', ['fieldId'], {
    fieldId: uuid,
    value: schemaRef('FieldValueRequest'),
    fromProperty: { type: 'string', minLength: 1, maxLength: 200, examples: ['order.total'], description: 'Path into the event\'s `properties` (members split at dots).' },
  }, 'Sets a custom field of the subscriber: to `value`, or (exactly one of the two) to the event property at `fromProperty`, converted to the field\'s kind; a missing or unconvertible property fails the step.'),
  step('IfInSegmentStep', 'IF_IN_SEGMENT', ['segmentId'], { segmentId: uuid }, 'Continues only when the subscriber\'s segment result is TRUE (`detail` `IN_SEGMENT: …`); FALSE (`NOT_IN_SEGMENT: …`) or UNKNOWN (`SEGMENT_UNKNOWN: …`) end the run `EXITED`.'),
]);

const STEP_SCHEMAS: Record<string, string> = {
  SEND_EMAIL: 'SendEmailStep',
  WAIT: 'WaitStep',
  ADD_TAGS: 'AddTagsStep',
  REMOVE_TAGS: 'RemoveTagsStep',
  SET_FIELD: 'SetFieldStep',
  IF_IN_SEGMENT: 'IfInSegmentStep',
};

const automationMembers = {
  name: { type: 'string', minLength: 1, maxLength: 200, examples: ['Welcome series'] },
  trigger: schemaRef('AutomationTrigger'),
  entry: { type: 'string', enum: ['EVERY_EVENT', 'ONCE', 'ONE_AT_A_TIME'], description: '`EVERY_EVENT`: a run per matching event; `ONCE`: never a second run for the same subscriber; `ONE_AT_A_TIME`: no new run for a subscriber while one is unfinished.' },
  steps: { type: 'array', minItems: 1, maxItems: MAX_STEPS, items: schemaRef('AutomationStep') },
  active: { type: 'boolean', description: 'Only active automations start runs.' },
};

export const automationSchemas = {
  AutomationTrigger: object(['type', 'eventKey'], {
    type: { type: 'string', enum: ['API_REQUEST'], description: 'Started by custom events (`POST /events`) with this `eventKey`.' },
    eventKey: { type: 'string', pattern: EVENT_KEY_PATTERN, examples: ['order.paid'] },
  }),
  AutomationStep: {
    type: 'object',
    required: ['type'],
    // `mapping` makes generated clients' types the real values (without it they are the schema names).
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(STEP_TYPES.map((t) => [t, `#/components/schemas/${STEP_SCHEMAS[t]}`])) },
    oneOf: STEP_TYPES.map((t) => schemaRef(STEP_SCHEMAS[t])),
    description: 'One step, discriminated by `type`.',
  },
  ...stepVariants,
  AutomationRequest: object(['name', 'trigger', 'steps'], {
    ...automationMembers,
    entry: { ...automationMembers.entry, default: 'EVERY_EVENT' },
    active: { ...automationMembers.active, default: false },
  }),
  Automation: object(['id', 'name', 'trigger', 'entry', 'steps', 'active', 'createdAt', 'updatedAt', 'stats'], {
    id: uuid,
    ...automationMembers,
    createdAt: instant,
    updatedAt: instant,
    stats: object(['runsStarted', 'runsCompleted'], {
      runsStarted: { type: 'integer', format: 'int64', minimum: 0 },
      runsCompleted: { type: 'integer', format: 'int64', minimum: 0 },
    }),
  }),
  AutomationList: object(['items'], { items: { type: 'array', items: schemaRef('Automation') } }),
  AutomationRun: object(['runId', 'automationId', 'eventId', 'subscriberId', 'email', 'status', 'stepIndex', 'startedAt', 'updatedAt', 'dueAt', 'steps'], {
    runId: uuid,
    automationId: uuid,
    eventId: uuid,
    subscriberId: uuid,
    email: { type: 'string' },
    status: { type: 'string', enum: RUN_STATUSES },
    stepIndex: { ...int32, description: 'The step the run is at (0-based).' },
    startedAt: instant,
    updatedAt: instant,
    dueAt: { ...instant, type: ['string', 'null'], description: 'When a WAITING run resumes.' },
    steps: {
      type: 'array',
      items: object(['index', 'type', 'outcome', 'at', 'detail'], {
        index: int32,
        type: { type: 'string', enum: STEP_TYPES },
        outcome: { type: 'string', enum: ['DONE', 'SKIPPED', 'FAILED'] },
        at: instant,
        detail: { type: ['string', 'null'], description: 'Why a step was skipped or failed, or what it decided: a reason code first (`SUBSCRIBER_NOT_ACTIVE`, `SUPPRESSED`, `OPTED_OUT`, `SUBSCRIBER_NOT_FOUND` for `SEND_EMAIL`; `IN_SEGMENT`, `NOT_IN_SEGMENT`, `SEGMENT_UNKNOWN`, `SEGMENT_NOT_FOUND` for `IF_IN_SEGMENT`), then `: ` and a sentence.' },
      }),
    },
  }),
  PaginatedAutomationRuns: object(['items', 'pageNumber', 'pageSize', 'totalItems', 'totalPages'], {
    items: { type: 'array', items: schemaRef('AutomationRun') },
    pageNumber: int32,
    pageSize: int32,
    totalItems: { type: 'integer', format: 'int64' },
    totalPages: int32,
  }),
};

export const automationTags = [{ name: 'Automations', description: 'Automations started by custom events: an API-request trigger on an event key, an entry rule and steps (mail, waits, tags, fields, segment conditions).' }];
