import type { commonV1, subscriberV1 } from '@mailer/proto';
import type { Schemas } from '../openapi/types';
import { BuiltInFields, FieldTypes, FieldUsageCategories } from './enums';
import { int64, present } from './numbers';

// The field catalogue, tags and topics: API bodies <-> subscriber service messages.

export function fieldOptionJson(o: subscriberV1.FieldOption) {
  return { id: present(o.id, 'an option id'), label: o.label, position: o.position, active: o.active };
}

/** Field: `builtInField` only on built-ins, `fieldId` only on custom fields (never null). */
export function fieldJson(f: subscriberV1.Field | undefined) {
  const field = present(f, 'a field');
  const ref = present(field.ref?.ref, 'a field reference');
  return {
    type: ref.$case === 'fieldId' ? ('CUSTOM' as const) : ('BUILT_IN' as const),
    ...(ref.$case === 'fieldId' ? { fieldId: ref.value } : { builtInField: BuiltInFields.fromProto(ref.value) }),
    personalizationTagName: field.personalizationTagName,
    label: field.label,
    fieldType: FieldTypes.fromProto(field.fieldType),
    required: field.required,
    internal: field.internal,
    active: field.active,
    position: field.position,
    options: field.options.map(fieldOptionJson),
  };
}

export const fieldCatalogJson = (fields: subscriberV1.Field[]) => ({ fields: fields.map(fieldJson) });

/** An empty personalizationTagName means "derive one from the label", as an absent one does. */
export function addFieldToProto(accountId: string, body: Schemas['AddField']): subscriberV1.AddFieldRequest {
  return {
    accountId,
    personalizationTagName: body.personalizationTagName || undefined,
    label: body.label,
    fieldType: FieldTypes.toProto(body.fieldType),
    required: body.required,
    internal: body.internal,
    options: body.options ?? [],
  };
}

/**
 * PATCH /fields/{id}: only given members change. `options`, when given, is the complete list: an
 * option without id (or `id: null`) is added, an omitted one is deactivated by the service. An
 * option's position defaults to its place in the list, `active` to true.
 */
export function updateFieldToProto(accountId: string, fieldId: string, body: Schemas['UpdateField']): subscriberV1.UpdateFieldRequest {
  return {
    accountId,
    fieldId,
    label: body.label,
    required: body.required,
    internal: body.internal,
    position: body.position,
    options: (body.options ?? []).map((o, i) => ({
      id: o.id ? o.id.toLowerCase() : undefined,
      label: o.label,
      position: o.position ?? i,
      active: o.active ?? true,
    })),
    optionsGiven: body.options !== undefined,
  };
}

/** FieldUsage of the specification (the proto's `effect` only decides the report list it is in). */
export function fieldUsageJson({ effect: _effect, category, ...usage }: commonV1.FieldUsage) {
  return { category: FieldUsageCategories.fromProto(category), ...usage };
}

export function fieldUsageReportJson(r: subscriberV1.FieldUsageReport | undefined) {
  const report = present(r, 'a field usage report');
  return {
    fieldId: report.fieldId,
    fieldLabel: report.fieldLabel,
    personalizationTagName: report.personalizationTagName,
    fieldType: FieldTypes.fromProto(report.fieldType),
    subscriberValueCount: int64(report.subscriberValueCount),
    archiveBlocked: report.archiveBlocked,
    permanentDeleteBlocked: report.permanentDeleteBlocked,
    blockingUsages: report.blockingUsages.map(fieldUsageJson),
    warningUsages: report.warningUsages.map(fieldUsageJson),
    contentMergeTagUsages: report.contentMergeTagUsages.map(fieldUsageJson),
    permanentDeleteBlockingUsages: report.permanentDeleteBlockingUsages.map(fieldUsageJson),
    externalHints: report.externalHints.map(fieldUsageJson),
    sources: report.sources.map((s) => ({ service: s.service, answered: s.answered, ...(s.error !== undefined ? { error: s.error } : {}) })),
  };
}

export const fieldFormsJson = (forms: subscriberV1.FieldFormUse[]) => forms.map((f) => ({ id: f.id, name: f.name }));

export function tagJson(t: subscriberV1.Tag | undefined) {
  const tag = present(t, 'a tag');
  return { id: tag.id, name: tag.name, subscriberCount: int64(tag.subscriberCount), createdAt: tag.createdAt };
}

export function topicJson(t: subscriberV1.Topic | undefined) {
  const topic = present(t, 'a topic');
  return {
    id: topic.id,
    label: topic.label,
    description: topic.description ?? null,
    active: topic.active,
    isDefault: topic.isDefault,
    subscriberCount: int64(topic.subscriberCount),
    createdAt: topic.createdAt,
  };
}

export function addTopicToProto(accountId: string, body: Schemas['AddTopic']): subscriberV1.AddTopicRequest {
  return { accountId, label: body.label, description: body.description ?? undefined, enrollExistingSubscribers: body.enrollExistingSubscribers, isDefault: body.isDefault ?? false };
}

/** PATCH /topics/{id}: `description: null` clears it, an absent description leaves it. */
export function updateTopicToProto(accountId: string, topicId: string, body: Schemas['UpdateTopic']): subscriberV1.UpdateTopicRequest {
  return {
    accountId,
    topicId,
    label: body.label,
    description: body.description ?? undefined,
    descriptionGiven: body.description !== undefined,
    active: body.active,
    isDefault: body.isDefault,
  };
}
