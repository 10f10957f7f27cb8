// A form's inputs as readers meet them (domain/current-fields.ts): the field's tag name and options
// come from the catalog as it is now; the form's own label, placeholder, order and requiredness stay.
import { withCurrentFields } from '../src/domain/current-fields';
import type { FormField } from '../src/domain/form';
import type { CatalogField } from '../src/domain/form-request';
import { catalogFieldOf, customInput, emailInput, formFixture } from './support/form-fixture';

const PLAN = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const GONE = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';

const planInput: FormField = {
  ...customInput(PLAN, 1),
  personalizationTagName: 'plan',
  label: 'Choose your plan',
  placeholder: 'Pick one',
  isRequired: true,
  fieldType: 'SINGLE_CHOICE',
  inputControl: 'RADIO_GROUP',
  optionValues: ['Free', 'Pro'],
};
const form = formFixture('form-1', 'acc-1', { inputFields: [emailInput(), planInput, customInput(GONE, 2)] });

/** The plan field as the catalog has it now. */
const plan = (over: Partial<CatalogField>): CatalogField => ({ ...catalogFieldOf(planInput), label: 'Plan', ...over });

test('options come from the catalog: a new one appears, a deactivated one disappears, a renamed one follows, in option order', () => {
  const now = plan({
    options: [
      { label: 'Gold', position: 3, active: true },
      { label: 'Pro', position: 2, active: false },
      { label: 'Basic', position: 1, active: true },
    ],
  });
  const current = withCurrentFields(form, [catalogFieldOf(emailInput()), now]);
  expect(current.inputFields.find((f) => f.fieldId === PLAN)?.optionValues).toEqual(['Basic', 'Gold']);
});

test("the tag name comes from the catalog; the form's label, placeholder, order, requiredness and control stay", () => {
  const current = withCurrentFields(form, [catalogFieldOf(emailInput()), plan({ personalizationTagName: 'tier' })]);
  expect(current.inputFields.find((f) => f.fieldId === PLAN)).toEqual({ ...planInput, personalizationTagName: 'tier' });
  // Not the catalog's label ('Plan'): the form set its own.
  expect(current.inputFields[1].label).toBe('Choose your plan');
});

test('an input whose field left the catalog takes no values; the stored form is not changed', () => {
  const current = withCurrentFields(form, [catalogFieldOf(emailInput()), plan({})]);
  expect(current.inputFields.map((f) => f.fieldId)).toEqual(['EMAIL', PLAN]);
  expect(form.inputFields).toHaveLength(3);
  expect(form.inputFields[1].optionValues).toEqual(['Free', 'Pro']);
  expect({ ...current, inputFields: form.inputFields }).toEqual(form);
});
