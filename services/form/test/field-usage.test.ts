// The form service's field usages: the domain rule (active forms block archival, every form blocks a
// permanent delete) and the handler -> use case -> repository path on a real embedded store.
import { DomainError } from '@mailer/kit';
import { commonV1 } from '@mailer/proto';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { formFieldUsage, type FormFields } from '../src/domain/field-usage';
import { fieldUsageHandlers } from '../src/handlers/field-usage';
import type { FormStatus } from '../src/domain/form';
import { formRepository } from '../src/store/forms';
import { customInput, formFixture } from './support/form-fixture';

const FIELD = '5b0e8a2c-6d1f-4c3a-9e7b-2f4d6a8c0e1b';
const OTHER = '9c1d3e5f-7a2b-4c6d-8e0f-1a3b5c7d9e2f';
const form = (over: Partial<FormFields> = {}): FormFields => ({ id: 'f1', name: 'Newsletter signup', status: 'ACTIVE', fieldIds: [OTHER, FIELD], ...over });

describe('formFieldUsage', () => {
  it('an active form collecting the field blocks archival and permanent delete', () => {
    expect(formFieldUsage(form(), FIELD)).toMatchObject({ category: 'FORM', area: 'inputFields[1]', artifactId: 'f1', effect: 'BLOCKS_ARCHIVE', permanentDeleteBlocking: true, status: 'ACTIVE' });
  });
  it('an inactive form only warns about archival, but still blocks a permanent delete', () => {
    expect(formFieldUsage(form({ status: 'INACTIVE' }), FIELD)).toMatchObject({ effect: 'WARNING', permanentDeleteBlocking: true });
  });
  it('a form that does not collect the field is no usage; ids compare case-insensitively', () => {
    expect(formFieldUsage(form({ fieldIds: [OTHER] }), FIELD)).toBeNull();
    expect(formFieldUsage(form(), FIELD.toUpperCase())?.area).toBe('inputFields[1]');
  });
});

describe('ListFieldUsages on the embedded store', () => {
  let temp: TempStore;
  beforeAll(async () => {
    temp = await openTempStore('form-usage');
    const { store } = temp;
    const forms = formRepository(store);
    const doc = (id: string, accountId: string, name: string, status: FormStatus, fieldIds: string[]) =>
      formFixture(id, accountId, { name, status, inputFields: fieldIds.map((f, i) => customInput(f, i)) });
    for (const form of [
      doc('f-b', 'acc-1', 'B popup', 'INACTIVE', [FIELD]),
      doc('f-a', 'acc-1', 'A signup', 'ACTIVE', [OTHER, FIELD]),
      doc('f-c', 'acc-1', 'C other', 'ACTIVE', [OTHER]),
      doc('f-x', 'acc-2', 'Another account', 'ACTIVE', [FIELD]),
    ])
      await forms.create(form);
  });
  afterAll(() => temp?.close());
  const list = (req: Partial<commonV1.ListFieldUsagesRequest>) =>
    fieldUsageHandlers({ forms: formRepository(temp.store) }).listFieldUsages({ accountId: 'acc-1', fieldId: FIELD, personalizationTagName: '', ...req }, undefined as never);

  it("lists the account's forms collecting the field, by name, with proto enums", async () => {
    const { usages } = await list({});
    expect(usages.map((u) => [u.artifactId, u.category, u.effect])).toEqual([
      ['f-a', commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_FORM, commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_BLOCKS_ARCHIVE],
      ['f-b', commonV1.FieldUsageCategory.FIELD_USAGE_CATEGORY_FORM, commonV1.FieldUsageEffect.FIELD_USAGE_EFFECT_WARNING],
    ]);
  });

  it('another account, a built-in field (no id) and an unknown id have no usages', async () => {
    expect((await list({ accountId: 'acc-3' })).usages).toEqual([]);
    expect((await list({ fieldId: '', personalizationTagName: 'EMAIL' })).usages).toEqual([]);
    expect((await list({ fieldId: 'x'.repeat(101) })).usages).toEqual([]);
  });

  it('a request without account is validation_failed', async () => {
    await expect(list({ accountId: '' })).rejects.toMatchObject({ errorId: 'validation_failed' });
    await expect(list({ accountId: '' })).rejects.toBeInstanceOf(DomainError);
  });
});
