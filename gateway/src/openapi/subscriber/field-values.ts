import { ok, ref, schemaRef, uuid, type Json } from '../common';
import { body, noContent, object, responses } from '../operations';
import { emailAddress, ids, MAX, subscriberPath, VALUE_400, VALUE_404 } from './shared';

/** Values of custom fields on one subscriber: the `kind`-discriminated union and its two paths. */

export const fieldValuePaths = {
  '/subscribers/{subscriberId}/field-values': {
    get: {
      tags: ['Subscribers', 'Fields'],
      operationId: 'listFieldValues',
      summary: 'Typed field values of a subscriber',
      description: 'Values of custom fields (archived ones included), sorted by `fieldId`; option kinds carry the options\' labels. Built-in fields are read from the subscriber (`email`, `firstName`).',
      parameters: subscriberPath,
      responses: responses('get', { '200': ok('The values.', schemaRef('SubscriberFieldValues')) }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found'] }),
    },
  },
  '/subscribers/{subscriberId}/field-values/{fieldId}': {
    put: {
      tags: ['Subscribers', 'Fields'],
      operationId: 'setFieldValue',
      summary: 'Set one field value',
      description:
        'Replaces the value of one custom field. The kind must match the field type (`TEXT` for TEXT and LONG_TEXT fields: at most 10,000 and 100,000 characters; `EMAIL` values are validated and canonicalised; `SINGLE_OPTION` / `MULTI_OPTION` for choice fields, with active options of that field); archived fields take no new values (`409 field_archived`).',
      parameters: [...subscriberPath, ref('parameters', 'FieldId')],
      requestBody: body('FieldValueRequest'),
      responses: responses(
        'put',
        { '200': ok('The value as stored.', schemaRef('FieldValueEntry')) },
        { 400: VALUE_400, 404: ['subscriber_not_found', ...VALUE_404], 409: ['field_archived'] },
      ),
    },
    delete: {
      tags: ['Subscribers', 'Fields'],
      operationId: 'deleteFieldValue',
      summary: 'Remove one field value',
      description: 'Idempotent: removing a value the subscriber does not have also answers `204`. (Required fields are enforced on create and full replacement, not here.)',
      parameters: [...subscriberPath, ref('parameters', 'FieldId')],
      responses: responses('delete', { '204': noContent('Removed.') }, { 400: ['invalid_uuid'], 404: ['subscriber_not_found', 'field_not_found'] }),
    },
  },
};

/** The field value variants of one direction (request or response), discriminated by `kind`. */
function fieldValueVariants(direction: 'Request' | 'Response') {
  const withLabels = direction === 'Response';
  const labels = { type: 'array', items: { type: 'string' }, description: 'Labels of the selected options, in the order of the ids.' };
  const variant = (kind: string, required: string[], properties: Json, description: string) => [
    `${kind}FieldValue${direction}`,
    object(['kind', ...required], { kind: { const: toKind(kind) }, ...properties }, { description }),
  ];
  return Object.fromEntries([
    variant('Text', ['text'], { text: { type: 'string', maxLength: MAX.longText } }, 'TEXT: value of a TEXT (at most 10,000 characters) or LONG_TEXT field (at most 100,000).'),
    variant('Email', ['text'], { text: emailAddress }, 'EMAIL: value of an EMAIL field, validated and canonicalised (trimmed, lowercase).'),
    variant('Number', ['number'], { number: { type: 'number' } }, 'NUMBER: a finite number.'),
    variant('Date', ['date'], { date: { type: 'string', format: 'date', examples: ['2024-02-29'] } }, 'DATE: a calendar date YYYY-MM-DD.'),
    variant('Boolean', ['booleanValue'], { booleanValue: { type: 'boolean' } }, 'BOOLEAN.'),
    variant(
      'SingleOption',
      withLabels ? ['optionId', 'labels'] : ['optionId'],
      { optionId: uuid, ...(withLabels ? { labels } : {}) },
      'SINGLE_OPTION: value of a SINGLE_CHOICE field; the option must be an active option of that field.',
    ),
    variant(
      'MultiOption',
      withLabels ? ['optionIds', 'labels'] : ['optionIds'],
      { optionIds: { ...ids(MAX.options), minItems: 1 }, ...(withLabels ? { labels } : {}) },
      'MULTI_OPTION: value of a MULTI_CHOICE field, 1-500 distinct active options of that field (delete the value to clear it).',
    ),
  ]);
}

function toKind(name: string) {
  return ({ Text: 'TEXT', Email: 'EMAIL', Number: 'NUMBER', Date: 'DATE', Boolean: 'BOOLEAN', SingleOption: 'SINGLE_OPTION', MultiOption: 'MULTI_OPTION' } as Record<string, string>)[name];
}

const FIELD_VALUE_VARIANTS = ['Text', 'Email', 'Number', 'Date', 'Boolean', 'SingleOption', 'MultiOption'];

function fieldValueUnion(direction: 'Request' | 'Response') {
  return {
    type: 'object',
    required: ['kind'],
    // `mapping` makes generated clients' kinds the real values (without it they are the schema names).
    discriminator: { propertyName: 'kind', mapping: Object.fromEntries(FIELD_VALUE_VARIANTS.map((k) => [toKind(k), `#/components/schemas/${k}FieldValue${direction}`])) },
    oneOf: FIELD_VALUE_VARIANTS.map((k) => schemaRef(`${k}FieldValue${direction}`)),
    description: `A field value (${direction.toLowerCase()} variant), discriminated by \`kind\`. The kind must match the field type: TEXT and LONG_TEXT -> TEXT, EMAIL -> EMAIL, NUMBER -> NUMBER, DATE -> DATE, BOOLEAN -> BOOLEAN, SINGLE_CHOICE -> SINGLE_OPTION, MULTI_CHOICE -> MULTI_OPTION (else \`400 field_value_kind_mismatch\`).`,
  };
}

export const fieldValueInputs = {
  type: 'array',
  items: schemaRef('FieldValueInput'),
  maxItems: MAX.fieldValues,
  description: 'Values of custom fields, each field at most once (`400 duplicate_ids`).',
};

export const fieldValueSchemas = {
  FieldValueInput: object(['fieldId', 'value'], { fieldId: uuid, value: schemaRef('FieldValueRequest') }, { description: 'The value of one custom field.' }),
  FieldValueRequest: fieldValueUnion('Request'),
  FieldValueResponse: fieldValueUnion('Response'),
  ...fieldValueVariants('Request'),
  ...fieldValueVariants('Response'),
  FieldValueEntry: object(['fieldId', 'personalizationTagName', 'value'], { fieldId: uuid, personalizationTagName: { type: 'string' }, value: schemaRef('FieldValueResponse') }),
  SubscriberFieldValues: object(['values'], { values: { type: 'array', items: schemaRef('FieldValueEntry') } }),
  BuiltInFieldRef: object(['type', 'builtInField'], { type: { const: 'BUILT_IN' }, builtInField: { type: 'string', enum: [...['EMAIL', 'FIRST_NAME']] } }),
  CustomFieldRef: object(['type', 'fieldId'], { type: { const: 'CUSTOM' }, fieldId: uuid }),
  // Discriminated by `type`: a bad member of one shape is named as such, not reported as unknown in the other.
  FieldRef: {
    type: 'object',
    required: ['type'],
    oneOf: [schemaRef('BuiltInFieldRef'), schemaRef('CustomFieldRef')],
    discriminator: { propertyName: 'type', mapping: { BUILT_IN: '#/components/schemas/BuiltInFieldRef', CUSTOM: '#/components/schemas/CustomFieldRef' } },
  },
  SubscriberFieldValue: object(['fieldRef', 'personalizationTagName', 'label', 'displayValue'], {
    fieldRef: schemaRef('FieldRef'),
    personalizationTagName: { type: 'string' },
    label: { type: 'string' },
    displayValue: { type: 'string', description: 'Text as stored, numbers and dates as written, `true`/`false`, option labels joined by ", ".' },
  }),
};
