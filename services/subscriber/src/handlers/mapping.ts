// protobuf <-> domain: the only place that knows both.
import { invalid } from '@mailer/kit';
import { audienceV1, caseOf, kindOfCase, subscriberV1 } from '@mailer/proto';
import { BUILT_IN_FIELDS, type BuiltInFieldName, type Catalog } from '../domain/fields';
import type { SubscriberStatus } from '../domain/subscriber';
import type { SyncMode, SyncOutcome } from '../domain/sync';
import type { SubscriberTopicView } from '../domain/topics';
import type { FieldDef, FieldType, FieldValueInput, StoredValue, SubscriberInput, SubscriberState, TagDef, TopicDef, ValueInput } from '../domain/types';
import { displayedFieldValues, typedValue } from '../domain/values';

const P = subscriberV1;
const STATUS_PREFIX = 'SUBSCRIBER_STATUS_';
const TYPE_PREFIX = 'FIELD_TYPE_';

/** UNSPECIFIED -> undefined (not given); values outside the enum -> validation_failed. */
export function statusFromProto(s: subscriberV1.SubscriberStatus, path = 'subscriberStatus'): SubscriberStatus | undefined {
  if (s === P.SubscriberStatus.SUBSCRIBER_STATUS_UNSPECIFIED) return undefined;
  const name = P.SubscriberStatus[s];
  if (!name || !name.startsWith(STATUS_PREFIX)) throw invalid('validation_failed', `unknown subscriber status ${s}`, [{ path, problem: 'unknown status' }]);
  return name.slice(STATUS_PREFIX.length) as SubscriberStatus;
}

export const statusToProto = (s: SubscriberStatus): subscriberV1.SubscriberStatus => P.SubscriberStatus[`${STATUS_PREFIX}${s}` as keyof typeof P.SubscriberStatus];

export function fieldTypeFromProto(t: subscriberV1.FieldType): FieldType {
  const name = P.FieldType[t];
  if (t === P.FieldType.FIELD_TYPE_UNSPECIFIED || !name || !name.startsWith(TYPE_PREFIX)) {
    throw invalid('validation_failed', 'fieldType must be one of TEXT, LONG_TEXT, EMAIL, NUMBER, DATE, BOOLEAN, SINGLE_CHOICE, MULTI_CHOICE', [{ path: 'fieldType', problem: 'required' }]);
  }
  return name.slice(TYPE_PREFIX.length) as FieldType;
}

export const fieldTypeToProto = (t: FieldType): subscriberV1.FieldType => P.FieldType[`${TYPE_PREFIX}${t}` as keyof typeof P.FieldType];

const BUILT_IN_TO_PROTO: Record<BuiltInFieldName, subscriberV1.BuiltInField> = {
  EMAIL: P.BuiltInField.BUILT_IN_FIELD_EMAIL,
  FIRST_NAME: P.BuiltInField.BUILT_IN_FIELD_FIRST_NAME,
};

export function syncModeFromProto(m: subscriberV1.SyncMode): SyncMode {
  switch (m) {
    case P.SyncMode.SYNC_MODE_UNSPECIFIED:
    case P.SyncMode.SYNC_MODE_UPSERT:
      return 'UPSERT';
    case P.SyncMode.SYNC_MODE_CREATE_ONLY:
      return 'CREATE_ONLY';
    case P.SyncMode.SYNC_MODE_UPDATE_ONLY:
      return 'UPDATE_ONLY';
    default:
      throw invalid('validation_failed', `unknown sync mode ${m}`, [{ path: 'mode', problem: 'must be UPSERT, CREATE_ONLY or UPDATE_ONLY' }]);
  }
}

export const syncOutcomeToProto = (o: SyncOutcome): subscriberV1.SyncOutcome => P.SyncOutcome[`SYNC_OUTCOME_${o}` as keyof typeof P.SyncOutcome];

export function valueFromProto(v: subscriberV1.FieldValue | undefined): ValueInput | undefined {
  const value = kindOfCase(v?.value);
  return value && { kind: value.kind, value: value.content };
}

export const fieldInputsFromProto = (fields: subscriberV1.FieldValueInput[]): FieldValueInput[] => fields.map((f) => ({ fieldId: f.fieldId, value: valueFromProto(f.value) }));

export function subscriberInputFromProto(req: subscriberV1.AddSubscriberRequest, path = ''): SubscriberInput {
  return {
    email: req.email,
    firstName: req.firstName,
    status: statusFromProto(req.subscriberStatus, `${path}subscriberStatus`),
    tags: req.tags,
    topicIds: req.topicIdsGiven || req.topicIds.length > 0 ? req.topicIds : undefined,
    fields: fieldInputsFromProto(req.fields),
  };
}

export function valueToProto(field: FieldDef, stored: StoredValue, catalog: Catalog): subscriberV1.FieldValue {
  const t = typedValue(field, stored, catalog);
  return { value: caseOf(t.kind, t.value), labels: t.labels ?? [] };

}

/** The stored values of a subscriber as FieldValueInput, sorted by field id (values of deleted fields cannot exist). */
export function fieldValuesToProto(s: SubscriberState, catalog: Catalog): subscriberV1.FieldValueInput[] {
  return Object.keys(s.fields)
    .sort()
    .flatMap((fieldId) => {
      const field = catalog.byId.get(fieldId);
      return field ? [{ fieldId, value: valueToProto(field, s.fields[fieldId], catalog) }] : [];
    });
}

export function fieldEntriesToProto(s: SubscriberState, catalog: Catalog): subscriberV1.FieldValueEntry[] {
  return Object.keys(s.fields)
    .sort()
    .flatMap((fieldId) => {
      const field = catalog.byId.get(fieldId);
      return field ? [{ fieldId, personalizationTagName: field.personalizationTagName, value: valueToProto(field, s.fields[fieldId], catalog) }] : [];
    });
}

export function subscriberToProto(s: SubscriberState, catalog: Catalog): subscriberV1.Subscriber {
  const values: subscriberV1.SubscriberFieldValue[] = [
    { fieldRef: { ref: { $case: 'builtInField', value: P.BuiltInField.BUILT_IN_FIELD_EMAIL } }, personalizationTagName: 'email', label: 'Email', displayValue: s.email },
  ];
  if (s.firstName !== null) {
    values.push({ fieldRef: { ref: { $case: 'builtInField', value: P.BuiltInField.BUILT_IN_FIELD_FIRST_NAME } }, personalizationTagName: 'first_name', label: 'First name', displayValue: s.firstName });
  }
  for (const { field, displayValue } of displayedFieldValues(s.fields, catalog)) {
    values.push({ fieldRef: { ref: { $case: 'fieldId', value: field.id } }, personalizationTagName: field.personalizationTagName, label: field.label, displayValue });
  }
  return { id: s.id, email: s.email, firstName: s.firstName ?? undefined, subscriberStatus: statusToProto(s.status), values, tags: s.tags, registeredAt: s.registeredAt, gdprAgreement: gdprAgreementOf(s.consent) };
}

/** FindSubscribersByEmail's answer for one address: its subscriber's id and status, or none. */
export const subscriberMatchToProto = (email: string, s: SubscriberState | null): subscriberV1.SubscriberMatch =>
  s ? { email, subscriberId: s.id, subscriberStatus: statusToProto(s.status) } : { email, subscriberStatus: P.SubscriberStatus.SUBSCRIBER_STATUS_UNSPECIFIED };

/** A send's recipient: the personalization tags of its custom fields, displayed as GetSubscriber's values are. */
const displayedFields = (s: SubscriberState, catalog: Catalog) =>
  Object.fromEntries(displayedFieldValues(s.fields, catalog).map((v) => [v.field.personalizationTagName, v.displayValue]));

export function audienceRecipientToProto(s: SubscriberState, catalog: Catalog): audienceV1.AudienceRecipient {
  return { id: s.id, email: s.email, firstName: s.firstName ?? undefined, fields: displayedFields(s, catalog), exclusion: audienceV1.AudienceExclusion.AUDIENCE_EXCLUSION_UNSPECIFIED };
}

export function recipientToProto(s: SubscriberState, catalog: Catalog): audienceV1.Recipient {
  return { id: s.id, email: s.email, firstName: s.firstName ?? undefined, fields: displayedFields(s, catalog), status: statusToProto(s.status) };
}

export function subscriberDataToProto(s: SubscriberState, catalog: Catalog): subscriberV1.SubscriberData {
  return {
    subscriberId: s.id,
    email: s.email,
    firstName: s.firstName ?? undefined,
    subscriberStatus: statusToProto(s.status),
    fields: fieldValuesToProto(s, catalog),
    tags: [...s.tags].sort(),
  };
}

export const overviewToProto = (s: SubscriberState): subscriberV1.SubscriberOverview => ({
  id: s.id,
  email: s.email,
  firstName: s.firstName ?? undefined,
  subscriberStatus: statusToProto(s.status),
  tags: s.tags,
  registeredAt: s.registeredAt,
});

export function fieldToProto(f: FieldDef): subscriberV1.Field {
  return {
    ref: { ref: { $case: 'fieldId', value: f.id } },
    personalizationTagName: f.personalizationTagName,
    label: f.label,
    fieldType: fieldTypeToProto(f.fieldType),
    required: f.required,
    internal: f.internal,
    active: f.active,
    position: f.position,
    options: [...f.options].sort((a, b) => a.position - b.position).map((o) => ({ id: o.id, label: o.label, position: o.position, active: o.active })),
  };
}

export function builtInFieldToProto(name: BuiltInFieldName): subscriberV1.Field {
  const b = BUILT_IN_FIELDS.find((x) => x.builtInField === name)!;
  return {
    ref: { ref: { $case: 'builtInField', value: BUILT_IN_TO_PROTO[name] } },
    personalizationTagName: b.personalizationTagName,
    label: b.label,
    fieldType: fieldTypeToProto(b.fieldType),
    required: b.required,
    internal: false,
    active: true,
    position: b.position,
    options: [],
  };
}

export const tagToProto = (t: TagDef, count: number): subscriberV1.Tag => ({ id: t.id, name: t.name, subscriberCount: String(count), createdAt: t.createdAt });

export const topicToProto = (t: TopicDef, count: number): subscriberV1.Topic => ({
  id: t.id,
  label: t.label,
  description: t.description ?? undefined,
  active: t.active,
  isDefault: t.isDefault,
  subscriberCount: String(count),
  createdAt: t.createdAt,
});

export const topicViewToProto = (v: SubscriberTopicView): subscriberV1.SubscriberTopic => ({ ...v });

/**
 * The subscriber's `gdprAgreement`: a form signup's consent text; for a custom event's consent its
 * `source` and `givenAt` (the API contract "Events and automations"), as `<source> (given <givenAt>)`.
 */
export function gdprAgreementOf(consent: SubscriberState['consent']): string | undefined {
  if (!consent) return undefined;
  return consent.eventId ? `${consent.text} (given ${consent.at})` : consent.text;
}
