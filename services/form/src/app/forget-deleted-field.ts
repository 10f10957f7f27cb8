// Use case: a field was deleted in the subscriber service. Deleting a field a form collects is
// refused (the form blocks it), but a form may have started collecting it between that check and the
// delete: the form stops collecting it here, so it never writes to a field that no longer exists.
import type { FormRepository } from '../store/forms';

export async function forgetDeletedField(deps: { forms: FormRepository }, fact: { accountId: string; fieldId: string }): Promise<number> {
  return deps.forms.removeField(fact.accountId, fact.fieldId);
}
