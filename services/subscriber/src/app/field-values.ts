// Use cases of a subscriber's field values: ListFieldValues, SetFieldValue, DeleteFieldValue.
import type { Catalog } from '../domain/fields';
import type { FieldDef, StoredValue, SubscriberState, ValueInput } from '../domain/types';
import { validateValue } from '../domain/values';
import { loadCatalog } from './definitions';
import type { Deps } from './deps';
import { fieldNotFound } from './not-found';
import { changeSubscriber, existingSubscriber } from './subscriber-change';

interface Target {
  accountId: string;
  subscriberId: string;
}

export async function listFieldValues(deps: Deps, input: Target): Promise<{ state: SubscriberState; catalog: Catalog }> {
  const [state, catalog] = await Promise.all([existingSubscriber(deps, input.accountId, input.subscriberId), loadCatalog(deps, input.accountId)]);
  return { state, catalog };
}

/** The field's new value as stored, with the field and the catalog to present it. */
export async function setFieldValue(
  deps: Deps,
  input: Target & { fieldId: string; value: ValueInput | undefined },
): Promise<{ field: FieldDef; stored: StoredValue; catalog: Catalog }> {
  const { fieldId, value } = input;
  const { state, defs } = await changeSubscriber(deps, input.accountId, input.subscriberId, (current, defs) => {
    const field = defs.catalog.byId.get(fieldId);
    if (!field) throw fieldNotFound(fieldId);
    return { ...current, fields: { ...current.fields, [fieldId]: validateValue(field, value, defs.catalog, current.fields[fieldId], 'value') } };
  });
  return { field: defs.catalog.byId.get(fieldId)!, stored: state.fields[fieldId], catalog: defs.catalog };
}

export async function deleteFieldValue(deps: Deps, input: Target & { fieldId: string }): Promise<void> {
  const { fieldId } = input;
  await changeSubscriber(deps, input.accountId, input.subscriberId, (current, defs) => {
    if (!defs.catalog.byId.has(fieldId)) throw fieldNotFound(fieldId);
    if (current.fields[fieldId] === undefined) return current;
    const { [fieldId]: _removed, ...rest } = current.fields;
    return { ...current, fields: rest };
  });
}
