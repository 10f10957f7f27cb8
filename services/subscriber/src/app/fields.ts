// Use cases of the field catalog, one per RPC (ListFields, AddField, ..., ListFieldForms). Inputs are
// already parsed by handlers/fields.ts; these own the reads, the checks, the writes and the facts.
import { DomainError, failedPrecondition, GrpcStatus } from '@mailer/kit';
import {
  BUILT_IN_FIELDS,
  builtInImmutable,
  derivePersonalizationTagName,
  FIRST_CUSTOM_POSITION,
  moveField,
  patchOptions,
  renumber,
  RESERVED_TAG_NAMES,
  type BuiltInFieldName,
  type OptionPatch,
} from '../domain/fields';
import type { FieldDef, FieldOption, FieldType } from '../domain/types';
import { classifyUsages, formsOf, usageProblem, type UsageClassification } from '../domain/usage';
import { fieldEvent } from '../events/catalog-events';
import { commitDefinitionChange } from './commit';
import { newIdOf, nowOf, type Deps } from './deps';
import { fieldNotFound } from './not-found';

/** A field as requests name it: a built-in by name or a custom field by id (domain/fields parseFieldRef). */
export type FieldRef = { builtIn: BuiltInFieldName } | { id: string };

/** A custom field by reference; built-in names are refused with built_in_field_immutable. */
async function customField(deps: Deps, accountId: string, ref: FieldRef): Promise<FieldDef> {
  if ('builtIn' in ref) throw builtInImmutable(ref.builtIn);
  const field = await deps.catalog.getField(accountId, ref.id);
  if (!field) throw fieldNotFound(ref.id);
  return field;
}

async function usageOf(deps: Deps, accountId: string, field: FieldDef): Promise<UsageClassification> {
  const answers = await deps.usage.ask({ accountId, fieldId: field.id, personalizationTagName: field.personalizationTagName });
  return classifyUsages(answers);
}

/** No archive or permanent delete on a guess: a source that did not answer could hold a blocking usage. */
function assertUsageKnown(u: UsageClassification): void {
  if (u.unanswered.length === 0) return;
  const details = u.sources.filter((s) => !s.answered).map((s) => ({ path: `sources.${s.service}`, problem: s.error ?? 'no answer' }));
  throw failedPrecondition('field_usage_unknown', `the usage of this field cannot be established: ${u.unanswered.join(', ')} did not answer; retry later`, details);
}

/** The built-in fields, then the account's custom fields in position order. */
export async function listFields(deps: Deps, input: { accountId: string; includeArchived: boolean }): Promise<{ builtIn: BuiltInFieldName[]; custom: FieldDef[] }> {
  const custom = (await deps.catalog.listFields(input.accountId)).filter((f) => input.includeArchived || f.active);
  return { builtIn: BUILT_IN_FIELDS.map((b) => b.builtInField), custom };
}

export interface AddFieldInput {
  accountId: string;
  label: string;
  fieldType: FieldType;
  /** Given and validated; absent: derived from the label. */
  personalizationTagName?: string;
  required: boolean;
  internal: boolean;
  options: FieldOption[];
}

export async function addField(deps: Deps, input: AddFieldInput): Promise<FieldDef> {
  const { accountId, label } = input;
  const given = input.personalizationTagName;
  const now = nowOf(deps);
  return commitDefinitionChange(deps, async (tx, events) => {
    const fields = await deps.catalog.listFields(accountId);
    const taken = new Set([...RESERVED_TAG_NAMES, ...fields.map((f) => f.personalizationTagName)]);
    if (given && taken.has(given)) throw tagNameExists(given);
    const field: FieldDef = {
      id: newIdOf(deps),
      label,
      personalizationTagName: given ?? derivePersonalizationTagName(label, taken),
      fieldType: input.fieldType,
      required: input.required,
      internal: input.internal,
      active: true,
      position: FIRST_CUSTOM_POSITION + fields.length,
      options: input.options,
    };
    await deps.catalog.insertField(tx, accountId, field, now);
    events.push(fieldEvent('created', accountId, field, now));
    return field;
  });
}

export async function getField(deps: Deps, input: { accountId: string; ref: FieldRef }): Promise<{ builtIn: BuiltInFieldName } | { field: FieldDef }> {
  const { ref } = input;
  if ('builtIn' in ref) return { builtIn: ref.builtIn };
  const field = await deps.catalog.getField(input.accountId, ref.id);
  if (!field) throw fieldNotFound(ref.id);
  return { field };
}

export interface UpdateFieldInput {
  accountId: string;
  /** A custom field's id (handlers refuse built-ins before anything else is validated). */
  fieldId: string;
  label?: string;
  required?: boolean;
  internal?: boolean;
  /** Absent: options unchanged. */
  options?: OptionPatch[];
  position?: number;
}

export async function updateField(deps: Deps, input: UpdateFieldInput): Promise<FieldDef> {
  const { accountId, fieldId, label } = input;
  const now = nowOf(deps);
  return commitDefinitionChange(deps, async (tx, events) => {
    const fields = await deps.catalog.listFields(accountId);
    const current = fields.find((f) => f.id === fieldId);
    if (!current) throw fieldNotFound(fieldId);
    const options = input.options ? patchOptions(current.fieldType, current.options, input.options, () => newIdOf(deps)) : current.options;
    const moves = input.position === undefined || input.position === current.position ? new Map<string, number>() : moveField(fields, current.id, input.position);
    const next: FieldDef = {
      ...current,
      label: label ?? current.label,
      required: input.required ?? current.required,
      internal: input.internal ?? current.internal,
      options,
      position: moves.get(current.id) ?? current.position,
    };
    if (JSON.stringify(next) !== JSON.stringify(current)) {
      const { id: _id, ...set } = next;
      await deps.catalog.updateField(tx, accountId, current.id, set, now);
      events.push(fieldEvent('updated', accountId, next, now));
    }
    for (const other of fields) {
      const position = moves.get(other.id);
      if (other.id === current.id || position === undefined) continue;
      await deps.catalog.updateField(tx, accountId, other.id, { position }, now);
      events.push(fieldEvent('updated', accountId, { ...other, position }, now));
    }
    return next;
  });
}

export async function archiveField(deps: Deps, input: { accountId: string; ref: FieldRef }): Promise<FieldDef> {
  const { accountId } = input;
  const field = await customField(deps, accountId, input.ref);
  if (!field.active) return field;
  // asked outside the transaction: the store is not held while other services answer
  const usage = await usageOf(deps, accountId, field);
  assertUsageKnown(usage);
  if (usage.blockingUsages.length) {
    throw failedPrecondition(
      'field_archive_blocked',
      `field ${field.personalizationTagName} is written by ${usage.blockingUsages.length} usage(s); remove them before archiving`,
      usage.blockingUsages.map((u, i) => usageProblem(u, `blockingUsages[${i}]`)),
    );
  }
  const now = nowOf(deps);
  return commitDefinitionChange(deps, async (tx, events) => {
    const current = await deps.catalog.getField(accountId, field.id);
    if (!current) throw fieldNotFound(field.id);
    if (!current.active) return current;
    const next = { ...current, active: false };
    await deps.catalog.updateField(tx, accountId, current.id, { active: false }, now);
    events.push(fieldEvent('archived', accountId, next, now));
    return next;
  });
}

export async function restoreField(deps: Deps, input: { accountId: string; ref: FieldRef }): Promise<FieldDef> {
  const { accountId } = input;
  const field = await customField(deps, accountId, input.ref);
  const now = nowOf(deps);
  return commitDefinitionChange(deps, async (tx, events) => {
    const current = await deps.catalog.getField(accountId, field.id);
    if (!current) throw fieldNotFound(field.id);
    if (current.active) return current;
    const next = { ...current, active: true };
    await deps.catalog.updateField(tx, accountId, current.id, { active: true }, now);
    events.push(fieldEvent('restored', accountId, next, now));
    return next;
  });
}

/** Permanently deletes an archived field; its values leave every subscriber of the account. */
export async function deleteField(deps: Deps, input: { accountId: string; ref: FieldRef }): Promise<void> {
  const { accountId } = input;
  const field = await customField(deps, accountId, input.ref);
  if (field.active) throw failedPrecondition('field_not_archived', `field ${field.personalizationTagName} must be archived before it can be deleted`);
  const usage = await usageOf(deps, accountId, field);
  assertUsageKnown(usage);
  if (usage.permanentDeleteBlocked) {
    throw failedPrecondition(
      'field_delete_blocked',
      `field ${field.personalizationTagName} is still referenced; it cannot be deleted permanently`,
      usage.permanentDeleteBlockingUsages.map((u, i) => usageProblem(u, `permanentDeleteBlockingUsages[${i}]`)),
    );
  }
  const now = nowOf(deps);
  await commitDefinitionChange(deps, async (tx, events) => {
    const fields = await deps.catalog.listFields(accountId);
    const current = fields.find((f) => f.id === field.id);
    if (!current) throw fieldNotFound(field.id);
    if (current.active) throw failedPrecondition('field_not_archived', `field ${current.personalizationTagName} must be archived before it can be deleted`);
    await deps.catalog.deleteField(tx, accountId, current.id);
    const removed = await deps.subscribers.removeFieldValues(tx, accountId, current.id, now);
    const rest = fields.filter((f) => f.id !== current.id);
    for (const [id, position] of renumber(rest)) {
      await deps.catalog.updateField(tx, accountId, id, { position }, now);
      events.push(fieldEvent('updated', accountId, { ...rest.find((f) => f.id === id)!, position }, now));
    }
    events.unshift(fieldEvent('deleted', accountId, current, now, { removedFromSubscribers: removed }));
  });
}

/** The field, how the other services use it, and how many subscribers hold a value of it. */
export async function getFieldUsage(deps: Deps, input: { accountId: string; ref: FieldRef }): Promise<{ field: FieldDef; usage: UsageClassification; subscriberValueCount: number }> {
  const { accountId } = input;
  const field = await customField(deps, accountId, input.ref);
  const [usage, subscriberValueCount] = await Promise.all([usageOf(deps, accountId, field), deps.subscribers.countWithFieldValue(accountId, field.id)]);
  return { field, usage, subscriberValueCount };
}

export async function listFieldForms(deps: Deps, input: { accountId: string; ref: FieldRef }): Promise<Array<{ id: string; name: string }>> {
  const { accountId } = input;
  const field = await customField(deps, accountId, input.ref);
  const [answer] = await deps.usage.ask({ accountId, fieldId: field.id, personalizationTagName: field.personalizationTagName }, ['form']);
  if (!answer.answered) throw failedPrecondition('field_usage_unknown', `the forms using this field cannot be listed: ${answer.error}; retry later`);
  return formsOf(answer.usages);
}

/** An explicitly given personalization tag name already names a field (or a built-in). */
function tagNameExists(name: string) {
  return new DomainError(GrpcStatus.ALREADY_EXISTS, 'personalization_tag_name_exists', `a field with personalizationTagName ${name} already exists`);
}
