import type { subscriberV1 } from '@mailer/proto';

/**
 * Field values: a discriminated object on `kind` in the API, a oneof in proto. Request variants
 * carry what a client sets; response variants add `labels` to the option kinds.
 */
export type FieldValueRequest =
  | { kind: 'TEXT'; text: string }
  | { kind: 'EMAIL'; text: string }
  | { kind: 'NUMBER'; number: number }
  | { kind: 'DATE'; date: string }
  | { kind: 'BOOLEAN'; booleanValue: boolean }
  | { kind: 'SINGLE_OPTION'; optionId: string }
  | { kind: 'MULTI_OPTION'; optionIds: string[] };

export type FieldValueResponse =
  | Exclude<FieldValueRequest, { kind: 'SINGLE_OPTION' | 'MULTI_OPTION' }>
  | { kind: 'SINGLE_OPTION'; optionId: string; labels: string[] }
  | { kind: 'MULTI_OPTION'; optionIds: string[]; labels: string[] };

export type FieldValueKind = FieldValueRequest['kind'];
/** Every kind, in the specification's order (what the OpenAPI document lists). */
export const FIELD_VALUE_KINDS: readonly FieldValueKind[] = ['TEXT', 'EMAIL', 'NUMBER', 'DATE', 'BOOLEAN', 'SINGLE_OPTION', 'MULTI_OPTION'];

export interface FieldValueInput {
  fieldId: string;
  value: FieldValueRequest;
}

type ProtoValue = NonNullable<subscriberV1.FieldValue['value']>;

export function fieldValueToProto(v: FieldValueRequest): subscriberV1.FieldValue {
  return { value: protoCase(v), labels: [] };
}

/** The proto oneof of a value (also the automations' SET_FIELD value, which has the same cases). */
export function protoCase(v: FieldValueRequest): ProtoValue {
  switch (v.kind) {
    case 'TEXT':
      return { $case: 'text', value: v.text };
    case 'EMAIL':
      return { $case: 'email', value: v.text };
    case 'NUMBER':
      return { $case: 'number', value: v.number };
    case 'DATE':
      return { $case: 'date', value: v.date };
    case 'BOOLEAN':
      return { $case: 'booleanValue', value: v.booleanValue };
    case 'SINGLE_OPTION':
      return { $case: 'optionId', value: v.optionId.toLowerCase() };
    case 'MULTI_OPTION':
      return { $case: 'optionIds', value: { ids: v.optionIds.map((id) => id.toLowerCase()) } };
  }
}

/** The request variant of a stored value (what SubscriberData carries, so it can be PUT back as is). */
export function fieldValueRequestFromProto(v: { value?: ProtoValue } | undefined): FieldValueRequest {
  const c = v?.value;
  switch (c?.$case) {
    case 'text':
      return { kind: 'TEXT', text: c.value };
    case 'email':
      return { kind: 'EMAIL', text: c.value };
    case 'number':
      return { kind: 'NUMBER', number: c.value };
    case 'date':
      return { kind: 'DATE', date: c.value };
    case 'booleanValue':
      return { kind: 'BOOLEAN', booleanValue: c.value };
    case 'optionId':
      return { kind: 'SINGLE_OPTION', optionId: c.value };
    case 'optionIds':
      return { kind: 'MULTI_OPTION', optionIds: c.value.ids };
    default:
      throw new Error('the service answered a field value without a kind');
  }
}

/** The response variant: option kinds carry their labels. */
export function fieldValueResponseFromProto(v: subscriberV1.FieldValue | undefined): FieldValueResponse {
  const value = fieldValueRequestFromProto(v);
  if (value.kind === 'SINGLE_OPTION' || value.kind === 'MULTI_OPTION') return { ...value, labels: v!.labels };
  return value;
}

export function fieldValueInputToProto(input: FieldValueInput): subscriberV1.FieldValueInput {
  return { fieldId: input.fieldId.toLowerCase(), value: fieldValueToProto(input.value) };
}

export function fieldValueInputFromProto(input: subscriberV1.FieldValueInput): FieldValueInput {
  return { fieldId: input.fieldId, value: fieldValueRequestFromProto(input.value) };
}

/** `{fieldId, personalizationTagName, value}` of the field-values endpoints. */
export function fieldValueEntryJson(entry: subscriberV1.FieldValueEntry) {
  return { fieldId: entry.fieldId, personalizationTagName: entry.personalizationTagName, value: fieldValueResponseFromProto(entry.value) };
}
