// Use case ListFieldUsages: the account's automations whose SET_FIELD steps write the field.
import { setFieldUsages, type AutomationFieldUsage } from '../../automations/domain/automation-field-usage';
import type { AutomationRepository } from '../../automations/store/automations';

/** Steps name fields by id; built-in fields (asked without an id) are never set by a step. */
export async function listFieldUsages(deps: { automations: AutomationRepository }, input: { accountId: string; fieldId: string }): Promise<AutomationFieldUsage[]> {
  if (input.fieldId === '') return [];
  const automations = await deps.automations.namingField(input.accountId, input.fieldId);
  return automations.flatMap((a) => setFieldUsages(a, input.fieldId));
}
