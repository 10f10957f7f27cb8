import { FieldTypes, FieldUsageCategories } from '../../mapping/enums';
import { ERROR_IDS_KEYWORD } from '../keywords';
import { ok, ref, schemaRef, uuid } from '../common';
import { body, created, idempotencyKey, noContent, object, posted, responses } from '../operations';
import { int32, int64, MAX, nullable } from './shared';

/** The field catalogue: built-in and custom fields, their options, archival and usage. */

export const fieldPaths = {
  '/fields': {
    get: {
      tags: ['Fields'],
      operationId: 'listFields',
      summary: 'The field catalogue',
      description: 'Built-in fields (`EMAIL`, `FIRST_NAME`, positions 0 and 1) first, then custom fields by `position`. Archived fields only with `includeArchived=true`.',
      parameters: [{ name: 'includeArchived', in: 'query', required: false, schema: { type: 'boolean', default: false } }],
      responses: responses('get', { '200': ok('The catalogue.', schemaRef('FieldCatalog')) }, {}),
    },
    post: {
      tags: ['Fields'],
      operationId: 'addField',
      summary: 'Create a custom field',
      description: `- \`personalizationTagName\`: lowercase ASCII (\`^[a-z][a-z0-9_]{0,63}$\`, else \`400 invalid_personalization_tag_name\`), unique in the account (\`409 personalization_tag_name_exists\`; \`email\` and \`first_name\` are taken by the built-ins), never changed afterwards. When missing or empty, one is derived from the label (accents stripped, lowercase, other characters as \`_\`, \`_2\`, \`_3\`, ... appended until it is free).
- \`options\`: option labels, required for \`SINGLE_CHOICE\` / \`MULTI_CHOICE\` (\`400 field_options_required\`), refused for other types (\`400 field_options_not_allowed\`); each label 1-255 characters, not twice.
- \`EMAIL\` creates an additional validated email-address field; the subscriber's own address stays the built-in \`EMAIL\` field.
- The new field is placed last (\`position\`).`,
      parameters: [idempotencyKey],
      requestBody: body('AddField'),
      responses: responses(
        'post',
        { '201': created('Created.', 'Field') },
        { 400: ['field_options_required', 'field_options_not_allowed', 'invalid_personalization_tag_name'], 409: ['personalization_tag_name_exists'] },
      ),
    },
  },
  '/fields/{fieldId}': {
    get: {
      tags: ['Fields'],
      operationId: 'getField',
      summary: 'Read one field',
      description: 'A custom field by id (archived ones too, `active: false`), or a built-in field by name (`EMAIL`, `FIRST_NAME`).',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn')],
      responses: responses('get', { '200': ok('The field.', schemaRef('Field')) }, { 400: ['invalid_uuid'], 404: ['field_not_found'] }),
    },
    patch: {
      tags: ['Fields'],
      operationId: 'updateField',
      summary: 'Change a custom field',
      description: `Only the members sent change. \`fieldType\` and \`personalizationTagName\` never change.
- \`position\`: moves the field among the custom fields (2 .. 1 + number of custom fields; the others shift).
- \`options\` (choice fields only; \`400 field_options_not_allowed\` otherwise): the complete option list. An option with \`id: null\` (or no \`id\`) is added; one with an id is kept, relabelled, reordered, and (de)activated by \`active\` (default \`true\`); options left out are deactivated, never deleted, so stored values keep their labels. \`position\` of an option defaults to its place in the list. At least one option must stay active (\`400 field_options_required\`); ids must be options of this field (\`404 option_not_found\`).`,
      parameters: [ref('parameters', 'FieldIdOrBuiltIn')],
      requestBody: body('UpdateField'),
      responses: responses(
        'patch',
        { '200': ok('The field after the change.', schemaRef('Field')) },
        { 400: ['invalid_uuid', 'duplicate_ids', 'field_options_required', 'field_options_not_allowed'], 404: ['field_not_found', 'option_not_found'], 409: ['built_in_field_immutable'] },
      ),
    },
    delete: {
      tags: ['Fields'],
      operationId: 'deleteField',
      summary: 'Delete an archived field permanently',
      description:
        'Only archived fields (`409 field_not_archived` otherwise). Refused with `409 field_delete_blocked` while the usage report says `permanentDeleteBlocked` (the blocking usages are listed in `details`), and with `409 field_usage_unknown` when a service that may use the field did not answer (nothing can be proven; retry later). Deletes the field\'s values of every subscriber.',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn')],
      responses: responses('delete', { '204': noContent('Deleted.') }, { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['field_not_archived', 'field_delete_blocked', 'field_usage_unknown', 'built_in_field_immutable'] }),
    },
  },
  '/fields/{fieldId}/archive': {
    post: {
      tags: ['Fields'],
      operationId: 'archiveField',
      summary: 'Archive a custom field',
      description:
        'The field becomes inactive: it leaves the catalogue (unless `includeArchived`) and takes no new values; stored values are kept. Refused with `409 field_archive_blocked` while write usages block it (forms, automations, imports, ... that write the field): `details` lists each blocking usage as `{path: "blockingUsages[i]", problem}`. Refused with `409 field_usage_unknown` when a service that may use the field did not answer. Archiving an archived field answers it unchanged.',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn'), idempotencyKey],
      responses: responses(
        'post',
        { '200': posted('The archived field (`active: false`).', 'Field') },
        { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['field_archive_blocked', 'field_usage_unknown', 'built_in_field_immutable'] },
        { body: false },
      ),
    },
  },
  '/fields/{fieldId}/restore': {
    post: {
      tags: ['Fields'],
      operationId: 'restoreField',
      summary: 'Restore an archived field',
      description: 'The field becomes active again, placed last. Restoring an active field answers it unchanged.',
      parameters: [ref('parameters', 'FieldIdOrBuiltIn'), idempotencyKey],
      responses: responses('post', { '200': posted('The restored field.', 'Field') }, { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['built_in_field_immutable'] }, { body: false }),
    },
  },
  '/fields/{fieldId}/usage': {
    get: {
      tags: ['Fields'],
      operationId: 'getFieldUsage',
      summary: 'Where a field is used',
      description:
        'Each service that can use a field (segments, forms, automations, imports, sends) is asked for its usages over gRPC; `sources` says which were asked and whether they answered (with `error` when not). While a source has not answered, `archiveBlocked` and `permanentDeleteBlocked` are true (an unanswered source can hide a blocking usage), and archive / delete answer `409 field_usage_unknown`. `subscriberValueCount` counts subscribers holding a value (a multi-option value counts once). Segments (`category: SEGMENT`): a saved segment with a condition on the field (in any condition group) reads it and never writes it, so it is listed in `warningUsages` (archival goes ahead: saved conditions on an archived field keep evaluating, only new conditions may not name it) and, with `permanentDeleteBlocking: true`, in `permanentDeleteBlockingUsages` (deleting the field would erase its values and turn the condition UNKNOWN for everybody, silently changing the segment): change or delete the segment first. A segment that only references such a segment (`CONTAINED_IN` / `NOT_CONTAINED_IN`, at any depth) is listed in `warningUsages` without blocking (its `reason` names the segment it goes through), since the segment it references already blocks. `area` names the conditions (`conditionGroups[g].conditions[c]`), `link` the segment (`/segments/{id}`).',
      parameters: [ref('parameters', 'FieldId')],
      responses: responses('get', { '200': ok('The report.', schemaRef('FieldUsageReport')) }, { 400: ['invalid_uuid'], 404: ['field_not_found'] }),
    },
  },
  '/fields/{fieldId}/forms': {
    get: {
      tags: ['Fields'],
      operationId: 'listFieldForms',
      summary: 'Signup forms that use a field',
      description: 'Each form once, as the form service reports its usages of the field. When the form service does not answer, `409 field_usage_unknown` (retry later): an empty list always means "no form".',
      parameters: [ref('parameters', 'FieldId')],
      responses: responses('get', { '200': ok('The forms.', { type: 'array', items: schemaRef('FieldFormUseDto') }) }, { 400: ['invalid_uuid'], 404: ['field_not_found'], 409: ['field_usage_unknown'] }),
    },
  },
};

export const fieldParameters = {
  FieldId: { name: 'fieldId', in: 'path', required: true, schema: uuid, description: 'A custom field\'s id (built-in fields have none).' },
  FieldIdOrBuiltIn: {
    name: 'fieldId',
    in: 'path',
    required: true,
    schema: { anyOf: [uuid, { type: 'string', enum: ['EMAIL', 'FIRST_NAME'] }] },
    description: 'A custom field\'s id, or `EMAIL` / `FIRST_NAME` for a built-in field (read-only: changing, archiving, restoring or deleting one answers `409 built_in_field_immutable`).',
  },
};

const fieldUsage = object(['category', 'area', 'artifactId', 'artifactName', 'status', 'reason', 'link', 'permanentDeleteBlocking'], {
  category: { type: 'string', enum: [...FieldUsageCategories.names] },
  area: { type: 'string', description: 'Where in the artifact (e.g. a form step, an automation action).' },
  artifactId: { type: 'string', description: 'Id of the form, automation, segment, ... (a UUID).' },
  artifactName: { type: 'string' },
  status: { type: 'string', description: 'Status of the artifact as its service names it.' },
  reason: { type: 'string' },
  link: { type: 'string', description: 'Where to see the artifact (may be empty).' },
  permanentDeleteBlocking: { type: 'boolean' },
});

export const fieldSchemas = {
  FieldType: { type: 'string', enum: [...FieldTypes.names] },
  FieldOption: object(['id', 'label', 'position', 'active'], {
    id: uuid,
    label: { type: 'string' },
    position: { ...int32, minimum: 0, description: 'Order within the field\'s options.' },
    active: { type: 'boolean', description: 'False: kept for stored values, not selectable for new ones.' },
  }),
  Field: object(['type', 'personalizationTagName', 'label', 'fieldType', 'required', 'internal', 'active', 'position', 'options'], {
    type: { type: 'string', enum: ['BUILT_IN', 'CUSTOM'] },
    builtInField: { type: 'string', enum: ['EMAIL', 'FIRST_NAME'], description: 'Present only on built-in fields.' },
    fieldId: { ...uuid, description: 'Present only on custom fields.' },
    personalizationTagName: { type: 'string' },
    label: { type: 'string' },
    fieldType: schemaRef('FieldType'),
    required: { type: 'boolean' },
    internal: { type: 'boolean', description: 'Hidden from subscriber-facing forms and profile editing.' },
    active: { type: 'boolean', description: 'False once archived.' },
    position: { ...int32, minimum: 0, description: 'Built-ins 0 and 1, custom fields from 2.' },
    options: { type: 'array', items: schemaRef('FieldOption'), description: 'Options of choice fields (inactive ones included), by position; empty otherwise.' },
  }),
  FieldCatalog: object(['fields'], { fields: { type: 'array', items: schemaRef('Field'), description: 'Built-ins first, then custom fields by position.' } }),
  AddField: object(['label', 'fieldType'], {
    personalizationTagName: {
      type: 'string',
      pattern: '^(|[a-z][a-z0-9_]{0,63})$',
      [ERROR_IDS_KEYWORD]: { pattern: 'invalid_personalization_tag_name' },
      description: 'Lowercase ASCII `^[a-z][a-z0-9_]{0,63}$`; empty or missing: derived from the label.',
    },
    label: { type: 'string', minLength: 1, maxLength: MAX.label, description: 'Trimmed; 1-255 characters.' },
    fieldType: schemaRef('FieldType'),
    required: { type: 'boolean', default: false },
    internal: { type: 'boolean', default: false },
    options: { type: 'array', items: { type: 'string', minLength: 1, maxLength: MAX.label }, maxItems: MAX.options, description: 'Option labels of a choice field (1-500); empty or missing for other types.' },
  }),
  FieldOptionUpdate: object(['label'], {
    id: { ...nullable(uuid), description: 'An option of this field; null or missing adds a new option.' },
    label: { type: 'string', minLength: 1, maxLength: MAX.label },
    position: { ...int32, minimum: 0, description: 'Default: the option\'s place in the list.' },
    active: { type: 'boolean', description: 'Default true; false deactivates the option.' },
  }),
  UpdateField: object([], {
    label: { type: 'string', minLength: 1, maxLength: MAX.label },
    required: { type: 'boolean' },
    internal: { type: 'boolean' },
    position: { ...int32, minimum: 0 },
    options: { type: 'array', items: schemaRef('FieldOptionUpdate'), maxItems: MAX.options, description: 'The complete option list (see the operation).' },
  }),
  FieldUsage: fieldUsage,
  UsageSource: object(['service', 'answered'], {
    service: { type: 'string', description: 'A service that may use subscriber fields (segment, form, messaging, rss, ...).' },
    answered: { type: 'boolean' },
    error: { type: 'string', description: 'Why it did not answer (only when `answered` is false).' },
  }),
  FieldUsageReport: object(
    ['fieldId', 'fieldLabel', 'personalizationTagName', 'fieldType', 'subscriberValueCount', 'archiveBlocked', 'permanentDeleteBlocked', 'blockingUsages', 'warningUsages', 'contentMergeTagUsages', 'permanentDeleteBlockingUsages', 'externalHints', 'sources'],
    {
      fieldId: uuid,
      fieldLabel: { type: 'string' },
      personalizationTagName: { type: 'string' },
      fieldType: schemaRef('FieldType'),
      subscriberValueCount: { ...int64, description: 'Subscribers holding a value of the field (a multi-option value counts once).' },
      archiveBlocked: { type: 'boolean', description: 'Write usages block archival, or a source did not answer.' },
      permanentDeleteBlocked: { type: 'boolean', description: 'Usages block a future permanent delete, or a source did not answer.' },
      blockingUsages: { type: 'array', items: schemaRef('FieldUsage'), description: 'Write usages that block archival.' },
      warningUsages: { type: 'array', items: schemaRef('FieldUsage'), description: 'Read or control usages that continue after archival.' },
      contentMergeTagUsages: { type: 'array', items: schemaRef('FieldUsage'), description: 'Live merge tags in sendable content; they do not block archival.' },
      permanentDeleteBlockingUsages: { type: 'array', items: schemaRef('FieldUsage') },
      externalHints: { type: 'array', items: schemaRef('FieldUsage'), description: 'External write-path notices; they do not block archival.' },
      sources: { type: 'array', items: schemaRef('UsageSource'), description: 'Every service asked for its usages (an addition to the specification\'s record).' },
    },
  ),
  FieldFormUseDto: object(['id', 'name'], { id: uuid, name: { type: 'string' } }),
};
