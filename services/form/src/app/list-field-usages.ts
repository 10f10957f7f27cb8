// Use case ListFieldUsages: the account's forms that collect a field, as usages.
import { formFieldUsage, type FormFieldUsage } from '../domain/field-usage';
import type { FormRepository } from '../store/forms';

export interface ListFieldUsagesInput {
  accountId: string;
  /** Empty for a built-in field (asked by personalization tag): forms never block those. */
  fieldId: string;
}

export async function listFieldUsages(deps: { forms: FormRepository }, input: ListFieldUsagesInput): Promise<FormFieldUsage[]> {
  if (input.fieldId === '') return [];
  const forms = await deps.forms.usingField(input.accountId, input.fieldId);
  return forms.flatMap((form) => formFieldUsage(form, input.fieldId) ?? []);
}
