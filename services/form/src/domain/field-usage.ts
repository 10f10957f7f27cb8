// Which forms use a subscriber field, and how that weighs on archiving or deleting it (the API contract, forms:
// "A form's fields are write usages ... archiving a field used by an ACTIVE form is blocked").

import type { FormStatus } from './form';

export type { FormStatus };

/** What the field usage report needs to know of a form. */
export interface FormFields {
  id: string;
  name: string;
  status: FormStatus;
  /** Keys of the form's input fields in display order (custom field ids; built-in names, which never match a custom id). */
  fieldIds: readonly string[];
}

export interface FormFieldUsage {
  category: 'FORM';
  area: string;
  artifactId: string;
  artifactName: string;
  status: FormStatus;
  reason: string;
  link: string;
  permanentDeleteBlocking: boolean;
  effect: 'BLOCKS_ARCHIVE' | 'WARNING';
}

/**
 * The form's usage of the field, or null when the form does not collect it. An ACTIVE form writes
 * the field with every submission: it blocks archival. An INACTIVE form writes nothing until it is
 * activated again: a warning. Either way deleting the field would break the form's input, so both
 * block a permanent delete.
 */
export function formFieldUsage(form: FormFields, fieldId: string): FormFieldUsage | null {
  const at = form.fieldIds.findIndex((id) => id.toLowerCase() === fieldId.toLowerCase());
  if (at < 0) return null;
  const active = form.status === 'ACTIVE';
  return {
    category: 'FORM',
    area: `inputFields[${at}]`,
    artifactId: form.id,
    artifactName: form.name,
    status: form.status,
    reason: active ? 'the active form writes the field with every submission' : 'the inactive form writes the field once it is activated again',
    link: `/forms/${form.id}`,
    permanentDeleteBlocking: true,
    effect: active ? 'BLOCKS_ARCHIVE' : 'WARNING',
  };
}
