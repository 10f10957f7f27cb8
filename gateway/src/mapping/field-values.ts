import { fieldValueFromCase, fieldValueToCase, type FieldValueCase, type subscriberV1 } from '@mailer/proto';
import type { Schemas } from '../openapi/types';

/**
 * Field values: a discriminated object on `kind` in the API, a oneof in proto (converted in
 * `@mailer/proto`, for every side of every call). Request variants carry what a client sets;
 * response variants add `labels` to the option kinds. The types are the OpenAPI schemas'; passing
 * them to and from `@mailer/proto`'s FieldValue checks that both describe the same values.
 */
type FieldValueRequest = Schemas['FieldValueRequest'];

export function fieldValueToProto(v: FieldValueRequest): subscriberV1.FieldValue {
  return { value: protoCase(v), labels: [] };
}

/** The proto oneof of a value; option ids in lower case. */
export const protoCase = (v: FieldValueRequest): FieldValueCase => fieldValueToCase(canonicalFieldValue(v));

/** Option ids in lower case, as the services store them. */
export function canonicalFieldValue(v: FieldValueRequest): FieldValueRequest {
  if (v.kind === 'SINGLE_OPTION') return { ...v, optionId: v.optionId.toLowerCase() };
  if (v.kind === 'MULTI_OPTION') return { ...v, optionIds: v.optionIds.map((id) => id.toLowerCase()) };
  return v;
}

/** The request variant of a stored value (what SubscriberData carries, so it can be PUT back as is). */
export function fieldValueRequestFromProto(v: { value?: FieldValueCase } | undefined): FieldValueRequest {
  const value = fieldValueFromCase(v?.value);
  if (!value) throw new Error('the service answered a field value without a kind');
  return value;
}

/** The response variant: option kinds carry their labels. */
export function fieldValueResponseFromProto(v: subscriberV1.FieldValue | undefined): Schemas['FieldValueResponse'] {
  const value = fieldValueRequestFromProto(v);
  if (value.kind === 'SINGLE_OPTION' || value.kind === 'MULTI_OPTION') return { ...value, labels: v!.labels };
  return value;
}

export function fieldValueInputToProto(input: Schemas['FieldValueInput']): subscriberV1.FieldValueInput {
  return { fieldId: input.fieldId.toLowerCase(), value: fieldValueToProto(input.value) };
}

export function fieldValueInputFromProto(input: subscriberV1.FieldValueInput): Schemas['FieldValueInput'] {
  return { fieldId: input.fieldId, value: fieldValueRequestFromProto(input.value) };
}

/** `{fieldId, personalizationTagName, value}` of the field-values endpoints. */
export function fieldValueEntryJson(entry: subscriberV1.FieldValueEntry) {
  return { fieldId: entry.fieldId, personalizationTagName: entry.personalizationTagName, value: fieldValueResponseFromProto(entry.value) };
}
