// A form's inputs as readers meet them (embedding, landing page, submissions): what belongs to the
// field comes from the account's field catalog as it is now, what belongs to the form stays as the
// form was saved. Pure.
//
// From the catalog: `personalizationTagName` (the name a submission's values use) and `optionValues`
// (the active options' labels), so an option added to a choice field is offered and accepted at once
// and a deactivated one disappears, without the form being saved again. From the form: label,
// placeholder, order, isRequired, inputControl. An input whose field is no longer in the catalog
// (deleted a moment ago; the field.deleted consumer takes it off the form) takes no values: left out.
import type { Form } from './form';
import { fieldKey, optionValuesOf, type CatalogField } from './form-request';

export function withCurrentFields<F extends Pick<Form, 'inputFields'>>(form: F, catalog: readonly CatalogField[]): F {
  const byKey = new Map(catalog.map((f) => [fieldKey(f.ref), f]));
  const inputFields = form.inputFields.flatMap((input) => {
    const field = byKey.get(input.fieldId);
    return field ? [{ ...input, personalizationTagName: field.personalizationTagName, optionValues: optionValuesOf(field) }] : [];
  });
  return { ...form, inputFields };
}
