// A complete form record for tests that write forms straight into a store.
import type { Form, FormField } from '../../src/domain/form';
import type { CatalogField } from '../../src/domain/form-request';

export const emailInput = (): FormField => ({
  fieldRef: { type: 'BUILT_IN', builtInField: 'EMAIL' },
  fieldId: 'EMAIL',
  personalizationTagName: 'email',
  label: 'Email',
  placeholder: '',
  isRequired: true,
  position: 0,
  fieldType: 'EMAIL',
  inputControl: 'EMAIL_INPUT',
  optionValues: [],
});

export const customInput = (fieldId: string, position: number): FormField => ({
  fieldRef: { type: 'CUSTOM', fieldId },
  fieldId: fieldId.toLowerCase(),
  personalizationTagName: `f${position}`,
  label: `Field ${position}`,
  placeholder: '',
  isRequired: false,
  position,
  fieldType: 'TEXT',
  inputControl: 'TEXT_INPUT',
  optionValues: [],
});

export function formFixture(id: string, accountId: string, over: Partial<Form> = {}): Form {
  const now = new Date();
  return {
    id,
    accountId,
    name: `form ${id}`,
    type: 'DEFAULT',
    status: 'ACTIVE',
    landingPageStatus: 'DRAFT',
    lastPublishedAt: null,
    inputFields: [emailInput()],
    topicIds: [],
    doubleOptIn: true,
    senderProfileId: null,
    confirmationTemplateName: null,
    routePath: null,
    domain: null,
    allowedOrigins: [],
    createdAt: now,
    updatedAt: now,
    ...over,
  };
}

/** The catalog field a stored input was resolved from (active, its options active, in order). */
export const catalogFieldOf = (input: FormField): CatalogField => ({
  ref: input.fieldRef,
  personalizationTagName: input.personalizationTagName,
  label: input.label,
  fieldType: input.fieldType,
  required: false,
  internal: false,
  active: true,
  options: input.optionValues.map((label, position) => ({ label, position, active: true })),
});
